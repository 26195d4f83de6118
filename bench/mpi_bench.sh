#!/bin/sh
# mpi_bench.sh - swgpu-mpi on one machine: time and parallel efficiency per
# rank count, every output compared byte for byte with one swgpu process.
# The table comes last.
#
#   sh bench/mpi_bench.sh [DATA] [OUT]
#
#   u20k   search: the first NQ (30) queries of queries250 x uniprot20k,
#          CPU backend, 1 thread a rank, on RANKS (1 2 4 8 16) ranks
#   synth  search: the first NQS (10) queries of queries250 x the synthetic
#          Swiss-Prot-size database (build/bench/gen_synth), the same way
#   gpu    search: u20k's queries on ranks that share the machine's GPU(s)
#          (GPU_RANKS, 1 2 4), against one swgpu process on the GPU: for
#          correctness (skipped when swgpu has no CUDA backend)
#   align  the 300 kbp prefixes of E. coli MG1655 and DH1 (DH1_rc_rotated:
#          one plus-strand alignment), CPU, 1 thread a rank, on ALIGN_RANKS
#          (1 2 4 8) ranks
#
# WHAT selects (default "u20k synth gpu align").  DATA holds
# queries250.fasta, uniprot20k.fasta.gz, MG1655-K12.fasta.gz and
# DH1_rc_rotated.fasta.gz (default .data, else ../shared/data, else
# /work/shared/data).  Databases are makedb files made first (not timed).
# Times are mpirun's wall time, start to exit (MPI start-up included);
# efficiency = T(1 rank) / (ranks x T(ranks)).  MPIRUN_OPTS adds mpirun
# options (default: --bind-to core --map-by core).  Needs build/swgpu,
# build/swgpu-mpi and build/bench/gen_synth (make, make bench).
set -u
DATA=${1:-.data}
[ -f "$DATA/queries250.fasta" ] || DATA=../shared/data
[ -f "$DATA/queries250.fasta" ] || DATA=/work/shared/data
OUT=${2:-mpi-bench.out}
SW=${SWGPU:-build/swgpu}
MPI=${SWGPU_MPI:-build/swgpu-mpi}
WHAT=${WHAT:-u20k synth gpu align}
RANKS=${RANKS:-1 2 4 8 16}
ALIGN_RANKS=${ALIGN_RANKS:-1 2 4 8}
GPU_RANKS=${GPU_RANKS:-1 2 4}
NQ=${NQ:-30}
NQS=${NQS:-10}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CORES=$(nproc 2>/dev/null || echo 1)
mkdir -p "$OUT"
: >"$OUT/table.txt"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

mpirun_n() { # ranks, then the swgpu-mpi command line
    n=$1
    shift
    over=
    [ "$n" -gt "$CORES" ] && over=--oversubscribe
    # shellcheck disable=SC2086
    mpirun --allow-run-as-root $over ${MPIRUN_OPTS:---bind-to core --map-by core} -np "$n" "$MPI" "$@"
}

# row NAME RANKS SECONDS T1 SAME: one line of the table
row() {
    awk -v w="$1" -v n="$2" -v t="$3" -v t1="$4" -v s="$5" 'BEGIN {
        e = (t > 0 && t1 > 0) ? t1 / (n * t) : 0
        printf "%-8s %6d %10.2f %8.2fx %7.0f%%   %s\n", w, n, t, (t > 0 ? t1 / t : 0), 100 * e, s }' \
        >>"$OUT/table.txt"
}

# --- data ----------------------------------------------------------------
prep() {
    awk -v n="$NQ" '/^>/ { k++ } k <= n' "$DATA/queries250.fasta" >"$OUT/q$NQ.fasta"
    awk -v n="$NQS" '/^>/ { k++ } k <= n' "$DATA/queries250.fasta" >"$OUT/qs$NQS.fasta"
    case $WHAT in *u20k* | *gpu*)
        [ -f "$OUT/uniprot20k.swdb" ] || $SW makedb "$DATA/uniprot20k.fasta.gz" "$OUT/uniprot20k.swdb" --quiet ;;
    esac
    case $WHAT in *synth*)
        if [ ! -f "$OUT/synth.swdb" ]; then
            build/bench/gen_synth "$OUT/synth.fa" 2>>"$OUT/prep.log"
            $SW makedb "$OUT/synth.fa" "$OUT/synth.swdb" --quiet
            rm -f "$OUT/synth.fa"
        fi ;;
    esac
    case $WHAT in *align*)
        for g in MG1655-K12 DH1_rc_rotated; do
            [ -f "$OUT/$g.300k.fa" ] ||
                gzip -dc "$DATA/$g.fasta.gz" | awk -v name="${g}_300k" '
                    /^>/ { if (n++) exit; next }
                    { s = s $0; if (length(s) >= 300000) exit }
                    END { print ">" name; s = substr(s, 1, 300000)
                          for (i = 1; i <= length(s); i += 80) print substr(s, i, 80) }' >"$OUT/$g.300k.fa"
        done ;;
    esac
}

# --- search on CPU ranks -----------------------------------------------------
search_cpu() { # name queries db
    name=$1 q=$2 db=$3
    t0=$(now)
    $SW search -q "$q" -d "$db" --backend cpu -t 1 -o "$OUT/$name.one.tsv" 2>"$OUT/$name.one.err"
    echo "$name: one swgpu process, 1 thread: $(secs "$t0" "$(now)") s" >>"$OUT/notes.txt"
    t1=0
    for n in $RANKS; do
        t0=$(now)
        mpirun_n "$n" search -q "$q" -d "$db" --backend cpu -t 1 -o "$OUT/$name.$n.tsv" \
            2>"$OUT/$name.$n.err"
        rc=$?
        t=$(secs "$t0" "$(now)")
        if [ $rc -ne 0 ]; then
            same="FAILED (exit $rc): $(grep '^swgpu' "$OUT/$name.$n.err" | tail -1)"
        elif cmp -s "$OUT/$name.one.tsv" "$OUT/$name.$n.tsv"; then
            same="identical ($(wc -l <"$OUT/$name.$n.tsv") lines)"
        else
            same=DIFFERENT
        fi
        [ "$t1" = 0 ] && t1=$t
        row "$name" "$n" "$t" "$t1" "$same"
        rm -f "$OUT/$name.$n.tsv"
    done
}

# --- ranks sharing the GPU ---------------------------------------------------
search_gpu() {
    if ! $SW version | grep -q 'cuda'  || $SW version | grep -q 'without CUDA'; then
        echo "gpu: skipped (swgpu built without CUDA)" >>"$OUT/notes.txt"
        return
    fi
    q=$OUT/q$NQ.fasta db=$OUT/uniprot20k.swdb
    t0=$(now)
    $SW search -q "$q" -d "$db" --backend cuda -o "$OUT/gpu.one.tsv" 2>"$OUT/gpu.one.err"
    echo "gpu: one swgpu process on the GPU: $(secs "$t0" "$(now)") s; same as the CPU's: \
$(cmp -s "$OUT/gpu.one.tsv" "$OUT/u20k.one.tsv" 2>/dev/null && echo yes || echo no/unknown)" >>"$OUT/notes.txt"
    t1=0
    for n in $GPU_RANKS; do
        t0=$(now)
        # every rank binds to a GPU of the node (local rank modulo GPUs)
        MPIRUN_OPTS=${MPIRUN_OPTS:---bind-to none} mpirun_n "$n" search -q "$q" -d "$db" \
            --backend cuda -o "$OUT/gpu.$n.tsv" 2>"$OUT/gpu.$n.err"
        rc=$?
        t=$(secs "$t0" "$(now)")
        if [ $rc -ne 0 ]; then
            same="FAILED (exit $rc): $(grep '^swgpu' "$OUT/gpu.$n.err" | tail -1)"
        elif cmp -s "$OUT/gpu.one.tsv" "$OUT/gpu.$n.tsv"; then
            same="identical ($(wc -l <"$OUT/gpu.$n.tsv") lines)"
        else
            same=DIFFERENT
        fi
        [ "$t1" = 0 ] && t1=$t
        row gpu "$n" "$t" "$t1" "$same"
    done
}

# --- the long alignment ------------------------------------------------------
align_cpu() {
    a=$OUT/MG1655-K12.300k.fa b=$OUT/DH1_rc_rotated.300k.fa
    t0=$(now)
    $SW align "$a" "$b" --backend cpu -t 1 -o "$OUT/align.one.txt" 2>"$OUT/align.one.err"
    echo "align: one swgpu process, 1 thread: $(secs "$t0" "$(now)") s; $(grep -o 'score pass.*total [0-9.]* s' "$OUT/align.one.err")" >>"$OUT/notes.txt"
    t1=0
    for n in $ALIGN_RANKS; do
        t0=$(now)
        mpirun_n "$n" align "$a" "$b" --backend cpu -t 1 -o "$OUT/align.$n.txt" 2>"$OUT/align.$n.err"
        rc=$?
        t=$(secs "$t0" "$(now)")
        if [ $rc -ne 0 ]; then
            same="FAILED (exit $rc): $(grep '^swgpu' "$OUT/align.$n.err" | tail -1)"
        elif cmp -s "$OUT/align.one.txt" "$OUT/align.$n.txt"; then
            same="identical; $(grep -o 'score pass [0-9.]* s' "$OUT/align.$n.err"), $(grep -o 'reverse [0-9.]* s' "$OUT/align.$n.err"), $(grep -o 'traceback [0-9.]* s' "$OUT/align.$n.err")"
        else
            same=DIFFERENT
        fi
        [ "$t1" = 0 ] && t1=$t
        row align "$n" "$t" "$t1" "$same"
    done
}

: >"$OUT/notes.txt"
prep
for w in $WHAT; do
    case $w in
    u20k) search_cpu u20k "$OUT/q$NQ.fasta" "$OUT/uniprot20k.swdb" ;;
    synth) search_cpu synth "$OUT/qs$NQS.fasta" "$OUT/synth.swdb" ;;
    gpu) search_gpu ;;
    align) align_cpu ;;
    *) echo "unknown part $w" >>"$OUT/notes.txt" ;;
    esac
done
echo "=== mpi_bench: $($SW version | head -1); $(mpirun --version 2>/dev/null | head -1); $CORES cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
cat "$OUT/notes.txt"
printf '%-8s %6s %10s %9s %8s   %s\n' what ranks seconds speedup effic. "output vs one swgpu process"
cat "$OUT/table.txt"
