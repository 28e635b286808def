#!/bin/bash
# Host test (TAP): the sanitizer builds catch what tests/sanitize/tools.sh
# relies on them to catch: a leaked fd (exit 98), leaked memory (exit 23),
# and pass a clean program.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=build/sanitize/bin
export ASAN_OPTIONS=detect_leaks=1:exitcode=23
CASES=("leaky-clean|0" "leaky-fd|98" "leaky-mem|23")
echo "TAP version 13"
echo "1..${#CASES[@]}"
n=0 fail=0
for c in "${CASES[@]}"; do
	IFS='|' read -r prog want <<<"$c"
	n=$((n + 1))
	"$BIN/$prog" 2>/dev/null
	rc=$?
	if [ "$rc" = "$want" ]; then
		echo "ok $n $prog exits $want"
	else
		echo "not ok $n $prog exits $rc, want $want"
		fail=1
	fi
done
exit $fail
