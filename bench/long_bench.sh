#!/bin/sh
# long_bench.sh - whole-genome alignments with `swgpu align`.
#
#   sh bench/long_bench.sh [DATA_DIR] [SWGPU] [OUT_DIR]
#
# DATA_DIR holds MG1655-K12.fasta.gz, DH1.fasta.gz, COL.fasta.gz and
# N315.fasta.gz (default .data).  For each pair and strand it runs the full
# alignment (backend auto: the GPU when there is one) and prints score,
# 1-based coordinates, identity, seconds per phase, score-pass GCUPS (all
# alignment cells over the score-pass time, pruned ones counted as done),
# cells computed and pruned, and peak host / device memory.  Then it cuts a
# 100 kbp slice of each pair out of the better strand's alignment and checks
# that the CPU and CUDA backends give identical output on it.
# Environment: BENCH_STRANDS (default "plus minus"), BENCH_TIMEOUT (s, 600),
# BENCH_MEM (--max-memory, default 8G), BENCH_PAIRS (default both pairs).
set -u
DATA=${1:-.data}
S=${2:-build/swgpu}
OUT=${3:-${TMPDIR:-/tmp}/swgpu-long-bench}
STRANDS=${BENCH_STRANDS:-plus minus}
TO=${BENCH_TIMEOUT:-600}
MEM=${BENCH_MEM:-8G}
PAIRS=${BENCH_PAIRS:-"MG1655-K12:DH1 COL:N315"}
mkdir -p "$OUT"
TABLE=$OUT/table.txt
: > "$TABLE"

field() { sed -n "s/^$1 *//p" "$2" | head -n 1; }

# one alignment: NAME A B ARGS...
run() {
    name=$1 a=$2 b=$3
    shift 3
    timeout "$TO" "$S" align "$a" "$b" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
    rc=$?
    line=$(grep 'align' "$OUT/$name.err" | tail -n 1)
    if [ $rc -ne 0 ]; then
        printf '%-22s FAILED (exit %d): %s\n' "$name" $rc "$(tail -n 1 "$OUT/$name.err")" >> "$TABLE"
        return 1
    fi
    printf '%-22s %9s %19s %19s %24s | %s\n' "$name" "$(field score "$OUT/$name.out")" \
        "$(field query_range "$OUT/$name.out")" "$(field target_range "$OUT/$name.out")" \
        "$(field identity "$OUT/$name.out")" \
        "$(echo "$line" | sed 's/^\[swgpu [0-9.]*s\] //')" >> "$TABLE"
}

for pair in $PAIRS; do
    A=${pair%%:*} B=${pair##*:}
    for st in $STRANDS; do
        run "$A-$B-$st" "$DATA/$A.fasta.gz" "$DATA/$B.fasta.gz" --strand "$st" \
            --max-memory "$MEM" --plot "$OUT/$A-$B-$st.svg" --outfmt summary
        cp "$OUT/$A-$B-$st.out" "$OUT/$A-$B-$st.summary" 2>/dev/null
    done
done

# CPU vs GPU on 100 kbp slices taken from the better strand's alignment
for pair in $PAIRS; do
    A=${pair%%:*} B=${pair##*:}
    best="" bs=-1
    for st in $STRANDS; do
        sc=$(field score "$OUT/$A-$B-$st.out" 2>/dev/null)
        [ -n "$sc" ] && [ "$sc" -gt "$bs" ] && { bs=$sc; best=$st; }
    done
    [ -n "$best" ] || continue
    python3 - "$DATA/$A.fasta.gz" "$DATA/$B.fasta.gz" "$OUT/$A-$B-$best.out" "$best" \
        "$OUT/slice_$A.fa" "$OUT/slice_$B.fa" <<'EOF'
import gzip, sys
def read(p):
    with gzip.open(p, 'rt') as f:
        return ''.join(l.strip() for l in f if not l.startswith('>')).upper()
a, b = read(sys.argv[1]), read(sys.argv[2])
summ = dict(l.split(None, 1) for l in open(sys.argv[3]) if ' ' in l)
q0 = int(summ['query_range'].split('-')[0]) - 1
t1, t2 = (int(x) for x in summ['target_range'].split('-'))
if sys.argv[4] == 'minus':
    comp = str.maketrans('ACGTRYKMSWBDHVN', 'TGCAYRMKSWVHDBN')
    b = b.translate(comp)[::-1]
    t0 = len(b) - t1
else:
    t0 = t1 - 1
open(sys.argv[5], 'w').write('>sliceA\n' + a[q0:q0 + 100000] + '\n')
open(sys.argv[6], 'w').write('>sliceB\n' + b[t0:t0 + 100000] + '\n')
EOF
    run "slice-$A-cpu" "$OUT/slice_$A.fa" "$OUT/slice_$B.fa" --backend cpu --max-memory "$MEM"
    run "slice-$A-cuda" "$OUT/slice_$A.fa" "$OUT/slice_$B.fa" --backend cuda --max-memory "$MEM"
    if cmp -s "$OUT/slice-$A-cpu.out" "$OUT/slice-$A-cuda.out"; then
        echo "slice $A-$B ($best strand, 100 kbp): CPU and CUDA outputs identical" >> "$TABLE"
    else
        echo "slice $A-$B ($best strand, 100 kbp): CPU and CUDA outputs DIFFER" >> "$TABLE"
    fi
done

printf '%-22s %9s %19s %19s %24s | %s\n' run score query target identity summary
cat "$TABLE"
