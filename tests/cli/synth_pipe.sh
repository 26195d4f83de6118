#!/bin/sh
# synth_pipe.sh - bench/gen_synth: without -x the single stream of the GPU
# benchmarks (byte for byte the output before -x existed); with -x the same
# output on every -t.  swgpu makedb reads standard input ('-', a pipe or a
# redirected file): the database is the file's, byte for byte, whether the
# stream is plain FASTA (read in memory on -t threads), gzip or FASTQ.
. "$(dirname "$0")/lib.sh"
GEN=$(dirname "$SWGPU")/bench/gen_synth
if [ ! -x "$GEN" ]; then
    skip "no $GEN (make bench)"
    finish
    exit $?
fi
md5() { md5sum | cut -c1-32; }
# sequences a block of the -x runs (x 3 below); SWGPU_TEST_QUICK=1 (the
# sanitizer builds, ~10x slower): 18,000, two blocks of 16,384
N=20000
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && N=6000
M=$((3 * N))

# the single stream: the md5 of the generator before -x (commit f967380)
s=$("$GEN" -n 2000 2>/dev/null | md5)
[ "$s" = c128a2f533eb7309abf7140c8969f079 ] && pass || fail "gen_synth -n 2000: md5 $s"
s=$("$GEN" -n 20000 -s 7 2>/dev/null | md5)
[ "$s" = 5b47708ad41c937dbcee2db06ca6b8fc ] && pass || fail "gen_synth -n 20000 -s 7: md5 $s"
"$GEN" -n $N -x 3 -t 1 "$T/x1.fa" 2>"$T/gen.log" && pass || fail "gen_synth -x 3: $(cat "$T/gen.log")"
grep -q "^gen_synth: $M sequences, " "$T/gen.log" && pass || fail "gen_synth -x 3 said: $(cat "$T/gen.log")"
for t in 2 3 7; do
    "$GEN" -n $N -x 3 -t $t 2>/dev/null >"$T/x$t.fa"
    cmp -s "$T/x1.fa" "$T/x$t.fa" && pass || fail "gen_synth -x 3: -t $t differs from -t 1"
done
# ids synth1 .. synth$M in order, blocks of different streams
if [ "$(grep '^>' "$T/x1.fa" | sed 's/^>synth\([0-9]*\) len=.*/\1/' | awk '$1 != NR { bad++ } END { print NR, bad + 0 }')" = "$M 0" ]; then
    pass; else fail "gen_synth -x 3: ids not synth1 .. synth$M"; fi
s1=$("$GEN" -n 20000 -x 1 2>/dev/null | md5)
s2=$("$GEN" -n 20000 -x 1 -s 8 2>/dev/null | md5)
s0=$("$GEN" -n 20000 2>/dev/null | md5)
[ "$s1" != "$s2" ] && [ "$s1" != "$s0" ] && pass || fail "gen_synth -x: seeds or streams not distinct"
for a in "-x 0" "-t 0 -x 2" "-n x"; do
    if "$GEN" $a >/dev/null 2>"$T/e"; then fail "gen_synth $a accepted"; else pass; fi
done

# makedb from standard input: the file's database, byte for byte
"$SWGPU" makedb --quiet -t 2 "$T/x1.fa" "$T/f.swdb" && pass || fail "makedb of the file"
"$GEN" -n $N -x 3 -t 2 2>/dev/null | "$SWGPU" makedb --quiet -t 2 - "$T/p.swdb" && pass || fail "gen_synth | makedb -"
cmp -s "$T/f.swdb" "$T/p.swdb" && pass || fail "gen_synth | makedb -: not the file's database"
"$SWGPU" makedb -v -t 3 - "$T/r.swdb" <"$T/x1.fa" 2>"$T/r.log" && cmp -s "$T/f.swdb" "$T/r.swdb" && pass ||
    fail "makedb - < file: $(tail -n 1 "$T/r.log")"
grep -q "file /dev/stdin: read on [0-9]* threads" "$T/r.log" && pass || fail "makedb - < file: not read by the parallel reader"
cat "$T/x1.fa" | "$SWGPU" makedb -v -t 2 - "$T/p2.swdb" 2>"$T/p2.log"
grep -q "file /dev/stdin: read on [0-9]* threads" "$T/p2.log" && cmp -s "$T/f.swdb" "$T/p2.swdb" && pass ||
    fail "a pipe into makedb -t 2 not read by the parallel reader: $(cat "$T/p2.log")"
gzip -c "$T/x1.fa" | "$SWGPU" makedb --quiet - "$T/g.swdb" && cmp -s "$T/f.swdb" "$T/g.swdb" && pass ||
    fail "gzip | makedb -: not the file's database"
# FASTQ through a pipe (one thread, as a file): the file's database
head -n 40 "$T/x1.fa" | awk '/^>/ { id = substr($1, 2); next } { print "@" id; print; print "+"; q = $0; gsub(/./, "I", q); print q }' >"$T/x.fq"
"$SWGPU" makedb --quiet "$T/x.fq" "$T/fq1.swdb"
cat "$T/x.fq" | "$SWGPU" makedb --quiet - "$T/fq2.swdb" && cmp -s "$T/fq1.swdb" "$T/fq2.swdb" && pass ||
    fail "FASTQ | makedb -: not the file's database"
# a search reading its database from a pipe finds what the database file gives
head -n 4 "$T/x1.fa" >"$T/q.fa"
"$SWGPU" search --quiet -q "$T/q.fa" -d "$T/f.swdb" -n 5 -f '6 qseqid sseqid score' >"$T/s1.tsv"
cat "$T/x1.fa" | "$SWGPU" search --quiet -q "$T/q.fa" -d /dev/stdin -n 5 -f '6 qseqid sseqid score' >"$T/s2.tsv"
[ -s "$T/s1.tsv" ] && cmp -s "$T/s1.tsv" "$T/s2.tsv" && pass || fail "search -d /dev/stdin: other hits"
# what a stream cannot be
bad "makedb - (empty)" "file /dev/stdin: empty file" makedb - "$T/e.swdb" </dev/null
printf '>a\nAC\001GT\n' >"$T/bin.fa"
bad "makedb - (binary)" "file /dev/stdin, line 2, record 1 \(id a\): binary data \(byte 0x01\)" \
    makedb - "$T/e.swdb" <"$T/bin.fa"
cat "$T/f.swdb" >"$T/db.pipe.in"
cat "$T/db.pipe.in" | { bad "makedb - (a database)" "file /dev/stdin: a swgpu makedb database cannot be read from a stream" \
    makedb - "$T/e.swdb"; echo "$n_pass $n_fail" >"$T/counts"; }
read p f <"$T/counts"; n_pass=$p; n_fail=$f
head -c 300000 "$T/x1.fa" | SWGPU_READ_LIMIT=100K "$SWGPU" makedb - "$T/e.swdb" 2>"$T/lim.err"
grep -q 'file /dev/stdin: more than 102400 bytes read from the stream (the limit for reading: SWGPU_READ_LIMIT' "$T/lim.err" &&
    pass || fail "a stream over SWGPU_READ_LIMIT: $(cat "$T/lim.err")"
[ ! -e "$T/e.swdb" ] && pass || fail "a failed makedb - left its output"
# one sequence over the limit of a database (SWGPU_DB_MAX_SEQS lowers 2^32 - 1)
over="file /dev/stdin: $M sequences, more than the $((M - 1)) a database may hold \(32-bit sequence indices\)"
export SWGPU_DB_MAX_SEQS=$((M - 1))
bad "makedb - over the sequence limit" "$over" makedb - "$T/e.swdb" <"$T/x1.fa"
gzip -c "$T/x1.fa" >"$T/x1.fa.gz"
bad "makedb - (gzip file) over the sequence limit" "$over" makedb - "$T/e.swdb" <"$T/x1.fa.gz"
cat "$T/x1.fa.gz" | { bad "makedb - (gzip pipe) over the sequence limit" "$over" makedb - "$T/e.swdb"
    echo "$n_pass $n_fail" >"$T/counts"; }
read p f <"$T/counts"; n_pass=$p; n_fail=$f
export SWGPU_DB_MAX_SEQS=$M
cat "$T/x1.fa.gz" | "$SWGPU" makedb --quiet - "$T/g2.swdb" && cmp -s "$T/f.swdb" "$T/g2.swdb" && pass ||
    fail "gzip | makedb - at the sequence limit"
unset SWGPU_DB_MAX_SEQS

# bench/uniref50_bench.sh end to end, small and on the CPU (queries: 2 of the fixtures)
mkdir -p "$T/data"
head -n 4 "$T/x1.fa" >"$T/data/cudasw_queries.fasta"
BACKEND=cpu SYNTH_N=1000 sh bench/uniref50_bench.sh "$T/data" "$SWGPU" "$T/ub" 2 -n 3 >"$T/ub.log" 2>&1 && pass ||
    fail "uniref50_bench.sh: $(tail -n 3 "$T/ub.log")"
if grep -q '^gen_synth -x 2 -n 1000 | swgpu makedb - (2000 sequences, [0-9]* residues)' "$T/ub.log" &&
   grep -Eq '^\| [0-9.]+ +\| [0-9]+ +\| [0-9.]+ +\| [0-9.]+ +\| [0-9.]+ +\| ([0-9.]+ GB|-) +\| [0-9.]+ GB +\| 6 +\|$' "$T/ub.log"; then
    pass; else fail "uniref50_bench.sh table: $(cat "$T/ub.log")"; fi
finish
