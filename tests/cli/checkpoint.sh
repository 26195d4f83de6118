#!/bin/sh
# checkpoint.sh - `swgpu align --checkpoint`: an alignment killed with SIGKILL
# after a checkpoint resumes to byte-identical output, and the checkpoint is
# removed when done; a checkpoint made for other inputs, or one that is an
# input or an output, is refused naming the file.
#
# Pairs: two unrelated random 80 kbp sequences (one thread: ~1 s, nearly all
# in the score pass) and a related 50 kbp pair with --no-prune (one thread:
# a score pass and a reverse pass of about half a second each), written by
# awk from a fixed seed.  A run is killed as soon as its checkpoint file
# holds the phase wanted (the phase is the header's third 8-byte word).
# The CPU backend here.  With a GPU (the device checks; skipped without
# one, saying so) a related 1 Mbp pair with --no-prune is killed after the
# GPU's checkpoint at the start of the reverse pass and at the start of the
# traceback, and a related 200 kbp pair inside the score pass and inside
# the reverse pass (a checkpoint with strips done: the GPU pass stops at a
# strip boundary, saves, and goes on), and each resumes on the GPU to the
# same output; one killed inside the score pass on the GPU resumes on the
# CPU.
. "$(dirname "$0")/lib.sh"

# gen SEED LEN [MUTATE_FROM]: a FASTA record of LEN random bases; with a
# file, a copy of its sequence with 1 % substitutions and 0.2 % indels
gen() {
    awk -v seed="$1" -v n="$2" -v from="${3:-}" 'BEGIN {
        x = seed; split("A C G T", b, " ")
        if (from != "") {
            while ((getline line < from) > 0) if (line !~ /^>/) s = s line
            n = length(s)
        }
        printf(">s%d\n", seed); out = ""
        for (i = 1; i <= n; i++) {
            x = (x * 1103515245 + 12345) % 2147483648; r = int(x / 65536) % 1000
            c = from != "" ? substr(s, i, 1) : b[1 + int(x / 65536) % 4]
            if (from != "" && r < 10) c = b[1 + int(x / 256) % 4]
            if (from != "" && r >= 10 && r < 11) c = ""
            if (from != "" && r >= 11 && r < 12) c = c b[1 + int(x / 256) % 4]
            out = out c
            if (length(out) >= 60) { print out; out = "" }
        }
        if (out != "") print out
    }'
}
# SWGPU_TEST_QUICK=1 (the sanitizer builds, ~10x slower): a quarter of the cells
N=80000
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && N=40000
gen 7 $N > "$T/ua.fa"
gen 8 $N > "$T/ub.fa"
gen 9 50000 > "$T/ra.fa"
gen 10 0 "$T/ra.fa" > "$T/rb.fa"

# mutate SEED FILE: a copy of FILE's sequence with 1 % substitutions and
# 0.2 % indels, line by line (for long sequences)
mutate() {
    awk -v seed="$1" 'BEGIN { x = seed; split("A C G T", b, " "); print ">m" seed; out = "" }
        !/^>/ { for (i = 1; i <= length($0); i++) {
            x = (x * 1103515245 + 12345) % 2147483648; r = int(x / 65536) % 1000
            c = substr($0, i, 1)
            if (r < 10) c = b[1 + int(x / 256) % 4]
            else if (r < 11) c = ""
            else if (r < 12) c = c b[1 + int(x / 256) % 4]
            out = out c
            if (length(out) >= 60) { print out; out = "" } } }
        END { if (out != "") print out }' "$2"
}

# killed NAME CK PHASE ARGS...: start the alignment with checkpoints every
# $EVERY s (default 0.2), SIGKILL it as soon as CK holds a checkpoint of
# PHASE or later (1 pre-pass, 2 score pass, 3 reverse pass, 4 traceback;
# INPASS=1: of PHASE itself with strips done, the header's 11th word), then
# run it again (on the backend $BK, default cpu; the second run on $BK2)
killed() {
    name=$1 ck=$2 phase=$3; shift 3
    rm -f "$ck" "$T/$name.out"
    "$SWGPU" align "$@" --backend "${BK:-cpu}" --checkpoint "$ck" --checkpoint-every "${EVERY:-0.2}" --quiet \
        -o "$T/$name.out" &
    pid=$!
    k=0
    while kill -0 $pid 2>/dev/null && [ $k -lt 2000 ]; do
        if [ -f "$ck" ]; then
            ph=$(od -An -t d8 -j 16 -N 8 "$ck" 2>/dev/null | tr -d ' ')
            nx=$(od -An -t d8 -j 80 -N 8 "$ck" 2>/dev/null | tr -d ' ')
            hit=0
            if [ -z "${INPASS:-}" ]; then
                [ "$ph" -ge "$phase" ] 2>/dev/null && hit=1
            else
                [ "$ph" -eq "$phase" ] 2>/dev/null && [ "$nx" -gt 0 ] 2>/dev/null && hit=1
            fi
            if [ $hit = 1 ]; then
                kill -9 $pid
                break
            fi
        fi
        sleep 0.01; k=$((k + 1))
    done
    wait $pid 2>/dev/null
    if [ -f "$ck" ] && [ ! -f "$T/$name.out" ]; then pass; else
        fail "$name: not killed after a checkpoint of phase $phase${INPASS:+ with strips done}"
    fi
    if "$SWGPU" align "$@" --backend "${BK2:-${BK:-cpu}}" --checkpoint "$ck" --checkpoint-every 0.2 --quiet \
        -o "$T/$name.out" 2> "$T/$name.err"; then pass; else fail "$name: resumed run failed: $(cat "$T/$name.err")"; fi
}

# identical NAME: the resumed output is the uninterrupted one, the checkpoint gone
identical() {
    if cmp -s "$T/$1.ref" "$T/$1.out"; then pass; else
        fail "$1: resumed output differs"; diff "$T/$1.ref" "$T/$1.out" | head -n 5
    fi
    if [ -e "$2" ]; then fail "$1: checkpoint $2 left after the run"; else pass; fi
}

"$SWGPU" align "$T/ua.fa" "$T/ub.fa" -t 1 --quiet -o "$T/u.ref"
killed u "$T/u.ck" 2 "$T/ua.fa" "$T/ub.fa" -t 1
identical u "$T/u.ck"

"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune --quiet -f pair -o "$T/r.ref"
for phase in 2 3; do # in the score pass, in the reverse pass
    killed r "$T/r.ck" $phase "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair
    identical r "$T/r.ck"
done
# scores beyond 32 bits (every value x 10,000) checkpoint the same way
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune --quiet --match 20000 --mismatch -30000 \
    --gap-open 50000 --gap-extend 20000 -o "$T/w.ref"
killed w "$T/w.ck" 3 "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune --match 20000 \
    --mismatch -30000 --gap-open 50000 --gap-extend 20000
identical w "$T/w.ck"

# the GPU engine's checkpoints between passes
if "$SWGPU" align "$T/ra.fa" "$T/rb.fa" --backend cuda --quiet -o /dev/null 2> /dev/null; then
    gen 11 1000000 > "$T/ga.fa"
    mutate 12 "$T/ga.fa" > "$T/gb.fa"
    G="$T/ga.fa $T/gb.fa --no-prune --max-memory 64M"
    "$SWGPU" align $G --backend cuda --quiet -o "$T/g.ref"
    for phase in 3 4; do # killed in the reverse pass, in the traceback
        BK=cuda killed g "$T/g.ck" $phase $G
        identical g "$T/g.ck"
    done
    # inside the score pass, inside the reverse pass: a 200 kbp pair with 16
    # blocks (a stop lets the strips begun end: 128 in flight, not ~2,000)
    gen 13 200000 > "$T/ha.fa"
    mutate 14 "$T/ha.fa" > "$T/hb.fa"
    H="$T/ha.fa $T/hb.fa --no-prune"
    "$SWGPU" align $H --backend cuda --quiet -o "$T/h.ref"
    export SWGPU_LONG_BLOCKS=16
    for phase in 2 3; do
        INPASS=1 EVERY=0.05 BK=cuda killed h "$T/h.ck" $phase $H
        identical h "$T/h.ck"
    done
    INPASS=1 EVERY=0.05 BK=cuda BK2=cpu killed h "$T/h.ck" 2 $H # resumed on the CPU
    identical h "$T/h.ck"
    unset SWGPU_LONG_BLOCKS
    "$SWGPU" align $G --backend cpu -t 0 --quiet -o "$T/g.cpu"
    cmp -s "$T/g.ref" "$T/g.cpu" && pass || fail "1 Mbp pair: the GPU's output differs from the CPU's"
else
    skip "no CUDA device: the GPU engine's checkpoints"
fi

# a checkpoint of the unrelated pair, then the related pair with it, and a
# damaged one: refused, naming the file
"$SWGPU" align "$T/ua.fa" "$T/ub.fa" -t 1 --backend cpu --checkpoint "$T/x.ck" --checkpoint-every 0.1 --quiet \
    -o /dev/null &
pid=$!
while [ ! -f "$T/x.ck" ] && kill -0 $pid 2>/dev/null; do sleep 0.05; done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
printf 'junk' > "$T/y.ck"
for ck in x y; do
    if "$SWGPU" align "$T/ra.fa" "$T/rb.fa" --checkpoint "$T/$ck.ck" -o "$T/z.out" 2> "$T/z.err"; then
        fail "checkpoint $ck for other inputs accepted"
    elif grep -q "checkpoint $T/$ck.ck" "$T/z.err" && [ "$(wc -l < "$T/z.err")" -eq 1 ]; then
        pass
    else
        fail "checkpoint $ck: $(cat "$T/z.err")"
    fi
done
# the checkpoint is never an input or an output
for bad in "$T/ra.fa" "$T/z.out"; do
    : > "$T/z.out"
    if "$SWGPU" align "$T/ra.fa" "$T/rb.fa" --checkpoint "$bad" -o "$T/z.out" 2> "$T/z.err"; then
        fail "--checkpoint $bad accepted"
    elif grep -q -- "--checkpoint" "$T/z.err"; then
        pass
    else
        fail "--checkpoint $bad: $(cat "$T/z.err")"
    fi
done
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" --checkpoint-every 0 2> "$T/z.err" && fail "--checkpoint-every 0 accepted" || pass
finish
