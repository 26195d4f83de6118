#!/bin/sh
# evalue_compare.sh - swgpu's E-values against BLAST+'s, hit by hit, for both
# of swgpu's E-value models (issue 14).
#
# usage: bench/evalue_compare.sh [QUERIES [DB]]
#   QUERIES  protein queries (default /work/shared/data/queries250.fasta)
#   DB       protein database, FASTA plain or gzip (default
#            /work/shared/data/uniprot20k.fasta.gz)
# environment:
#   SWGPU    the tool (default build/swgpu, built with make if missing)
#   NQ       use only the first NQ queries (default all)
#   THREADS  threads for every program (default: all cores)
#   DNA      1 (default): also the blastn comparison on E. coli; 0: protein only
#   DATA     where MG1655-K12.fasta.gz and DH1_rc_rotated.fasta.gz are
#            (default /work/shared/data)
#   SCORING  other protein scoring systems, MATRIX/OPEN/EXTEND words (default
#            "BLOSUM45/14/2 BLOSUM50/13/2 BLOSUM62/9/2 BLOSUM80/10/1
#            BLOSUM90/10/1 PAM30/9/1 PAM70/10/1 PAM250/14/2"; "" for none),
#            each compared like the main run on the first SCORING_NQ queries
#            (default 25)
#   KEEP     directory to keep the inputs and outputs in (default: a temporary
#            one, removed)
#
# Protein: blastp 2.12.0+ (Debian ncbi-blast+) runs twice with
#     -comp_based_stats 0 -seg no -gapopen 11 -gapextend 1
#     -max_target_seqs 500 -evalue 10
# once as is (BLAST+'s default E-values: Spouge's finite-size correction) and
# once with OLD_FSC=1 in the environment (Karlin-Altschul over the
# length-adjusted search space).  swgpu searches the same database (BLOSUM62,
# open 11, extend 1, --backend cpu, -n 5000, -e 10) with --evalue-model spouge
# and old-fsc.
#
# DNA: 40 pieces of 600 bp of E. coli MG1655, as they are and mutated (10%,
# 20% and 30% substitutions, a few indels; fixed seed), against the first
# 1 Mbp of DH1 (brought to MG1655's strand and origin) in 1,000 pieces of
# 1 kbp; blastn -task blastn -reward 2 -penalty -3 -gapopen 5 -gapextend 2
# -dust no -strand plus (swgpu's DNA defaults; swgpu searches the plus strand).
# BLAST+ has no Spouge parameters for blastn, so its default and OLD_FSC=1
# outputs should be identical, and swgpu uses the length-adjusted model for
# DNA whatever --evalue-model says.
#
# BLAST's raw scores come from heuristic (X-drop) alignments and it may list
# several HSPs per subject, so only hits with the same (query, subject, raw
# score) in both programs are compared.  Both print E-values with BLAST's
# limited precision ("2e-05" style: 3 significant digits below 0.0009, then
# 3, 2, 1, 0 decimals, "0.0" below 1e-180), so each printed value stands for
# an interval (+- half a unit of its last digit).  The report gives, per
# comparison, the hit counts at -e 10, the matched hits, the share printed
# identically, the share consistent within print precision (the two
# intervals overlap), the share within 1% (the intervals, each widened by 1%,
# overlap), and the distribution of swgpu/BLAST ratios of the printed values
# (hits where either prints 0.0 are left out of the ratios).  Exit status 1
# if a same-score hit is not within 1% under the matching model (the
# comparison of BLAST+'s default with --evalue-model old-fsc is shown for
# information).
set -u
QUERIES=${1:-/work/shared/data/queries250.fasta}
DB=${2:-/work/shared/data/uniprot20k.fasta.gz}
SWGPU=${SWGPU:-build/swgpu}
NQ=${NQ:-0}
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
DNA=${DNA:-1}
DATA=${DATA:-/work/shared/data}
SCORING=${SCORING-BLOSUM45/14/2 BLOSUM50/13/2 BLOSUM62/9/2 BLOSUM80/10/1 BLOSUM90/10/1 PAM30/9/1 PAM70/10/1 PAM250/14/2}
SCORING_NQ=${SCORING_NQ:-25}

die() { echo "evalue_compare: $*" >&2; exit 2; }

[ -r "$QUERIES" ] || die "cannot read queries $QUERIES"
[ -r "$DB" ] || die "cannot read database $DB"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the comparison"
if ! command -v blastp >/dev/null 2>&1; then
    echo "evalue_compare: installing ncbi-blast+" >&2
    { apt-get update -qq && apt-get install -y -qq ncbi-blast+; } >&2 ||
        die "cannot install ncbi-blast+"
fi
if ! [ -x "$SWGPU" ]; then
    make -s "$SWGPU" >&2 || die "cannot build $SWGPU"
fi

if [ -n "${KEEP:-}" ]; then
    W=$KEEP; mkdir -p "$W" || die "cannot create $W"
else
    W=$(mktemp -d) || die "mktemp failed"
    trap 'rm -rf "$W"' EXIT INT TERM
fi

COLS='6 qseqid sseqid score evalue bitscore qlen slen'

# ----------------------------------------------------------------- protein
if [ "$NQ" -gt 0 ]; then
    awk -v n="$NQ" '/^>/{k++} k<=n' "$QUERIES" > "$W/q.fa"
else
    cp "$QUERIES" "$W/q.fa"
fi
case $DB in
*.gz) gzip -dc "$DB" > "$W/db.fa" || die "cannot decompress $DB" ;;
*) cp "$DB" "$W/db.fa" ;;
esac
nq=$(grep -c '^>' "$W/q.fa")

makeblastdb -in "$W/db.fa" -dbtype prot -out "$W/blastdb" > "$W/makeblastdb.log" 2>&1 ||
    die "makeblastdb failed: $(tail -n 3 "$W/makeblastdb.log")"
"$SWGPU" makedb "$W/db.fa" "$W/db.swdb" 2> "$W/makedb.err" ||
    die "swgpu makedb failed: $(tail -n 3 "$W/makedb.err")"

BLASTP="blastp -query $W/q.fa -db $W/blastdb -comp_based_stats 0 -seg no -gapopen 11
    -gapextend 1 -max_target_seqs 500 -evalue 10 -num_threads $THREADS"
t0=$(date +%s)
# shellcheck disable=SC2086
env -u OLD_FSC $BLASTP -outfmt "$COLS" > "$W/blastp_spouge.tsv" 2> "$W/blastp.err" ||
    die "blastp failed: $(tail -n 3 "$W/blastp.err")"
# shellcheck disable=SC2086
OLD_FSC=1 $BLASTP -outfmt "$COLS" > "$W/blastp_old.tsv" 2> "$W/blastp.err" ||
    die "blastp (OLD_FSC=1) failed: $(tail -n 3 "$W/blastp.err")"
t1=$(date +%s)
for model in spouge old-fsc; do
    "$SWGPU" search -q "$W/q.fa" -d "$W/db.swdb" --type prot --matrix BLOSUM62 \
        --gap-open 11 --gap-extend 1 -n 5000 -e 10 --no-align --backend cpu \
        --threads "$THREADS" --evalue-model $model --outfmt "$COLS" \
        -o "$W/swgpu_$model.tsv" 2> "$W/swgpu.err" ||
        die "swgpu search failed: $(tail -n 3 "$W/swgpu.err")"
done
t2=$(date +%s)

# other scoring systems, fewer queries
awk -v n="$SCORING_NQ" '/^>/{k++} k<=n' "$W/q.fa" > "$W/q_some.fa"
for sc in $SCORING; do
    mat=${sc%%/*}; go=${sc#*/}; ge=${go#*/}; go=${go%/*}
    BLASTP="blastp -query $W/q_some.fa -db $W/blastdb -comp_based_stats 0 -seg no
        -matrix $mat -gapopen $go -gapextend $ge -max_target_seqs 500 -evalue 10
        -num_threads $THREADS"
    # shellcheck disable=SC2086
    env -u OLD_FSC $BLASTP -outfmt "$COLS" > "$W/blastp_spouge_$mat-$go-$ge.tsv" 2> "$W/blastp.err" ||
        die "blastp $sc failed: $(tail -n 3 "$W/blastp.err")"
    # shellcheck disable=SC2086
    OLD_FSC=1 $BLASTP -outfmt "$COLS" > "$W/blastp_old_$mat-$go-$ge.tsv" 2> "$W/blastp.err" ||
        die "blastp $sc (OLD_FSC=1) failed: $(tail -n 3 "$W/blastp.err")"
    for model in spouge old-fsc; do
        "$SWGPU" search -q "$W/q_some.fa" -d "$W/db.swdb" --type prot --matrix "$mat" \
            --gap-open "$go" --gap-extend "$ge" -n 5000 -e 10 --no-align --backend cpu \
            --threads "$THREADS" --evalue-model $model --outfmt "$COLS" \
            -o "$W/swgpu_${model}_$mat-$go-$ge.tsv" 2> "$W/swgpu.err" ||
            die "swgpu search $sc failed: $(tail -n 3 "$W/swgpu.err")"
    done
done

# ----------------------------------------------------------------- DNA
if [ "$DNA" = 1 ]; then
    for f in MG1655-K12.fasta.gz DH1_rc_rotated.fasta.gz; do
        [ -r "$DATA/$f" ] || die "cannot read $DATA/$f (DATA=...; or DNA=0)"
    done
    python3 - "$DATA/MG1655-K12.fasta.gz" "$DATA/DH1_rc_rotated.fasta.gz" "$W" <<'EOF' ||
import gzip, random, sys
def read(path):
    with gzip.open(path, 'rt') as f:
        return ''.join(l.strip() for l in f if not l.startswith('>')).upper()
a, b = read(sys.argv[1]), read(sys.argv[2])
out = sys.argv[3]
rng = random.Random(14)
def mutate(s, rate):
    r = []
    for c in s:
        x = rng.random()
        if x < rate:
            r.append(rng.choice([y for y in 'ACGT' if y != c]))
        elif x < rate + rate / 20:
            continue                      # a deleted base
        else:
            r.append(c)
            if rng.random() < rate / 20:
                r.append(rng.choice('ACGT'))  # an inserted base
    return ''.join(r)
with open(out + '/dq.fa', 'w') as f:
    for i in range(40):
        start = 5000 + i * 24000
        piece = a[start:start + 600]
        for rate in (0.0, 0.10, 0.20, 0.30):
            f.write('>mg%d_m%d\n%s\n' % (start, int(rate * 100), mutate(piece, rate)))
with open(out + '/ddb.fa', 'w') as f:
    for i in range(0, 1000000, 1000):
        f.write('>dh%d\n%s\n' % (i, b[i:i + 1000]))
EOF
        die "cannot make the DNA inputs"
    makeblastdb -in "$W/ddb.fa" -dbtype nucl -out "$W/dblastdb" > "$W/makeblastdb.log" 2>&1 ||
        die "makeblastdb (DNA) failed: $(tail -n 3 "$W/makeblastdb.log")"
    BLASTN="blastn -task blastn -query $W/dq.fa -db $W/dblastdb -reward 2 -penalty -3
        -gapopen 5 -gapextend 2 -dust no -strand plus -max_target_seqs 500 -evalue 10
        -num_threads $THREADS"
    # shellcheck disable=SC2086
    env -u OLD_FSC $BLASTN -outfmt "$COLS" > "$W/blastn_spouge.tsv" 2> "$W/blastn.err" ||
        die "blastn failed: $(tail -n 3 "$W/blastn.err")"
    # shellcheck disable=SC2086
    OLD_FSC=1 $BLASTN -outfmt "$COLS" > "$W/blastn_old.tsv" 2> "$W/blastn.err" ||
        die "blastn (OLD_FSC=1) failed: $(tail -n 3 "$W/blastn.err")"
    for model in spouge old-fsc; do
        "$SWGPU" search -q "$W/dq.fa" -d "$W/ddb.fa" --type dna -n 5000 -e 10 --no-align \
            --backend cpu --threads "$THREADS" --evalue-model $model --outfmt "$COLS" \
            -o "$W/swgpu_dna_$model.tsv" 2> "$W/swgpu.err" ||
            die "swgpu search (DNA) failed: $(tail -n 3 "$W/swgpu.err")"
    done
fi

# ----------------------------------------------------------------- report
python3 - "$W" "$DNA" "$SCORING_NQ" $SCORING <<'EOF'
import math, os, sys
from collections import defaultdict
W, dna, scoring_nq, scoring = sys.argv[1], sys.argv[2] == '1', sys.argv[3], sys.argv[4:]

def half_unit(text):
    """(value, half a unit of the last printed digit) of a BLAST E-value."""
    v = float(text)
    if text == '0.0':
        return 0.0, 0.5e-180                 # printed for anything below 1e-180
    if 'e' in text:
        mant, exp = text.split('e')
        return v, 0.5 * 10.0 ** (int(exp) - (len(mant.split('.')[1]) if '.' in mant else 0))
    dec = len(text.split('.')[1]) if '.' in text else 0
    return v, 0.5 * 10.0 ** -dec

def load(path):
    rows = defaultdict(list)
    pairs = set()
    for line in open(path):
        f = line.rstrip('\n').split('\t')
        rows[(f[0], f[1], int(f[2]))].append(f[3])
        pairs.add((f[0], f[1]))
    return rows, pairs

def quantile(xs, p):
    if not xs:
        return float('nan')
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    i = int(math.floor(k))
    j = min(i + 1, len(xs) - 1)
    return xs[i] + (xs[j] - xs[i]) * (k - i)

def compare(title, blast_path, swgpu_path):
    b, bpairs = load(blast_path)
    s, spairs = load(swgpu_path)
    n = same = prec = pct = zero = 0
    ratios, worst = [], []
    for key, bl in b.items():
        sl = s.get(key)
        if not sl:
            continue
        for eb, es in zip(bl, sl):           # equal keys: pair them off in order
            n += 1
            vb, hb = half_unit(eb)
            vs, hs = half_unit(es)
            same += eb == es
            prec += vs - hs <= vb + hb and vb - hb <= vs + hs
            ok1 = vs * 0.99 - hs <= vb * 1.01 + hb and vb * 0.99 - hb <= vs * 1.01 + hs
            pct += ok1
            if vb == 0 or vs == 0:
                zero += 1
                continue
            ratios.append(vs / vb)
            worst.append((abs(math.log10(vs / vb)), ok1, key, eb, es))
    logs = [math.log10(r) for r in ratios]
    print('%s' % title)
    per_query = defaultdict(int)
    for q, _ in spairs:
        per_query[q] += 1
    capped = sum(min(c, 500) for c in per_query.values())
    print('  hits at -e 10 (query-subject pairs): BLAST %d (-max_target_seqs 500), swgpu %d '
          '(%d counting at most 500 per query); BLAST\'s pairs that swgpu reports too: %d'
          % (len(bpairs), len(spairs), capped, len(bpairs & spairs)))
    print('  same (query, subject, raw score): %d' % n)
    if n == 0:
        return 0
    print('  printed identically: %d (%.2f%%); within print precision: %d (%.2f%%); '
          'within 1%%: %d (%.2f%%)' % (same, 100.0 * same / n, prec, 100.0 * prec / n,
                                        pct, 100.0 * pct / n))
    if ratios:
        print('  swgpu/BLAST ratio of printed E-values (%d hits, %d with 0.0 left out): '
              'median %.4f, 1%% %.4f, 5%% %.4f, 25%% %.4f, 75%% %.4f, 95%% %.4f, 99%% %.4f; '
              'max |log10 ratio| %.4f'
              % (len(ratios), zero, quantile(ratios, .5), quantile(ratios, .01),
                 quantile(ratios, .05), quantile(ratios, .25), quantile(ratios, .75),
                 quantile(ratios, .95), quantile(ratios, .99), max(abs(x) for x in logs)))
    bad = sorted((w for w in worst if not w[1]), reverse=True)[:5]
    for w in bad:
        print('    not within 1%%: %s %s score %d: BLAST %s, swgpu %s' % (w[2] + (w[3], w[4])))
    return n - pct

off = 0  # same-score hits not within 1% where the models should agree
off += compare('protein, BLAST+ default (Spouge) vs swgpu --evalue-model spouge',
               W + '/blastp_spouge.tsv', W + '/swgpu_spouge.tsv')
off += compare('protein, BLAST+ OLD_FSC=1 vs swgpu --evalue-model old-fsc',
               W + '/blastp_old.tsv', W + '/swgpu_old-fsc.tsv')
compare('protein, BLAST+ default (Spouge) vs swgpu --evalue-model old-fsc (the old default)',
        W + '/blastp_spouge.tsv', W + '/swgpu_old-fsc.tsv')
for sc in scoring:
    tag = sc.replace('/', '-')
    off += compare('protein %s, first %s queries: BLAST+ default (Spouge) vs swgpu '
                   '--evalue-model spouge' % (sc, scoring_nq),
                   W + '/blastp_spouge_%s.tsv' % tag, W + '/swgpu_spouge_%s.tsv' % tag)
    off += compare('protein %s, first %s queries: BLAST+ OLD_FSC=1 vs swgpu '
                   '--evalue-model old-fsc' % (sc, scoring_nq),
                   W + '/blastp_old_%s.tsv' % tag, W + '/swgpu_old-fsc_%s.tsv' % tag)
if dna:
    same = open(W + '/blastn_spouge.tsv').read() == open(W + '/blastn_old.tsv').read()
    print('DNA: blastn default and OLD_FSC=1 outputs %s' % ('identical' if same else 'DIFFER'))
    off += compare('DNA, blastn default vs swgpu (default model)',
                   W + '/blastn_spouge.tsv', W + '/swgpu_dna_spouge.tsv')
    off += compare('DNA, blastn OLD_FSC=1 vs swgpu --evalue-model old-fsc',
                   W + '/blastn_old.tsv', W + '/swgpu_dna_old-fsc.tsv')
print('%d same-score hits not within 1%% of BLAST+ under the matching model' % off)
sys.exit(1 if off else 0)
EOF
rc=$?
echo "protein: $nq queries; blastp (both runs) $((t1 - t0)) s, swgpu (both runs) $((t2 - t1)) s, $THREADS threads"
exit $rc
