#!/bin/bash
# Benchmark of the cgrstat BPF rstat pipeline (issue 4), run in the guest:
#
#   scripts/vm-run.sh --timeout 1500 -- bench/bpf-rstat/run.sh
#
# 1. Per-switch cost: pipe ping-pong between two cgroups (both tasks on
#    cpu 0, every switch is a cgroup switch) at depth 1 and depth 8,
#    counting cpu-clock + context-switches: no counting, cgrstat, and
#    upstream bperf (perf stat --bpf-counters --for-each-cgroup, given
#    every cgroup on the path so that it counts each level).
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

pingpong() { # A B LIST MODE
	local cmd=("$B/pingpong" "$CG/$1" "$CG/$2" "$ROUNDS")
	case $4 in
	none) "${cmd[@]}" ;;
	cgrstat) cgrstat -e $EVENTS -r "$1" -- "${cmd[@]}" ;;
	bperf) "$PERF" stat --bpf-counters -a -e $EVENTS --for-each-cgroup "$3" \
		-o /tmp/bperf.out -- "${cmd[@]}" ;;
	esac | awk '/ns_per_switch/ { print $2 }'
}

echo "# ping-pong: $ROUNDS round trips x $REPS runs, median ns per switch"
printf "%-6s %-8s %10s %12s\n" depth mode ns/switch "overhead ns"
for depth in 1 8; do
	IFS='|' read -r a b list < <(make_path $depth)
	base=
	for mode in none cgrstat bperf; do
		if [ "$mode" = bperf ] && [ ! -x "$PERF" ]; then
			echo "$depth bperf: $PERF missing (make perf)"; continue
		fi
		val=$(for ((r = 0; r < REPS; r++)); do pingpong "$a" "$b" "$list" $mode; done | median)
		[ "$mode" = none ] && base=$val
		printf "%-6s %-8s %10s %12s\n" $depth $mode "$val" $((val - base))
	done
done

echo
echo "# reading 1000 cgroups"
mkdir -p "$CG/bench-rd"
for ((i = 0; i < 1000; i++)); do mkdir -p "$CG/bench-rd/g$i"; done
# a task that visits every cgroup, so that each has counts
visit() { for ((i = 0; i < 1000; i++)); do echo 0 > "$CG/bench-rd/g$i/cgroup.procs"; done; }
cgrstat -e $EVENTS -r bench-rd -- bash -c "$(declare -f visit); CG=$CG; visit" >/tmp/cgrstat-rd.out
echo "cgrstat text output for the subtree: $(grep -c '^cgroup_id' /tmp/cgrstat-rd.out) cgroups"
build/bench/bpf-rstat/readbench bench-rd 20 | sed 's/^/cgrstat one iterator read: /'
if [ -x "$PERF" ]; then
	list=$(for ((i = 0; i < 1000; i++)); do printf "bench-rd/g%d," $i; done)
	list=${list%,}
	cpu_of() { # INTERVAL_MS: perf's user+sys ms for a 4 s run
		/usr/bin/time -f "%U %S" -o /tmp/perf-time "$PERF" stat --bpf-counters -a \
			-e $EVENTS --for-each-cgroup "$list" -I "$1" -o /dev/null -- sleep 4
		awk '{ printf "%d\n", ($1 + $2) * 1000 }' /tmp/perf-time
	}
	slow=$(cpu_of 2000); fast=$(cpu_of 100)
	# 2 vs 40 interval reads
	echo "bperf 1000 cgroups: perf cpu ${slow} ms (-I 2000) vs ${fast} ms (-I 100):" \
		"$(( (fast - slow) * 1000 / 38 )) us cpu per read"
fi

# clean up
for ((i = 0; i < 1000; i++)); do rmdir "$CG/bench-rd/g$i"; done
rmdir "$CG/bench-rd"
find "$CG"/bpp1 "$CG"/bpp-a "$CG"/bpp-b -depth -type d -exec rmdir {} + 2>/dev/null || true
