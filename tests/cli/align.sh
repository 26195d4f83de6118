#!/bin/sh
# align.sh - `swgpu align` outputs pinned to expected files, and its errors.
#
#   SWGPU=build/swgpu sh tests/cli/align.sh            check
#   UPDATE=1 SWGPU=build/swgpu sh tests/cli/align.sh   rewrite tests/cli/expected/align_*
#                                                      (then inspect by hand!)
# Fixtures: tests/data/long_a.fa (2400 bp), long_b.fa (a mutated 1800 bp
# piece of it with indels and an N run, behind an unrelated 160 bp prefix),
# long_brc.fa (long_b reverse-complemented), long_pa.fa / long_pb.fa
# (proteins; long_pb has a second record that is ignored with a warning).
# The expected alignments were checked by hand: SAM clips + CIGAR lengths add
# up to the sequence lengths, the minus strand gives the plus alignment
# mirrored, and the reference backend gives the same score and ranges.
. "$(dirname "$0")/lib.sh"

A=$D/long_a.fa
B=$D/long_b.fa
BRC=$D/long_brc.fa

golden() {
    name=$1; shift
    if ! "$SWGPU" align "$@" > "$T/$name" 2> "$T/$name.err"; then
        fail "$name: exit $? ($(tail -n 1 "$T/$name.err"))"
        return
    fi
    if [ -n "${UPDATE:-}" ]; then
        cp "$T/$name" "$E/$name"
        pass
    elif cmp -s "$T/$name" "$E/$name"; then
        pass
    else
        fail "$name: output differs from $E/$name:"
        diff "$E/$name" "$T/$name" | head -n 20
    fi
}

# expect_error NAME PATTERN ARGS...: exit 1, one stderr line matching PATTERN
expect_error() {
    name=$1 pat=$2; shift 2
    "$SWGPU" align "$@" > "$T/err.out" 2> "$T/err.err"
    rc=$?
    if [ $rc -ne 1 ]; then
        fail "$name: exit $rc, expected 1"
    elif [ "$(wc -l < "$T/err.err")" -ne 1 ] || ! grep -Eq "$pat" "$T/err.err"; then
        fail "$name: stderr does not match /$pat/: $(cat "$T/err.err")"
    else
        pass
    fi
}

golden align_summary.out $A $B --quiet
golden align_sam.out $A $B --outfmt sam --quiet
golden align_pair.out $A $B --outfmt pair --quiet
golden align_minus_sam.out $A $BRC --strand minus --outfmt sam --quiet
golden align_both.out $A $BRC --strand both --quiet
golden align_score_only.out $A $B --score-only --quiet
golden align_gaps.out $A $B --match 1 --mismatch -2 --gap-open 2 --gap-extend 1 --quiet
golden align_prot.out $D/long_pa.fa $D/long_pb.fa --quiet

# every backend and budget gives the same alignment (ref: same score and ranges)
for args in "--threads 1" "--threads 3" "--max-memory 30M" "--backend cpu"; do
    if "$SWGPU" align $A $B --quiet $args > "$T/x.out" 2>&1 && cmp -s "$T/x.out" "$E/align_summary.out"; then
        pass
    else
        fail "align $args differs from align_summary.out"
    fi
done
if "$SWGPU" align $A $B --quiet --backend ref > "$T/ref.out" 2>&1 &&
   [ "$(head -n 6 "$T/ref.out")" = "$(head -n 6 "$E/align_summary.out")" ]; then
    pass
else
    fail "--backend ref: score or ranges differ"
fi
# the minus strand of the reverse complement is the plus alignment
if "$SWGPU" align $A $BRC --strand minus --quiet > "$T/m.out" &&
   [ "$(grep -E '^(score|query_range|identity|cigar)' "$T/m.out")" = \
     "$(grep -E '^(score|query_range|identity|cigar)' "$E/align_summary.out")" ]; then
    pass
else
    fail "--strand minus on the reverse complement differs from the plus alignment"
fi

# -o and --plot: written atomically, nothing else left behind
mkdir "$T/o"
if "$SWGPU" align $A $B --quiet -o "$T/o/res.txt" --plot "$T/o/path.svg" &&
   cmp -s "$T/o/res.txt" "$E/align_summary.out" && [ "$(ls "$T/o" | wc -l)" -eq 2 ]; then
    pass
else
    fail "-o/--plot: $(ls "$T/o")"
fi
n=$(grep -o 'points="[^"]*"' "$T/o/path.svg" | tr ' ' '\n' | wc -l)
if grep -q '^<svg' "$T/o/path.svg" && grep -q '</svg>' "$T/o/path.svg" && [ "$n" -ge 2 ] &&
   [ "$n" -le 3000 ] && grep -q 'chrA vs chrB' "$T/o/path.svg"; then
    pass
else
    fail "--plot: not a plausible SVG ($n points)"
fi
# a summary line on stderr, without --quiet
if "$SWGPU" align $A $B 2>&1 >/dev/null | grep -Eq 'align plus: backend [a-z]+, .* cells .*GCUPS.*peak host'; then
    pass
else
    fail "no summary line on stderr"
fi

# errors: one line, exit 1
expect_error "missing file" 'nothere\.fa' $A $D/nothere.fa
expect_error "one file" 'two sequence files' $A
expect_error "bad option" "unknown option '--frobnicate'" $A $B --frobnicate
expect_error "bad outfmt" 'outfmt' $A $B --outfmt xml
expect_error "bad strand" 'strand' $A $B --strand sideways
expect_error "strand on protein" 'DNA only' $D/long_pa.fa $D/long_pb.fa --strand both --quiet
expect_error "mixed types" 'protein|dna' $A $D/long_pa.fa
expect_error "bad size" 'not a size' $A $B --max-memory lots
expect_error "tiny budget" 'at least .* MiB' $A $B --max-memory 1K
expect_error "negative gap" 'negative' $A $B --gap-open -1
expect_error "matrix on dna" 'protein only' $A $B --matrix BLOSUM62
expect_error "bad output dir" 'cannot create' $A $B -o "$T/no/such/dir/x.txt"
if [ -e "$T/err.out" ] && [ ! -s "$T/err.out" ]; then pass; else fail "errors printed to stdout"; fi

# -o and --plot onto a symbolic link write through it and keep the link
: > "$T/target.txt"; ln -s "$T/target.txt" "$T/link.txt"
: > "$T/ptarget.svg"; ln -s "$T/ptarget.svg" "$T/plink.svg"
if "$SWGPU" align $A $B --quiet -o "$T/link.txt" --plot "$T/plink.svg" && [ -L "$T/link.txt" ] &&
   [ -L "$T/plink.svg" ] && grep -q score "$T/target.txt" && grep -q '<svg' "$T/ptarget.svg"; then
    pass
else
    fail "output through a symbolic link"
fi
if ls "$T"/*.tmp.* >/dev/null 2>&1; then fail "temporary left behind"; else pass; fi

# names with control characters (tests/data/ctrl_names.swdb: id "a\001b\033[31m",
# made with Python's Database.from_sequences, since FASTA refuses such bytes)
# are written escaped in every output of align: none holds a control byte but
# the line ends and the formats' tabs
for f in summary sam pair; do
    "$SWGPU" align $D/ctrl_names.swdb $B --outfmt $f --quiet > "$T/ctrl.$f" 2> "$T/err" ||
        fail "ctrl names, $f: $(cat "$T/err")"
    if grep -q 'a\\x01b\\x1b\[31m' "$T/ctrl.$f" && ! tr -d '\t\n' < "$T/ctrl.$f" | grep -q '[[:cntrl:]]'; then
        pass; else fail "ctrl names, $f: $(head -n 3 "$T/ctrl.$f" | od -c | head -5)"; fi
done
"$SWGPU" align $D/ctrl_names.swdb $B --quiet -o /dev/null --plot "$T/ctrl.svg" &&
    grep -q 'a\\x01b\\x1b\[31m vs chrB' "$T/ctrl.svg" && ! tr -d '\t\n' < "$T/ctrl.svg" | grep -q '[[:cntrl:]]' &&
    pass || fail "ctrl names, svg"
finish
