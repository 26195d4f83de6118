#!/bin/sh
# Run every test binary in BUILD/tests and every CLI test script (each one's
# result line with its seconds), then print the totals as one closing line
# "N passed, N failed".
#   sh tests/run.sh [BUILD [NAME...]]
# With NAMEs (test_search, threads.sh, ...) only those run, and each must exist.
B=${1:-build}
[ $# -gt 0 ] && shift
passed=0 failed=0 skipped=0 broken=""
log=$(mktemp)
if [ $# -gt 0 ]; then
    list=""
    for n in "$@"; do
        case $n in *.sh) list="$list tests/cli/$n" ;; *) list="$list $B/tests/$n" ;; esac
    done
else
    list=$(ls "$B"/tests/test_* tests/cli/*.sh 2>/dev/null)
fi
for t in $list; do
    if [ $# -gt 0 ] && [ ! -f "$t" ]; then
        echo "$t: missing"
        failed=$((failed + 1)); broken="$broken $t"
        continue
    fi
    [ -f "$t" ] || continue
    case $t in */lib.sh) continue ;; esac
    t0=$(date +%s)
    case $t in
    *.sh) SWGPU="$B/swgpu" sh "$t" >"$log" 2>&1 ;;
    *) [ -x "$t" ] || continue; "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
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
    grep -E '^(FAIL|SKIP)' "$log" | head -n 40
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
        grep -v -E '^(FAIL|SKIP)' "$log" | tail -n 20
        [ "$f" -eq 0 ] && f=1
        broken="$broken $t"
    fi
    echo "$(basename "$t"): $line ($(($(date +%s) - t0)) s)"
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
done
rm -f "$log"
[ -n "$broken" ] && echo "failing:$broken"
if [ "$skipped" -ne 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
