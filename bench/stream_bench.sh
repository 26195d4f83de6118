#!/bin/sh
# stream_bench.sh - a database larger than the memory budget, streamed from
# disk (issue 31, item 2): bench/gen_synth writes a synthetic protein
# database of about SIZE residues (lognormal lengths, median 300, mean about
# 360), makedb builds it, then `swgpu search` runs under /usr/bin/time -v,
# once whole (no --max-memory) and once under each budget of MAXMEM; the
# table gives wall time, peak RSS, the parts and whether the output equals
# the whole search's.
#
#   sh bench/stream_bench.sh DATA BIN OUT
#     DATA  directory for the generated files (kept: a second run reuses them)
#     BIN   build directory (BIN/swgpu, BIN/bench/gen_synth: make bench)
#     OUT   the table (also printed)
#   SIZE=2000000000 residues, MAXMEM="512M", QUERIES=4 (the database's first
#   sequences), BACKEND=cpu, THREADS=0 (all cores) from the environment
set -e
[ $# -eq 3 ] || { echo "usage: sh bench/stream_bench.sh DATA BIN OUT" >&2; exit 2; }
DATA=$1 BIN=$2 OUT=$3
SIZE=${SIZE:-2000000000} MAXMEM=${MAXMEM:-512M} QUERIES=${QUERIES:-4}
BACKEND=${BACKEND:-cpu} THREADS=${THREADS:-0}
mkdir -p "$DATA"
n=$((SIZE / 360))
fa=$DATA/synth_$n.fa db=$DATA/synth_$n.swdb
if [ ! -s "$db" ]; then
    "$BIN/bench/gen_synth" -n $n "$fa"
    "$BIN/swgpu" makedb "$fa" "$db" > "$DATA/makedb_$n.log" 2>&1
fi
awk -v q=$QUERIES '/^>/ { k++ } k > q { exit } { print }' "$fa" > "$DATA/q.fa"
res=$(sed -n 's/.*sequences, \([0-9]*\) residues.*/\1/p' "$DATA/makedb_$n.log")

run() { # NAME ARGS...: a line of the table
    name=$1; shift
    /usr/bin/time -v "$BIN/swgpu" search -q "$DATA/q.fa" -d "$db" --backend $BACKEND -t $THREADS \
        -o "$DATA/out_$name.tsv" "$@" 2> "$DATA/err_$name" || { tail -n 3 "$DATA/err_$name"; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$DATA/err_$name")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$DATA/err_$name")
    parts=$(sed -n 's/.*streamed from disk in \([0-9]*\) parts.*/\1/p' "$DATA/err_$name")
    scan=$(sed -n 's/.*scan \([0-9.]*\) s.*/\1/p' "$DATA/err_$name")
    same=$(cmp -s "$DATA/out_whole.tsv" "$DATA/out_$name.tsv" && echo yes || echo NO)
    printf '| %s | %s | %s | %s | %s | %.0f | %s |\n' "$name" "${parts:-1}" "$wall" "$scan" \
        "$(awk -v r=$rss 'BEGIN { printf "%.0f", r / 1024 }')" "$(($(stat -c %s "$db") / 1048576))" \
        "$same" >> "$OUT"
}

{
    echo "stream_bench: $QUERIES queries x $res residues ($(stat -c %s "$db") bytes makedb file), backend $BACKEND, threads $THREADS, $(nproc) cores"
    echo
    echo "| run | parts | wall (m:ss) | scan (s) | peak RSS (MiB) | database (MiB) | output = whole |"
    echo "|---|---|---|---|---|---|---|"
} > "$OUT"
run whole
for m in $MAXMEM; do
    run "max-memory-$m" --max-memory $m
done
cat "$OUT"
