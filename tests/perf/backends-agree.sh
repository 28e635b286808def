#!/bin/bash
# Guest test (TAP): every --cgroup-backend named counts the same run of
# switch-heavy workloads at the same time, and each agrees with the classic
# per-cgroup events (the events backend, perf stat -G: the kernel's own
# cgroup switch, the independent truth) within TOLERANCE % on every cgroup.
#
#   [AGREE_RUNS=N] [AGREE_EVENTS=E,...] [TOLERANCE=PCT] [CLOCK_TOLERANCE=PCT] \
#       tests/perf/backends-agree.sh BACKEND...     (shared rstat)
#
# Workloads, all at once under $TOP (one cgroup each), for a fixed amount
# of work, not of time, so every backend sees all of it:
#   fork   a loop forking /bin/true (a child's first run, its exit)
#   pipe   perf bench sched pipe (two processes ping-ponging a pipe: a
#          cgroup switch on every message when the others run)
#   move-x, move-y  a task moving itself between the two (cgroup.procs
#          written by the task: a cgroup change without a context switch)
#          with a busy loop in each
#   idle   nothing: a cgroup that must read 0 everywhere
# Each run (AGREE_RUNS, default 5) is a fresh set of perf stats, one per
# backend plus the events one, started before the workloads and stopped
# after them: a disagreement in any run fails.
# TOLERANCE (default 1 %) against the events backend's count, with a floor
# of one event or 0.05 ms (a count of a few); CLOCK_TOLERANCE (default
# TOLERANCE) for the events that count time (cpu-clock, cycles). 1 % holds
# for every event in an instruction-exact guest (the arm64 guests). Where
# the guest's clock is the host's (x86 under TCG), a host preemption of
# QEMU's thread between the points where two backends read the clock at a
# switch or a move gives its length to one cgroup in one backend and to
# the neighbouring cgroup in the other (docs/development.md, "Comparing
# backends"), and the guest's ticks, in host time too, preempt a task
# inside its slow emulated move often enough to shift a few of its
# switches: both only within what the host's load allows.
# Hardware events (AGREE_EVENTS with cycles,instructions:u, the arm64
# guests): each backend takes one counter per event (the events backend
# one per cgroup level that holds the running task: the cgroups are
# siblings), 3 backends x 2 events on PMUv3's 6 counters and cycle
# counter: nothing multiplexes, every count is whole.
# bperf (perf's --bpf-counters, not ours) is not held to it: it over-counts
# self-moving tasks (docs/known-issues.md) and read the fork loop at about
# twice its time.
# No set -e: a failed check is a TAP line and the test goes on.
set -u
cd "$(dirname "$0")/../.." || exit 1

[ $# -gt 0 ] || { echo "usage: $0 BACKEND..." >&2; exit 2; }
BACKENDS=("$@")
RUNS=${AGREE_RUNS:-5}
EVENTS=${AGREE_EVENTS:-cpu-clock,context-switches}
TOLERANCE=${TOLERANCE:-1}
CLOCK_TOLERANCE=${CLOCK_TOLERANCE:-$TOLERANCE}
TOP=agree-$$
tmp=$(mktemp -d)
# shellcheck source=tests/perf/cpustat.sh
source tests/perf/cpustat.sh	# CG, and the cleanup of $TOP and $tmp
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
CGROUPS=(fork pipe move-x move-y idle)
FORKS=${AGREE_FORKS:-300}
PINGS=${AGREE_PINGS:-20000}
MOVES=${AGREE_MOVES:-300}

# busy N: N iterations of a shell loop (no fork)
busy() { local i; for ((i = 0; i < $1; i++)); do :; done; }

# the workloads, each started in its cgroup; returns when all ended
workloads() {
	local pids=()
	(echo $BASHPID >"$CG/$TOP/fork/cgroup.procs" &&
		for ((i = 0; i < FORKS; i++)); do /bin/true; done) &
	pids+=($!)
	(echo $BASHPID >"$CG/$TOP/pipe/cgroup.procs" &&
		exec perf bench sched pipe -l "$PINGS" >/dev/null) &
	pids+=($!)
	(for ((i = 0; i < MOVES; i++)); do
		echo $BASHPID >"$CG/$TOP/move-x/cgroup.procs" && busy 200 &&
			echo $BASHPID >"$CG/$TOP/move-y/cgroup.procs" && busy 100 || exit 1
	done) &
	pids+=($!)
	wait "${pids[@]}"
}

# one_run N: the perf stats of run N (one per backend, and events), then
# the workloads; each perf stat's CSV in $tmp/N.BACKEND
one_run() {
	local n=$1 b cgs tries pids=()
	cgs=$(printf "$TOP/%s," "${CGROUPS[@]}")
	rm -f "$tmp"/ready.* "$tmp/go"
	for b in events "${BACKENDS[@]}"; do
		perf stat -a -x, --cgroup-backend="$b" --for-each-cgroup "${cgs%,}" \
			-e "$EVENTS" -o "$tmp/$n.$b" -- \
			bash -c "touch $tmp/ready.$b; until [ -e $tmp/go ]; do sleep 0.05; done" \
			2>"$tmp/$n.$b.err" &
		pids+=($!)
	done
	for ((tries = 1200; tries > 0; tries--)); do
		[ "$(find "$tmp" -name 'ready.*' | wc -l)" -gt ${#BACKENDS[@]} ] && break
		sleep 0.05
	done
	workloads
	wrc=$?
	touch "$tmp/go"
	wait "${pids[@]}"
}

# value FILE EVENT CGROUP: the count perf stat -x, printed
value() {
	awk -F, -v ev="$2" -v cg="$TOP/$3" '$3 == ev && $4 == cg { print $1; exit }' "$1"
}

# disagreements N BACKEND: one line per cgroup and event where BACKEND's
# count of run N is off the events backend's by more than TOLERANCE %
disagreements() {
	local n=$1 b=$2 cg ev e v
	for cg in "${CGROUPS[@]}"; do
		for ev in ${EVENTS//,/ }; do
			e=$(value "$tmp/$n.events" "$ev" "$cg")
			v=$(value "$tmp/$n.$b" "$ev" "$cg")
			awk -v e="$e" -v v="$v" -v p="$TOLERANCE" -v cp="$CLOCK_TOLERANCE" -v ev="$ev" 'BEGIN {
				if (e !~ /^[0-9.]+$/ || v !~ /^[0-9.]+$/) exit 1
				d = v - e; if (d < 0) d = -d
				floor = ev == "cpu-clock" ? 0.05 : 1
				if (ev == "cpu-clock" || ev ~ /^cycles/) p = cp
				exit !(d <= floor || d * 100 <= p * e) }' ||
				echo "$cg $ev: events $e $b $v"
		done
	done
}

# ran N: run N's workloads exited 0 and the events backend counted them
# shellcheck disable=SC2317 # called through check
ran() {
	local counted
	counted=$(value "$tmp/$1.events" cpu-clock fork)
	[ "$wrc" = 0 ] && awk -v c="$counted" 'BEGIN { exit !(c > 0) }'
}

echo "TAP version 13"
echo "1..$((RUNS * (1 + ${#BACKENDS[@]})))"
echo "# $(uname -r), $(nproc) cpu(s); events $EVENTS; tolerance $TOLERANCE %, time $CLOCK_TOLERANCE %"
for cg in "${CGROUPS[@]}"; do mkdir -p "$CG/$TOP/$cg"; done
for ((run = 1; run <= RUNS; run++)); do
	one_run "$run"
	for b in events "${BACKENDS[@]}"; do
		sed "s/^/# run $run $b: /" "$tmp/$run.$b.err" "$tmp/$run.$b" | grep -v ': $'
	done
	check "run $run: the workloads ran, the events backend counted them" ran "$run"
	for b in "${BACKENDS[@]}"; do
		off=$(disagreements "$run" "$b")
		[ -z "$off" ] || while IFS= read -r line; do echo "# off: $line"; done <<<"$off"
		check "run $run: $b agrees with events on every cgroup" \
			[ -z "$off" ]
	done
done
exit "$fail"
