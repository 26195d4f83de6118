#!/bin/sh
# mpi.sh - swgpu-mpi against swgpu: `mpirun -np N swgpu-mpi ARGS` (N = 2 and
# 3, and 1 in a few cases of each command; CPU backend but where said,
# oversubscribed) must
# write byte for byte what `swgpu ARGS`
# writes, for search (FASTA and makedb databases, many queries, ties,
# --no-self, formats 6, 7, pair and columns, --no-align, fitted statistics,
# --max-hsps,
# both E-value models, both rankings, BLAST databases, DNA, uneven and
# measured splits, batches, each rank's part streamed from disk in parts)
# and align (summary, SAM, pair,
# both strands, protein, score-only, a deep traceback, the SVG plot; with a
# GPU, on the GPUs too).  A
# failure on any rank - bad input, an unwritable output, a failure injected
# into one rank (SWGPU_MPI_FAIL=RANK:PHASE) - must end every rank with exit
# status 1, one error line, and no output file.
#
# Skipped (a SKIP line) when mpirun or build/swgpu-mpi is missing.
. "$(dirname "$0")/lib.sh"

MPI=$(dirname "$SWGPU")/swgpu-mpi
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$MPI" ]; then
    skip "swgpu-mpi: mpirun or $MPI missing (Open MPI not installed: apt-get install openmpi-bin libopenmpi-dev)"
    finish
    exit $?
fi
# root (CI) is allowed; shared memory only, no probing of networks; no
# single-copy (CMA) transfers, which containers often forbid
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
# under AddressSanitizer (make check-sanitize): Open MPI's own allocations
# are not ours to report; its libraries keep no frame pointers, so leaks are
# traced with the slow unwinder, and its plugins stay loaded to be named
if [ -n "${SWGPU_TEST_CFLAGS:-}" ]; then
    printf 'leak:libmpi\nleak:libopen-pal\nleak:libopen-rte\nleak:libpmix\nleak:libhwloc\nleak:libevent\nleak:libucs\nleak:libucp\nleak:libfabric\nleak:mca_\n' > "$T/lsan.supp"
    export LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
fi
RUN="mpirun --allow-run-as-root --oversubscribe"
if [ -n "${SWGPU_TEST_CFLAGS:-}" ]; then
    # the slow unwinder makes each run take seconds: leaks are looked for in
    # every eighth run (the first of each eight), memory errors in all
    cat > "$T/mpirun.sh" <<EOS
#!/bin/sh
n=\$(cat "$T/mpirun.count" 2>/dev/null || echo 0)
echo \$((n + 1)) > "$T/mpirun.count"
[ \$((n % 8)) -eq 0 ] || ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:fast_unwind_on_malloc=1"
export ASAN_OPTIONS
exec mpirun --allow-run-as-root --oversubscribe "\$@"
EOS
    RUN="sh $T/mpirun.sh"
fi
# the rank counts every output is compared on: 2 and 3 (a middle rank),
# and 1 too in the cases `same1` runs (one rank is the undivided path: a
# few cases of each command); SWGPU_TEST_QUICK=1 (make check-sanitize,
# where each mpirun takes seconds) compares one count: 3 for an alignment
# (a middle rank passes boundary columns both ways), 2 for a search
RANKS="2 3" RANKS1="1 2 3" QUICK=0
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && RANKS=3 RANKS1=3 QUICK=1

# same NAME ARGS...: for N in $RANKS, swgpu-mpi's stdout equals swgpu's, exit 0
same() {
    same_on "$RANKS" "$@"
}

# same1 NAME ARGS...: `same` on $RANKS1 (1 rank too)
same1() {
    same_on "$RANKS1" "$@"
}

same_on() {
    ranks=$1 name=$2; shift 2
    [ "$QUICK" = 1 ] && [ "$1" = search ] && ranks=2
    "$SWGPU" "$@" > "$T/want" 2> "$T/want.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name: swgpu exit $rc ($(tail -n 1 "$T/want.err"))"
        return
    fi
    for n in $ranks; do
        if ! $RUN -np $n "$MPI" "$@" > "$T/got" 2> "$T/got.err"; then
            fail "$name, $n ranks: exit $? ($(tail -n 3 "$T/got.err"))"
        elif ! cmp -s "$T/want" "$T/got"; then
            fail "$name, $n ranks: output differs from swgpu's:"
            diff "$T/want" "$T/got" | head -n 10
        else
            pass
        fi
    done
}

# variant NAME ARGS...: `same`, but not under SWGPU_TEST_QUICK (make
# check-sanitize, where each mpirun takes seconds): a case that changes the
# statistics' model, the format or the columns printed, or runs again a
# path another case runs under the sanitizers (how the ranks cut, scan,
# merge and align)
variant() {
    if [ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ]; then
        return
    fi
    same "$@"
}

# full_only: false under SWGPU_TEST_QUICK (make check-sanitize), for a case
# whose paths another case left in runs too (a refusal by the same parser,
# an injected failure at another phase, a streamed search of another format)
full_only() {
    [ "$QUICK" = 0 ]
}

# same_file NAME OUT ARGS...: the same with the output written to OUT (-o)
same_file() {
    name=$1 out=$2; shift 2
    rm -f "$out"
    "$SWGPU" "$@" 2> "$T/want.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name: swgpu exit $rc ($(tail -n 1 "$T/want.err"))"
        return
    fi
    mv "$out" "$T/want"
    for n in $RANKS; do
        if ! $RUN -np $n "$MPI" "$@" > "$T/got.out" 2> "$T/got.err"; then
            fail "$name, $n ranks: exit $? ($(tail -n 3 "$T/got.err"))"
        elif [ -s "$T/got.out" ]; then
            fail "$name, $n ranks: wrote to stdout with -o"
        elif ! cmp -s "$T/want" "$out"; then
            fail "$name, $n ranks: $out differs from swgpu's"
        elif ls "$out".tmp.* >/dev/null 2>&1; then
            fail "$name, $n ranks: a temporary file is left"
        else
            pass
        fi
        rm -f "$out"
    done
}

# fails NAME PATTERN OUT ARGS...: with 3 ranks, exit 1, one error line
# matching PATTERN, nothing on stdout, no OUT and no temporary of it
fails() {
    name=$1 pat=$2 out=$3; shift 3
    $RUN -np 3 "$MPI" "$@" > "$T/f.out" 2> "$T/f.err"
    rc=$?
    nerr=$(grep -c '^swgpu: ' "$T/f.err")
    if [ "$rc" -eq 0 ]; then
        fail "$name: exit 0, expected a failure"
    elif [ "$nerr" -ne 1 ]; then
        fail "$name: $nerr error lines, expected 1: $(cat "$T/f.err")"
    elif ! grep '^swgpu: ' "$T/f.err" | grep -Eq -- "$pat"; then
        fail "$name: error line does not match /$pat/: $(grep '^swgpu: ' "$T/f.err")"
    elif [ -s "$T/f.out" ]; then
        fail "$name: printed on stdout: $(head -n 3 "$T/f.out")"
    elif [ -n "$out" ] && ls "$out" "$out".tmp.* >/dev/null 2>&1; then
        fail "$name: left $(ls "$out" "$out".tmp.* 2>/dev/null)"
    else
        pass
    fi
}

Q=examples/queries.fasta
DB=examples/db.fasta
# a database with ties: the first 30 sequences again under other ids
awk '/^>/ { n++ } { print } ' $DB > "$T/ties.fa"
awk '/^>/ { n++; if (n > 30) exit; sub(/^>/, ">copy_") } { print }' $DB >> "$T/ties.fa"
"$SWGPU" makedb "$T/ties.fa" "$T/ties.swdb" > /dev/null 2>&1
"$SWGPU" makedb $DB "$T/db.swdb" > /dev/null 2>&1
head -c 3000 "$T/db.swdb" > "$T/damaged.swdb"
head -n 40 "$T/ties.fa" > "$T/q20.fa" # the first queries of the database itself

# --- search --------------------------------------------------------------
same1 "search, FASTA database" search -q $Q -d $DB --backend cpu -t 1 --quiet
same "search, makedb database" search -q $Q -d "$T/db.swdb" --backend cpu -t 1 --quiet
same "search, ties, top 25" search -q "$T/q20.fa" -d "$T/ties.swdb" -n 25 --backend cpu --quiet
same1 "all against all, --no-self" search -q "$T/ties.swdb" -d "$T/ties.swdb" --no-self -n 5 \
    --backend cpu -t 1 --quiet
variant "format 7, strict E-value" search -q $Q -d "$T/ties.fa" --outfmt 7 --evalue 1e-30 \
    --backend cpu --quiet
# E-values: Spouge's (the default; they depend on the subject's length, so
# the filter comes before top-N: with E <= 5 and top 5, one query's 5 best
# scores hold a hit that fails above one that passes) and the old
# length-adjusted ones
# (SWGPU_TEST_QUICK=1, the sanitizer builds: E <= 5, top 5 alone; the rank
# loop below top 3 alone: the distributed code is the same, each mpirun there
# takes seconds)
ES="1e-3 0.05 5" NS="1 5" RS="1 3 8"
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && ES=5 NS=5 RS=3
for e in $ES; do
    for n in $NS; do
        same "spouge, E <= $e, top $n" search -q "$T/q20.fa" -d "$T/ties.swdb" --evalue $e -n $n \
            --no-align --backend cpu --quiet
    done
done
# the ranking (issue 30): BLAST's by E-value (the default, above), and by
# score; the rank fixture has E-values that invert scores, ties of equal
# hits (listed from the last) and E-values below 1e-180 (equal)
for n in $RS; do
    same "--rank evalue, inversions and ties, top $n" search -q $D/rank_q.fa -d $D/rank_db.fa \
        -n $n --rank evalue --backend cpu --quiet
    variant "--rank score, inversions and ties, top $n" search -q $D/rank_q.fa -d $D/rank_db.fa \
        -n $n --rank score --backend cpu --quiet
done
variant "--rank score, ties, top 25" search -q "$T/q20.fa" -d "$T/ties.swdb" -n 25 --rank score \
    --backend cpu --quiet
variant "--rank score, spouge, E <= 5, top 5" search -q "$T/q20.fa" -d "$T/ties.swdb" --evalue 5 \
    -n 5 --rank score --no-align --backend cpu --quiet
variant "--rank score, fitted" search -q "$T/q20.fa" -d "$T/ties.swdb" --gap-open 12 \
    --gap-extend 3 --rank score --backend cpu --quiet
variant "--rank score, the fallback" search -q $D/cli_q.fasta -d $D/cli_db.fasta \
    --gap-open 12 --gap-extend 3 --rank score --backend cpu --quiet
variant "--evalue-model old-fsc, E <= 0.05" search -q "$T/q20.fa" -d "$T/ties.swdb" --evalue 0.05 \
    -n 3 --evalue-model old-fsc --backend cpu --quiet
variant "--evalue-model old-fsc, format 7" search -q $Q -d "$T/ties.fa" --outfmt 7 \
    --evalue-model old-fsc --backend cpu --quiet
variant "--evalue-model old-fsc, fitted" search -q "$T/q20.fa" -d "$T/ties.swdb" --gap-open 12 \
    --gap-extend 3 --evalue-model old-fsc --backend cpu --quiet
variant "--evalue-model old-fsc, the fallback" search -q $D/cli_q.fasta -d $D/cli_db.fasta \
    --gap-open 12 --gap-extend 3 --evalue-model old-fsc --backend cpu --quiet
# a BLAST database (read whole by each rank, then cut)
same "BLAST database, --no-self" search -q tests/data/blastdb/prot.fa -d tests/data/blastdb/prot_mv \
    --no-self -n 5 --backend cpu --quiet
variant "BLAST database, DNA" search -q tests/data/blastdb/nuc.fa -d tests/data/blastdb/nuc_v5 \
    --outfmt 7 --backend cpu --quiet
variant "format pair" search -q "$T/q20.fa" -d "$T/ties.swdb" --outfmt pair -n 3 --backend cpu --quiet
variant "columns" search -q "$T/q20.fa" -d "$T/ties.fa" --backend cpu --quiet \
    --outfmt '6 qseqid sseqid stitle pident length mismatch gapopen qstart qend sstart send evalue bitscore score qlen slen nident positive gaps btop cigar qseq sseq'
same "--no-align" search -q "$T/q20.fa" -d "$T/ties.swdb" --no-align --backend cpu --quiet
same "fitted statistics (no published parameters)" search -q "$T/q20.fa" -d "$T/ties.swdb" \
    --gap-open 12 --gap-extend 3 --backend cpu --quiet
variant "matrix file, fitted" search -q $Q -d "$T/ties.fa" --matrix $D/cli_ident.mat \
    --gap-open 9 --gap-extend 2 --backend cpu --quiet
variant "too few sequences to fit: the fallback" search -q $D/cli_q.fasta -d $D/cli_db.fasta \
    --gap-open 12 --gap-extend 3 --backend cpu --quiet
same "DNA, tiny database (empty parts)" search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta \
    --outfmt 7 --backend cpu --quiet
same1 "DNA, both strands (minus hits from every part)" search -q $D/strand/queries.fa \
    -d $D/strand/db.fa -n 28 -e 1e300 --outfmt '6 std sstrand score cigar' --backend cpu --quiet
variant "DNA, minus strand, fitted statistics" search -q $D/strand/queries.fa -d $D/strand/db.fa \
    --strand minus --match 3 --mismatch -2 --outfmt pair --backend cpu --quiet
# --max-hsps: each subject's further HSPs aligned by the rank that holds it
same "--max-hsps 3" search -q "$T/q20.fa" -d "$T/ties.swdb" --max-hsps 3 -n 5 -e 1e3 \
    --outfmt '6 std score qcovhsp qcovs cigar' --backend cpu --quiet
variant "--max-hsps 3, fitted, format 7" search -q "$T/q20.fa" -d "$T/ties.fa" --max-hsps 3 \
    --gap-open 12 --gap-extend 3 --outfmt 7 --backend cpu --quiet
variant "--max-hsps 3, DNA, both strands" search -q $D/hsps_dna_q.fasta -d $D/hsps_dna_db.fasta \
    --max-hsps 3 --outfmt pair --backend cpu --quiet
SWGPU_MPI_BATCH=7 variant "--max-hsps 3, batches of 7 queries" search -q "$T/ties.swdb" \
    -d "$T/ties.fa" --gap-open 12 --gap-extend 3 --max-hsps 3 -n 4 --backend cpu --quiet
same_file "-o FILE" "$T/hits.tsv" search -q "$T/q20.fa" -d "$T/ties.swdb" -o "$T/hits.tsv" \
    --backend cpu --quiet
# batches of queries (fits keep every score of a batch) and uneven splits
SWGPU_MPI_BATCH=7 same "fitted, batches of 7 queries" search -q "$T/ties.swdb" -d "$T/ties.fa" \
    --gap-open 12 --gap-extend 3 --no-self -n 4 --backend cpu --quiet
SWGPU_MPI_WEIGHTS=1,6,2 $RUN -np 3 "$MPI" search -q "$T/q20.fa" -d "$T/ties.swdb" \
    --backend cpu --quiet > "$T/w.out" 2>&1 &&
    "$SWGPU" search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu --quiet > "$T/w.want" &&
    cmp -s "$T/w.out" "$T/w.want" && pass || fail "SWGPU_MPI_WEIGHTS=1,6,2: output differs"
# weights out of range, or not one per rank: refused (rank 0's message)
full_only && SWGPU_MPI_BALANCE=bogus fails "SWGPU_MPI_BALANCE=bogus" \
    "^swgpu: SWGPU_MPI_BALANCE=bogus: not auto, equal or measure$" "$T/wb.out" \
    search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu --quiet -o "$T/wb.out"
SWGPU_MPI_WEIGHTS=1,0,2 fails "SWGPU_MPI_WEIGHTS=1,0,2" \
    "^swgpu: SWGPU_MPI_WEIGHTS=1,0,2: weight 2 \('0'\) is not a finite number > 0$" "$T/w0.out" \
    search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu -o "$T/w0.out"
# (the other refusals of the weights: not under SWGPU_TEST_QUICK, the same parser)
if [ "$QUICK" = 0 ]; then
    SWGPU_MPI_WEIGHTS=1,inf,2 fails "SWGPU_MPI_WEIGHTS=1,inf,2" \
        "^swgpu: SWGPU_MPI_WEIGHTS=1,inf,2: weight 2 \('inf'\) is not a finite number > 0$" "" \
        search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu
    SWGPU_MPI_WEIGHTS=1,-3,2 fails "SWGPU_MPI_WEIGHTS=1,-3,2" \
        "^swgpu: SWGPU_MPI_WEIGHTS=1,-3,2: weight 2 \('-3'\) is not a finite number > 0$" "" \
        search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu
    SWGPU_MPI_WEIGHTS=1e308,1e308,1 fails "SWGPU_MPI_WEIGHTS: sum too large" \
        "^swgpu: SWGPU_MPI_WEIGHTS=1e308,1e308,1: the weights' sum is too large$" "" \
        search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu
    SWGPU_MPI_WEIGHTS=1,2 fails "SWGPU_MPI_WEIGHTS: too few" \
        "^swgpu: SWGPU_MPI_WEIGHTS=1,2: expected 3 weights \(one per rank\), separated by commas$" "" \
        search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu
fi
# --- each rank's part streamed from disk (SWGPU_STREAM_PARTS=K: K parts a
# rank, whatever its --max-memory) --------------------------------------
"$SWGPU" makedb $D/strand/db.fa "$T/strand.swdb" > /dev/null 2>&1
# same_stream NAME ARGS...: with 2 ranks each streaming its part in 3 parts,
# and 3 ranks in 2 (SWGPU_TEST_QUICK=1: the second alone), the output is
# swgpu's unstreamed one and every rank streamed (rank 0's -v line; its own
# parts' lines at -vv)
STREAM_RUNS="2:3 3:2"
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && STREAM_RUNS=3:2
same_stream() {
    name=$1; shift
    "$SWGPU" "$@" --backend cpu --quiet > "$T/want" 2> "$T/want.err" ||
        { fail "$name: swgpu: $(tail -n 1 "$T/want.err")"; return; }
    for nk in $STREAM_RUNS; do
        n=${nk%:*} k=${nk#*:}
        if ! SWGPU_STREAM_PARTS=$k $RUN -np $n "$MPI" "$@" --backend cpu -vv > "$T/got" \
            2> "$T/got.err"; then
            fail "$name, $n ranks, $k parts: $(grep '^swgpu: ' "$T/got.err")"
        elif ! grep -Eq "each rank's part streamed from disk in parts: $k(, $k)+ \(" \
            "$T/got.err" || ! grep -q ": part $k of $k, " "$T/got.err"; then
            fail "$name, $n ranks, $k parts: not streamed: $(grep part "$T/got.err")"
        elif ! cmp -s "$T/want" "$T/got"; then
            fail "$name, $n ranks, $k parts: output differs from swgpu's:"
            diff "$T/want" "$T/got" | head -n 6
        else
            pass
        fi
    done
}
same_stream "streamed, ties, top 25, alignments" search -q "$T/q20.fa" -d "$T/ties.swdb" -n 25 \
    --outfmt '6 std score qlen slen nident positive gaps cigar qseq sseq'
same_stream "streamed, all against all, --no-self" search -q "$T/ties.swdb" -d "$T/ties.swdb" \
    --no-self -n 5
full_only && same_stream "streamed, --no-align, format 7" search -q "$T/q20.fa" -d "$T/ties.swdb" --no-align \
    --outfmt 7
full_only && same_stream "streamed, --max-hsps 3" search -q "$T/q20.fa" -d "$T/ties.swdb" --max-hsps 3 -n 5 \
    -e 1e3 --outfmt '6 std score qcovhsp qcovs cigar'
same_stream "streamed, DNA, both strands" search -q $D/strand/queries.fa -d "$T/strand.swdb" \
    -n 28 -e 1e300 --outfmt '6 std sstrand score cigar'
full_only && SWGPU_MPI_BATCH=7 same_stream "streamed, batches of 7 queries" search -q "$T/ties.swdb" \
    -d "$T/ties.swdb" -n 3
SWGPU_STREAM_PARTS=2 fails "streamed: fitted statistics refused" \
    "^swgpu: search: .*fitted statistics\): not yet with a streamed database" "" \
    search -q "$T/q20.fa" -d "$T/ties.swdb" --gap-open 12 --gap-extend 3 --backend cpu
full_only && SWGPU_STREAM_PARTS=0 fails "SWGPU_STREAM_PARTS=0" \
    "^swgpu: SWGPU_STREAM_PARTS=0: not a number of parts >= 1$" "" \
    search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu
fails "--max-memory too small for a rank's part" \
    "^swgpu: --max-memory 1048576: database .*ties\.swdb .* too few to stream it in parts" "" \
    search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu --max-memory 1M
# the whole-file checksum, as swgpu checks it: a residue changed to another
# valid one (each part's own checks pass) is found
sz=$(wc -c < "$T/db.swdb")
cp "$T/db.swdb" "$T/flip.swdb"
printf '\001' | dd of="$T/flip.swdb" bs=1 seek=$((sz - 300)) conv=notrunc 2> /dev/null
if cmp -s "$T/db.swdb" "$T/flip.swdb"; then
    fail "damaged database: the byte changed was already 1"
else
    fails "damaged makedb database (whole-file checksum)" \
        "^swgpu: database .*flip\.swdb: checksum mismatch \(corrupt file\)$" "$T/flip.out" \
        search -q $Q -d "$T/flip.swdb" --backend cpu -o "$T/flip.out"
fi
SWGPU_MPI_BALANCE=measure $RUN -np 2 "$MPI" search -q "$T/q20.fa" -d "$T/ties.fa" \
    --backend cpu > "$T/m.out" 2> "$T/m.err" && cmp -s "$T/m.out" "$T/w.want" &&
    grep -q 'database shares by measured speed' "$T/m.err" && pass ||
    fail "SWGPU_MPI_BALANCE=measure: $(tail -n 2 "$T/m.err")"
# the summary line counts the whole database
$RUN -np 3 "$MPI" search -q $Q -d "$T/db.swdb" --backend cpu > /dev/null 2> "$T/s.err"
grep -q 'vs 240 sequences' "$T/s.err" && [ "$(grep -c 'queries' "$T/s.err")" -eq 1 ] && pass ||
    fail "summary line: $(cat "$T/s.err")"

# --- align ---------------------------------------------------------------
A=$D/long_a.fa
B=$D/long_b.fa
same1 "align summary" align $A $B --backend cpu -t 1 --quiet
variant "align SAM" align $A $B --outfmt sam --backend cpu --quiet
variant "align pair" align $A $B --outfmt pair --backend cpu -t 2 --quiet
same1 "align both strands" align $A $D/long_brc.fa --strand both --backend cpu --quiet
same "align protein" align $D/long_pa.fa $D/long_pb.fa --backend cpu --quiet
same "align score only" align $A $B --score-only --backend cpu --quiet
# a longer pair (about 24 kb against a mutated copy behind a random prefix)
# with a tight budget: the traceback goes several levels deep
awk 'BEGIN { srand(13); s = ""; for (i = 0; i < 24000; i++) s = s substr("ACGT", int(rand() * 4) + 1, 1);
             print ">gen_a"; print s; t = "";
             for (i = 0; i < 900; i++) t = t substr("ACGT", int(rand() * 4) + 1, 1);
             for (i = 3000; i < 23000; i++) { r = rand();
                 if (r < 0.003) continue; if (r < 0.006) t = t "GA";
                 t = t (r < 0.03 ? substr("ACGT", int(rand() * 4) + 1, 1) : substr(s, i + 1, 1)) }
             print ">gen_b" > "/dev/stderr"; print t > "/dev/stderr" }' > "$T/gen_a.fa" 2> "$T/gen_b.fa"
same "align 24 kb, 12M budget" align "$T/gen_a.fa" "$T/gen_b.fa" --max-memory 12M --backend cpu \
    -t 2 --quiet
# 7 slices asked for: the CPU engine's ranks keep one each (their threads
# send the columns, and several slices a rank could block every thread of
# two ranks sending to each other: this hung with MPI's rendezvous sends)
variant "align 24 kb, 7 slices, 12M budget" align "$T/gen_a.fa" "$T/gen_b.fa" --max-memory 12M \
    --backend cpu -t 2 --gpu-parts 7 --quiet
# every scoring value x 10,000: values pass 2^29 (wide scores), split the same way
same "align 24 kb x 10,000, 12M budget" align "$T/gen_a.fa" "$T/gen_b.fa" --max-memory 12M --backend cpu \
    -t 2 --quiet --match 20000 --mismatch -30000 --gap-open 50000 --gap-extend 20000
same_file "align --plot" "$T/path.svg" align $A $B -o "$T/sum.out" --plot "$T/path.svg" --backend cpu \
    --quiet

# --- failures ------------------------------------------------------------
fails "search, missing query file" "nope\.fa.*(No such file|not exist)" "" \
    search -q "$T/nope.fa" -d $DB --backend cpu
fails "search, unwritable output directory" "nodir/out\.tsv" "$T/nodir/out.tsv" \
    search -q $Q -d $DB -o "$T/nodir/out.tsv" --backend cpu
full_only && fails "search, --comp-based-stats" "swgpu-mpi does not take --comp-based-stats 2 yet \(run swgpu\)" \
    "$T/o1.tsv" search -q $Q -d $DB -o "$T/o1.tsv" --comp-based-stats 2 --backend cpu
fails "search, a damaged database" "checksum|truncated|header" "$T/o1.tsv" \
    search -q $Q -d "$T/damaged.swdb" -o "$T/o1.tsv" --backend cpu
PHASES="open scan align"
full_only || PHASES=scan
for phase in $PHASES; do
    SWGPU_MPI_FAIL=1:$phase fails "search, rank 1 fails at $phase" \
        "^swgpu: rank 1 of 3: injected failure of rank 1 at $phase" "$T/o2.tsv" \
        search -q $Q -d "$T/ties.swdb" -o "$T/o2.tsv" --backend cpu
done
full_only && SWGPU_MPI_FAIL=2:scan fails "search, rank 2 fails at scan (fits)" "rank 2 of 3: injected" \
    "$T/o3.tsv" search -q $Q -d "$T/ties.swdb" -o "$T/o3.tsv" --gap-open 12 --gap-extend 3 --backend cpu
SWGPU_MPI_FAIL=0:merge fails "search, rank 0 fails at merge" \
    "^swgpu: injected failure of rank 0 at merge" "$T/o4.tsv" \
    search -q $Q -d "$T/ties.swdb" -o "$T/o4.tsv" --backend cpu
full_only && fails "align, missing file" "nope\.fa" "$T/a.out" align "$T/nope.fa" $B -o "$T/a.out"
full_only && fails "align, unwritable output directory" "nodir/a\.out" "$T/nodir/a.out" \
    align $A $B -o "$T/nodir/a.out" --backend cpu
SWGPU_MPI_FAIL=1:align fails "align, rank 1's transfers fail" \
    "^swgpu: rank 1 of 3: injected failure of rank 1 at align" "$T/a2.out" \
    align $A $B -o "$T/a2.out" --backend cpu
SWGPU_MPI_FAIL=2:align fails "align, rank 2's transfers fail" "rank 2 of 3: injected" \
    "$T/a3.out" align "$T/gen_a.fa" "$T/gen_b.fa" -o "$T/a3.out" --plot "$T/a3.svg" --backend cpu
[ -e "$T/a3.svg" ] && fail "align: the plot of a failed run is left" || pass
# --backend cuda: every rank on its GPU (ranks sharing one here) where there
# is one, else a clear error on every rank
if "$SWGPU" align $A $B --backend cuda --quiet > /dev/null 2>&1; then
    same "align on the GPUs" align "$T/gen_a.fa" "$T/gen_b.fa" --max-memory 12M --backend cuda --quiet
    variant "align on the GPUs x 10,000" align "$T/gen_a.fa" "$T/gen_b.fa" --max-memory 12M --backend cuda \
        --quiet --match 20000 --mismatch -30000 --gap-open 50000 --gap-extend 20000
    same "align on the GPUs, 7 slices" align "$T/gen_a.fa" "$T/gen_b.fa" --backend cuda --gpu-parts 7 --quiet
    SWGPU_MPI_FAIL=1:align fails "align on the GPUs, rank 1's transfers fail" \
        "^swgpu: rank 1 of 3: injected failure of rank 1 at align" "$T/a5.out" \
        align "$T/gen_a.fa" "$T/gen_b.fa" -o "$T/a5.out" --backend cuda
else
    skip "align on the GPUs: no usable CUDA device"
    fails "align, cuda without a device" "backend cuda: (no usable CUDA device|this build has no CUDA support)" \
        "$T/a4.out" align $A $B -o "$T/a4.out" --backend cuda
fi

finish
