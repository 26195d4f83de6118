#!/bin/sh
# psi_bench.sh - iterated searches (PSI-BLAST) side by side: swgpu, psiblast and
# MMseqs2 with 3 iterations on the same queries, database and cores.
#
#   sh bench/psi_bench.sh [DATA [SWGPU [WORK]]]
#
# DATA holds queries250.fasta and uniprot20k.fasta.gz (default ../shared/data
# beside the checkout), SWGPU the tool (build/swgpu), WORK a scratch folder
# (/tmp/swgpu-psi-bench).  Environment: THREADS (default: the cores),
# BACKEND (auto: cuda on a GPU machine, else cpu), ITER (3), NQ (all queries),
# TOOLS (swgpu psiblast mmseqs: a subset to run fewer), PSSM_CHECK=1 also runs
# the --pssm acceptance check of records 101-110 (psiblast -num_iterations 2
# PSSMs, -in_pssm -max_target_seqs 50 against swgpu --pssm -n 100).
# psiblast (ncbi-blast+) and mmseqs (mmseqs2) are used when installed.
#
# For each program: the wall time, and the query-subject pairs it reports at
# E-value <= 0.001 in each round (psiblast and MMseqs2 report at most 500 a
# query, swgpu all: TOP); then how many of psiblast's and MMseqs2's
# pairs at E <= 0.001 in their last round swgpu's last round reports (at any
# E-value it reports, and at <= 0.001).  All run with the same inclusion
# threshold (0.002), no composition-based statistics, 500 hits per query.
# The table is printed last.
set -u
DATA=${1:-../shared/data}
SWGPU=${2:-build/swgpu}
WORK=${3:-/tmp/swgpu-psi-bench}
THREADS=${THREADS:-$(nproc)}
BACKEND=${BACKEND:-auto}
ITER=${ITER:-3}
TOOLS=${TOOLS:-swgpu psiblast mmseqs}
TOP=${TOP:-20000}   # swgpu reports every hit (the rounds include among the best 500)
case $SWGPU in /*) ;; *) SWGPU=$(pwd)/$SWGPU ;; esac
case $DATA in /*) ;; *) DATA=$(pwd)/$DATA ;; esac
mkdir -p "$WORK" && cd "$WORK" || exit 2
[ -f "$DATA/queries250.fasta" ] && [ -f "$DATA/uniprot20k.fasta.gz" ] ||
    { echo "psi_bench: no queries250.fasta / uniprot20k.fasta.gz in $DATA" >&2; exit 2; }

[ -s u20k.fa ] || zcat "$DATA/uniprot20k.fasta.gz" > u20k.fa
if [ -n "${NQ:-}" ]; then
    awk -v n="$NQ" '/^>/{k++} k<=n' "$DATA/queries250.fasta" > q.fa
else
    cp "$DATA/queries250.fasta" q.fa
fi
has() { command -v "$1" >/dev/null 2>&1 && case " $TOOLS " in *" $1 "*) true ;; *) false ;; esac; }
now() { date +%s.%N; }

# swgpu: every round in format 7 ("# Iteration: N" lines)
if case " $TOOLS " in *" swgpu "*) true ;; *) false ;; esac; then
    echo "swgpu: $ITER iterations, backend $BACKEND, $THREADS threads" >&2
    t0=$(now)
    "$SWGPU" search -q q.fa -d u20k.fa --iterations "$ITER" --report all -n "$TOP" \
        --backend "$BACKEND" -t "$THREADS" --outfmt '7 qseqid sseqid evalue' \
        -o swgpu.out 2> swgpu.err || { cat swgpu.err >&2; exit 1; }
    t1=$(now)
    echo "$t0 $t1" > swgpu.time
    tail -n 1 swgpu.err >&2
fi
if has psiblast; then
    [ -s u20k.pin ] || [ -s u20k.pal ] || makeblastdb -in u20k.fa -dbtype prot -out u20k >/dev/null
    echo "psiblast: $ITER iterations, $THREADS threads" >&2
    t0=$(now)
    psiblast -query q.fa -db u20k -num_iterations "$ITER" -comp_based_stats 0 \
        -num_threads "$THREADS" -outfmt '7 qseqid sseqid evalue' > psiblast.out 2> psiblast.err
    t1=$(now)
    echo "$t0 $t1" > psiblast.time
fi
if has mmseqs; then
    echo "mmseqs: $ITER iterations, $THREADS threads" >&2
    rm -rf mmtmp
    t0=$(now)
    mmseqs easy-search q.fa u20k.fa mmseqs.m8 mmtmp --num-iterations "$ITER" \
        --threads "$THREADS" -e 10 --max-seqs 500 > mmseqs.log 2>&1 || { tail mmseqs.log >&2; }
    t1=$(now)
    echo "$t0 $t1" > mmseqs.time
fi

if [ "${PSSM_CHECK:-0}" = 1 ] && has psiblast; then
    # the --pssm acceptance: psiblast's PSSMs of records 101-110
    fail=0
    for i in $(seq 101 110); do
        awk -v n="$i" '/^>/{k++} k==n' "$DATA/queries250.fasta" > p$i.fa
        psiblast -query p$i.fa -db u20k -num_iterations 2 -out_ascii_pssm p$i.pssm \
            -out_pssm p$i.asn -comp_based_stats 0 -num_threads "$THREADS" > /dev/null 2>&1
        psiblast -in_pssm p$i.asn -db u20k -comp_based_stats 0 -max_target_seqs 50 \
            -num_threads "$THREADS" -outfmt '6 qseqid sseqid score evalue bitscore' > pb$i.tsv
        "$SWGPU" search --pssm p$i.pssm -d u20k.fa -n 100 --backend "$BACKEND" \
            -t "$THREADS" --quiet --outfmt '6 qseqid sseqid score evalue bitscore' > sw$i.tsv
    done
fi

python3 - "$ITER" "$THREADS" "$BACKEND" <<'EOF'
import os, sys
iters, threads, backend = int(sys.argv[1]), sys.argv[2], sys.argv[3]
E = 1e-3

import re

def key(i):
    """UniProt ids as MMseqs2 prints them (sp|P12345|NAME -> P12345)"""
    m = re.match(r"(?:sp|tr)\|([^|]+)\|", i)
    return m.group(1) if m else i

def read7(path):
    """{query: {round: {subject: best E}}} from format 7 with '# Iteration' lines"""
    res, q, r = {}, None, 1
    for line in open(path):
        if line.startswith("# Iteration:"):
            r = int(line.split()[2])
        elif line.startswith("# Query:"):
            q = key(line.split()[2])
            res.setdefault(q, {}).setdefault(r, {})
        elif not line.startswith("#") and line.count("\t") >= 2:  # not "Search has CONVERGED!"
            f = line.rstrip("\n").split("\t")
            d = res.setdefault(key(f[0]), {}).setdefault(r, {})
            e = float(f[2])
            d[key(f[1])] = min(e, d.get(key(f[1]), e))
    return res

def seconds(name):
    t0, t1 = map(float, open(name + ".time").read().split())
    return t1 - t0

rows = []
sw = read7("swgpu.out") if os.path.exists("swgpu.out") else None
last = lambda res: {q: rs[max(rs)] for q, rs in res.items()}
if sw:
    cells = gcups = "-"
    for line in open("swgpu.err"):
        m = re.search(r"([0-9.e+]+) cells, scan [0-9.]+ s \(([0-9.]+) GCUPS\)", line)
        if m:
            cells, gcups = m.group(1), m.group(2)
    per = [sum(sum(1 for e in rs.get(k, {}).values() if e <= E) for rs in sw.values())
           for k in range(1, iters + 1)]
    rows.append(("swgpu (--backend %s)" % backend, seconds("swgpu"), cells, gcups, per, "-"))
    swl = last(sw)

def recall(other):
    ol = last(other)
    want = [(q, s) for q, d in ol.items() for s, e in d.items() if e <= E]
    any_e = sum(1 for q, s in want if s in swl.get(q, {}))
    at_e = sum(1 for q, s in want if swl.get(q, {}).get(s, 1e9) <= E)
    return len(want), any_e, at_e

if os.path.exists("psiblast.out"):
    pb = read7("psiblast.out")
    per = [sum(sum(1 for e in rs.get(k, {}).values() if e <= E) for rs in pb.values())
           for k in range(1, iters + 1)]
    rows.append(("psiblast -num_iterations %d" % iters, seconds("psiblast"), "-", "-", per,
                 recall(pb) if sw else "-"))
if os.path.exists("mmseqs.m8"):
    mm = {}
    for line in open("mmseqs.m8"):
        f = line.split("\t")
        d = mm.setdefault(key(f[0]), {1: {}})[1]
        e = float(f[10])
        d[key(f[1])] = min(e, d.get(key(f[1]), e))
    n = sum(1 for d in mm.values() for e in d[1].values() if e <= E)
    rows.append(("mmseqs search --num-iterations %d" % iters, seconds("mmseqs"), "-", "-",
                 ["-"] * (iters - 1) + [n], recall(mm) if sw else "-"))

if os.path.exists("pb101.tsv"):
    import math
    def interval(s):
        v = float(s)
        if s == "0.0": return (0.0, 1e-180)
        m = s.split("e")[0]
        d = len(m.split(".")[1]) if "." in m else 0
        h = 0.5 * 10 ** -d * (10 ** int(s.split("e")[1]) if "e" in s else 1)
        return (max(v - h, 0.0), v + h)
    n = found = lower = same = within = 0
    for i in range(101, 111):
        mine = {}
        for line in open("sw%d.tsv" % i):
            f = line.split("\t")
            mine.setdefault(f[1], f)
        best = {}
        for line in open("pb%d.tsv" % i):
            f = line.rstrip("\n").split("\t")
            if f[1] not in best:
                best[f[1]] = f
        for s, f in best.items():
            n += 1
            m = mine.get(s)
            if not m: continue
            found += 1
            lower += int(m[2]) < int(f[2])
            if m[2] == f[2]:
                same += 1
                a, b = interval(m[3].strip()), interval(f[3].strip())
                within += a[0] <= b[1] * 1.01 and b[0] <= a[1] * 1.01
    print("--pssm check (records 101-110): psiblast subjects %d, found by swgpu -n 100 %d, "
          "scored lower %d; equal raw scores %d, E-values within 1%% of psiblast's %d" %
          (n, found, lower, same, within))

print()
print("| program (%s threads) | wall | cells | GCUPS | pairs at E <= 0.001 per round | "
      "of its last round's pairs at E <= 0.001, swgpu's last round reports (at E <= 0.001) |"
      % threads)
print("|---|---:|---:|---:|---|---|")
for name, t, cells, g, per, rec in rows:
    r = "-" if rec == "-" else "%d of %d (%.2f%%; %d, %.2f%%)" % (
        rec[1], rec[0], 100.0 * rec[1] / max(rec[0], 1), rec[2], 100.0 * rec[2] / max(rec[0], 1))
    print("| %s | %.1f s | %s | %s | %s | %s |" % (name, t, cells, g,
          ", ".join(str(x) for x in per), r))
EOF
