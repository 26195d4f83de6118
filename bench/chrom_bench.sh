#!/bin/sh
# chrom_bench.sh - `swgpu align` on a simulated chromosome pair.
#
#   sh bench/chrom_bench.sh BACKEND [SWGPU] [OUT_DIR]
#
# BACKEND is cpu or cuda.  The pair comes from build/bench/gen_chrom (`make
# bench`; fixed seed): a random sequence and a copy with 1 % substitutions,
# 0.1 % short indels, 3 inversions and a translocation.  The script runs
# the score pass alone (--score-only) and the full alignment, each under
# /usr/bin/time -v when GNU time is there, and prints per run the score,
# the cells of the whole matrix, the cells computed and pruned (all phases),
# the score pass's seconds, GCUPS (all cells of the matrix over the
# score-pass time, pruned ones counted as done) and pruned share, the
# reverse and traceback seconds, the wall time and the peak memory (the
# process's resident set, and the library's own count on the host and the
# GPU); then checks that both runs agree on score and coordinates; the
# table comes last.
# Environment: CHROM_LEN (bases of A, default 25000000), CHROM_SEED (12),
# CHROM_THREADS (-t, default 0: all cores), CHROM_MEM (--max-memory, 8G),
# CHROM_ARGS (more options, e.g. scoring: "--match 1 --mismatch -3
# --gap-open 3 --gap-extend 2"; default none: swgpu's defaults),
# CHROM_TIMEOUT (seconds a run, 7200), CHROM_GEN (the generator).
set -u
BACKEND=${1:?usage: chrom_bench.sh cpu|cuda [SWGPU] [OUT_DIR]}
S=${2:-build/swgpu}
OUT=${3:-${TMPDIR:-/tmp}/swgpu-chrom-bench}
LEN=${CHROM_LEN:-25000000}
SEED=${CHROM_SEED:-12}
THREADS=${CHROM_THREADS:-0}
MEM=${CHROM_MEM:-8G}
ARGS=${CHROM_ARGS:-}
TO=${CHROM_TIMEOUT:-7200}
GEN=${CHROM_GEN:-build/bench/gen_chrom}
case $BACKEND in cpu|cuda) ;; *) echo "chrom_bench.sh: backend '$BACKEND' is not cpu or cuda" >&2; exit 1 ;; esac
[ -x "$S" ] || { echo "chrom_bench.sh: no $S (make first)" >&2; exit 1; }
[ -x "$GEN" ] || { echo "chrom_bench.sh: no $GEN (make bench)" >&2; exit 1; }
mkdir -p "$OUT"
TABLE=$OUT/table.txt
: > "$TABLE"
A=$OUT/simA_$LEN.fa
B=$OUT/simB_$LEN.fa

# the pair, made again only when its size or seed changed
if [ ! -s "$A" ] || [ ! -s "$B" ] || [ "$(cat "$OUT/pair_$LEN.seed" 2>/dev/null)" != "$SEED" ]; then
    "$GEN" -n "$LEN" -s "$SEED" "$A" "$B" 2> "$OUT/pair_$LEN.log" || { cat "$OUT/pair_$LEN.log" >&2; exit 1; }
    echo "$SEED" > "$OUT/pair_$LEN.seed"
fi
echo "pair: $(head -n 1 "$B" | cut -c 2-)"
sed 's/^/  /' "$OUT/pair_$LEN.log"

GNU_TIME=
if /usr/bin/time -v true > /dev/null 2>&1; then GNU_TIME=/usr/bin/time; fi

# megabytes for people: mb MB
mb() { awk -v m="${1:-0}" 'BEGIN {if (m < 1024) printf "%.0f MB", m; else printf "%.2f GB", m / 1024}'; }

# one run: NAME OPTIONS...
run() {
    name=$1
    shift
    ERR=$OUT/$name.err
    t0=$(date +%s.%N)
    if [ -n "$GNU_TIME" ]; then
        timeout "$TO" "$GNU_TIME" -v "$S" align "$A" "$B" --backend "$BACKEND" -t "$THREADS" \
            --max-memory "$MEM" $ARGS "$@" > "$OUT/$name.out" 2> "$ERR"
    else
        timeout "$TO" "$S" align "$A" "$B" --backend "$BACKEND" -t "$THREADS" \
            --max-memory "$MEM" $ARGS "$@" > "$OUT/$name.out" 2> "$ERR"
    fi
    rc=$?
    wall=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
    if [ $rc -ne 0 ]; then
        printf '| %s | FAILED (exit %d): %s |\n' "$name" $rc "$(grep -v '^\s' "$ERR" | tail -n 1)" >> "$TABLE"
        return 1
    fi
    line=$(grep 'align plus: backend' "$ERR" | tail -n 1)
    echo "$name: $line"
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$ERR")
    if [ -n "$rss" ]; then
        rss=$(mb $(awk -v k="$rss" 'BEGIN {print k / 1024}'))
    else
        rss=$(mb $(echo "$line" | sed -n 's/.*(RSS \([0-9.]*\) MB).*/\1/p'))
    fi
    cells=$(awk -v a="$(sed -n 's/^query .*\t//p' "$OUT/$name.out")" \
                -v b="$(sed -n 's/^target .*\t//p' "$OUT/$name.out")" 'BEGIN {printf "%.3g", a * b}')
    computed=$(echo "$line" | sed -n 's/.*, \([0-9.e+]*\) cells computed.*/\1/p')
    pruned=$(echo "$line" | sed -n 's/.*computed (\([0-9.e+]*\) pruned).*/\1/p')
    share=$(echo "$line" | sed -n 's/.*GCUPS, \([0-9]*%\) pruned.*/\1/p')
    sp=$(echo "$line" | sed -n 's/.*score pass \([0-9.]*\) s (\([0-9.]*\) GCUPS.*/\1 s | \2/p')
    rev=$(echo "$line" | sed -n 's/.*reverse \([0-9.]*\) s.*/\1 s/p')
    tb=$(echo "$line" | sed -n 's/.*traceback \([0-9.]*\) s.*/\1 s/p')
    host="$(mb $(echo "$line" | sed -n 's/.*peak host \([0-9.]*\) MB.*/\1/p')) / $(mb $(echo "$line" |
           sed -n 's/.*device \([0-9.]*\) MB.*/\1/p'))"
    score=$(sed -n 's/^score *//p' "$OUT/$name.out")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s s | %s | %s | %s |\n' "$name" "$score" \
        "$cells" "$computed" "$pruned" "$sp" "$share" "$rev" "$tb" "$wall" "$rss" "$host" \
        "$(echo "$line" | sed -n 's/.*backend \([a-z]*\),.*/\1/p')" >> "$TABLE"
}

run "score-only" --score-only
run "full"
# the score pass alone and the full alignment find the same score and ends
if [ -s "$OUT/score-only.out" ] && [ -s "$OUT/full.out" ]; then
    for f in score query_range target_range; do
        x=$(sed -n "s/^$f *//p" "$OUT/score-only.out") y=$(sed -n "s/^$f *//p" "$OUT/full.out")
        [ "$x" = "$y" ] || echo "score-only and full DIFFER in $f: $x vs $y" >> "$OUT/check.txt"
    done
    [ -s "$OUT/check.txt" ] || echo "score-only and full: same score and coordinates" > "$OUT/check.txt"
    sed -n 's/^\(query_range\|target_range\|identity\) */  \1 /p' "$OUT/full.out"
fi

echo
echo "simulated pair of $LEN bp (seed $SEED), backend $BACKEND, -t $THREADS, --max-memory $MEM${ARGS:+, $ARGS}"
echo "| run | score | cells | computed | pruned | score pass | GCUPS | pruned (score pass) | reverse | traceback | wall | peak RSS | peak host / GPU (library) | backend |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
cat "$TABLE"
cat "$OUT/check.txt" 2>/dev/null
