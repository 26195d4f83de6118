#!/bin/sh
# progress.sh - swgpu search and swgpu align show their progress on
# standard error only when that is a terminal (script(1) gives it one) and
# not with --quiet; the output is the same either way.  align's line for
# every phase shows the percentage, the GCUPS and the time left.
. "$(dirname "$0")/lib.sh"
Q=examples/queries.fasta
DB=examples/db.fasta
"$SWGPU" search -q $Q -d $DB -o "$T/plain.tsv" 2>"$T/plain.err" || fail "search without a terminal"
"$SWGPU" align $D/long_a.fa $D/long_b.fa -o "$T/plain.aln" 2>"$T/plain.aerr" || fail "align without a terminal"
if grep -q "GCUPS .* left" "$T/plain.aerr"; then fail "align progress shown without a terminal"; else pass; fi
if grep -q "search: .* queries" "$T/plain.err"; then fail "progress shown without a terminal"; else pass; fi
if grep -q "3 queries (952 residues) vs 240 sequences" "$T/plain.err"; then pass; else fail "no summary line"; fi
if ! command -v script >/dev/null 2>&1; then
    skip "script(1) not installed: no terminal to test the progress line on"
    finish
    exit $?
fi
# script runs the command on a pseudo-terminal and copies what it writes
script -qec "\"$SWGPU\" search -q $Q -d $DB -o \"$T/tty.tsv\"" /dev/null >"$T/tty.log" 2>&1 </dev/null
if grep -q "search: 3 of 3 queries (100.0%), [0-9.]* GCUPS" "$T/tty.log"; then pass; else
    fail "no progress line on a terminal: $(head -c 300 "$T/tty.log")"; fi
if cmp -s "$T/plain.tsv" "$T/tty.tsv"; then pass; else fail "output differs with progress"; fi
script -qec "\"$SWGPU\" search --quiet -q $Q -d $DB -o \"$T/quiet.tsv\"" /dev/null >"$T/quiet.log" 2>&1 </dev/null
if [ -s "$T/quiet.log" ]; then fail "--quiet on a terminal printed: $(head -c 200 "$T/quiet.log")"; else pass; fi
if cmp -s "$T/plain.tsv" "$T/quiet.tsv"; then pass; else fail "output differs with --quiet"; fi

# align: one line per phase (rewritten in place with carriage returns);
# without the seed bound, so that the CPU's pre-pass runs too (the CPU
# backend: the GPU's has no pre-pass)
SWGPU_LONG_SEED=0 script -qec "\"$SWGPU\" align --backend cpu $D/long_a.fa $D/long_b.fa -o \"$T/tty.aln\"" /dev/null >"$T/atty.log" 2>&1 </dev/null
tr '\r' '\n' <"$T/atty.log" >"$T/atty.lines"
for phase in prepass score reverse traceback; do
    if grep -Eq "\] $phase +~?100\.0%  [0-9.e+]+ cells  [0-9.]+ GCUPS  0 s left" "$T/atty.lines"; then pass; else
        fail "align: no finished $phase line on a terminal: $(head -c 600 "$T/atty.lines")"; fi
    # the line from the phase's start: nothing done yet, the time left unknown
    if grep -Eq "\] $phase +~?0\.0%  [0-9.e+]+ cells  [0-9.]+ GCUPS  \? left" "$T/atty.lines"; then pass; else
        fail "align: no starting $phase line on a terminal"; fi
done
if grep -Eq "\] traceback +~0\.0%" "$T/atty.lines"; then pass; else fail "align: the traceback's total is not marked as estimated"; fi
if grep -q "align plus: backend" "$T/atty.lines"; then pass; else fail "align: no summary line on a terminal"; fi
if cmp -s "$T/plain.aln" "$T/tty.aln"; then pass; else fail "align output differs with progress"; fi
script -qec "\"$SWGPU\" align --quiet $D/long_a.fa $D/long_b.fa -o \"$T/quiet.aln\"" /dev/null >"$T/aquiet.log" 2>&1 </dev/null
if [ -s "$T/aquiet.log" ]; then fail "align --quiet on a terminal printed: $(head -c 200 "$T/aquiet.log")"; else pass; fi
if cmp -s "$T/plain.aln" "$T/quiet.aln"; then pass; else fail "align output differs with --quiet"; fi
finish
