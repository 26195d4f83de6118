#!/bin/sh
# checkpoint.sh - `swgpu align --checkpoint`: an alignment killed with SIGKILL
# after a checkpoint resumes to byte-identical output, and the checkpoint is
# removed when done; a checkpoint made for other inputs, or one that is an
# input or an output, is refused naming the file.  A damaged checkpoint (a
# byte changed, cut short, an older format) is refused with its message and
# kept as it was; a FIFO (without blocking), a directory, a device or a file
# that is not a checkpoint is refused up front saying what it is, as are a
# minus-strand checkpoint or a checkpoint temporary that is an output, and
# checkpoints with the ref backend; SIGTERM while a checkpoint is written
# leaves no temporary.
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
# SWGPU_TEST_QUICK=1 (the sanitizer builds, ~10x slower): a quarter of the
# unrelated pair's cells, about a third of the related pair's
# (checkpoints then every 0.05 s, not 0.2: on fast cores without a sanitizer
# the quarter-size pair's score pass can end before a 0.2 s checkpoint)
N=80000 RN=50000 EVERY0=0.2 EVERYX=0.1
[ -n "${SWGPU_TEST_QUICK:-}" ] && [ "${SWGPU_TEST_QUICK}" != 0 ] && N=40000 RN=30000 EVERY0=0.05 EVERYX=0.02
gen 7 $N > "$T/ua.fa"
gen 8 $N > "$T/ub.fa"
gen 9 $RN > "$T/ra.fa"
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
# $EVERY s (default $EVERY0), SIGKILL it as soon as CK holds a checkpoint of
# PHASE or later (1 pre-pass, 2 score pass, 3 reverse pass, 4 traceback;
# INPASS=1: of PHASE itself with strips done, the header's 11th word), then
# run it again (on the backend $BK, default cpu; the second run on $BK2)
killed() {
    name=$1 ck=$2 phase=$3; shift 3
    rm -f "$ck" "$T/$name.out"
    "$SWGPU" align "$@" --backend "${BK:-cpu}" --checkpoint "$ck" --checkpoint-every "${EVERY:-$EVERY0}" --quiet \
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
# --checkpoint through a symbolic link: the checkpoints go to its target
# (the link stays a link), the run resumes through it, the target goes at the end
mkdir -p "$T/ckd" && rm -f "$T/r.out" && ln -s "$T/ckd/real.ck" "$T/rlink"
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --backend cpu --checkpoint "$T/rlink" \
    --checkpoint-every 0.05 --quiet -o "$T/r.out" &
pid=$!
k=0
while kill -0 $pid 2>/dev/null && [ ! -f "$T/ckd/real.ck" ] && [ $k -lt 2000 ]; do sleep 0.01; k=$((k + 1)); done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
[ -L "$T/rlink" ] && [ -f "$T/ckd/real.ck" ] && [ ! -f "$T/r.out" ] && pass ||
    fail "--checkpoint through a link: link $(ls -l "$T/rlink" 2>&1), target $(ls "$T/ckd" 2>&1)"
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --backend cpu --checkpoint "$T/rlink" \
    --quiet -o "$T/r.out" 2> "$T/r.err" && [ -L "$T/rlink" ] && pass ||
    fail "--checkpoint through a link: resumed run: $(cat "$T/r.err")"
identical r "$T/ckd/real.ck"
# a run resumed after the score pass says so in its summary, and gives the
# score pass no rate (its time is only this run's: 13833001.1 GCUPS before)
rm -f "$T/g2.ck" "$T/g2.out"
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --backend cpu --checkpoint "$T/g2.ck" \
    --checkpoint-every 0.05 --quiet -o "$T/g2.out" &
pid=$!
k=0
while kill -0 $pid 2>/dev/null && [ $k -lt 2000 ]; do
    ph=$(od -An -t d8 -j 16 -N 8 "$T/g2.ck" 2>/dev/null | tr -d ' ')
    [ "${ph:-0}" -ge 3 ] 2>/dev/null && break
    sleep 0.01; k=$((k + 1))
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --backend cpu --checkpoint "$T/g2.ck" \
    -o "$T/g2.out" 2> "$T/g2.err"
grep -Eq 'align plus: backend cpu, resumed in the (reverse pass|traceback), .*score pass [0-9.]+ s \(no rate,' "$T/g2.err" &&
    cmp -s "$T/g2.out" "$T/r.ref" && pass || fail "resumed summary: $(tail -n 1 "$T/g2.err")"
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
"$SWGPU" align "$T/ua.fa" "$T/ub.fa" -t 1 --backend cpu --checkpoint "$T/x.ck" --checkpoint-every $EVERYX \
    --quiet -o /dev/null &
pid=$!
while [ ! -f "$T/x.ck" ] && kill -0 $pid 2>/dev/null; do sleep 0.01; done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ -f "$T/x.ck" ] && pass || fail "the unrelated pair ended before its first checkpoint"
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

# refused ARGS... -- MESSAGE: the alignment fails at once (within 10 s,
# before any pass: no summary line) with exactly MESSAGE on stderr
refused() {
    args=""
    while [ "$1" != "--" ]; do args="$args $1"; shift; done
    want=$2
    timeout 10 "$SWGPU" align $args > "$T/rf.out" 2> "$T/rf.err"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(cat "$T/rf.err")" = "$want" ]; then pass; else
        fail "align$args: exit $rc, stderr: $(head -c 300 "$T/rf.err") (wanted: $want)"
    fi
}
# a damaged checkpoint (one byte changed, anywhere: the CRC-32 over the file;
# the file cut short: its size) is an error, and the file is kept as it was;
# one inside the reverse pass (strips done, rows saved)
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --backend cpu --checkpoint "$T/d.ck" \
    --checkpoint-every 0.05 --quiet -o "$T/d.out" &
pid=$!
k=0
while kill -0 $pid 2>/dev/null && [ $k -lt 2000 ]; do
    [ "$(od -An -t d8 -j 16 -N 8 "$T/d.ck" 2>/dev/null | tr -d ' ')" = 3 ] &&
        [ "$(od -An -t d8 -j 80 -N 8 "$T/d.ck" 2>/dev/null | tr -d ' ')" -gt 0 ] 2>/dev/null && break
    sleep 0.01; k=$((k + 1))
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
size=$(wc -c < "$T/d.ck")
[ "$size" -gt 100000 ] && pass || fail "no checkpoint inside the reverse pass ($size bytes)"
for off in 20 40 $((size / 2)) $((size - 2)); do # phase, score, the middle, the CRC
    cp "$T/d.ck" "$T/e.ck"
    b=$(od -An -t u1 -j $off -N 1 "$T/e.ck" | tr -d ' ')
    printf "\\$(printf %o $(((b + 1) % 256)))" | dd of="$T/e.ck" bs=1 seek=$off conv=notrunc 2>/dev/null
    cp "$T/e.ck" "$T/e.keep"
    refused "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --checkpoint "$T/e.ck" -o "$T/e.out" -- \
        "swgpu: checkpoint $T/e.ck is damaged (its checksum does not match its contents): it cannot be resumed; remove it to start afresh"
    cmp -s "$T/e.ck" "$T/e.keep" && [ ! -e "$T/e.out" ] && pass || fail "damaged checkpoint (byte $off) changed or removed"
done
head -c $((size - 100)) "$T/d.ck" > "$T/e.ck"
refused "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --checkpoint "$T/e.ck" -o "$T/e.out" -- \
    "swgpu: checkpoint $T/e.ck is damaged ($((size - 100)) bytes where its header describes $size: truncated or damaged): it cannot be resumed; remove it to start afresh"
[ "$(wc -c < "$T/e.ck")" -eq $((size - 100)) ] && pass || fail "truncated checkpoint changed or removed"
# a checkpoint of format 1 (an older swgpu): the format byte
cp "$T/d.ck" "$T/e.ck"
printf '\001' | dd of="$T/e.ck" bs=1 seek=7 conv=notrunc 2>/dev/null
refused "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --checkpoint "$T/e.ck" -o "$T/e.out" -- \
    "swgpu: checkpoint $T/e.ck was written by an older swgpu (checkpoint format 1, this one reads format 2): it cannot be resumed; remove it to start afresh"
# the undamaged one still resumes to the uninterrupted output
"$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --checkpoint "$T/d.ck" --quiet -o "$T/d.out" &&
    cmp -s "$T/d.out" "$T/r.ref" && [ ! -e "$T/d.ck" ] && pass || fail "the checkpoint kept did not resume"

# what is not a checkpoint file is refused up front, saying what it is,
# without blocking on a FIFO and without advice to delete it
mkfifo "$T/fifo" && mkdir "$T/dir" && printf '>not a checkpoint\nACGT\n' > "$T/notck"
refused "$T/ra.fa" "$T/rb.fa" --checkpoint "$T/fifo" -o "$T/z.out" -- \
    "swgpu: --checkpoint $T/fifo is a FIFO (named pipe), not a checkpoint file"
refused "$T/ra.fa" "$T/rb.fa" --checkpoint "$T/dir" -o "$T/z.out" -- \
    "swgpu: --checkpoint $T/dir is a directory, not a checkpoint file"
refused "$T/ra.fa" "$T/rb.fa" --checkpoint /dev/null -o "$T/z.out" -- \
    "swgpu: --checkpoint /dev/null is a character device, not a checkpoint file"
refused "$T/ra.fa" "$T/rb.fa" --checkpoint "$T/notck" -o "$T/z.out" -- \
    "swgpu: --checkpoint $T/notck is not a swgpu checkpoint"
[ "$(cat "$T/notck")" = "$(printf '>not a checkpoint\nACGT')" ] && pass || fail "not-a-checkpoint file changed"
mkdir "$T/dm.minus"
refused "$T/ra.fa" "$T/rb.fa" --strand both --checkpoint "$T/dm" -o "$T/z.out" -- \
    "swgpu: --checkpoint $T/dm: the minus strand's checkpoint $T/dm.minus is a directory, not a checkpoint file"
# the minus strand's checkpoint (and the temporaries) are never an output
refused "$T/ra.fa" "$T/rb.fa" --strand both --checkpoint "$T/c" -o "$T/c.minus" -- \
    "swgpu: --checkpoint $T/c: the minus strand's checkpoint $T/c.minus is also the output (-o) $T/c.minus: give the checkpoint a file of its own"
[ ! -e "$T/c.minus" ] && pass || fail "-o $T/c.minus written"
# (exec: the tool runs as the shell's process, whose id names the temporaries)
sh -c 'exec "$0" align "$1" "$2" --checkpoint "$3" -o "$3.tmp.$$"' "$SWGPU" "$T/ra.fa" "$T/rb.fa" \
    "$T/c" 2> "$T/rf.err" && fail "a checkpoint's temporary as -o accepted" ||
    { grep -q "^swgpu: --checkpoint $T/c: its temporary $T/c.tmp.[0-9]* is also the output (-o) $T/c.tmp.[0-9]*: give the checkpoint a file of its own\$" "$T/rf.err" &&
        pass || fail "a checkpoint's temporary as -o: $(cat "$T/rf.err")"; }
# the reference backend keeps no checkpoints: said, not ignored
refused "$T/ra.fa" "$T/rb.fa" --backend ref --checkpoint "$T/c" -o "$T/z.out" -- \
    "swgpu: long alignment: checkpoints ($T/c) are not supported with the ref backend (use backend cpu or cuda)"

# SIGTERM while a checkpoint of the reverse pass (megabytes of saved rows)
# is being written: the checkpoint stays, no temporary is left
for n in 1 2 3; do
    "$SWGPU" align "$T/ra.fa" "$T/rb.fa" -t 1 --no-prune -f pair --backend cpu --checkpoint "$T/s.ck" \
        --checkpoint-every 0.001 --quiet -o "$T/s.out" &
    pid=$!
    k=0
    while kill -0 $pid 2>/dev/null && [ $k -lt 2000 ]; do
        [ "$(od -An -t d8 -j 16 -N 8 "$T/s.ck" 2>/dev/null | tr -d ' ')" = 3 ] && break
        sleep 0.01; k=$((k + 1))
    done
    k=0 # then as soon as the temporary is there
    while kill -0 $pid 2>/dev/null && [ ! -e "$T/s.ck.tmp.$pid" ] && [ $k -lt 200000 ]; do k=$((k + 1)); done
    kill -TERM $pid 2>/dev/null
    wait $pid 2>/dev/null
    left=$(ls "$T" | grep '^s\.ck\.tmp\.' || true)
    [ -z "$left" ] && [ -f "$T/s.ck" ] && [ ! -e "$T/s.out" ] && pass ||
        fail "SIGTERM $n during checkpoints: left [$left], checkpoint $([ -f "$T/s.ck" ] && echo kept || echo gone)"
    rm -f "$T/s.ck" "$T"/s.ck.tmp.*
done
finish
