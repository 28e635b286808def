#!/bin/bash
# Per-switch cost on the host kernel (6.18, real CPU: far less noise than
# TCG), as root, where fentry is refused so that cgrstat's collector runs
# alone (its per-switch work is all of cgrstat's per-switch work; the
# flusher only runs when somebody reads):
#
#   bench/cgrstat/host.sh        (after make bpf build/bench/cgrstat/trigger)
#   scripts/vm-run.sh -- bench/cgrstat/host.sh    (the same in the guest)
#
# `make bench` (bench/README.md) measures every backend in the guest; this
# script keeps what only it does: the collector's trigger (tp_btf vs
# cgroup-switches) and the BPF programs' own run time per call.
#
# Pipe ping-pong between cgroups a and b at depth 1 and 8, both tasks on
# cpu 0, 2 events (cpu-clock, context-switches), modes interleaved in each
# repetition: no counting; cgrstat's collector; upstream bperf (perf stat
# --bpf-counters --for-each-cgroup with every cgroup on the path); and the
# trigger comparison (same work on tp_btf/sched_switch vs cgroup-switches).
# No pipefail: a pipeline's reader decides (grep -q, head) what counts.
set -eu
cd "$(dirname "$0")/../.."
B=build/bench/cgrstat
CG=$(findmnt -n -f -t cgroup2 -o TARGET)
ROUNDS=${ROUNDS:-20000}
REPS=${REPS:-9}
PERF=${PERF:-build/bin/perf}
EVENTS=cpu-clock,context-switches
MODES=(none collector bperf tp perf-trigger)

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# lines "V1 V2 ...": one value per line
lines() { tr ' ' '\n' <<<"$1" | grep .; }
# paired "A1 A2 ..." "N1 N2 ...": Ai - Ni, one per line
paired() { paste <(lines "$1") <(lines "$2") | awk '{ print $1 - $2 }'; }
# ratios "C..." "B..." "N...": 100 (Ci - Ni) / (Bi - Ni), one per line
ratios() {
	paste <(lines "$1") <(lines "$2") <(lines "$3") |
		awk '$2 > $3 { printf "%.0f\n", 100 * ($1 - $3) / ($2 - $3) }'
}

make_path() { # DEPTH -> "A|B|LIST"
	local depth=$1 dir='' list='' i
	for ((i = 1; i < depth; i++)); do
		dir=${dir:+$dir/}bpp$i
		list=${list:+$list,}$dir
	done
	local a=${dir:+$dir/}bpp-a b=${dir:+$dir/}bpp-b
	mkdir -p "$CG/$a" "$CG/$b"
	echo "$a|$b|${list:+$list,}$a,$b"
}

one() { # MODE A B LIST
	local cmd=("$B/pingpong" "$CG/$2" "$CG/$3" "$ROUNDS")
	case $1 in
	none) "${cmd[@]}" ;;
	collector) "$B/trigger" collector "${cmd[@]}" ;;
	tp) "$B/trigger" tp "${cmd[@]}" ;;
	perf-trigger) "$B/trigger" perf "${cmd[@]}" ;;
	bperf) "$PERF" stat --bpf-counters -a -e $EVENTS --for-each-cgroup "$4" \
		-o /dev/null -- "${cmd[@]}" ;;
	esac | awk '/^cpu_ns_per_switch/ { print $2 }'
}

echo "# host $(uname -r): $ROUNDS round trips, $REPS interleaved repetitions,"
echo "# median cpu ns per switch (cpu time of the two ping-pong tasks / switches);"
echo "# overhead: the mode's median minus none's; paired: the median over the"
echo "# repetitions of the mode minus none in the same repetition (the modes of one"
echo "# repetition run back to back, so this cancels the machine's drift)"
printf "%-6s %-13s %10s %12s %12s\n" depth mode ns/switch "overhead ns" "paired ns"
for depth in 1 8; do
	IFS="|" read -r a b list <<<"$(make_path $depth)"
	declare -A res=()
	for ((r = 0; r < REPS; r++)); do
		for m in "${MODES[@]}"; do
			res[$m]+="$(one "$m" "$a" "$b" "$list") "
		done
	done
	base=$(lines "${res[none]}" | median)
	for m in "${MODES[@]}"; do
		v=$(lines "${res[$m]}" | median)
		printf "%-6s %-13s %10s %12s %12s\n" "$depth" "$m" "$v" $((v - base)) \
			"$(paired "${res[$m]}" "${res[none]}" | median)"
	done
	echo "# depth $depth: collector's overhead / bperf's, median of the repetitions:" \
		"$(ratios "${res[collector]}" "${res[bperf]}" "${res[none]}" | median) %"
	unset res
done
# The programs' own run time per call (kernel.bpf_stats_enabled: precise on
# real hardware, unlike TCG where sched_clock is too coarse): cgrstat's
# collector vs bperf's on_cgrp_switch, which walks every ancestor level.
BPFTOOL=build/tools/bpftool/bpftool
echo 1 > /proc/sys/kernel/bpf_stats_enabled
echo
echo "# BPF program run time per call, median of $REPS: an empty program on the"
echo "# same hook (the hook and the timing), one that reads the 2 counters without"
echo "# enabled/running (read-count), one that reads them as cgrstat does (read),"
echo "# cgrstat's collector, bperf's on_cgrp_switch"
printf "%-6s %-10s %10s\n" depth program ns/call
for depth in 1 8; do
	IFS="|" read -r a b list <<<"$(make_path $depth)"
	ours=
	for m in empty read-count read collector; do
		v=$(for ((r = 0; r < REPS; r++)); do
			"$B/trigger" $m "$B/pingpong" "$CG/$a" "$CG/$b" "$ROUNDS"
		done | awk '/^prog_ns_per_call/ { print $3 }' | median)
		printf "%-6s %-10s %10s\n" $depth $m "$v"
		[ $m = collector ] && ours=$v
	done
	theirs=$(for ((r = 0; r < REPS; r++)); do
		"$PERF" stat --bpf-counters -a -e $EVENTS --for-each-cgroup "$list" -o /dev/null -- \
			bash -c "$B/pingpong $CG/$a $CG/$b $ROUNDS >/dev/null; $BPFTOOL prog show name on_cgrp_switch"
	done | awk '/run_time_ns/ { for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1);
		if ($i == "run_cnt") c = $(i + 1) }; print int(t / c) }' | median)
	printf "%-6s %-10s %10s\n" $depth bperf "$theirs"
	if [ -n "$ours" ] && [ "${theirs:-0}" -gt 0 ]; then
		echo "# depth $depth: collector / bperf: $((100 * ours / theirs)) %"
	fi
done
echo 0 > /proc/sys/kernel/bpf_stats_enabled
find "$CG"/bpp1 "$CG"/bpp-a "$CG"/bpp-b -depth -type d -exec rmdir {} + 2>/dev/null || true
