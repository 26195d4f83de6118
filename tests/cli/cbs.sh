#!/bin/sh
# cbs.sh - `swgpu search --comp-based-stats` (issue 30, item 1) against
# blastp 2.12's own numbers in modes 1, 2 and 3
# (tests/cli/expected/blastp_cbs[123].tsv, their commands in
# tests/cli/expected/README): every pair blastp reports is a hit of swgpu
# with a raw score >= blastp's; the pairs of equal raw score (all of them
# on these fixtures) have blastp's E-value and bit score, as printed; the
# CUDA backend prints what the CPU one does (skipped without a device);
# the refusals, each with its message.
. "$(dirname "$0")/lib.sh"

Q=$D/cbs_q.fa
DB=$D/cbs_db.fa
COLS="6 qseqid sseqid score bitscore evalue"

# check MODE PAIRS: swgpu's rows under --comp-based-stats MODE against
# blastp's (expected/blastp_cbsMODE.tsv), PAIRS pairs all of equal raw score
check() {
    mode=$1 want=$2
    if ! "$SWGPU" search --backend cpu --quiet -q $Q -d $DB --comp-based-stats $mode -n 500 \
        -e 10 -f "$COLS" > "$T/s$mode" 2> "$T/e$mode"; then
        fail "--comp-based-stats $mode: $(cat "$T/e$mode")"
        return
    fi
    pass
    # blastp's first row per pair (its best HSP) against swgpu's row
    awk -F'\t' 'NR == FNR { k = $1 "\t" $2; if (!(k in s)) { s[k] = $3; b[k] = $4; e[k] = $5 }; next }
        { k = $1 "\t" $2; if (k in seen) next; seen[k] = 1; n++
          if (!(k in s)) { print "MISSING " k; next }
          if (s[k] < $3) { print "LOWER " k " " s[k] " < " $3; next }
          if (s[k] == $3) { eq++; if (b[k] != $4 || e[k] != $5) print "DIFF " k " " b[k] " " e[k] " vs " $4 " " $5 } }
        END { print "pairs " n " equal " eq }' "$T/s$mode" $E/blastp_cbs$mode.tsv > "$T/cmp"
    if grep -q '^MISSING\|^LOWER\|^DIFF' "$T/cmp"; then
        fail "mode $mode against blastp: $(grep -v '^pairs' "$T/cmp" | head -n 3)"
    else
        pass
    fi
    if [ "$(tail -n 1 "$T/cmp")" = "pairs $want equal $want" ]; then pass; else
        fail "mode $mode against blastp: $(tail -n 1 "$T/cmp"), expected pairs $want equal $want"; fi
}
check 1 30
check 2 33
check 3 34
# pinned rows, blastp's: tr|H6QJ35 x tr|H8ILG6 scores 382 in mode 1, 417 in 2 and 3
# (425 without the adjustment)
pin() {
    row=$(printf 'tr|H6QJ35|H6QJ35_RICMA\ttr|H8ILG6|H8ILG6_MYCIA\t%s\t%s\t%s' "$2" "$3" "$4")
    if grep -qxF "$row" "$T/s$1"; then pass; else
        fail "mode $1: the H6QJ35 x H8ILG6 row: $(grep 'H8ILG6' "$T/s$1" | head -n 1)"; fi
}
pin 1 382 151 5.68e-45
pin 2 417 165 3.91e-50
pin 3 417 165 3.91e-50

# the CUDA backend prints the same rows
if "$SWGPU" search --backend cuda --quiet -q $Q -d $DB --comp-based-stats 2 -n 500 -e 10 \
    -f "$COLS" > "$T/g1" 2> "$T/eg"; then
    if cmp -s "$T/s2" "$T/g1"; then pass; else fail "cuda and cpu differ: $(diff "$T/s2" "$T/g1" | head -n 4)"; fi
elif grep -q 'not available\|no CUDA\|no GPU\|not built' "$T/eg"; then
    skip "no CUDA device: $(tail -n 1 "$T/eg")"
else
    fail "--backend cuda: $(cat "$T/eg")"
fi

bad "--comp-based-stats 4" "^swgpu: --comp-based-stats 4: must be 0, 1, 2 or 3\$" \
    search -q $Q -d $DB --comp-based-stats 4
bad "--comp-based-stats x" "^swgpu: --comp-based-stats: 'x' is not an integer" \
    search -q $Q -d $DB --comp-based-stats x
bad "DNA" "^swgpu: comp-based-stats 1: composition-based statistics are for protein searches; matrix .* is not a protein matrix\$" \
    search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --comp-based-stats 1
bad "BLOSUM45" "^swgpu: composition-based statistics: matrix BLOSUM45 is not supported \(BLOSUM62 only" \
    search -q $Q -d $DB --comp-based-stats 1 --matrix BLOSUM45
bad "PSSM query" "^swgpu: comp-based-stats 1: not with PSSM queries" \
    search --pssm $D/q104.pssm -d $DB --comp-based-stats 1
bad "--iterations" "^swgpu: comp-based-stats 1: not yet with an iterated search\$" \
    search -q $Q -d $DB --comp-based-stats 1 --iterations 2
finish
