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
#          Swiss-Prot-size database (build/bench/gen_synth; SYNTH_N
#          sequences, default its 572,970), the same way
#   gpu    search: u20k's queries on ranks that share the machine's GPU(s)
#          (GPU_RANKS, 1 2 4), against one swgpu process on the GPU: for
#          correctness (skipped when swgpu has no CUDA backend or no GPU
#          answers)
#   align  the ALIGN_LEN (300,000) bp prefixes of E. coli MG1655 and DH1
#          (DH1_rc_rotated: one plus-strand alignment), CPU, 1 thread a
#          rank, on ALIGN_RANKS (1 2 4 8) ranks
#
# WHAT selects (default "u20k synth gpu align").  DATA holds
# queries250.fasta, uniprot20k.fasta.gz, MG1655-K12.fasta.gz and
# DH1_rc_rotated.fasta.gz (default .data, else ../shared/data, else
# /work/shared/data).  Databases are makedb files made first in WORK
# (default OUT; not timed).  Times are mpirun's wall time, start to exit
# (MPI start-up included); efficiency = T(1 rank) / (ranks x T(ranks)).
# The reference swgpu process runs with REF_T threads for search (default
# 1) and ALIGN_REF_T for align (default 1); its time is in the notes.
# Binding: --bind-to core --map-by core while the ranks fit the physical
# cores, hardware threads while they fit those, else none (oversubscribed);
# a run that fails to bind is run again unbound.  MPIRUN_OPTS replaces
# those options.  DEADLINE (seconds since the epoch) skips a run expected
# to end past it (expected: T(1 rank) / ranks + 2 s).  Needs build/swgpu,
# build/swgpu-mpi and build/bench/gen_synth (make, make bench).
set -u
DATA=${1:-.data}
[ -f "$DATA/queries250.fasta" ] || DATA=../shared/data
[ -f "$DATA/queries250.fasta" ] || DATA=/work/shared/data
OUT=${2:-mpi-bench.out}
WORK=${WORK:-$OUT}
SW=${SWGPU:-build/swgpu}
MPI=${SWGPU_MPI:-build/swgpu-mpi}
WHAT=${WHAT:-u20k synth gpu align}
RANKS=${RANKS:-1 2 4 8 16}
ALIGN_RANKS=${ALIGN_RANKS:-1 2 4 8}
GPU_RANKS=${GPU_RANKS:-1 2 4}
NQ=${NQ:-30}
NQS=${NQS:-10}
SYNTH_N=${SYNTH_N:-}
ALIGN_LEN=${ALIGN_LEN:-300000}
REF_T=${REF_T:-1}
ALIGN_REF_T=${ALIGN_REF_T:-1}
DEADLINE=${DEADLINE:-0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CORES=$(nproc 2>/dev/null || echo 1)
PHYS=$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | wc -l)
[ "${PHYS:-0}" -gt 0 ] || PHYS=$CORES
mkdir -p "$OUT" "$WORK"
: >"$OUT/table.txt"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# late T1 N: would a run of about T1 / N + 2 s end past DEADLINE?
late() {
    [ "$DEADLINE" = 0 ] && return 1
    awk -v t1="$1" -v n="$2" -v d="$DEADLINE" -v now="$(now)" \
        'BEGIN { exit !(now + t1 / n + 2 > d) }'
}

# mpirun_n RANKS ERRFILE ARGS...: swgpu-mpi on RANKS ranks, its stderr in
# ERRFILE; bound to cores while they last; a failure to bind is run again
# unbound ("unbound" is then appended to $BOUND)
mpirun_n() {
    n=$1 err=$2
    shift 2
    if [ -n "${RUN_OPTS:-}" ]; then opts=$RUN_OPTS
    elif [ -n "${MPIRUN_OPTS:-}" ]; then opts=$MPIRUN_OPTS
    elif [ "$n" -le "$PHYS" ]; then opts="--bind-to core --map-by core"
    elif [ "$n" -le "$CORES" ]; then opts="--bind-to hwthread --map-by hwthread"
    else opts="--bind-to none --oversubscribe"; fi
    BOUND=$opts
    # shellcheck disable=SC2086
    mpirun --allow-run-as-root $opts -np "$n" "$MPI" "$@" 2>"$err"
    rc=$?
    if [ $rc -ne 0 ] && grep -qi -E 'bind|binding' "$err"; then
        BOUND="$opts failed, unbound"
        mpirun --allow-run-as-root --bind-to none --oversubscribe -np "$n" "$MPI" "$@" 2>"$err"
        rc=$?
    fi
    return $rc
}

# row NAME RANKS SECONDS T1 SAME: one line of the table
row() {
    awk -v w="$1" -v n="$2" -v t="$3" -v t1="$4" -v s="$5" 'BEGIN {
        e = (t > 0 && t1 > 0) ? t1 / (n * t) : 0
        printf "%-8s %6d %10.2f %8.2fx %7.0f%%   %s\n", w, n, t, (t > 0 ? t1 / t : 0), 100 * e, s }' \
        >>"$OUT/table.txt"
}
skiprow() { printf '%-8s %6d %10s %9s %8s   %s\n' "$1" "$2" - - - "$3" >>"$OUT/table.txt"; }

# verdict WANT GOT RC ERR: the comparison column
verdict() {
    if [ "$3" -ne 0 ]; then
        echo "FAILED (exit $3): $(grep -E '^swgpu|rror' "$4" | head -2 | tr '\n' ' ')"
    elif cmp -s "$1" "$2"; then
        echo "identical ($(wc -l <"$2") lines)"
    else
        echo "DIFFERENT ($(cmp "$1" "$2" 2>&1 | head -1))"
    fi
}

# --- data ----------------------------------------------------------------
prep() {
    awk -v n="$NQ" '/^>/ { k++ } k <= n' "$DATA/queries250.fasta" >"$WORK/q$NQ.fasta"
    awk -v n="$NQS" '/^>/ { k++ } k <= n' "$DATA/queries250.fasta" >"$WORK/qs$NQS.fasta"
    case $WHAT in *u20k* | *gpu*)
        [ -f "$WORK/uniprot20k.swdb" ] || $SW makedb "$DATA/uniprot20k.fasta.gz" "$WORK/uniprot20k.swdb" --quiet ;;
    esac
    case $WHAT in *synth*)
        s=synth${SYNTH_N:+$SYNTH_N}
        if [ ! -f "$WORK/$s.swdb" ]; then
            build/bench/gen_synth ${SYNTH_N:+-n $SYNTH_N} "$WORK/$s.fa" 2>>"$OUT/prep.log"
            $SW makedb "$WORK/$s.fa" "$WORK/$s.swdb" --quiet
            rm -f "$WORK/$s.fa"
        fi ;;
    esac
    case $WHAT in *align*)
        for g in MG1655-K12 DH1_rc_rotated; do
            [ -f "$WORK/$g.$ALIGN_LEN.fa" ] ||
                gzip -dc "$DATA/$g.fasta.gz" | awk -v name="${g}_$ALIGN_LEN" -v len="$ALIGN_LEN" '
                    /^>/ { if (n++) exit; next }
                    { s = s $0; if (length(s) >= len) exit }
                    END { print ">" name; s = substr(s, 1, len)
                          for (i = 1; i <= length(s); i += 80) print substr(s, i, 80) }' >"$WORK/$g.$ALIGN_LEN.fa"
        done ;;
    esac
}

# --- search on CPU ranks -----------------------------------------------------
search_cpu() { # name queries db
    name=$1 q=$2 db=$3
    t0=$(now)
    $SW search -q "$q" -d "$db" --backend cpu -t "$REF_T" -o "$WORK/$name.one.tsv" 2>"$OUT/$name.one.err"
    tr=$(secs "$t0" "$(now)")
    echo "$name: one swgpu process, $REF_T thread(s): $tr s; $(grep -o '[0-9.e+]* cells' "$OUT/$name.one.err" | head -1)" >>"$OUT/notes.txt"
    # a guess at T(1 rank) for the deadline until it is measured
    t1=0 est=$(awk -v t="$tr" -v n="$REF_T" 'BEGIN { print t * n * 1.1 }')
    for n in $RANKS; do
        if late "$([ "$t1" = 0 ] && echo "$est" || echo "$t1")" "$n"; then
            skiprow "$name" "$n" "skipped: would end past the deadline"
            continue
        fi
        t0=$(now)
        mpirun_n "$n" "$OUT/$name.$n.err" search -q "$q" -d "$db" --backend cpu -t 1 -o "$WORK/$name.$n.tsv"
        rc=$?
        t=$(secs "$t0" "$(now)")
        same="$(verdict "$WORK/$name.one.tsv" "$WORK/$name.$n.tsv" $rc "$OUT/$name.$n.err"); rank 0 $(grep -o 'scan [0-9.]* s' "$OUT/$name.$n.err" | head -1); $BOUND"
        [ "$t1" = 0 ] && [ $rc -eq 0 ] && t1=$t
        row "$name" "$n" "$t" "$t1" "$same"
        rm -f "$WORK/$name.$n.tsv"
    done
}

# --- ranks sharing the GPU ---------------------------------------------------
search_gpu() {
    if ! $SW version | grep -q 'cuda'; then
        echo "gpu: skipped (swgpu built without CUDA)" >>"$OUT/notes.txt"
        return
    fi
    if ! $SW search -q examples/queries.fasta -d examples/db.fasta --backend cuda >/dev/null 2>"$OUT/gpu.probe.err"; then
        echo "gpu: skipped (no GPU answers: $(tail -1 "$OUT/gpu.probe.err"))" >>"$OUT/notes.txt"
        return
    fi
    q=$WORK/q$NQ.fasta db=$WORK/uniprot20k.swdb
    t0=$(now)
    $SW search -q "$q" -d "$db" --backend cuda -o "$WORK/gpu.one.tsv" 2>"$OUT/gpu.one.err"
    echo "gpu: one swgpu process on the GPU: $(secs "$t0" "$(now)") s; same as the CPU's: \
$(cmp -s "$WORK/gpu.one.tsv" "$WORK/u20k.one.tsv" 2>/dev/null && echo yes || echo no/unknown)" >>"$OUT/notes.txt"
    t1=0
    for n in $GPU_RANKS; do
        if late 10 1; then skiprow gpu "$n" "skipped: would end past the deadline"; continue; fi
        t0=$(now)
        # every rank binds to a GPU of the node (local rank modulo GPUs)
        RUN_OPTS=${MPIRUN_OPTS:---bind-to none --oversubscribe}
        mpirun_n "$n" "$OUT/gpu.$n.err" search -q "$q" -d "$db" --backend cuda -o "$WORK/gpu.$n.tsv"
        rc=$?
        RUN_OPTS=
        t=$(secs "$t0" "$(now)")
        same="$(verdict "$WORK/gpu.one.tsv" "$WORK/gpu.$n.tsv" $rc "$OUT/gpu.$n.err"); rank 0 $(grep -o 'scan [0-9.]* s' "$OUT/gpu.$n.err" | head -1)"
        [ "$t1" = 0 ] && [ $rc -eq 0 ] && t1=$t
        row gpu "$n" "$t" "$t1" "$same"
        rm -f "$WORK/gpu.$n.tsv"
    done
}

# --- the long alignment ------------------------------------------------------
align_cpu() {
    a=$WORK/MG1655-K12.$ALIGN_LEN.fa b=$WORK/DH1_rc_rotated.$ALIGN_LEN.fa
    t0=$(now)
    $SW align "$a" "$b" --backend cpu -t "$ALIGN_REF_T" -o "$WORK/align.one.txt" 2>"$OUT/align.one.err"
    tr=$(secs "$t0" "$(now)")
    echo "align ($ALIGN_LEN bp): one swgpu process, $ALIGN_REF_T thread(s): $tr s; $(awk '/[Ss]core/ { $1 = $1; print; exit }' "$WORK/align.one.txt" | head -c 80)" >>"$OUT/notes.txt"
    t1=0 est=$(awk -v t="$tr" -v n="$ALIGN_REF_T" 'BEGIN { print t * n * 1.1 }')
    for n in $ALIGN_RANKS; do
        if late "$([ "$t1" = 0 ] && echo "$est" || echo "$t1")" "$n"; then
            skiprow align "$n" "skipped: would end past the deadline"
            continue
        fi
        t0=$(now)
        mpirun_n "$n" "$OUT/align.$n.err" align "$a" "$b" --backend cpu -t 1 -o "$WORK/align.$n.txt"
        rc=$?
        t=$(secs "$t0" "$(now)")
        same=$(verdict "$WORK/align.one.txt" "$WORK/align.$n.txt" $rc "$OUT/align.$n.err")
        [ $rc -eq 0 ] && same="$same; $(grep -o 'score pass [0-9.]* s' "$OUT/align.$n.err" | head -1), $(grep -o 'reverse [0-9.]* s' "$OUT/align.$n.err" | head -1), $(grep -o 'traceback [0-9.]* s' "$OUT/align.$n.err" | head -1)"
        [ "$t1" = 0 ] && [ $rc -eq 0 ] && t1=$t
        row align "$n" "$t" "$t1" "$same; $BOUND"
        rm -f "$WORK/align.$n.txt"
    done
}

: >"$OUT/notes.txt"
prep
for w in $WHAT; do
    if late 0 1; then
        echo "$w: skipped: the deadline has passed" >>"$OUT/notes.txt"
        continue
    fi
    case $w in
    u20k) search_cpu u20k "$WORK/q$NQ.fasta" "$WORK/uniprot20k.swdb" ;;
    synth) search_cpu synth "$WORK/qs$NQS.fasta" "$WORK/synth${SYNTH_N:+$SYNTH_N}.swdb" ;;
    gpu) search_gpu ;;
    align) align_cpu ;;
    *) echo "unknown part $w" >>"$OUT/notes.txt" ;;
    esac
done
{
echo "=== mpi_bench: $($SW version | head -1); $(mpirun --version 2>/dev/null | head -1); $CORES hardware threads, $PHYS cores:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "u20k: $NQ queries of queries250 x uniprot20k; synth: $NQS queries x gen_synth${SYNTH_N:+ -n $SYNTH_N}; align: $ALIGN_LEN bp prefixes"
cat "$OUT/notes.txt"
printf '%-8s %6s %10s %9s %8s   %s\n' what ranks seconds speedup effic. "output vs one swgpu process"
cat "$OUT/table.txt"
} | tee "$OUT/summary.txt"
