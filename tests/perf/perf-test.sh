#!/bin/bash
# Run one of perf's own tests (`perf test -v NAME`) on the guest kernel and
# turn its verdict into an exit status for the runner: 0 Ok, 4 Skip (as
# kselftest), 1 FAILED or no verdict.  perf test itself exits 0 when a test
# fails, and finds its shell tests from the tools/perf directory of the tree
# perf was built from (build/perf-src, see perf/perf.mk). PERF_TEST_VERBOSE=-vv
# shows a passing test's own output too (-v shows only a failing one's).
#   tests/perf/perf-test.sh "perf stat tests"
# No set -e: perf test's output is the verdict, read below.
set -u
name=$1
cd "$(dirname "$0")/../../build/perf-src/tools/perf" || { echo "no build/perf-src: make perf"; exit 1; }
out=$(perf test "${PERF_TEST_VERBOSE:--v}" "$name" 2>&1)
echo "$out"
verdicts=$(echo "$out" | grep -E '^ *[0-9]+(\.[0-9]+)?: .*: (Ok|Skip|FAILED!)' || true)
if [ -z "$verdicts" ]; then
	echo "no perf test matched \"$name\" or it gave no verdict"
	exit 1
fi
echo "$verdicts" | grep -q 'FAILED!' && exit 1
echo "$verdicts" | grep -q ': Ok' && exit 0
exit 4
