#!/bin/bash
# Guest test (TAP): our command-line tools, built with AddressSanitizer,
# LeakSanitizer and UBSan plus an fd-leak check (tests/sanitize/sanitize.mk),
# on their success paths and error paths: each case must exit with its
# expected status and with no memory error, leaked allocation or leaked fd.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=build/sanitize/bin
LEAK_EXIT=23	# LeakSanitizer's exit status (ASAN_OPTIONS below)
FD_LEAK_EXIT=98	# fd_leak_check.c's
export ASAN_OPTIONS=detect_leaks=1:exitcode=$LEAK_EXIT:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=exitcode=$LEAK_EXIT

CG=/sys/fs/cgroup/sanitize-$$
mkdir -p "$CG/a" || exit 1
trap 'rmdir "$CG/a" "$CG" 2>/dev/null' EXIT

# name|expected exit status|command line (word-split)
CASES=(
	"cgrstat-count|0|cgrstat -e cpu-clock,context-switches -r / -d 0"
	"cgrstat-unknown-event|2|cgrstat -e cpu-clock,bogus -d 0"
	"cgrstat-missing-cgroup|1|cgrstat -e cpu-clock -r no/such/cgroup -d 0"
	"memcg-stat-bpf-subtree|0|memcg-stat -r -f anon,slab,pgfault,usage,events.oom $CG"
	"memcg-stat-bpf-one|0|memcg-stat -f anon,file,pgscan $CG/a"
	"memcg-stat-unknown-stat|2|memcg-stat -f anon,no_such_stat $CG"
	"memcg-stat-missing-cgroup|1|memcg-stat $CG/no-such"
	"cgroup-counter-count|0|cgroup-counter -e context-switches /sys/fs/cgroup -- sleep 0.2"
	"cgroup-counter-missing-cgroup|1|cgroup-counter -e context-switches $CG/no-such -- true"
)

describe_status() {
	case $1 in
	"$LEAK_EXIT") echo "leaked memory (LeakSanitizer)" ;;
	"$FD_LEAK_EXIT") echo "leaked a file descriptor" ;;
	*) echo "exit status $1" ;;
	esac
}

echo "TAP version 13"
echo "1..${#CASES[@]}"
n=0 fail=0
for c in "${CASES[@]}"; do
	IFS='|' read -r name want cmd <<<"$c"
	n=$((n + 1))
	log=$(mktemp)
	# shellcheck disable=SC2086
	$BIN/$cmd >/dev/null 2>"$log"
	rc=$?
	if [ "$rc" = "$want" ] && ! grep -q "Sanitizer\|runtime error:" "$log"; then
		echo "ok $n $name"
	else
		sed 's/^/# /' "$log" | tail -40
		echo "not ok $n $name # $(describe_status "$rc") (want exit $want)"
		fail=1
	fi
	rm -f "$log"
done
exit $fail
