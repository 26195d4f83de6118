#!/bin/sh
# strand.sh - DNA searches score both strands (issue 28): every query and
# subject's score equals ssearch36's best over the two strands (recorded in
# tests/data/strand/, with the command), on every backend present; the
# strand printed is one that reaches it; the best hits' coordinates equal
# ssearch36's (sstart > send on the minus strand); --strand plus and minus;
# the pairwise view of a minus hit.  The cuda backend runs where a GPU is.
. "$(dirname "$0")/lib.sh"

S=$D/strand
COLS='6 qseqid sseqid score sstrand sstart send'

# every (query, subject) pair: the score and a strand that reaches it
check_all() { # NAME FILE
    awk -F'\t' -v name="$1" '
    NR == FNR { best[$1 "\t" $2] = $3; st[$1 "\t" $2] = $4; next }
    { k = $1 "\t" $2; n++
      if (!(k in best) || best[k] != $3) { bad++; if (bad < 5) print name ": " $0 " expected score " best[k] }
      else if (index(st[k], $4 == "plus" ? "f" : "r") == 0) { bad++; if (bad < 5) print name ": " $0 " expected strand " st[k] }
      if (($4 == "minus") != ($5 > $6) && $5 != $6) { bad++; if (bad < 5) print name ": " $0 " coordinates against the strand" } }
    END { if (n != 364 || bad) { print name ": " n " rows, " bad + 0 " wrong"; exit 1 } }' \
        $S/ssearch36.tsv "$2"
}

backends="ref cpu"
if "$SWGPU" search -q $S/queries.fa -d $S/db.fa -n 1 --backend cuda --quiet -o /dev/null 2> /dev/null; then
    backends="$backends cuda"
else
    skip "cuda backend: no GPU here"
fi
for b in $backends; do
    if "$SWGPU" search -q $S/queries.fa -d $S/db.fa -n 28 -e 1e300 --backend $b \
        --outfmt "$COLS" -o "$T/all_$b.tsv" --quiet 2> "$T/err"; then
        check_all "$b" "$T/all_$b.tsv" && pass || fail "$b: scores or strands differ from ssearch36"
    else
        fail "$b: exit $? ($(tail -n 1 "$T/err"))"
    fi
    [ $b = ref ] || { cmp -s "$T/all_ref.tsv" "$T/all_$b.tsv" && pass || fail "$b output differs from ref"; }
done

# blastn's E-values, bit scores and strands on the pairs of equal raw score
"$SWGPU" search -q $S/queries.fa -d $S/db.fa -n 28 --outfmt \
    '6 qseqid sseqid score evalue bitscore sstrand' --quiet > "$T/ev.tsv" || fail "E-values: exit $?"
awk -F'\t' 'NR == FNR { b[$1 "\t" $2 "\t" $3] = $4 "\t" $5 "\t" $6; next }
    { k = $1 "\t" $2 "\t" $3; if (k in b) { n++; if (b[k] != $4 "\t" $5 "\t" $6) { bad++; print "blastn: " b[k] ", swgpu: " $0 } } }
    END { if (n != 66 || bad) { print n " same-score pairs, " bad + 0 " differ"; exit 1 } }' \
    $S/blastn.tsv "$T/ev.tsv" && pass || fail "E-values differ from blastn's"

# the best hits, with coordinates
"$SWGPU" search -q $S/queries.fa -d $S/db.fa -n 1 --outfmt \
    '6 qseqid sseqid score sstrand qstart qend sstart send' --quiet > "$T/top.tsv" &&
    cmp -s "$T/top.tsv" $S/ssearch36_top.tsv && pass ||
    { fail "best hits differ from ssearch36's:"; diff "$T/top.tsv" $S/ssearch36_top.tsv | head; }

# --strand plus / minus: only that strand, each a subset of both's scores
for st in plus minus; do
    "$SWGPU" search -q $S/queries.fa -d $S/db.fa -n 28 -e 1e300 --strand $st \
        --outfmt "$COLS" --quiet > "$T/$st.tsv" || fail "--strand $st: exit $?"
    n=$(awk -F'\t' -v s=$st '$4 != s' "$T/$st.tsv" | wc -l)
    [ "$n" -eq 0 ] && pass || fail "--strand $st: $n rows of the other strand"
done
# each pair's best of the two single-strand runs is the both-strand score
awk -F'\t' 'FILENAME ~ /all_ref/ { want[$1 "\t" $2] = $3; next }
    { k = $1 "\t" $2; if ($3 > got[k]) got[k] = $3 }
    END { for (k in want) if (got[k] != want[k]) { print k, got[k], want[k]; bad++ } exit bad ? 1 : 0 }' \
    "$T/plus.tsv" "$T/minus.tsv" "$T/all_ref.tsv" && pass || fail "plus and minus do not make both"
# the headline case: a query on the minus strand alone is not found on plus
"$SWGPU" search -q $S/queries.fa -d $S/db.fa -n 1 --strand plus --outfmt '6 qseqid sseqid score' \
    --quiet | awk -F'\t' '$1 == "q06" && $3 < 100 { ok = 1 } END { exit !ok }' && pass ||
    fail "q06 (reverse complement of s08) should score low on the plus strand alone"

# the pairwise view of a minus hit: the subject's reverse complement, its
# positions counting down (BLAST's Plus/Minus)
awk '/^>/ { n++ } n == 6' $S/queries.fa > "$T/q06.fa"
"$SWGPU" search -q "$T/q06.fa" -d $S/db.fa -n 1 --outfmt pair --quiet > "$T/pair.out" || fail "pair: exit $?"
grep -q '^Strand: Plus/Minus$' "$T/pair.out" && pass || fail "pair: no Strand: Plus/Minus line"
grep '^Target' "$T/pair.out" | head -n 1 | grep -q '^Target 572 .* 513$' && pass ||
    fail "pair: first Target line $(grep '^Target' "$T/pair.out" | head -n 1)"
grep '^Target' "$T/pair.out" | tail -n 1 | grep -q ' 83$' && pass ||
    fail "pair: last Target line $(grep '^Target' "$T/pair.out" | tail -n 1)"
# the reverse complement shown is the query itself (100 % identity, 490 bp)
q=$(grep -v '^>' "$T/q06.fa" | tr -d '\n')
t=$(grep '^Target' "$T/pair.out" | awk '{ printf "%s", $3 }')
[ "$q" = "$t" ] && pass || fail "pair: the Target lines are not the query's sequence"
# --strand is refused with a bad value
"$SWGPU" search -q $S/queries.fa -d $S/db.fa --strand up > /dev/null 2> "$T/err" &&
    fail "--strand up accepted" ||
    { grep -q "strand: 'up' is not both, plus or minus" "$T/err" && pass || fail "--strand up: $(cat "$T/err")"; }
finish
