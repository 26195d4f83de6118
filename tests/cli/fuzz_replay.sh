#!/bin/sh
# fuzz_replay.sh - every saved fuzz input (tests/fuzz/corpus/NAME: the seed
# corpus and every crash ever found) through its harness (build/fuzz/
# replay_fuzz_NAME, built by make check without libFuzzer): no input may
# crash or abort.
. "$(dirname "$0")/lib.sh"
BDIR=$(dirname "$SWGPU")
for dir in tests/fuzz/corpus/*/; do
    name=$(basename "$dir")
    bin=$BDIR/fuzz/replay_fuzz_$name
    if [ ! -x "$bin" ]; then
        fail "no replay binary $bin"
        continue
    fi
    if "$bin" "$dir"* > "$T/replay.out" 2>&1; then pass; else
        fail "fuzz corpus $name: $(tail -n 3 "$T/replay.out")"
    fi
done
finish
