#!/bin/sh
# cpu_compare.sh - swgpu's CPU backend against ssearch36 (fasta3) and
# parasail_aligner (parasail), side by side on this machine in one run:
# same queries, same database, BLOSUM62 with gap open 11 / extend 1
# (a gap of k costs 11 + k), same thread count.
#
#   bench/cpu_compare.sh [THREADS]        (default 2)
#
# Environment: DATA (default /work/shared/data), SWGPU (default
# build/swgpu), WORK (scratch folder, default /tmp/swgpu_cpu_compare),
# REPEAT (runs per tool and query set, the fastest is kept; default 1),
# PARASAIL_FUNCS (parasail functions to try; the fastest counts).
#
# Query sets: 20 of queries250.fasta spanning its lengths (evenly spaced
# length ranks, shortest and longest included), and the 20 CUDASW++ queries.  Database: uniprot20k.
# Printed per tool and set: wall seconds, GCUPS (sum of qlen * database
# residues / seconds) and "swgpu is": the tool's seconds / swgpu's seconds
# in the same mode (how many times faster swgpu is).  Two modes: scores
# only (swgpu --no-align, ssearch36 -d 0, parasail: every pair scored, the
# best reported), and with alignments of the 10 best hits per query
# (swgpu default, ssearch36 -d 10).  Score check: per query the best score
# of every tool must equal swgpu's, and parasail's ten best scores must
# equal swgpu's ten best.  The last lines give, per set, the fastest other
# tool in the scores-only mode and swgpu's speed relative to it.
#
# Tools are installed from Debian when missing (apt-get update; apt-get
# install -y fasta3 parasail).  ssearch36 is run as `-s BL62 -f -11 -g -1`;
# parasail_aligner as `-o 12 -e 1` (parasail charges the open penalty for
# the first gap residue too) with -x (score every pair) and queries on stdin.
set -eu

THREADS=${1:-2}
DATA=${DATA:-/work/shared/data}
SWGPU=${SWGPU:-build/swgpu}
WORK=${WORK:-/tmp/swgpu_cpu_compare}
REPEAT=${REPEAT:-1}
PARASAIL_FUNCS=${PARASAIL_FUNCS:-"sw_striped_profile_avx2_256_sat sw_scan_profile_avx2_256_sat sw_striped_profile_sse41_128_sat"}
DBGZ=$DATA/uniprot20k.fasta.gz

die() { echo "cpu_compare: $*" >&2; exit 1; }
[ -x "$SWGPU" ] || die "$SWGPU not found (run make first)"
[ -f "$DBGZ" ] || die "$DBGZ not found (set DATA)"
if ! command -v ssearch36 >/dev/null 2>&1 || ! command -v parasail_aligner >/dev/null 2>&1; then
    echo "installing fasta3 and parasail from Debian ..." >&2
    apt-get update >/dev/null && apt-get install -y fasta3 parasail >/dev/null ||
        die "cannot install fasta3 parasail"
fi

mkdir -p "$WORK"
# plain-text copies: parasail_aligner does not read gzip
gzip -dc "$DBGZ" >"$WORK/db.fasta"
DBRES=$(awk '!/^>/ { gsub(/[^A-Za-z]/, ""); n += length($0) } END { print n }' "$WORK/db.fasta")

# one record per line "len<TAB>header<TAB>sequence", then pick by length rank
fasta_table() {
    awk '/^>/ { if (h != "") print length(s) "\t" h "\t" s; h = $0; s = ""; next }
         { gsub(/[ \t\r]/, ""); s = s $0 }
         END { if (h != "") print length(s) "\t" h "\t" s }' "$1"
}
fasta_table "$DATA/queries250.fasta" | sort -s -n -k1,1 |
    awk -F '\t' '{ r[NR] = $0 }
        END { for (k = 0; k < 20; k++) { split(r[1 + int(k * (NR - 1) / 19 + 0.5)], f, "\t"); print f[2]; print f[3] } }' \
        >"$WORK/q_sub20.fasta"
cp "$DATA/cudasw_queries.fasta" "$WORK/q_cudasw.fasta"

now() { date +%s.%N; }

# time_best OUTFILE CMD... : run CMD REPEAT times (stdout to OUTFILE),
# print the fastest wall time
time_best() {
    out=$1
    shift
    best=""
    r=0
    while [ "$r" -lt "$REPEAT" ]; do
        t0=$(now)
        "$@" >"$out" 2>"$out.err" || { cat "$out.err" >&2; die "failed: $*"; }
        t1=$(now)
        t=$(echo "$t1 - $t0" | bc)
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
        r=$((r + 1))
    done
    echo "$best"
}

run_parasail() { # FUNC QUERIES CSV
    parasail_aligner -x -a "$1" -o 12 -e 1 -m blosum62 -t "$THREADS" -f "$WORK/db.fasta" -g "$3" <"$2"
}

# per-query score lists "query_index score" (best first, 10 per query)
scores_swgpu() { # TSV (qseqid score) QUERIES
    awk -F '\t' 'NR == FNR { if (/^>/) { id = substr($1, 2); sub(/[ \t].*/, "", id); if (!(id in qi)) qi[id] = n++ } next }
                 { print qi[$1] "\t" $2 }' "$2" "$1" | sort -s -k1,1n -k2,2nr
}
scores_parasail() { # CSV: query,target,qlen,tlen,score,...
    awk -F ',' '{ print $1 "\t" $5 }' "$1" | sort -s -k1,1n -k2,2nr |
        awk -F '\t' '{ if (c[$1]++ < 10) print }'
}
scores_ssearch() { # default output, best-scores lists
    awk '/^ *[0-9]+>>>/ { q = $1; sub(/>>>.*/, "", q); q = q - 1; inlist = 0; next }
         /^The best scores are:/ { inlist = 1; next }
         inlist && NF == 0 { inlist = 0; next }
         inlist { print q "\t" $(NF - 2) }' "$1" | sort -s -k1,1n -k2,2nr
}
top1() { awk -F '\t' '!($1 in s) { s[$1] = $2 } END { for (q in s) print q "\t" s[q] }' | sort -n; }

printf '%-7s %-44s %8s %8s %9s  %s\n' "set" "tool" "seconds" "GCUPS" "swgpu is" "scores"
summary=""
for set in sub20 cudasw; do
    Q=$WORK/q_$set.fasta
    QRES=$(awk '!/^>/ { gsub(/[^A-Za-z]/, ""); n += length($0) } END { print n }' "$Q")
    CELLS=$(echo "$QRES * $DBRES" | bc)

    # line TOOL SECONDS REFERENCE_SECONDS CHECK
    line() {
        printf '%-7s %-44s %8.2f %8.2f %8.2fx  %s\n' "$set" "$1" "$2" \
            "$(echo "$CELLS / $2 / 1000000000" | bc -l)" "$(echo "$2 / $3" | bc -l)" "$4"
    }
    same() { cmp -s "$1" "$2" && echo "same best scores" || echo "DIFFERENT best scores ($1 vs $2)"; }

    # scores only: every tool scores all pairs and reports the best ones
    ts=$(time_best "$WORK/sw_$set.tsv" "$SWGPU" search -q "$Q" -d "$DBGZ" --backend cpu -t "$THREADS" \
        -n 10 -e 1e9 --no-align --outfmt "6 qseqid score" --quiet)
    scores_swgpu "$WORK/sw_$set.tsv" "$Q" >"$WORK/sw_$set.scores"
    top1 <"$WORK/sw_$set.scores" >"$WORK/sw_$set.top1"
    line "swgpu --backend cpu --no-align" "$ts" "$ts" "(the reference of the checks)"

    tss=$(time_best "$WORK/ss_$set.out" ssearch36 -s BL62 -f -11 -g -1 -T "$THREADS" -q -d 0 -b =10 -E 1e9 \
        "$Q" "$WORK/db.fasta")
    scores_ssearch "$WORK/ss_$set.out" | top1 >"$WORK/ss_$set.top1"
    line "ssearch36 -d 0" "$tss" "$ts" "$(same "$WORK/ss_$set.top1" "$WORK/sw_$set.top1")"
    fastest=$tss
    fastname="ssearch36"

    for f in $PARASAIL_FUNCS; do
        tp=$(time_best "$WORK/pa_$set.log" run_parasail "$f" "$Q" "$WORK/pa_$set.$f.csv")
        scores_parasail "$WORK/pa_$set.$f.csv" >"$WORK/pa_$set.$f.scores"
        if cmp -s "$WORK/pa_$set.$f.scores" "$WORK/sw_$set.scores"; then chk="same 10 best scores"
        else chk="DIFFERENT scores (pa_$set.$f.scores vs sw_$set.scores)"; fi
        line "parasail_aligner -a $f" "$tp" "$ts" "$chk"
        if [ "$(echo "$tp < $fastest" | bc)" = 1 ]; then fastest=$tp; fastname="parasail $f"; fi
    done

    # with alignments of the 10 best hits per query
    ta=$(time_best "$WORK/swa_$set.tsv" "$SWGPU" search -q "$Q" -d "$DBGZ" --backend cpu -t "$THREADS" \
        -n 10 -e 1e9 --outfmt "6 qseqid score" --quiet)
    scores_swgpu "$WORK/swa_$set.tsv" "$Q" | top1 >"$WORK/swa_$set.top1"
    line "swgpu --backend cpu (+10 alignments/query)" "$ta" "$ta" "$(same "$WORK/swa_$set.top1" "$WORK/sw_$set.top1")"
    tsa=$(time_best "$WORK/ssa_$set.out" ssearch36 -s BL62 -f -11 -g -1 -T "$THREADS" -q -d 10 -b =10 -E 1e9 \
        "$Q" "$WORK/db.fasta")
    scores_ssearch "$WORK/ssa_$set.out" | top1 >"$WORK/ssa_$set.top1"
    line "ssearch36 -d 10 (+10 alignments/query)" "$tsa" "$ta" "$(same "$WORK/ssa_$set.top1" "$WORK/sw_$set.top1")"

    summary="$summary$(printf '%s: swgpu (scores only) %.2f s; fastest other tool: %s %.2f s; swgpu is %.2fx as fast' \
        "$set" "$ts" "$fastname" "$fastest" "$(echo "$fastest / $ts" | bc -l)")
"
done
printf '%s' "$summary"
echo "threads $THREADS; database $(basename "$DBGZ"): $DBRES residues; $(nproc) cores;" \
    "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
