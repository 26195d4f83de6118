#!/bin/sh
# makedb_bench.sh - makedb's rate in MB of FASTA per second on 1 thread and
# on THREADS (default: every core), the database files compared byte for
# byte, and the old reader (one thread) for reference.
#
#   sh bench/makedb_bench.sh [DATA] [SWGPU] [OUT] [COPIES] [THREADS]
#
# Workload: uniprot20k (DATA/uniprot20k.fasta.gz, 11.4 MB of FASTA)
# decompressed and repeated COPIES times (default 24: 274 MB, 480,000
# sequences) into one plain file; each run twice, the faster reported.
set -u
DATA=${1:-.data}
[ -f "$DATA/uniprot20k.fasta.gz" ] || DATA=../shared/data
SW=${2:-build/swgpu}
OUT=${3:-makedb-bench.out}
COPIES=${4:-24}
THREADS=${5:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$OUT"
zcat "$DATA/uniprot20k.fasta.gz" >"$OUT/one.fa"
: >"$OUT/big.fa"
i=0
while [ $i -lt "$COPIES" ]; do cat "$OUT/one.fa" >>"$OUT/big.fa"; i=$((i + 1)); done
bytes=$(wc -c <"$OUT/big.fa")
cat "$OUT/big.fa" >/dev/null # in the page cache for every run
run() { # threads -> seconds (the faster of two)
    best=
    for k in 1 2; do
        rm -f "$OUT/t$1.swdb"
        t0=$(date +%s.%N)
        "$SW" makedb -t "$1" --quiet "$OUT/big.fa" "$OUT/t$1.swdb" || { echo "makedb -t $1 failed" >&2; exit 1; }
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
        best=$(awk -v a="${best:-$t}" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
    done
    echo "$best"
}
t1=$(run 1)
tn=$(run "$THREADS")
same=$(cmp -s "$OUT/t1.swdb" "$OUT/t$THREADS.swdb" && echo identical || echo DIFFERENT)
printf '%-28s %10s %10s\n' "makedb of $((bytes / 1000000)) MB" "wall s" "MB/s"
printf '%-28s %10s %10.0f\n' "1 thread" "$t1" "$(awk -v b="$bytes" -v t="$t1" 'BEGIN { print b / 1e6 / t }')"
printf '%-28s %10s %10.0f\n' "$THREADS threads" "$tn" "$(awk -v b="$bytes" -v t="$tn" 'BEGIN { print b / 1e6 / t }')"
echo "files: $same"
rm -f "$OUT/big.fa" "$OUT/one.fa" "$OUT"/t*.swdb
