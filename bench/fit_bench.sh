#!/bin/sh
# fit_bench.sh - what per-query fitted statistics cost the CPU backend: the
# same search with BLOSUM62 built in (published Karlin-Altschul parameters)
# and with the same scores read from a matrix file (no published parameters:
# each query's lambda and K are fitted to its own scores, 13-29 ms a query),
# on 1 thread and on THREADS; a table of the wall times and their difference.
# A third column: BLOSUM62 x 8 (bench/blosum62x8.mat, gaps 88/8), whose fits
# take longer (13-29 ms against ~2 ms) and whose scan is slower too (16-bit
# lanes saturate): run the script with two builds of swgpu to compare them.
#
#   sh bench/fit_bench.sh [DATA] [SWGPU] [OUT] [NQ] [THREADS]
#
# Workload: the first NQ (default 200) records of DATA/uniprot20k.fasta.gz x
# uniprot20k (a makedb file, made first, not timed), top 10 with
# alignments, gaps 11/1, --backend cpu.  THREADS: default every core.  The
# matrix file is bench/blosum62x8.mat divided by 8 (BLOSUM62 itself), so the
# scan is the same and the difference is the fits (bench/NOTES-cpu.md).
set -u
DATA=${1:-.data}
[ -f "$DATA/uniprot20k.fasta.gz" ] || DATA=../shared/data
SW=${2:-build/swgpu}
OUT=${3:-fit-bench.out}
NQ=${4:-200}
T=${5:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$OUT"
[ -f "$OUT/u20k.swdb" ] || "$SW" makedb "$DATA/uniprot20k.fasta.gz" "$OUT/u20k.swdb" --quiet || exit 1
gzip -dc "$DATA/uniprot20k.fasta.gz" | awk -v n="$NQ" '/^>/ { k++ } k <= n' >"$OUT/q.fa"
awk '/^#/ { next } NR > 0 && /^ / { print; next } { printf "%s", $1
    for (i = 2; i <= NF; i++) printf " %d", $i / 8; printf "\n" }' \
    "$(dirname "$0")/blosum62x8.mat" >"$OUT/blosum62.mat"
wall() { # the wall seconds of the summary line of log $1
    sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' "$1" | tail -1
}
printf '%-8s %12s %12s %12s %12s\n' threads builtin_s file_s fits_s x8_s >"$OUT/table.txt"
for t in 1 "$T"; do
    "$SW" search -q "$OUT/q.fa" -d "$OUT/u20k.swdb" --backend cpu -t "$t" -n 10 \
        -o "$OUT/builtin_$t.tsv" -v 2>"$OUT/builtin_$t.err" || { tail -1 "$OUT/builtin_$t.err"; exit 1; }
    "$SW" search -q "$OUT/q.fa" -d "$OUT/u20k.swdb" --backend cpu -t "$t" -n 10 \
        --matrix "$OUT/blosum62.mat" -o "$OUT/file_$t.tsv" -v 2>"$OUT/file_$t.err" ||
        { tail -1 "$OUT/file_$t.err"; exit 1; }
    "$SW" search -q "$OUT/q.fa" -d "$OUT/u20k.swdb" --backend cpu -t "$t" -n 10 \
        --matrix "$(dirname "$0")/blosum62x8.mat" --gap-open 88 --gap-extend 8 -o "$OUT/x8_$t.tsv" -v \
        2>"$OUT/x8_$t.err" || { tail -1 "$OUT/x8_$t.err"; exit 1; }
    a=$(wall "$OUT/builtin_$t.err") b=$(wall "$OUT/file_$t.err") c=$(wall "$OUT/x8_$t.err")
    awk -v t="$t" -v a="$a" -v b="$b" -v c="$c" \
        'BEGIN { printf "%-8s %12.2f %12.2f %12.2f %12.2f\n", t, a, b, b - a, c }' >>"$OUT/table.txt"
done
cat "$OUT/table.txt"
