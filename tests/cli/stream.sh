#!/bin/sh
# stream.sh - a makedb database streamed from disk in parts (issue 31):
# SWGPU_STREAM_PARTS=N forces N parts, whatever the budget; the output is
# byte for byte the unsplit search's for 2, 3 and many parts, in tabular
# with alignments and other formats, with ties at the top-N cut-off, E-value
# filters, --max-hsps, --no-self, --rank score and DNA on both strands; a
# --max-memory below the database's size streams it and the peak RSS stays
# under it; a changed residue fails the whole-file checksum; the options a
# streamed database does not take yet are refused; -vv names the streamed
# database's longest sequence as the whole's; a FASTA database larger than
# --max-memory is read whole with a warning to use makedb.
. "$(dirname "$0")/lib.sh"

GEN=$(dirname "$SWGPU")/bench/gen_synth
Q=examples/queries.fasta
DB=examples/db.fasta
# a database with ties: the first 30 sequences again under other ids
cat $DB > "$T/ties.fa"
awk '/^>/ { n++; if (n > 30) exit; sub(/^>/, ">copy_") } { print }' $DB >> "$T/ties.fa"
"$SWGPU" makedb "$T/ties.fa" "$T/ties.swdb" > /dev/null 2>&1 || fail "makedb ties"
head -n 40 "$T/ties.fa" > "$T/q20.fa"
"$SWGPU" makedb $D/strand/db.fa "$T/strand.swdb" > /dev/null 2>&1 || fail "makedb strand"
"$SWGPU" makedb $D/hsps_dna_db.fasta "$T/hsps.swdb" > /dev/null 2>&1 || fail "makedb hsps"

# same NAME ARGS...: with 2, 3 and 11 parts, stdout equals the unsplit search's
# the part counts every case is compared on; SWGPU_TEST_QUICK=1 (the
# sanitizer builds, ~10x slower): 3 alone
PARTS="2 3 11"
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && PARTS=3

same() {
    name=$1; shift
    if ! "$SWGPU" search "$@" --backend cpu --quiet > "$T/want" 2> "$T/want.err"; then
        fail "$name: unsplit: $(tail -n 1 "$T/want.err")"
        return
    fi
    [ -s "$T/want" ] || fail "$name: no output"
    for n in $PARTS; do
        if ! SWGPU_STREAM_PARTS=$n "$SWGPU" search "$@" --backend cpu -v > "$T/got" 2> "$T/got.err"; then
            fail "$name, $n parts: $(tail -n 1 "$T/got.err")"
        elif ! grep -q "streamed from disk in $n parts" "$T/got.err"; then
            fail "$name, $n parts: not streamed: $(head -n 2 "$T/got.err")"
        elif ! cmp -s "$T/want" "$T/got"; then
            fail "$name, $n parts: output differs from the unsplit search's:"
            diff "$T/want" "$T/got" | head -n 6
        else
            pass
        fi
    done
}

same "tabular with alignments, ties, top 25" -q "$T/q20.fa" -d "$T/ties.swdb" -n 25 \
    --outfmt '6 std score qlen slen nident positive gaps cigar qseq sseq'
same "BLAST pairwise report (format 0)" -q "$T/q20.fa" -d "$T/ties.swdb" -n 5 --outfmt 0
same "format 7, strict E-value" -q $Q -d "$T/ties.swdb" --outfmt 7 --evalue 1e-30
same "format pair" -q "$T/q20.fa" -d "$T/ties.swdb" --outfmt pair -n 3
same "XML (format 5)" -q "$T/q20.fa" -d "$T/ties.swdb" --outfmt 5 -n 3
for e in 1e-3 5; do
    same "spouge, E <= $e, top 5, --no-align" -q "$T/q20.fa" -d "$T/ties.swdb" --evalue $e -n 5 \
        --no-align
done
same "--rank score, ties, top 25" -q "$T/q20.fa" -d "$T/ties.swdb" -n 25 --rank score
same "--evalue-model old-fsc" -q "$T/q20.fa" -d "$T/ties.swdb" --evalue 0.05 -n 3 \
    --evalue-model old-fsc
same "all against all, --no-self" -q "$T/ties.swdb" -d "$T/ties.swdb" --no-self -n 5
same "--max-hsps 3" -q "$T/q20.fa" -d "$T/ties.swdb" --max-hsps 3 -n 5 -e 1e3 \
    --outfmt '6 std score qcovhsp qcovs cigar'
same "DNA, both strands" -q $D/strand/queries.fa -d "$T/strand.swdb" -n 28 -e 1e300 \
    --outfmt '6 std sstrand score cigar'
same "DNA, --max-hsps 3, pair" -q $D/hsps_dna_q.fasta -d "$T/hsps.swdb" --max-hsps 3 --outfmt pair

# as many parts as sequences, and more asked for than there are
n=$(grep -c '^>' "$T/ties.fa")
"$SWGPU" search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu --quiet > "$T/want"
SWGPU_STREAM_PARTS=$((n + 5)) "$SWGPU" search -q "$T/q20.fa" -d "$T/ties.swdb" --backend cpu \
    --quiet > "$T/got" 2> "$T/err" && cmp -s "$T/want" "$T/got" && pass ||
    fail "one sequence a part: $(tail -n 1 "$T/err")"

# -vv: the streamed database's line as the whole one's (its longest sequence too)
"$SWGPU" search -q $Q -d "$T/ties.swdb" --backend cpu -vv > /dev/null 2> "$T/err1"
SWGPU_STREAM_PARTS=3 "$SWGPU" search -q $Q -d "$T/ties.swdb" --backend cpu -vv > /dev/null \
    2> "$T/err3"
l1=$(sed -n 's/^\[swgpu [0-9.]*s\] \(.*ties\.swdb: .* sequences, .* residues, longest .*\)/\1/p' "$T/err1")
l3=$(sed -n 's/^\[swgpu [0-9.]*s\] \(.*ties\.swdb: .* sequences, .* residues, longest .*\)/\1/p' "$T/err3")
case "$l1" in
    *"longest 0"|"") fail "-vv, whole: database line \"$l1\"" ;;
    *) [ "$l1" = "$l3" ] && pass || fail "-vv, 3 parts: \"$l3\", whole: \"$l1\"" ;;
esac
# a residue changed to another valid one: each part's own checks pass, the
# whole-file checksum does not
sz=$(wc -c < "$T/ties.swdb")
cp "$T/ties.swdb" "$T/flip.swdb"
printf '\001' | dd of="$T/flip.swdb" bs=1 seek=$((sz - 300)) conv=notrunc 2> /dev/null
if cmp -s "$T/ties.swdb" "$T/flip.swdb"; then
    fail "damaged database: the byte changed was already 1"
else
    SWGPU_STREAM_PARTS=3 bad "damaged database, 3 parts" \
        "database .*flip\.swdb: checksum mismatch \(corrupt file\)$" \
        search -q $Q -d "$T/flip.swdb" --backend cpu
fi

# what a streamed database does not take yet
msg="not yet with a streamed database \(--max-memory [0-9]+ below the database's $sz bytes\)"
SWGPU_STREAM_PARTS=2 bad "fitted statistics refused" "statistics\): $msg" \
    search -q $Q -d "$T/ties.swdb" --gap-open 12 --gap-extend 3 --backend cpu
SWGPU_STREAM_PARTS=2 bad "--comp-based-stats refused" "^swgpu: search: --comp-based-stats: $msg" \
    search -q $Q -d "$T/ties.swdb" --comp-based-stats 2 --backend cpu
SWGPU_STREAM_PARTS=2 bad "--iterations refused" "--report: $msg" \
    search -q $Q -d "$T/ties.swdb" --iterations 2 --backend cpu
SWGPU_STREAM_PARTS=0 bad "SWGPU_STREAM_PARTS=0" "SWGPU_STREAM_PARTS=0: not a number of parts >= 1" \
    search -q $Q -d "$T/ties.swdb" --backend cpu

# the budget chooses the parts: a 15 MB database under --max-memory 24M is
# streamed and the peak RSS stays below 24 MiB (not under the sanitizers,
# whose shadow memory alone is larger)
if [ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ]; then
    skip "--max-memory 24M: not under the sanitizers (SWGPU_TEST_QUICK)"
elif ! "$GEN" -n 40000 "$T/synth.fa" 2> "$T/err" ||
    ! "$SWGPU" makedb "$T/synth.fa" "$T/synth.swdb" > /dev/null 2>&1; then
    fail "gen_synth -n 40000: $(cat "$T/err")"
else
    head -n 6 "$T/synth.fa" > "$T/sq.fa"
    "$SWGPU" search -q "$T/sq.fa" -d "$T/synth.swdb" --backend cpu -t 2 --quiet > "$T/want"
    "$SWGPU" search -q "$T/sq.fa" -d "$T/synth.swdb" --backend cpu -t 2 --max-memory 24M \
        > "$T/got" 2> "$T/err"
    rss=$(sed -n 's/.*peak RSS \([0-9.]*\) MB.*/\1/p' "$T/err")
    if ! grep -q 'streamed from disk in [0-9]* parts (--max-memory 25165824 bytes)' "$T/err"; then
        fail "--max-memory 24M: not streamed: $(cat "$T/err")"
    elif ! cmp -s "$T/want" "$T/got"; then
        fail "--max-memory 24M: output differs from the unsplit search's"
    elif ! awk -v r="$rss" 'BEGIN { exit !(r != "" && r * 1e6 <= 25165824) }'; then
        fail "--max-memory 24M: peak RSS $rss MB"
    else
        pass
    fi
    # a FASTA database larger than --max-memory: read whole, with a warning
    fb=$(wc -c < "$T/synth.fa")
    "$SWGPU" search -q "$T/sq.fa" -d "$T/synth.fa" --backend cpu -t 2 --max-memory 4M \
        > "$T/got" 2> "$T/err"
    grep -q "warning: database .*synth\.fa ($fb bytes) is read whole into memory although the memory budget is 4194304 bytes: only a makedb file is streamed from disk within the budget (swgpu makedb .*synth\.fa OUT\.swdb makes one)$" "$T/err" &&
        cmp -s "$T/want" "$T/got" && pass || fail "FASTA over --max-memory: $(cat "$T/err")"
    "$SWGPU" search -q "$T/sq.fa" -d "$T/synth.fa" --backend cpu -t 2 > /dev/null 2> "$T/err"
    grep -q warning "$T/err" && fail "FASTA, no --max-memory: $(cat "$T/err")" || pass
    # the same database with no --max-memory fits: searched whole, as before
    "$SWGPU" search -q "$T/sq.fa" -d "$T/synth.swdb" --backend cpu -t 2 > /dev/null 2> "$T/err"
    grep -q streamed "$T/err" && fail "no --max-memory: streamed: $(cat "$T/err")" || pass
fi
finish
