# lib.sh - helpers shared by the CLI test scripts (sourced, POSIX sh).
# Provides: $SWGPU (absolute), $D (fixtures), $E (expected outputs), $T (a
# temporary directory removed at exit), pass/fail/skip counters, bad, finish.
case ${SWGPU:=build/swgpu} in /*) ;; *) SWGPU=$(pwd)/$SWGPU ;; esac
cd "$(dirname "$0")/../.." || exit 2
D=tests/data
E=tests/cli/expected
T=$(mktemp -d) || exit 2
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
n_pass=0 n_fail=0 n_skip=0

pass() { n_pass=$((n_pass + 1)); }
fail() { n_fail=$((n_fail + 1)); echo "FAIL $*"; }
skip() { n_skip=$((n_skip + 1)); echo "SKIP $*"; }

# bad NAME PATTERN ARGS...: `swgpu ARGS` exits 1, its stderr has one line
# starting with "swgpu: ", the last, which matches the extended regex
# PATTERN, and nothing went to stdout
bad() {
    name=$1 pat=$2; shift 2
    "$SWGPU" "$@" > "$T/out" 2> "$T/err"
    rc=$?
    last=$(tail -n 1 "$T/err")
    if [ "$rc" -ne 1 ]; then
        fail "$name: exit $rc, expected 1 (stderr: $last)"
    elif ! printf '%s\n' "$last" | grep -q '^swgpu: '; then
        fail "$name: error line does not start with 'swgpu: ': $last"
    elif ! printf '%s\n' "$last" | grep -Eq -- "$pat"; then
        fail "$name: error line does not match /$pat/: $last"
    elif [ "$(grep -c '^swgpu: ' "$T/err")" -ne 1 ]; then
        fail "$name: more than one error line: $(cat "$T/err")"
    elif [ -s "$T/out" ]; then
        fail "$name: printed on stdout: $(head -n 3 "$T/out")"
    else
        pass
        [ -n "${VERBOSE:-}" ] && printf '%-28s %s\n' "$name" "$last"
    fi
}

# finish: the closing line, and the exit status
finish() {
    if [ "$n_skip" -ne 0 ]; then
        echo "$n_pass passed, $n_fail failed, $n_skip skipped"
    else
        echo "$n_pass passed, $n_fail failed"
    fi
    [ "$n_fail" -eq 0 ]
}
