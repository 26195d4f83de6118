#!/bin/sh
# bigdb_bench.sh - a database larger than one resident GPU chunk (issue 31):
# the synthetic Swiss-Prot-size database (bench/gen_synth, 206 M residues)
# repeated COPIES times (default 48: 9.9 G residues, 27.5 M sequences, over
# the 2^30-word limit of a chunk's 32-bit offsets), made with makedb on every
# core, then NQ queries of cudasw_queries.fasta (default 2) searched with -n
# COPIES and -e 1e300 (the copies' E-values grow with the database): each
# query's best subject occurs COPIES times, so the COPIES best hits must all
# have the best score of the single copy's search (checked).
#
#   sh bench/bigdb_bench.sh [DATA] [SWGPU] [OUT] [COPIES] [NQ] [SEARCH OPTIONS...]
set -u
DATA=${1:-.data}
[ -f "$DATA/cudasw_queries.fasta" ] || DATA=../shared/data
SW=${2:-build/swgpu}
OUT=${3:-bigdb-bench.out}
COPIES=${4:-48}
NQ=${5:-2}
shift 5 2>/dev/null || shift $#
mkdir -p "$OUT"
GEN=$(dirname "$SW")/bench/gen_synth
[ -f "$OUT/one.fa" ] || "$GEN" "$OUT/one.fa" 2>/dev/null || { echo "gen_synth failed" >&2; exit 1; }
awk -v n="$NQ" '/^>/ { k++ } k <= n' "$DATA/cudasw_queries.fasta" >"$OUT/q.fa"
t0=$(date +%s.%N)
: >"$OUT/big.fa"
i=0
while [ $i -lt "$COPIES" ]; do cat "$OUT/one.fa" >>"$OUT/big.fa"; i=$((i + 1)); done
tcat=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
el() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(date +%s.%N)
"$SW" makedb --quiet "$OUT/big.fa" "$OUT/big.swdb" || exit 1
tmk=$(el "$t0")
mb=$(awk -v b="$(wc -c <"$OUT/big.fa")" 'BEGIN { printf "%.0f", b / 1e6 }')
rm -f "$OUT/big.fa"
"$SW" search -q "$OUT/q.fa" -d "$OUT/one.fa" -n 1 -e 1e300 -f '6 qseqid score' "$@" -o "$OUT/one.tsv" \
    2>"$OUT/one.err" || { cat "$OUT/one.err"; exit 1; }
t0=$(date +%s.%N)
"$SW" search -v -q "$OUT/q.fa" -d "$OUT/big.swdb" -n "$COPIES" -e 1e300 -f '6 qseqid score' "$@" \
    -o "$OUT/big.tsv" 2>"$OUT/big.err" || { tail -5 "$OUT/big.err"; exit 1; }
tse=$(el "$t0")
ok=$(awk -v c="$COPIES" 'NR == FNR { best[$1] = $2; next }
     { n[$1]++; if ($2 != best[$1]) bad++ }
     END { for (q in best) if (n[q] != c) bad++; print bad ? "WRONG" : "ok" }' "$OUT/one.tsv" "$OUT/big.tsv")
echo "copies $COPIES: FASTA $mb MB written in $tcat s, makedb $tmk s"
grep -E "chunk|streamed" "$OUT/big.err" | sed 's/^/  /' | head -3
tail -1 "$OUT/big.err"
echo "search wall $tse s; each query's $COPIES best hits = the single copy's best score: $ok"
rm -f "$OUT/big.swdb"
