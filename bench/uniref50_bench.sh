#!/bin/sh
# uniref50_bench.sh - the UniRef50-size database (issue 31): the synthetic
# Swiss-Prot-size database x K (bench/gen_synth -x K; K = 100: 57.3 M
# sequences, about 20.6 G residues, 22 GB of FASTA) made by makedb from a
# pipe, the FASTA never written to disk:
#
#   gen_synth -x K | swgpu makedb - OUT/synth_xK.swdb
#
# then the 20 CUDASW++ queries (DATA/cudasw_queries.fasta) searched against
# it on the cuda backend.  One table: makedb seconds and MB of FASTA per
# second, the search's wall and scan seconds and GCUPS (its -v summary),
# peak RSS of each (/usr/bin/time -v), the hits.  An existing OUT/synth_xK.swdb
# is reused (makedb "reused"; remove it to time makedb again).
#
#   sh bench/uniref50_bench.sh DATA SWGPU OUT [K] [SEARCH OPTIONS...]
#
# Defaults: DATA .data (else ../shared/data), SWGPU build/swgpu (gen_synth
# beside it in bench/: make bench), K 100.  FROM_FILE=1 writes the FASTA
# to OUT first and times makedb on the file alone (22 GB more disk for K =
# 100; the file is removed after).  BACKEND=cpu runs the search on
# the CPU instead, SYNTH_N=N copies of N sequences instead of Swiss-Prot's
# 572,970 (both: a test of the script).
set -u
DATA=${1:-.data}
[ -f "$DATA/cudasw_queries.fasta" ] || DATA=../shared/data
SW=${2:-build/swgpu}
OUT=${3:-uniref50-bench.out}
K=${4:-100}
shift 4 2>/dev/null || shift $#
GEN=$(dirname "$SW")/bench/gen_synth
for f in "$SW" "$GEN"; do
    [ -x "$f" ] || { echo "uniref50_bench: no $f (make, make bench)" >&2; exit 1; }
done
# GNU time's peak RSS; without it makedb's is not known, the search's is its -v line's
TIME="/usr/bin/time -v"
/usr/bin/time -v true >/dev/null 2>&1 || TIME=env
[ -f "$DATA/cudasw_queries.fasta" ] || { echo "uniref50_bench: no $DATA/cudasw_queries.fasta" >&2; exit 1; }
mkdir -p "$OUT" || exit 1
DB=$OUT/synth_x$K${SYNTH_N:+_n$SYNTH_N}.swdb
el() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
rss() {
    awk -F': ' '/Maximum resident set size/ { r = sprintf("%.2f GB", $2 / 1048576) }
        / peak RSS [0-9.]+ MB/ && r == "" { sub(/.* peak RSS /, ""); r = sprintf("%.2f GB", $1 / 1024) }
        END { print r == "" ? "-" : r }' "$1"
}

if [ -f "$DB" ]; then
    tmk=reused mbs=- mkrss=-
else
    if [ "${FROM_FILE:-0}" = 1 ]; then
        # the FASTA written first (not timed), makedb timed on the file alone
        FA=$OUT/synth_x$K${SYNTH_N:+_n$SYNTH_N}.fa
        "$GEN" -x "$K" ${SYNTH_N:+-n "$SYNTH_N"} "$FA" 2>"$OUT/gen.log"
        echo $? >"$OUT/gen.rc"
        t0=$(date +%s.%N)
        $TIME "$SW" makedb "$FA" "$DB" 2>"$OUT/makedb.log" ||
            { echo "uniref50_bench: makedb failed:" >&2; tail -n 3 "$OUT/makedb.log" >&2; rm -f "$FA"; exit 1; }
        tmk=$(el "$t0")
        rm -f "$FA"
    else
        t0=$(date +%s.%N)
        # the pipe's status: gen_synth's in OUT/gen.rc, makedb's the pipeline's
        { "$GEN" -x "$K" ${SYNTH_N:+-n "$SYNTH_N"} 2>"$OUT/gen.log"; echo $? >"$OUT/gen.rc"; } |
            $TIME "$SW" makedb - "$DB" 2>"$OUT/makedb.log" ||
            { echo "uniref50_bench: makedb failed:" >&2; tail -n 3 "$OUT/makedb.log" >&2; exit 1; }
        tmk=$(el "$t0")
    fi
    [ "$(cat "$OUT/gen.rc")" = 0 ] || { echo "uniref50_bench: gen_synth failed: $(cat "$OUT/gen.log")" >&2; exit 1; }
    # the database holds what was generated
    gn=$(sed -n 's/^gen_synth: \([0-9]*\) sequences, \([0-9]*\) residues, \([0-9]*\) bytes$/\1 \2/p' "$OUT/gen.log")
    mn=$(sed -n 's/.*makedb: wrote .*: \([0-9]*\) protein sequences, \([0-9]*\) residues,.*/\1 \2/p' "$OUT/makedb.log")
    [ -n "$gn" ] && [ "$gn" = "$mn" ] ||
        { echo "uniref50_bench: generated '$gn', database '$mn' (sequences residues)" >&2; exit 1; }
    bytes=$(sed -n 's/^gen_synth: .* \([0-9]*\) bytes$/\1/p' "$OUT/gen.log")
    mbs=$(awk -v b="$bytes" -v t="$tmk" 'BEGIN { printf "%.0f", b / 1e6 / t }')
    mkrss=$(rss "$OUT/makedb.log")
fi

t0=$(date +%s.%N)
$TIME "$SW" search -v --backend "${BACKEND:-cuda}" -q "$DATA/cudasw_queries.fasta" -d "$DB" \
    -f '6 qseqid sseqid score evalue' "$@" -o "$OUT/hits.tsv" 2>"$OUT/search.log" ||
    { echo "uniref50_bench: search failed:" >&2; tail -n 5 "$OUT/search.log" >&2; exit 1; }
tse=$(el "$t0")
sum=$(grep -E '\] [0-9]+ queries .* vs [0-9]+ sequences' "$OUT/search.log" | tail -n 1)
scan=$(printf '%s\n' "$sum" | sed -n 's/.* scan \([0-9.]*\) s (\([0-9.]*\) GCUPS).*/\1/p')
gcups=$(printf '%s\n' "$sum" | sed -n 's/.* scan \([0-9.]*\) s (\([0-9.]*\) GCUPS).*/\2/p')
hits=$(wc -l <"$OUT/hits.tsv")
nseq=$(printf '%s\n' "$sum" | sed -n 's/.* vs \([0-9]*\) sequences (\([0-9]*\) residues).*/\1 sequences, \2 residues/p')

how="| swgpu makedb -"
[ "${FROM_FILE:-0}" = 1 ] && how="> FASTA; swgpu makedb FASTA"
echo "gen_synth -x $K${SYNTH_N:+ -n $SYNTH_N} $how ($nseq); 20 CUDASW++ queries, backend ${BACKEND:-cuda}"
printf '| %-10s | %-6s | %-13s | %-6s | %-8s | %-11s | %-11s | %-6s |\n' "makedb s" "MB/s" "search wall s" \
    "scan s" "GCUPS" "makedb RSS" "search RSS" "hits"
printf '| %-10s | %-6s | %-13s | %-6s | %-8s | %-11s | %-11s | %-6s |\n' "$tmk" "$mbs" "$tse" \
    "${scan:-?}" "${gcups:-?}" "$mkrss" "$(rss "$OUT/search.log")" "$hits"
grep -E "chunk|stream" "$OUT/search.log" | sed 's/^/  /' | head -n 3
