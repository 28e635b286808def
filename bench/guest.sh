#!/bin/bash
# All of bench/ in one guest boot (bench/run.sh boots it):
#
#   bench/guest.sh MODE OUTDIR        MODE: smoke | quick | full | profile
#
# For each configuration (G cgroups, E events, depth D) the same workload
# (bench/workload.sh: pipe ping-pong + 16-task ring over the G cgroups) runs
# under each backend, backends interleaved (rotated) in each repetition:
#   none    no counting
#   percg   perf stat -a --for-each-cgroup (one cgroup event per cgroup, event, cpu)
#   bperf   perf stat -a --bpf-counters --for-each-cgroup
#   shared  one CPU event per event and cpu, cgroups attached by ioctl
#   rstat   the BPF rstat backend (lib/cgrstat/cgrstat.h)
# then `cgbench cost` times setup, reads and teardown in-process, and the
# memcg-stat benchmark reads memory.stat vs the BPF iterator.
# profile: instead, a kernel profile (perf record -a, cpu-clock) of the pipe
# ping-pong under each backend at G = 1000, depth 1 and 8, and how often the
# context switch's perf and BPF functions run per round trip (ftrace's
# function tracer: exact counts): OUTDIR/profile.txt.
# Spans (session setup and teardown, workload parts, progress) are timed
# with the host's clock (bench/host-clock.sh). Rows go to OUTDIR/results.csv
# (one value per row); bench/report.py makes
# the tables and plots. BENCH_RAW=1 keeps every session's raw files in
# OUTDIR/raw. Environment: BENCH_EVENTS (the event pool, first E
# are used; default cpu-clock,context-switches,task-clock,page-faults).
set -u
mode=$1 out=$2
cd "$(dirname "$0")/.." || exit 1
export PATH=$PWD/build/bin:$PATH
cg_root=/sys/fs/cgroup
tmp=$(mktemp -d)
csv=$out/results.csv
IFS=, read -ra event_pool <<<"${BENCH_EVENTS:-cpu-clock,context-switches,task-clock,page-faults}"
backends=(none percg bperf shared rstat)

# configurations "G E D", one axis at a time around a centre
case $mode in
smoke)	configs=("2 1 2"); reps=1; pipe_loops=20; ring_loops=3
	memcg_args="-n 100 -N 1 -c 10 -R 1" ;;
quick)	configs=("1 2 1" "100 2 1" "1000 2 1" "1000 2 8"); reps=3
	pipe_loops=500; ring_loops=50; memcg_args="-n 5000 -N 5 -c 1000 -R 5" ;;
full)	configs=("1 2 1" "10 2 1" "100 2 1" "1000 2 1" "10000 2 1" "1000 1 1" "1000 4 1"
		 "1000 2 4" "1000 2 8"); reps=5
	pipe_loops=5000; ring_loops=500; memcg_args="-n 20000 -N 20 -c 1000 -R 10" ;;
profile) configs=("1000 2 1" "1000 2 8"); reps=1; pipe_loops=300; ring_loops=0 ;;
*) echo "usage: $0 smoke|quick|full|profile OUTDIR" >&2; exit 2 ;;
esac
[ -n "${BENCH_CONFIGS:-}" ] && IFS=';' read -ra configs <<<"$BENCH_CONFIGS"

. bench/host-clock.sh
now_ns() { host_ns; }
meminfo_kb() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }
# row GROUP BACKEND G E D REP METRIC VALUE UNIT
row() { local IFS=,; echo "$*" >>"$csv"; }
echo "group,backend,G,E,depth,rep,metric,value,unit" >"$csv"

# make_cgroups G D LIST: G leaves at depth D (1 = children of the root),
# named cgbl<i> so that one regex names them all for perf; prints the
# subtree that holds them (for cgrstat reads)
make_cgroups() {
	local g=$1 d=$2 list=$3 dir=$cg_root i
	for ((i = 1; i < d; i++)); do
		dir=$dir/cgbd$i
		mkdir -p "$dir"
		# the cpu controller down to the leaves (as systemd has it): each
		# leaf its own task group, so that cgroup-switches (bperf's
		# trigger) fires between any two of them
		echo +cpu >"$dir/../cgroup.subtree_control"
	done
	[ "$d" -gt 1 ] && echo +cpu >"$dir/cgroup.subtree_control"
	for ((i = 0; i < g; i++)); do echo "$dir/cgbl$i"; done >"$list"
	xargs mkdir <"$list"
	echo "${dir#$cg_root}"
}

remove_cgroups() { # LIST
	xargs rmdir <"$1"
	[ -d $cg_root/cgbd1 ] && find $cg_root/cgbd1 -depth -type d -exec rmdir {} +
	return 0
}

events_of() { local IFS=,; echo "${event_pool[*]:0:$1}"; }

# counting BACKEND EVENTS LIST SUBTREE DIR -- COMMAND: COMMAND counted by BACKEND,
# counts in DIR/counts.txt ("value event cgroup", cpu-clock in ns).
# A backend is one case here (perf stat --cgroup-backend= will replace the
# cgbench lines once perf has it).
# perf stat --cgroup-backend (perf/patches): percg must ask for
# events, as auto picks shared on this kernel; with the option, shared and
# rstat run through perf too (BENCH_DRIVER=cgbench: through cgbench).
if perf stat -h 2>&1 | grep -q -- --cgroup-backend; then
	percg_opt=--cgroup-backend=events
	[ "${BENCH_DRIVER:-perf}" = perf ] && perf_backends=1
else
	percg_opt='' perf_backends=''
fi
perf_stat() { # DIR EVENTS OPTIONS... -- COMMAND
	local dir=$1 ev=$2
	shift 2
	perf stat -a -x, -e "$ev" --for-each-cgroup 'cgbl[0-9]*$' -o "$dir/perf.txt" "$@"
}

counting() {
	local b=$1 ev=$2 list=$3 sub=$4 dir=$5
	shift 5
	case $b in
	none) shift; "$@" ;;
	percg) perf_stat "$dir" "$ev" $percg_opt "$@" ;;
	bperf) perf_stat "$dir" "$ev" --bpf-counters "$@" ;;
	shared|rstat)
		if [ -n "$perf_backends" ]; then
			perf_stat "$dir" "$ev" --cgroup-backend=$b "$@"
		else
			shift
			cgbench count -b "$b" -e "$ev" -f "$list" -R "$sub" -o "$dir/counts.txt" -- "$@"
		fi ;;
	esac
	[ -f "$dir/perf.txt" ] && perf_counts "$dir/perf.txt" >"$dir/counts.txt"
	return 0
}

# perf stat -x, lines "value,unit,event,cgroup,..." -> "value event /sys/fs/cgroup/cgroup"
perf_counts() {
	awk -F, -v root=$cg_root 'NF > 4 && $1 !~ /^#/ { v = $1 ~ /^</ ? 0 : $1;
		if ($2 == "msec") v = v * 1000000; printf "%.0f %s %s/%s\n", v, $3, root, $4 }' "$1"
}

# accuracy DIR: cpu-clock of the busy cgroups against their cpu.stat usage
accuracy() {
	awk 'FNR == NR { truth[$1] = $2; next } $2 == "cpu-clock" && ($3 in truth) && truth[$3] > 0 {
		e = $1 / truth[$3] - 1; s += e < 0 ? -e : e; n++; c += $1; t += truth[$3] }
		END { if (n) printf "%.3f %.4f\n", 100 * s / n, c / t }' "$1/truth.txt" "$1/counts.txt"
}

session() { # BACKEND G E D REP LIST SUBTREE
	local b=$1 g=$2 e=$3 d=$4 rep=$5 list=$6 sub=$7 dir=$tmp/s-$1 t0 t1 slab0 pcpu0
	rm -rf "$dir"; mkdir -p "$dir"
	slab0=$(meminfo_kb Slab) pcpu0=$(meminfo_kb Percpu)
	t0=$(now_ns)
	counting "$b" "$(events_of "$e")" "$list" "$sub" "$dir" -- \
		bench/workload.sh "$dir" "$list" "$pipe_loops" "$ring_loops"
	t1=$(now_ns)
	if ! grep -q end_ns "$dir/workload.txt" 2>/dev/null; then
		echo "bench: $b G=$g E=$e D=$d: the session failed" >&2
		failures=$((failures + 1))
		return
	fi
	if [ -n "${BENCH_RAW:-}" ]; then
		mkdir -p "$out/raw/$b-$g-$e-$d-$rep"
		cp "$dir"/*.txt "$out/raw/$b-$g-$e-$d-$rep/"
	fi
	declare -A w
	while IFS='=' read -r k v; do w[$k]=$v; done <"$dir/workload.txt"
	local r="session $b $g $e $d $rep"
	row $r setup_ms $(((w[start_ns] - t0) / 1000000)) ms
	row $r teardown_ms $(((t1 - w[end_ns]) / 1000000)) ms
	row $r pipe_us_per_op "${w[pipe_us_per_op]}" us
	row $r pipe_host_us_per_op "${w[pipe_host_us_per_op]}" us
	row $r ring_us_per_msg "${w[ring_us_per_msg]}" us
	row $r ring_host_us_per_msg "${w[ring_host_us_per_msg]}" us
	row $r ring_cpu_us_per_msg "${w[ring_cpu_us_per_msg]}" us
	row $r fds "$([ "$b" = none ] && echo 0 || echo "${w[fds]}")" fds
	row $r perf_events "$([ "$b" = none ] && echo 0 || echo "${w[perf_events]}")" events
	row $r slab_kb $((w[slab_kb] - slab0)) kB
	row $r percpu_kb $((w[percpu_kb] - pcpu0)) kB
	row $r bpf_map_kb "${w[bpf_map_kb]}" kB
	if [ "$b" != none ]; then
		read -r err ratio <<<"$(accuracy "$dir")"
		row $r cpu_clock_err_pct "${err:-nan}" %
		row $r cpu_clock_ratio "${ratio:-nan}" ratio
	fi
}

cost() { # BACKEND G E D LIST SUBTREE
	local line k v
	line=$(cgbench cost -b "$1" -e "$(events_of "$3")" -f "$5" -R "$6" -r 3) || {
		echo "bench: cgbench cost -b $1 failed" >&2; failures=$((failures + 1)); return; }
	for kv in $line; do
		k=${kv%%=*} v=${kv#*=}
		case $k in backend|cgroups|events) continue ;; esac
		row cost "$1" "$2" "$3" "$4" 0 "$k" "$v" "${k##*_}"
	done
}

# bperf's read of every cgroup, which cgbench cannot do in-process: the
# extra cpu time of perf stat -I 500 (4 interval reads in 2 s) over -I 10000
# (none), per read (it includes perf formatting G x E lines: an upper bound)
bperf_read() { # G E D
	local i cpu=()
	for i in 10000 500; do
		cpu+=("$( { TIMEFORMAT="%3U %3S"; time perf stat --bpf-counters -a -x, -e "$(events_of "$2")" \
			--for-each-cgroup 'cgbl[0-9]*$' -I $i -o /dev/null -- sleep 2 >/dev/null; } 2>&1 |
			awk '{ print ($1 + $2) * 1000000 }')")
	done
	row cost bperf "$1" "$2" "$3" 0 read_all_us "$(awk -v a="${cpu[0]}" -v b="${cpu[1]}" 'BEGIN { print (b - a) / 4 }')" us
}

memcg() { # memory.stat (read, read+parse) vs the BPF reader, 1 and -c cgroups
	local many=${memcg_args##*-c } n
	many=${many%% *}
	build/bin/memcg_stat_bench $memcg_args | sed 's/= */=/g' |
	awk '$3 ~ /^reads=/ { for (i = 4; i <= 6; i++) { sub(/^[a-z]+=/, "", $i); sub(/s$/, "", $i) }
		print $1, $2, $4, $5, $6, $7 }' |
	while read -r scen m real user sys per; do
		n=1
		[ "$scen" = many ] && n=$many
		row memcg "$m" "$n" 0 0 0 us_per_read "$per" us
		row memcg "$m" "$n" 0 0 0 real_s "$real" s
		row memcg "$m" "$n" 0 0 0 user_s "$user" s
		row memcg "$m" "$n" 0 0 0 sys_s "$sys" s
	done
}

# profile BACKEND G E D LIST SUBTREE: where the pipe ping-pong's time goes
profile() {
	local dir=$tmp/p-$1 first last
	first=$(head -1 "$5") last=$(tail -1 "$5")
	rm -rf "$dir"; mkdir -p "$dir"
	counting "$1" "$(events_of "$3")" "$5" "$6" "$dir" -- \
		perf record -a -e cpu-clock -F 1000 -q -o "$dir/perf.data" -- \
		perf bench sched pipe -G "${first#$cg_root/},${last#$cg_root/}" -l "$pipe_loops" >/dev/null 2>&1
	{
		echo "## $1: G=$2 E=$3 depth=$4, perf bench sched pipe -l $pipe_loops, samples by symbol"
		perf report -i "$dir/perf.data" --no-children --sort sym --stdio -q 2>/dev/null | head -30
		echo
	} >>"$out/profile.txt"
}

# The functions of the context switch's perf and BPF paths whose calls
# path_counts counts (a function the compiler inlined is not traceable and
# is left out): the per-cgroup events' cgroup switch and the PMU callbacks
# that schedule their events out and in (x86_pmu_* for hardware events,
# where they reprogram the PMU; the software PMUs' here), the shared
# event's flush and hash lookups (patch 0001), counter reads, BPF
# programs' entry points (tracepoint and perf overflow) and rstat's update.
PATH_FUNCS='__perf_event_task_sched_(in|out)|perf_cgroup_switch|ctx_sched_(in|out)|event_sched_(in|out)'
PATH_FUNCS+='|x86_pmu_(add|del)|cpu_clock_event_(add|del)|perf_swevent_(add|del)'
PATH_FUNCS+='|perf_cgroup_share_flush(_cpu)?|rhashtable_lookup(\.[a-z0-9.]+)?'
PATH_FUNCS+='|perf_event_read_local|bpf_trace_run[0-9]|__perf_event_overflow|cgroup_rstat_updated'

# path_counts BACKEND G E D LIST SUBTREE: calls of PATH_FUNCS on cpu 0 per
# round trip of the ping-pong pinned there (two cgroup switches)
path_counts() {
	local dir=$tmp/f-$1 first last t=/sys/kernel/tracing loops=200
	first=$(head -1 "$5") last=$(tail -1 "$5")
	rm -rf "$dir"; mkdir -p "$dir"
	echo 0 >$t/tracing_on
	echo nop >$t/current_tracer
	grep -oE "^($PATH_FUNCS)( |$)" $t/available_filter_functions | sort -u >$t/set_ftrace_filter
	echo 16384 >$t/buffer_size_kb
	echo function >$t/current_tracer
	: >$t/trace
	counting "$1" "$(events_of "$3")" "$5" "$6" "$dir" -- bash -c "echo 1 >$t/tracing_on
		taskset -c 0 perf bench sched pipe -G ${first#$cg_root/},${last#$cg_root/} -l $loops >/dev/null 2>&1
		echo 0 >$t/tracing_on"
	{
		echo "## $1: G=$2 E=$3 depth=$4: calls per round trip on cpu 0 ($loops round trips, ftrace)"
		awk -v n=$loops '$2 == "[000]" { for (i = 3; i <= NF; i++) if ($i ~ /:$/ && $(i + 1) != "") { c[$(i + 1)]++; break } }
			END { for (f in c) printf "%10.2f  %s\n", c[f] / n, f }' $t/trace | sort -k2
		grep -h "^# entries-in-buffer" $t/trace | sed 's/^/# /'
		echo
	} >>"$out/profile.txt"
	echo nop >$t/current_tracer
	: >$t/set_ftrace_filter
}

if [ "$mode" = profile ]; then
	rm -f "$out/profile.txt"
	for c in "${configs[@]}"; do
		read -r g e d <<<"$c"
		sub=$(make_cgroups "$g" "$d" "$tmp/list")
		for b in "${backends[@]}"; do profile "$b" "$g" "$e" "$d" "$tmp/list" "$sub"; done
		for b in "${backends[@]}"; do path_counts "$b" "$g" "$e" "$d" "$tmp/list" "$sub"; done
		# what perf stat holds open while its workload runs
		for b in percg bperf; do
			echo "## fds of perf stat ($b) while counting G=$g: by link target"
			counting "$b" "$(events_of "$e")" "$tmp/list" "$sub" "$tmp" -- \
				bash -c 'ls -l /proc/$PPID/fd | awk "NR > 1 { print \$NF }" | sed "s/[0-9]\+/N/g" | sort | uniq -c'
			echo
		done >>"$out/profile.txt"
		remove_cgroups "$tmp/list"
	done
	rm -rf "$tmp" build/bench/.host-clock-*
	exit 0
fi

failures=0
start=$(now_ns)
echo "# bench $mode: ${#configs[@]} configurations x ${#backends[@]} backends x $reps repetitions"
echo "# shared and rstat through $([ -n "$perf_backends" ] && echo "perf stat --cgroup-backend" || echo cgbench)"
echo "driver=$([ -n "$perf_backends" ] && echo "perf stat --cgroup-backend=events|bpf|shared|rstat" || echo "perf stat (percg, bperf), cgbench (shared, rstat)")" >>"$out/meta.txt"
for c in "${configs[@]}"; do
	read -r g e d <<<"$c"
	list=$tmp/list
	echo "# G=$g E=$e depth=$d ($((($(now_ns) - start) / 1000000000)) s)"
	sub=$(make_cgroups "$g" "$d" "$list")
	echo "#   cgroups made ($((($(now_ns) - start) / 1000000000)) s)"
	for ((rep = 0; rep < reps; rep++)); do
		for ((i = 0; i < ${#backends[@]}; i++)); do
			b=${backends[(i + rep) % ${#backends[@]}]}
			session "$b" "$g" "$e" "$d" "$rep" "$list" "$sub"
			echo "#   $b rep $rep done ($((($(now_ns) - start) / 1000000000)) s)"
		done
	done
	for b in none percg shared rstat; do cost "$b" "$g" "$e" "$d" "$list" "$sub"; done
	# (not in smoke: two more perf runs, and no time is judged there)
	[ "$mode" = smoke ] || bperf_read "$g" "$e" "$d"
	echo "#   cost done ($((($(now_ns) - start) / 1000000000)) s)"
	remove_cgroups "$list"
done
echo "# memcg-stat ($((($(now_ns) - start) / 1000000000)) s)"
memcg
echo "# done in $((($(now_ns) - start) / 1000000000)) s, $failures failures"
rm -rf "$tmp" build/bench/.host-clock-*
[ $failures = 0 ]
