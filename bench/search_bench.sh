#!/bin/sh
# search_bench.sh - whole runs of `swgpu search` on the workloads people run
# (wall time from start to the last byte written, as the tool's summary line
# reports it), one command, a table last:
#
#   uniprot2k   the first 2,000 records of uniprot20k x uniprot20k
#   q250synth   queries250.fasta x the synthetic Swiss-Prot-size database
#   cudasw20    the 20 CUDASW++ queries x the synthetic database
#   allvsall    uniprot20k x uniprot20k (20,000 x 20,000), --no-self off
#
# Every database is a makedb file (made first, not timed).  Top 10 hits
# with alignments, BLOSUM62 11/1.  Columns: wall s, scan s, scan GCUPS,
# overflows, the alignments' time after the scan ends, peak RSS.
#
#   sh bench/search_bench.sh [DATA] [SWGPU] [OUT] [WORKLOADS...]
#
# DATA holds cudasw_queries.fasta, queries250.fasta, uniprot20k.fasta.gz
# (default .data, else ../shared/data); synth.fa is made by bench/gen_synth
# when absent.  Extra options for every run: $SEARCH_OPTS (e.g.
# "--backend cpu").  With CHECK=1 each workload also runs one query at a
# time (SWGPU_CUDA_MANY=0) and the two outputs are compared byte for byte.
set -u
DATA=${1:-.data}
[ -f "$DATA/cudasw_queries.fasta" ] || DATA=../shared/data
SW=${2:-build/swgpu}
OUT=${3:-search-bench.out}
shift 3 2>/dev/null || shift $#
WL=${*:-uniprot2k q250synth cudasw20 allvsall}
mkdir -p "$OUT"
[ -f synth.fa ] || build/bench/gen_synth synth.fa 2>>"$OUT/prep.log"
[ -f "$OUT/uniprot20k.swdb" ] || $SW makedb "$DATA/uniprot20k.fasta.gz" "$OUT/uniprot20k.swdb" --quiet
[ -f "$OUT/synth.swdb" ] || $SW makedb synth.fa "$OUT/synth.swdb" --quiet
[ -f "$OUT/uniprot2k.fasta" ] || gzip -dc "$DATA/uniprot20k.fasta.gz" | awk '/^>/ { n++ } n <= 2000' >"$OUT/uniprot2k.fasta"

run() { # name queries db
    name=$1 q=$2 db=$3
    # shellcheck disable=SC2086
    $SW search -q "$q" -d "$db" -n 10 -o "$OUT/$name.tsv" ${SEARCH_OPTS:-} 2>"$OUT/$name.err"
    rc=$?
    line=$(grep -E 'wall' "$OUT/$name.err" | tail -1)
    if [ $rc -ne 0 ] || [ -z "$line" ]; then
        printf '%-10s FAILED (exit %s): %s\n' "$name" "$rc" "$(tail -1 "$OUT/$name.err")" >>"$OUT/table.txt"
        return
    fi
    echo "$line" | awk -v n="$name" '{
        for (i = 1; i <= NF; i++) {
            if ($i == "scan") scan = $(i + 1)
            if ($i == "align") al = $(i + 1)
            if ($i == "wall") wall = $(i + 1)
            if ($i == "overflows,") ov = $(i - 1)
            if ($i == "RSS") rss = $(i + 1)
            if ($i ~ /^\(/ && $(i + 1) ~ /^GCUPS/) g = substr($i, 2)
        }
        printf "%-10s %8s %8s %9s %9s %9s %9s\n", n, wall, scan, g, ov, al, rss
    }' >>"$OUT/table.txt"
    if [ "${CHECK:-0}" = 1 ]; then
        # shellcheck disable=SC2086
        SWGPU_CUDA_MANY=0 $SW search -q "$q" -d "$db" -n 10 -o "$OUT/$name.one.tsv" \
            ${SEARCH_OPTS:-} 2>"$OUT/$name.one.err"
        if cmp -s "$OUT/$name.tsv" "$OUT/$name.one.tsv"; then same=identical; else same=DIFFERENT; fi
        printf '%-10s one query at a time: %s; output %s (%s lines)\n' "$name" \
            "$(grep -oE 'wall [0-9.]+ s' "$OUT/$name.one.err")" "$same" \
            "$(wc -l <"$OUT/$name.tsv")" >>"$OUT/table.txt"
    fi
}

: >"$OUT/table.txt"
for w in $WL; do
    case $w in
    uniprot2k) run uniprot2k "$OUT/uniprot2k.fasta" "$OUT/uniprot20k.swdb" ;;
    q250synth) run q250synth "$DATA/queries250.fasta" "$OUT/synth.swdb" ;;
    cudasw20) run cudasw20 "$DATA/cudasw_queries.fasta" "$OUT/synth.swdb" ;;
    allvsall) run allvsall "$OUT/uniprot20k.swdb" "$OUT/uniprot20k.swdb" ;;
    *) echo "unknown workload $w" >>"$OUT/table.txt" ;;
    esac
done
echo "=== search_bench: $($SW version 2>/dev/null | head -1), opts '${SEARCH_OPTS:-}'"
printf '%-10s %8s %8s %9s %9s %9s %9s\n' workload wall_s scan_s GCUPS overflows align_s rss_MB
cat "$OUT/table.txt"
