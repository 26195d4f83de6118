#!/bin/sh
# chrom_bench.sh - bench/gen_chrom writes the same simulated chromosome pair
# for a seed, with the events asked for, and bench/chrom_bench.sh runs end
# to end on a small pair (score-only and full agree, the table last).
. "$(dirname "$0")/lib.sh"
GEN=$(dirname "$SWGPU")/bench/gen_chrom
if [ ! -x "$GEN" ]; then
    skip "no $GEN (make bench)"
    finish
    exit $?
fi
seq_of() { grep -v '^>' "$1" | tr -d '\n'; }

"$GEN" -n 30000 "$T/a.fa" "$T/b.fa" 2>"$T/gen.log" && pass || fail "gen_chrom -n 30000: $(cat "$T/gen.log")"
"$GEN" -n 30000 "$T/a2.fa" "$T/b2.fa" 2>/dev/null
if cmp -s "$T/a.fa" "$T/a2.fa" && cmp -s "$T/b.fa" "$T/b2.fa"; then pass; else fail "same seed, another pair"; fi
"$GEN" -n 30000 -s 13 "$T/a3.fa" "$T/b3.fa" 2>/dev/null
if cmp -s "$T/a.fa" "$T/a3.fa"; then fail "another seed, the same pair"; else pass; fi
if [ "$(seq_of "$T/a.fa" | wc -c)" -eq 30000 ] && [ -z "$(seq_of "$T/a.fa" | tr -d ACGT)" ] &&
   [ -z "$(seq_of "$T/b.fa" | tr -d ACGT)" ]; then pass; else fail "A is not 30000 bases of ACGT"; fi
if [ "$(grep -c '^inversion: ' "$T/gen.log")" -eq 3 ] && [ "$(grep -c '^translocation: ' "$T/gen.log")" -eq 1 ]; then
    pass; else fail "events: $(cat "$T/gen.log")"; fi
# about 1 % substitutions: 300 expected of 30,000
nsub=$(sed -n 's/^point mutations: \([0-9]*\) substitutions.*/\1/p' "$T/gen.log")
if [ "${nsub:-0}" -ge 200 ] && [ "${nsub:-0}" -le 400 ]; then pass; else fail "$nsub substitutions"; fi
# no events: B is A
"$GEN" -n 5000 --sub 0 --indel 0 --inv 0 --trans-len 0 "$T/a4.fa" "$T/b4.fa" 2>/dev/null
if [ "$(seq_of "$T/a4.fa")" = "$(seq_of "$T/b4.fa")" ]; then pass; else fail "no events, yet B differs from A"; fi
if "$GEN" "$T/x.fa" 2>/dev/null; then fail "one output file accepted"; else pass; fi
if "$GEN" --sub 2 "$T/x.fa" "$T/y.fa" 2>/dev/null; then fail "--sub 2 accepted"; else pass; fi
if "$GEN" -n 1000 --inv-len 400 "$T/x.fa" "$T/y.fa" 2>/dev/null; then fail "inversions larger than A accepted"; else pass; fi

# the bench, small
CHROM_LEN=20000 CHROM_GEN="$GEN" sh bench/chrom_bench.sh cpu "$SWGPU" "$T/cb" >"$T/cb.log" 2>&1 && pass ||
    fail "chrom_bench.sh: $(tail -n 5 "$T/cb.log")"
if grep -q '^| score-only | [0-9]* | 4e+08 | ' "$T/cb.log" && grep -q '^| full | [0-9]* | 4e+08 | ' "$T/cb.log" &&
   ! grep -q FAILED "$T/cb.log"; then pass; else fail "chrom_bench.sh table: $(tail -n 6 "$T/cb.log")"; fi
if tail -n 1 "$T/cb.log" | grep -q 'same score and coordinates'; then pass; else fail "score-only and full differ"; fi
if sh bench/chrom_bench.sh gpu "$SWGPU" "$T/cb" >/dev/null 2>&1; then fail "backend gpu accepted"; else pass; fi
finish
