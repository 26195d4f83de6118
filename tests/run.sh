#!/bin/sh
# Run every test binary in BUILD/tests and every CLI test script, printing
# each one's result line with its seconds as it ends; then the skips and
# failures of each, in the list's order, and the totals as one closing line
# "N passed, N failed".
#   sh tests/run.sh [BUILD [NAME...]]
# With NAMEs (test_search, threads.sh, ...) only those run, and each must exist.
# TEST_JOBS=N runs N tests at a time (default 1); the results are printed in
# the list's order either way.
B=${1:-build}
[ $# -gt 0 ] && shift
passed=0 failed=0 skipped=0 broken=""
J=${TEST_JOBS:-1}
case $J in '' | *[!0-9]* | 0) J=1 ;; esac
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
if [ $# -gt 0 ]; then
    list=""
    for n in "$@"; do
        case $n in *.sh) list="$list tests/cli/$n" ;; *) list="$list $B/tests/$n" ;; esac
    done
else
    list=$(ls "$B"/tests/test_* tests/cli/*.sh 2>/dev/null)
fi

# the tests to run, numbered; a named one that is missing fails
n=0
for t in $list; do
    if [ $# -gt 0 ] && [ ! -f "$t" ]; then
        echo "$t: missing"
        failed=$((failed + 1)); broken="$broken $t"
        continue
    fi
    [ -f "$t" ] || continue
    case $t in */lib.sh) continue ;; *.sh) ;; *) [ -x "$t" ] || continue ;; esac
    echo "$t" >"$dir/$n.name"
    n=$((n + 1))
done

# one test: its output, exit status and seconds beside its number
run_one() {
    t=$(cat "$dir/$1.name")
    t0=$(date +%s)
    case $t in
    *.sh) SWGPU="$B/swgpu" sh "$t" >"$dir/$1.log" 2>&1 ;;
    *) "$t" >"$dir/$1.log" 2>&1 ;;
    esac
    echo $? >"$dir/$1.rc"
    echo $(($(date +%s) - t0)) >"$dir/$1.sec"
    # its closing line as soon as it ends (the summary in the list's order follows)
    l=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$dir/$1.log" | tail -n 1)
    echo "$(basename "$t"): ${l:-no result line (exit $(cat "$dir/$1.rc"))} ($(cat "$dir/$1.sec") s)"
}

# J workers take the next test from a shared queue (its head moved under a
# mkdir lock); the CLI scripts go first, as the slowest (mpirun) are there
if [ "$J" -eq 1 ]; then
    i=0
    while [ $i -lt $n ]; do run_one $i; i=$((i + 1)); done
else
    i=0
    while [ $i -lt $n ]; do
        case $(cat "$dir/$i.name") in *.sh) echo $i ;; esac
        i=$((i + 1))
    done >"$dir/queue"
    i=0
    while [ $i -lt $n ]; do
        case $(cat "$dir/$i.name") in *.sh) ;; *) echo $i ;; esac
        i=$((i + 1))
    done >>"$dir/queue"
    echo 1 >"$dir/head"
    w=0
    while [ $w -lt $J ]; do
        (
            while :; do
                until mkdir "$dir/lock" 2>/dev/null; do sleep 0.05; done
                h=$(cat "$dir/head")
                echo $((h + 1)) >"$dir/head"
                rmdir "$dir/lock"
                k=$(sed -n "${h}p" "$dir/queue")
                [ -n "$k" ] || break
                run_one "$k"
            done
        ) &
        w=$((w + 1))
    done
    wait
fi

i=0
while [ $i -lt $n ]; do
    t=$(cat "$dir/$i.name")
    log=$dir/$i.log
    rc=$(cat "$dir/$i.rc" 2>/dev/null || echo 1)
    secs=$(cat "$dir/$i.sec" 2>/dev/null || echo 0)
    i=$((i + 1))
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        cat "$log"
        echo "$t: no result line (exit $rc)"
        failed=$((failed + 1)); broken="$broken $t"
        continue
    fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ] || grep -q -E '^SKIP' "$log"; then
        echo "--- $(basename "$t"): $line ($secs s)"
        grep -E '^(FAIL|SKIP)' "$log" | head -n 40
    fi
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
        grep -v -E '^(FAIL|SKIP)' "$log" | tail -n 20
        [ "$f" -eq 0 ] && f=1
        broken="$broken $t"
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
done
[ -n "$broken" ] && echo "failing:$broken"
if [ "$skipped" -ne 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
