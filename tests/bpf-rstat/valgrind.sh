#!/bin/bash
# cgrstat under valgrind: no leaked memory, no leaked file descriptors, no
# memory errors, on the success path and on error paths.  Prints TAP.
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "1..0 # SKIP valgrind not installed"; exit 4; }
VG=(valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all
    --track-fds=yes --error-exitcode=99 --suppressions=tests/bpf-rstat/valgrind.supp)
CASES=(
	"count|0|-e cpu-clock,context-switches -r / -d 0"
	"unknown-event|1|-e cpu-clock,bogus -d 0"
	"missing-cgroup|1|-e cpu-clock -r no/such/cgroup -d 0"
)
echo "TAP version 13"
echo "1..${#CASES[@]}"
n=0 fail=0
for c in "${CASES[@]}"; do
	IFS='|' read -r name want args <<<"$c"
	n=$((n + 1))
	log=$(mktemp)
	# shellcheck disable=SC2086
	"${VG[@]}" build/bin/cgrstat $args >/dev/null 2>"$log"
	rc=$?
	fds=$(grep -o 'FILE DESCRIPTORS: [0-9]* open' "$log" | awk '{ print $3 }')
	if [ "$rc" = "$want" ] && [ "$fds" = 3 ]; then
		echo "ok $n $name"
	else
		grep -v "unhandled eBPF" "$log" | sed 's/^/# /' | tail -40
		echo "not ok $n $name # exit $rc (want $want), $fds fds open at exit (want 3)"
		fail=1
	fi
	rm -f "$log"
done
exit $fail
