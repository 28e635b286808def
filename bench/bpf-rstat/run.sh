#!/bin/bash
# Benchmark of the cgrstat BPF rstat pipeline (issue 4), run in the guest:
#
#   scripts/vm-run.sh --timeout 1500 -- bench/bpf-rstat/run.sh
#
# 1. Per-switch cost: pipe ping-pong between two cgroups (both tasks on
#    cpu 0, every switch is a cgroup switch) at depth 1 and depth 8,
#    counting cpu-clock + context-switches: no counting, cgrstat, and
#    upstream bperf (perf stat --bpf-counters --for-each-cgroup, given
#    every cgroup on the path so that it counts each level); modes are
#    interleaved in each repetition; the number is the cpu time of the two
#    tasks per switch (wall time also counts other processes on the cpu).
#    Then the collector's trigger alone: the same BPF work hooked on
#    tp_btf/sched_switch vs on a cgroup-switches perf event (trigger.c).
# 2. Reading 1,000 cgroups: one cgrstat iterator read (readbench) vs
#    bperf's read (perf stat -I: extra cpu time per interval).
# Environment: ROUNDS (ping-pong round trips, default 20000), REPS (3).
set -eu
cd "$(dirname "$0")/../.."
B=build/bench/bpf-rstat
CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
ROUNDS=${ROUNDS:-20000}
REPS=${REPS:-3}
EVENTS=cpu-clock,context-switches
PERF=${PERF:-build/bin/perf}
export PATH=$PWD/build/bin:$PATH

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# make_path DEPTH: two cgroups a and b at depth DEPTH (1 = children of the
# root); prints "A|B|LIST", LIST = every cgroup on the way (for bperf's
# --for-each-cgroup, so that it counts each level as our subtree totals do)
make_path() {
	local depth=$1 dir= list= i
	for ((i = 1; i < depth; i++)); do
		dir=${dir:+$dir/}bpp$i
		list=${list:+$list,}$dir
	done
	local a=${dir:+$dir/}bpp-a b=${dir:+$dir/}bpp-b
	mkdir -p "$CG/$a" "$CG/$b"
	echo "$a|$b|${list:+$list,}$a,$b"
}

# one MODE A B LIST: cpu ns per switch of the two ping-pong tasks
one() {
	local cmd=("$B/pingpong" "$CG/$2" "$CG/$3" "$ROUNDS")
	case $1 in
	none) "${cmd[@]}" ;;
	cgrstat) cgrstat -e $EVENTS -r "$2" -- "${cmd[@]}" 2>/dev/null ;;
	bperf) "$PERF" stat --bpf-counters -a -e $EVENTS --for-each-cgroup "$4" \
		-o /dev/null -- "${cmd[@]}" ;;
	esac | awk '/^cpu_ns_per_switch/ { print $2 }'
}

MODES=(none cgrstat)
[ -x "$PERF" ] && MODES+=(bperf) || echo "# $PERF missing (make perf): no bperf numbers"
echo "# ping-pong: $ROUNDS round trips, $REPS interleaved repetitions,"
echo "# median cpu ns per switch (cpu time of the two ping-pong tasks / switches)"
printf "%-6s %-8s %10s %12s\n" depth mode ns/switch "overhead ns"
for depth in 1 8; do
	IFS="|" read -r a b list <<<"$(make_path $depth)"
	declare -A res=()
	for ((r = 0; r < REPS; r++)); do
		for m in "${MODES[@]}"; do
			res[$m]+="$(one $m "$a" "$b" "$list") "
		done
	done
	base=$(tr ' ' '\n' <<<"${res[none]}" | grep . | median)
	for m in "${MODES[@]}"; do
		v=$(tr ' ' '\n' <<<"${res[$m]}" | grep . | median)
		printf "%-6s %-8s %10s %12s\n" $depth $m "$v" $((v - base))
	done
	unset res
done

echo
echo "# collector trigger, same work in both programs (depth 1, median ns per switch)"
IFS="|" read -r a b list <<<"$(make_path 1)"
for mode in tp perf; do
	val=$(for ((r = 0; r < REPS; r++)); do
		"$B/trigger" $mode "$B/pingpong" "$CG/$a" "$CG/$b" "$ROUNDS"
	done | awk '/^cpu_ns_per_switch/ { print $2 }' | median)
	printf "%-28s %10s\n" "$([ $mode = tp ] && echo tp_btf/sched_switch || echo cgroup-switches perf_event)" "$val"
done

echo
echo "# reading 1000 cgroups"
"$B/readbench" populate "$CG/bench-rd" 1000
"$B/readbench" bench-rd 20 | sed 's/^/cgrstat, one iterator read: /'
if [ -x "$PERF" ]; then
	list=$(for ((i = 0; i < 1000; i++)); do printf "bench-rd/g%d," $i; done)
	list=${list%,}
	cpu_of() { # INTERVAL_MS: perf's user+sys ms for a 2 s run
		/usr/bin/time -f "%U %S" -o /tmp/perf-time timeout 600 "$PERF" stat --bpf-counters -a \
			-e $EVENTS --for-each-cgroup "$list" -I "$1" -o /dev/null -- sleep 2
		awk '{ printf "%d\n", ($1 + $2) * 1000 }' /tmp/perf-time
	}
	slow=$(cpu_of 2000); fast=$(cpu_of 200)
	echo "bperf, 1000 cgroups: perf cpu ${slow} ms with -I 2000, ${fast} ms with -I 200:" \
		"$(( (fast - slow) * 1000 / 9 )) us cpu per read"
fi

# clean up
for ((i = 0; i < 1000; i++)); do rmdir "$CG/bench-rd/g$i"; done
rmdir "$CG/bench-rd"
find "$CG"/bpp1 "$CG"/bpp-a "$CG"/bpp-b -depth -type d -exec rmdir {} + 2>/dev/null || true
