#!/bin/sh
# threads.sh - the tool's multithreaded paths give the output of one thread:
# searches (cpu and ref backends, a FASTA and a makedb database, hits with
# alignments) and long alignments (both strands, SAM) with -t 1, 2 and 4
# (4 is clamped to the cores, with a warning, where there are fewer).
# make check-tsan runs it with the tool built under ThreadSanitizer.
. "$(dirname "$0")/lib.sh"

Q=$T/q.fa
DB=examples/db.fasta
# the example queries and 12 database sequences (each finds itself)
cp examples/queries.fasta "$Q"
awk '/^>/ { n++ } n >= 40 && n < 52' $DB >> "$Q"
[ "$(grep -c '^>' "$Q")" -eq 15 ] && pass || fail "query file: $(grep -c '^>' "$Q") records, expected 15"
"$SWGPU" makedb $DB "$T/db.swdb" --quiet && pass || fail "makedb $DB"
head -n 60 $DB > "$T/small.fa" # the reference engine is slow: a few sequences

COLS='6 qseqid sseqid score evalue bitscore pident qstart qend sstart send cigar'

# same NAME ARGS...: `swgpu ARGS -t N` prints the same for N = 1, 2 and 4,
# and exits 0; the first output is kept in $T/NAME.1
same() {
    name=$1; shift
    for t in 1 2 4; do
        if ! "$SWGPU" "$@" -t $t > "$T/$name.out" 2> "$T/$name.err"; then
            fail "$name -t $t: exit $? ($(tail -n 1 "$T/$name.err"))"
            return
        fi
        grep -v '^@PG' "$T/$name.out" > "$T/$name.$t" # SAM's @PG holds the command line
        if [ $t -ne 1 ] && ! cmp -s "$T/$name.1" "$T/$name.$t"; then
            fail "$name: -t $t differs from -t 1:"
            diff "$T/$name.1" "$T/$name.$t" | head -n 10
            return
        fi
    done
    pass
}

same search_cpu search -q "$Q" -d $DB --backend cpu --outfmt "$COLS" --quiet
same search_cpu_swdb search -q "$Q" -d "$T/db.swdb" --backend cpu --outfmt "$COLS" --quiet
same search_ref search -q examples/queries.fasta -d "$T/small.fa" --backend ref --outfmt "$COLS" --quiet
same search_pair search -q examples/queries.fasta -d "$T/db.swdb" --backend cpu --outfmt pair -n 3 --quiet
same align_both align $D/long_a.fa $D/long_brc.fa --strand both --backend cpu --quiet
same align_sam align $D/long_a.fa $D/long_b.fa --outfmt sam --backend cpu --max-memory 12M --quiet

# the outputs are what they should be, not just equal: 15 queries with hits,
# the 12 database sequences (and the third example query, which is in the
# database too) first hit themselves with identical residues
n=$(cut -f 1 "$T/search_cpu.1" | sort -u | wc -l)
[ "$n" -eq 15 ] && pass || fail "search: $n queries with hits, expected 15"
self=$(awk -F '\t' '!seen[$1]++ && $1 == $2 && $6 == "100.000"' "$T/search_cpu.1" | wc -l)
[ "$self" -eq 13 ] && pass || fail "search: $self queries hit themselves first, expected 13"
cmp -s "$T/search_cpu.1" "$T/search_cpu_swdb.1" && pass || fail "FASTA and makedb database differ"
# the reference engine agrees with the cpu engine on the small database
"$SWGPU" search -q examples/queries.fasta -d "$T/small.fa" --backend cpu --outfmt "$COLS" --quiet \
    > "$T/small_cpu" 2>&1
cmp -s "$T/search_ref.1" "$T/small_cpu" && pass || fail "ref and cpu differ on $T/small.fa"
grep -q '^score     3248$' "$T/align_both.1" && grep -q '^strand    minus$' "$T/align_both.1" && pass ||
    fail "align --strand both: $(head -n 5 "$T/align_both.1")"
grep -q 'AS:i:3248' "$T/align_sam.1" && pass || fail "align sam: $(tail -n 1 "$T/align_sam.1" | cut -c 1-80)"

finish
