#!/bin/bash
# Guest test of build/bin/cgroup-counter (TAP): a busy loop in cgroup A,
# counted with cpu-clock; A's count must match A's cpu.stat usage (the
# independent truth) within 5%, and the parent must count at least A.
# Exit 4 (skip) when the example was not built or the kernel lacks the ioctls.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
BIN=${CGROUP_COUNTER:-build/bin/cgroup-counter}
CG=/sys/fs/cgroup/cgroup-counter-test
fail=0

echo "TAP version 13"
echo "1..2"
if [ ! -x "$BIN" ]; then
	echo "ok 1 # SKIP $BIN not built"
	echo "ok 2 # SKIP $BIN not built"
	exit 4
fi

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() { rmdir "$CG/a" "$CG" 2>/dev/null; }
trap cleanup EXIT
mkdir -p "$CG/a"

usage_us() { awk '/^usage_usec/ {print $2}' "$1/cpu.stat"; }

u0=$(usage_us "$CG/a")
# the command joins A, then spins for one second
out=$("$BIN" "$CG/a" "$CG" -- bash -c \
	"echo \$\$ > $CG/a/cgroup.procs && timeout 1 bash -c 'while :; do :; done'; echo \$\$ > /sys/fs/cgroup/cgroup.procs")
rc=$?
u1=$(usage_us "$CG/a")
if [ $rc -ne 0 ] && echo "$out" | grep -q "Inappropriate ioctl\|not supported"; then
	echo "ok 1 # SKIP kernel without PERF_EVENT_IOC_ATTACH_CGROUP"
	echo "ok 2 # SKIP kernel without PERF_EVENT_IOC_ATTACH_CGROUP"
	exit 4
fi
# shellcheck disable=SC2001 # a prefix on every line, not one substitution
sed 's/^/# /' <<<"$out"

a_ns=$(echo "$out" | awk -v p="$CG/a" '$3 == p {print $1}')
top_ns=$(echo "$out" | awk -v p="$CG" '$3 == p {print $1}')
truth_ns=$(( (u1 - u0) * 1000 ))
echo "# a: counter ${a_ns:-none} ns, cpu.stat $truth_ns ns; parent ${top_ns:-none} ns"

if [ $rc -eq 0 ] && [ -n "$a_ns" ] && [ "$truth_ns" -gt 0 ] &&
   awk -v a="$a_ns" -v t="$truth_ns" 'BEGIN { d = a - t; if (d < 0) d = -d; exit !(d * 100 <= 5 * t) }'; then
	echo "ok 1 cpu-clock of a matches cpu.stat within 5%"
else
	echo "not ok 1 cpu-clock of a matches cpu.stat within 5%"
	fail=1
fi
if [ -n "$top_ns" ] && [ -n "$a_ns" ] &&
   awk -v a="$a_ns" -v p="$top_ns" 'BEGIN { exit !(p >= a) }'; then
	echo "ok 2 parent counts at least its child"
else
	echo "not ok 2 parent counts at least its child"
	fail=1
fi
exit $fail
