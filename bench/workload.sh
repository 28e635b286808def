#!/bin/bash
# The workload every counting backend counts (bench/guest.sh runs it under
# each backend):
#
#   bench/workload.sh OUTDIR CGROUP_LIST PIPE_LOOPS RING_LOOPS
#
# 1. perf bench sched pipe -G: ping-pong between the first and the last
#    cgroup of the list (every switch a cgroup switch when G > 1);
# 2. cgbench ring: 16 tasks spread evenly over the cgroups of the list pass
#    one token around a ring of pipes, all on cpu 0.
# Writes OUTDIR/workload.txt (key=value): start/end stamps, what the counting
# process (our parent) holds when the workload starts (fds, perf_event
# objects, BPF map memory),
# Slab and Percpu from /proc/meminfo, the usec/op of both parts by the
# guest clock (the programs' own) and by the host clock (host_ns below),
# and OUTDIR/truth.txt: the cpu.stat usage of every busy cgroup over the run.
# WORKLOAD_COUNT_SWITCHES=1: each part runs under perf stat -a -e
# cgroup-switches,context-switches, and workload.txt gets the switches per
# op (pipe) and per message (ring).
# No set -e or pipefail: a part that fails leaves its key out of
# workload.txt, which bench/guest.sh reports as a failed session.
set -u
out=$1 list=$2 pipe_loops=$3 ring_loops=$4
cg_root=/sys/fs/cgroup
mapfile -t cgroups <"$list"
n=${#cgroups[@]}
first=${cgroups[0]} last=${cgroups[n - 1]}
# shellcheck source=bench/host-clock.sh
. "$(dirname "$0")/host-clock.sh"

# the cgroups the workload runs in: both pipe ends and the ring's 16 tasks
busy=("$first" "$last")
for ((i = 0; i < 16; i++)); do busy+=("${cgroups[i * n / 16]}"); done
mapfile -t busy < <(printf "%s\n" "${busy[@]}" | sort -u)

usage_usec() { for c in "${busy[@]}"; do awk -v c="$c" '$1 == "usage_usec" { print c, $2 }' "$c/cpu.stat"; done; }
meminfo_kb() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }
bpf_map_kb() { # BPF maps held by process $1
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^map_type:/ { m = 1 } /^memlock:/ { if (m) s += $2; m = 0 }
		END { print int(s / 1024) }'
}
perf_event_fds() { find /proc/"$1"/fd -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l; }
per_op() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.3f\n", (b - a) / 1000 / n }'; }
count_switches() { # PART COMMAND...: COMMAND, its switches counted when asked
	local part=$1
	shift
	if [ -z "${WORKLOAD_COUNT_SWITCHES:-}" ]; then
		"$@"
		return
	fi
	perf stat -a -x, -e cgroup-switches,context-switches -o "$out/switches-$part.txt" -- "$@"
}
switches_per() { # PART N: "PART_cgroup_switches_per_X=..." lines
	awk -F, -v p="$1" -v n="$2" '$3 ~ /switches$/ { gsub("-", "_", $3)
		printf "%s_%s_per_%s=%.4f\n", p, $3, p == "pipe" ? "op" : "msg", $1 / n }' "$out/switches-$1.txt"
}

{
	echo "start_ns=$(host_ns)"
	echo "fds=$(find /proc/$PPID/fd -mindepth 1 -maxdepth 1 | wc -l)"
	echo "perf_events=$(perf_event_fds $PPID)"
	echo "bpf_map_kb=$(bpf_map_kb $PPID)"
	echo "slab_kb=$(meminfo_kb Slab)"
	echo "percpu_kb=$(meminfo_kb Percpu)"
} >"$out/workload.txt"
usage_usec >"$out/usage0.txt"
t0=$(host_ns)
# Both ends on cpu 0: every op is then two context switches between the
# cgroups on one cpu. Unpinned, the scheduler put the two tasks on one cpu
# in some runs and on two (wake-up IPIs) in others: no counting alone varied
# by up to 105% between repetitions.
count_switches pipe taskset -c 0 perf bench sched pipe -G "${first#"$cg_root"/},${last#"$cg_root"/}" -l "$pipe_loops" |
	awk '/usecs\/op/ { print "pipe_us_per_op=" $1 }' >>"$out/workload.txt"
t1=$(host_ns)
# The ring on cpu 0 too, with one token: every message is then one switch
# to the next task. Spread over both cpus, which task woke where depended
# on the boot, and one backend's instructions per message varied by up to
# 35 % between two boots; on one cpu with two tokens, the number of
# switches per message still varied by 3 %.
ring_tasks=16 ring_tokens=1
count_switches ring taskset -c 0 cgbench ring -f "$list" -t $ring_tasks -k $ring_tokens -l "$ring_loops" |
	tr ' ' '\n' | sed -n 's/^wall_us_per_msg=/ring_us_per_msg=/p; s/^cpu_us_per_msg=/ring_cpu_us_per_msg=/p' \
	>>"$out/workload.txt"
t2=$(host_ns)
usage_usec >"$out/usage1.txt"
{
	echo "pipe_host_us_per_op=$(per_op "$t0" "$t1" "$pipe_loops")"
	echo "ring_host_us_per_msg=$(per_op "$t1" "$t2" $((ring_tasks * ring_tokens * ring_loops)))"
	echo "end_ns=$(host_ns)"
	if [ -n "${WORKLOAD_COUNT_SWITCHES:-}" ]; then
		switches_per pipe "$pipe_loops"
		switches_per ring $((ring_tasks * ring_tokens * ring_loops))
	fi
} >>"$out/workload.txt"
join "$out/usage0.txt" "$out/usage1.txt" | awk '{ print $1, ($3 - $2) * 1000 }' >"$out/truth.txt"
