# lib.sh - helpers shared by the CLI test scripts (sourced, POSIX sh).
# Provides: $SWGPU (absolute), $D (fixtures), $E (expected outputs), $T (a
# temporary directory removed at exit), pass/fail/skip counters, finish.
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

# finish: the closing line, and the exit status
finish() {
    if [ "$n_skip" -ne 0 ]; then
        echo "$n_pass passed, $n_fail failed, $n_skip skipped"
    else
        echo "$n_pass passed, $n_fail failed"
    fi
    [ "$n_fail" -eq 0 ]
}
