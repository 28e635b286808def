#!/bin/bash
# Guest test (TAP): perf stat --for-each-cgroup counts each cgroup's
# cpu-clock within 5 % of its cgroup cpu.stat usage, with the rstat backend
# (perf/patches/0003, libcgrstat's program and loader) and the events
# backend, on every kernel (no kernel patch needed).  The workload: three
# tasks that move themselves into fresh cgroups (a, b and b/c below b) and
# do a fixed amount of work there, so a cgroup's cpu.stat usage is exactly
# what perf had to count; b counts its own task and its child's.  Both
# backends count the same run: the rstat session's command is the events
# session, whose command is the workload (one workload instead of one per
# backend: 4-5 s less under TCG).
# Where classic cgroup cpu-clock events count 0 (Linux 6.16), the events
# backend's checks skip with the reason and rstat's still run.
#   tests/perf/rstat-cpustat.sh
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
# shellcheck source=tests/perf/classic-clock.sh
source tests/perf/classic-clock.sh
: "${fail:=0}" "${n:=0}"	# set by tap.sh
TOP=rstat-cpustat-$$
LOOPS=${RSTAT_CPUSTAT_LOOPS:-30000}
tmp=$(mktemp -d)
# shellcheck source=tests/perf/cpustat.sh
source tests/perf/cpustat.sh

# perf_ns FILE CGROUP: perf stat -x, cpu-clock of CGROUP in ns
perf_ns() { awk -F, -v cg="$2" '$3 == "cpu-clock" && $4 == cg { printf "%.0f", $1 * 1000000 }' "$1"; }

# session BACKEND COMMAND...: perf stat of BACKEND over $TOP/{a,b,b/c}
# running COMMAND; its output in $tmp/BACKEND, its stderr in
# $tmp/BACKEND.err, its exit status in $tmp/BACKEND.rc
session() {
	local b=$1
	shift
	perf stat -a -x, --cgroup-backend="$b" --for-each-cgroup "$TOP/a,$TOP/b,$TOP/b/c" \
		-e cpu-clock,context-switches -o "$tmp/$b" -- "$@" 2>"$tmp/$b.err"
	echo $? >"$tmp/$b.rc"
}

spin="i=0; while [ \$i -lt $LOOPS ]; do i=\$((i + 1)); done"
cat >"$tmp/work.sh" <<WORK
(echo \$BASHPID > $CG/$TOP/a/cgroup.procs; $spin) &
(echo \$BASHPID > $CG/$TOP/b/cgroup.procs; $spin) &
(echo \$BASHPID > $CG/$TOP/b/c/cgroup.procs; $spin) &
wait
WORK
# for session's "$@" in a child bash
export -f session
export TOP tmp

broken=$(classic_clock_broken)
echo "TAP version 13"
echo "1..8"
mkdir -p "$CG/$TOP/a" "$CG/$TOP/b/c"
# shellcheck disable=SC2016 # expanded by the child bash
session rstat bash -c 'session events bash "$tmp/work.sh"'
for b in rstat events; do
	sed 's/^/# /' "$tmp/$b.err" "$tmp/$b"
	check "$b: perf stat exits 0" [ "$(cat "$tmp/$b.rc")" = 0 ]
	for cg in a b b/c; do
		d=$TOP/$cg
		v=$(perf_ns "$tmp/$b" "$d")
		u=$(usage_ns "$d")
		what="$b: $cg cpu-clock ${v:-none} ns, cpu.stat $u ns"
		if [ "$b" = events ] && [ -n "$broken" ]; then
			n=$((n + 1))
			echo "ok $n $what # SKIP $broken"
			continue
		fi
		check "$what (within 5 %)" within5 "${v:-0}" "$u"
	done
done
exit "$fail"
