#!/bin/sh
# progress.sh - swgpu search shows its progress on standard error only when
# that is a terminal (script(1) gives it one) and not with --quiet; the
# output is the same either way.
. "$(dirname "$0")/lib.sh"
Q=examples/queries.fasta
DB=examples/db.fasta
"$SWGPU" search -q $Q -d $DB -o "$T/plain.tsv" 2>"$T/plain.err" || fail "search without a terminal"
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
finish
