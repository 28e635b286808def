#!/bin/bash
# Guest test (TAP): perf stat --for-each-cgroup with an event group,
# -e '{cpu-clock,task-clock}', on every backend.  Every backend keeps the
# group and never counts the leader alone: both members of the group count
# each cgroup, each within 5 % of the cgroup's cpu.stat usage.  The
# workload is perf stat's own command: two tasks, each stopped, moved into
# a fresh cgroup (a, b), then resumed to do a fixed amount of work there,
# so cpu.stat holds exactly what perf had to count.  They do not move
# themselves: bperf charges a cpu's time since its last cgroup switch to
# the cgroup switched out, and a task that moved itself after leaving the
# idle task (both in the root cgroup: no switch) takes the idle time
# before along.
# (The group semantics, members scheduled together, need a PMU:
# tests/perf/hw-perf.sh on the arm64 guest.)
#   tests/perf/event-groups.sh
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
TOP=event-groups-$$
LOOPS=${EVENT_GROUPS_LOOPS:-10000}
GROUP='{cpu-clock,task-clock}'
tmp=$(mktemp -d)
# shellcheck source=tests/perf/cpustat.sh
source tests/perf/cpustat.sh

# perf_ns FILE EVENT CGROUP: perf stat -x, count of EVENT (msec) in CGROUP, in ns
perf_ns() {
	awk -F, -v ev="$2" -v cg="$3" '$3 == ev && $4 == cg && $1 ~ /^[0-9.]+$/ { printf "%.0f", $1 * 1000000 }' "$1"
}

spin="i=0; while [ \$i -lt $LOOPS ]; do i=\$((i + 1)); done"
# run BACKEND: count the group in $TOP/BACKEND/{a,b}; exit status in $rc
run() {
	local b=$1 d=$TOP/$1
	mkdir -p "$CG/$d/a" "$CG/$d/b"
	perf stat -a -x, --cgroup-backend="$b" --for-each-cgroup "$d/a,$d/b" \
		-e "$GROUP" -o "$tmp/$b" -- bash -c "for c in a b; do
			(kill -STOP \$BASHPID; $spin) &
			until grep -q '^State:.*stopped' /proc/\$!/status; do :; done
			echo \$! > $CG/$d/\$c/cgroup.procs
			kill -CONT \$!
		done; wait" 2>"$tmp/$b.err"
	rc=$?
	sed 's/^/# /' "$tmp/$b.err" "$tmp/$b"
}

echo "TAP version 13"
echo "1..8"
for b in events bperf shared rstat; do
	run "$b"
	check "$b keeps the group: exit $rc" [ "$rc" = 0 ]
	what=
	ok=0
	for cg in a b; do
		d=$TOP/$b/$cg
		u=$(usage_ns "$d")
		for ev in cpu-clock task-clock; do
			v=$(perf_ns "$tmp/$b" "$ev" "$d")
			what+=" $cg $ev ${v:-none}"
			within5 "${v:-0}" "$u" || ok=1
		done
		what+=" (cpu.stat $u) ns;"
	done
	check "$b: both members count each cgroup within 5 % of cpu.stat:$what" [ "$ok" = 0 ]
done

exit "$fail"
