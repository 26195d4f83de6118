#!/bin/sh
# cbs.sh - `swgpu search --comp-based-stats` (issue 30, item 1) against
# blastp 2.12's own numbers (tests/cli/expected/blastp_cbs1.tsv, its command
# in tests/cli/expected/README): every pair blastp reports is a hit of swgpu
# with a raw score >= blastp's; the pairs of equal raw score (all 30 of them
# on these fixtures) have blastp's E-value and bit score, as printed; the
# CUDA backend prints what the CPU one does (skipped without a device);
# the refusals, each with its message.
. "$(dirname "$0")/lib.sh"

Q=$D/cbs_q.fa
DB=$D/cbs_db.fa
COLS="6 qseqid sseqid score bitscore evalue"

if "$SWGPU" search --backend cpu --quiet -q $Q -d $DB --comp-based-stats 1 -n 500 -e 10 \
    -f "$COLS" > "$T/s1" 2> "$T/e1"; then
    pass
    # blastp's first row per pair (its best HSP) against swgpu's row
    awk -F'\t' 'NR == FNR { k = $1 "\t" $2; if (!(k in s)) { s[k] = $3; b[k] = $4; e[k] = $5 }; next }
        { k = $1 "\t" $2; if (k in seen) next; seen[k] = 1; n++
          if (!(k in s)) { print "MISSING " k; next }
          if (s[k] < $3) { print "LOWER " k " " s[k] " < " $3; next }
          if (s[k] == $3) { eq++; if (b[k] != $4 || e[k] != $5) print "DIFF " k " " b[k] " " e[k] " vs " $4 " " $5 } }
        END { print "pairs " n " equal " eq }' "$T/s1" $E/blastp_cbs1.tsv > "$T/cmp"
    if grep -q '^MISSING\|^LOWER\|^DIFF' "$T/cmp"; then
        fail "against blastp -comp_based_stats 1: $(grep -v '^pairs' "$T/cmp" | head -n 3)"
    else
        pass
    fi
    if [ "$(tail -n 1 "$T/cmp")" = "pairs 30 equal 30" ]; then pass; else
        fail "against blastp: $(tail -n 1 "$T/cmp"), expected pairs 30 equal 30"; fi
    # a pinned row, blastp's: tr|H6QJ35 x tr|H8ILG6 scores 382 (425 without the adjustment)
    if grep -q "^tr|H6QJ35|H6QJ35_RICMA	tr|H8ILG6|H8ILG6_MYCIA	382	151	5.68e-45\$" "$T/s1"; then pass; else
        fail "the H6QJ35 x H8ILG6 row: $(grep 'H8ILG6' "$T/s1" | head -n 1)"; fi
else
    fail "--comp-based-stats 1: $(cat "$T/e1")"
fi

# the CUDA backend prints the same rows
if "$SWGPU" search --backend cuda --quiet -q $Q -d $DB --comp-based-stats 1 -n 500 -e 10 \
    -f "$COLS" > "$T/g1" 2> "$T/eg"; then
    if cmp -s "$T/s1" "$T/g1"; then pass; else fail "cuda and cpu differ: $(diff "$T/s1" "$T/g1" | head -n 4)"; fi
elif grep -q 'not available\|no CUDA\|no GPU\|not built' "$T/eg"; then
    skip "no CUDA device: $(tail -n 1 "$T/eg")"
else
    fail "--backend cuda: $(cat "$T/eg")"
fi

bad "--comp-based-stats 4" "^swgpu: --comp-based-stats 4: must be 0, 1, 2 or 3\$" \
    search -q $Q -d $DB --comp-based-stats 4
bad "--comp-based-stats x" "^swgpu: --comp-based-stats: 'x' is not an integer" \
    search -q $Q -d $DB --comp-based-stats x
bad "--comp-based-stats 3" "^swgpu: comp-based-stats 3: matrix adjustment \(2, 3\) is not yet supported; use 0 or 1\$" \
    search -q $Q -d $DB --comp-based-stats 3
bad "DNA" "^swgpu: comp-based-stats 1: composition-based statistics are for protein searches; matrix .* is not a protein matrix\$" \
    search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --comp-based-stats 1
bad "BLOSUM45" "^swgpu: composition-based statistics: matrix BLOSUM45 is not supported \(BLOSUM62 only" \
    search -q $Q -d $DB --comp-based-stats 1 --matrix BLOSUM45
bad "PSSM query" "^swgpu: comp-based-stats 1: not with PSSM queries" \
    search --pssm $D/q104.pssm -d $DB --comp-based-stats 1
bad "--iterations" "^swgpu: comp-based-stats 1: not yet with an iterated search\$" \
    search -q $Q -d $DB --comp-based-stats 1 --iterations 2
finish
