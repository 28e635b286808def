#!/bin/bash
# Per-switch BPF cost of the two BPF backends, by depth:
#
#   bench/bpf-switch-cost.sh [ROUND_TRIPS] [REPETITIONS] [EVENTS]    (in the guest:
#   scripts/vm-run.sh --kernel build/bzImage-bench -- bench/bpf-switch-cost.sh)
#
# A pipe ping-pong between two leaf cgroups 1 and 8 levels below a test
# cgroup (bpfcost), both ends pinned to cpu 0 (every round trip is two
# cgroup switches there),
# counted with EVENTS (default cpu-clock,context-switches) by perf stat --bpf-counters --for-each-cgroup (bperf,
# which adds each delta to every ancestor at every switch) and by perf stat
# --cgroup-backend=rstat (one per-cpu slot per switch, the hierarchy paid at
# read time). With kernel.bpf_stats_enabled the kernel times every run of
# every BPF program; right after the ping-pong, before perf reads, the
# workload reads the run_time_ns of each program perf holds
# (/proc/<perf>/fdinfo) and prints the BPF time per round trip. That time is
# what the backends add at a switch beyond the perf events both read, and it
# is measured by the kernel, not by the noisy emulated wall clock.
# Prints one line per depth, backend and repetition, then the medians.
# No set -e: a backend perf cannot run here leaves its rounds' lines empty
# and the other backends and depths are still measured.
set -u
cd "$(dirname "$0")/.." || exit 1
trips=${1:-20000} reps=${2:-3}
cg=/sys/fs/cgroup/bpfcost
events=${3:-cpu-clock,context-switches}
echo 1 >/proc/sys/kernel/bpf_stats_enabled || { echo "no kernel.bpf_stats_enabled" >&2; exit 1; }

# make_leaves DEPTH: two leaves at DEPTH below the root, the cpu controller
# enabled on the way; prints their paths relative to the cgroup2 root
make_leaves() {
	local dir=$cg i
	mkdir -p "$dir"
	for ((i = 1; i < $1; i++)); do
		echo +cpu >"$dir/cgroup.subtree_control"
		dir=$dir/d$i
		mkdir -p "$dir"
	done
	echo +cpu >"$dir/cgroup.subtree_control"
	mkdir -p "$dir/a" "$dir/b"
	echo "${dir#/sys/fs/cgroup/}/a ${dir#/sys/fs/cgroup/}/b"
}

# The workload perf stat runs: the ping-pong, then the BPF time of perf's
# programs (sum of run_time_ns and run_cnt over its BPF program fds).
workload() {
	local a=$1 b=$2
	cat <<EOS
taskset -c 0 perf bench sched pipe -G $a,$b -l $trips >/dev/null
cat /proc/\$PPID/fdinfo/* 2>/dev/null | awk '/^run_time_ns:/ { ns += \$2 }
	/^run_cnt:/ { n += \$2 } END { printf "%d %d\n", ns, n }'
EOS
}

run() { # BACKEND DEPTH REP
	local leaves a b opt line
	leaves=$(make_leaves "$2")
	read -r a b <<<"$leaves"
	case $1 in
	bperf) opt=--bpf-counters ;;
	rstat) opt=--cgroup-backend=rstat ;;
	esac
	line=$(perf stat -a $opt -e "$events" --for-each-cgroup "$a,$b" -o /dev/null -- \
		bash -c "$(workload "$a" "$b")" | tail -1)
	read -r ns n <<<"$line"
	echo "depth=$2 backend=$1 rep=$3 round_trips=$trips bpf_runs=$n bpf_ns=$ns ns_per_round_trip=$((ns / trips))"
	find "$cg" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
}

out=$(mktemp)
for ((rep = 0; rep < reps; rep++)); do
	for d in 1 8; do
		for b in bperf rstat; do
			run $b $d $rep | tee -a "$out"
		done
	done
done
echo "# medians: BPF ns per round trip (two cgroup switches), events $events"
for d in 1 8; do
	for b in bperf rstat; do
		grep "depth=$d backend=$b " "$out" | sed 's/.*ns_per_round_trip=//' | sort -n |
			awk -v d=$d -v b=$b '{ v[NR] = $1 } END { printf "depth %d %-5s %d ns\n", d, b, v[int((NR + 1) / 2)] }'
	done
done
rm -f "$out"
rmdir "$cg" 2>/dev/null
echo 0 >/proc/sys/kernel/bpf_stats_enabled
