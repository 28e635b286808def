#!/bin/bash
# All of bench/ in one guest boot (bench/run.sh boots it):
#
#   bench/guest.sh MODE OUTDIR        MODE: smoke | quick | full | profile | cost
#
# For each configuration (G leaf cgroups, E events, depth D: the leaves
# under D - 1 levels, every level counted) the same workload
# (bench/workload.sh: pipe ping-pong + 16-task ring over the G leaves) runs
# under each backend, backends interleaved (rotated) in each repetition:
#   none        no counting
#   floor       the E events counted cpu-wide, no cgroup work (cgbench)
#   floor-read  floor + each counter read once at every cgroup switch (BPF):
#               the least any per-cgroup backend adds
#   events      perf stat -a --for-each-cgroup (one cgroup event per cgroup, event, cpu)
#   bperf       perf stat -a --bpf-counters --for-each-cgroup
#   shared      one CPU event per event and cpu, cgroups attached by ioctl
#   rstat       the BPF rstat backend (lib/cgrstat/cgrstat.h)
# then, once per configuration: the cgroup switches of each workload part
# (perf stat -e cgroup-switches), the PMU callbacks each backend calls per
# cgroup switch (ftrace; on arm64 also the PMU register writes the PMUv3
# driver makes), `cgbench cost` (setup, reads and teardown
# in-process), and at the end the memcg-stat benchmark (memory.stat vs the
# BPF iterator).
# BENCH_EXACT=1 (bench/run.sh without --wall: an instruction-exact guest,
# scripts/vm-run.sh --exact): the guest clock counts instructions, so one
# warm-up and one repetition per configuration (BENCH_REPS overrides), and
# spans are timed by the guest clock. Otherwise spans are timed with the
# host's clock (bench/host-clock.sh) and each configuration runs several
# repetitions.
# cost: only the in-process cost pass (setup, reads, teardown), for the
# backends of BENCH_BACKENDS that cgbench cost knows (none events shared
# rstat), at G = 1,000 and 10,000, E = 2, depth 1 (BENCH_CONFIGS for others).
# profile: instead, a kernel profile (perf record -a, cpu-clock) of the pipe
# ping-pong under each backend at G = 1000, depth 1 and 8, and how often the
# context switch's perf and BPF functions run per round trip (ftrace's
# function tracer: exact counts): OUTDIR/profile.txt.
# Rows go to OUTDIR/results.csv (one value per row); bench/report.py makes
# the tables and plots. BENCH_RAW=1 keeps every session's raw files in
# OUTDIR/raw. Environment: BENCH_EVENTS (the event pool, first E
# are used; default cpu-clock,context-switches,task-clock,page-faults, on
# arm64 hardware events: default_events below),
# BENCH_CONFIGS ('G E D;G E D': replaces the mode's configurations),
# BENCH_BACKENDS ('none floor ...': the backends measured, none first;
# default all seven), BENCH_PMU=0|1 (the PMU pass; default: in an exact
# guest only), BENCH_COST=0 (no in-process cost pass).
# No set -e or pipefail: a failed session is counted (failures) and the
# run goes on; the exit status says whether any failed.
set -u
mode=$1 out=$2
cd "$(dirname "$0")/.." || exit 1
export PATH=$PWD/build/bin:$PATH
cg_root=/sys/fs/cgroup
tmp=$(mktemp -d)
csv=$out/results.csv
# The event pool: software events where there is no PMU (QEMU's x86 TCG);
# on arm64 the emulated PMUv3's hardware events, eight for more than its
# six general counters and cycle counter (E = 8 multiplexes): cycles and
# instructions, each also for user and kernel alone, and the raw
# STALL_FRONTEND and STALL_BACKEND (QEMU counts no stall: they read 0, but
# the driver programs them as any other)
case $(uname -m) in
aarch64) default_events="cycles,instructions,cycles:u,instructions:u,cycles:k,instructions:k,r23,r24" ;;
*) default_events="cpu-clock,context-switches,task-clock,page-faults" ;;
esac
IFS=, read -ra event_pool <<<"${BENCH_EVENTS:-$default_events}"
read -ra backends <<<"${BENCH_BACKENDS:-none floor floor-read events bperf shared rstat}"
exact=${BENCH_EXACT:-0}

# configurations "G E D"
cube() { # "G..." "E..." "D...": every combination
	local g e d
	for g in $1; do for e in $2; do for d in $3; do echo "$g $e $d"; done; done; done
}
case $mode in
smoke)	configs=("2 1 2"); reps=1; pipe_loops=20; ring_loops=3
	memcg_args="-n 100 -N 1 -c 10 -R 1" ;;
quick)	mapfile -t configs < <(cube "2 1000" 2 "1 8"); reps=3
	pipe_loops=500; ring_loops=50; memcg_args="-n 5000 -N 5 -c 1000 -R 5" ;;
# full: every combination, 45 configurations (about 70 minutes in one
# exact guest without the PMU pass).
full)	mapfile -t configs < <(cube "1 10 100 1000 10000" "1 2 4" "1 4 8"); reps=5
	pipe_loops=5000; ring_loops=500; memcg_args="-n 20000 -N 20 -c 1000 -R 10" ;;
profile) configs=("1000 2 1" "1000 2 8"); reps=1; pipe_loops=300; ring_loops=0 ;;
cost)	configs=("1000 2 1" "10000 2 1"); reps=1; pipe_loops=0; ring_loops=0 ;;
*) echo "usage: $0 smoke|quick|full|profile|cost OUTDIR" >&2; exit 2 ;;
esac
# exact: one repetition after a warm-up; 5,000 round trips and 500 ring
# laps are 10,000 and up to 8,000 cgroup switches, counted to the
# instruction. perf bench's time includes its fork, both ends' moves into
# their cgroups and the exit (the same in every session, but not exactly:
# about 100,000 instructions apart between runs): 5,000 round trips
# make that 10 instructions per switch. The ring's time includes its 16
# tasks' exits: 50 laps left 1-2 % between two boots.
if [ "$exact" = 1 ] && [ "$mode" != smoke ] && [ "$mode" != profile ] && [ "$mode" != cost ]; then
	reps=1 pipe_loops=5000 ring_loops=500
	memcg_args="-n 2000 -N 3 -c 1000 -R 3"
fi
reps=${BENCH_REPS:-$reps}
[ -n "${BENCH_CONFIGS:-}" ] && IFS=';' read -ra configs <<<"$BENCH_CONFIGS"

# favordynmods (cgroup2's mount option): a task's move between cgroups then
# takes cgroup_threadgroup_rwsem without an RCU grace period. Without it
# every move (perf bench sched pipe -G moves both ends once per run) waits
# for a grace period, idle time the exact guest's clock jumps over but
# counts: the same pipe run (-G, 1,000 round trips) read 25.3 to 33.9 us
# per round trip in five runs of one boot, and 15.71 to 15.81 with it.
# The pipe's loop does not fork, so its cost is the same either way.
cg_opts=$(findmnt -n -o OPTIONS "$cg_root")
if [[ ,$cg_opts, != *,favordynmods,* ]] && mount -o remount,favordynmods $cg_root; then
	trap 'mount -o remount,"$cg_opts" $cg_root' EXIT
fi

# shellcheck source=bench/host-clock.sh
. bench/host-clock.sh
now_ns() { host_ns; }
meminfo_kb() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }
# row GROUP BACKEND G E D REP METRIC VALUE UNIT
row() { local IFS=,; echo "$*" >>"$csv"; }
echo "group,backend,G,E,depth,rep,metric,value,unit" >"$csv"

# make_cgroups G D LIST: G leaves at depth D (1 = children of the root),
# named cgbl<i> under cgbd1/.../cgbd<D-1>; LIST gets the leaves, LIST.all
# every cgroup counted (the levels above the leaves, then the leaves).
# Prints the top of what is counted (for cgrstat's subtree reads).
make_cgroups() {
	local g=$1 d=$2 list=$3 dir=$cg_root i
	: >"$list.all"
	for ((i = 1; i < d; i++)); do
		dir=$dir/cgbd$i
		mkdir -p "$dir"
		echo "$dir" >>"$list.all"
		# the cpu controller down to the leaves (as systemd has it): each
		# leaf its own task group, so that cgroup-switches (bperf's
		# trigger) fires between any two of them
		echo +cpu >"$dir/../cgroup.subtree_control"
	done
	[ "$d" -gt 1 ] && echo +cpu >"$dir/cgroup.subtree_control"
	for ((i = 0; i < g; i++)); do echo "$dir/cgbl$i"; done >"$list"
	xargs mkdir <"$list"
	cat "$list" >>"$list.all"
	[ "$d" -gt 1 ] && echo /cgbd1 || echo ""
}

remove_cgroups() { # LIST
	xargs rmdir <"$1"
	[ -d $cg_root/cgbd1 ] && find $cg_root/cgbd1 -depth -type d -exec rmdir {} +
	return 0
}

events_of() { local IFS=,; echo "${event_pool[*]:0:$1}"; }

# counting BACKEND EVENTS LIST SUBTREE DIR -- COMMAND: COMMAND counted by BACKEND
# for every cgroup of LIST.all, counts in DIR/counts.txt ("value event
# cgroup", cpu-clock in ns). A backend is one case here.
# perf stat --cgroup-backend (perf/patches): events must ask for it, as
# auto picks shared on this kernel; with the option, shared and rstat run
# through perf too (BENCH_DRIVER=cgbench: through cgbench).
# a perf built without BPF skeletons has no --bpf-counters: no bperf then
if ! perf stat -h 2>&1 | grep -q -- --bpf-counters; then
	echo "bench: $(command -v perf) has no --bpf-counters: no bperf" >&2
	read -ra backends <<<"${backends[*]/bperf}"
fi
perf_backends=''
if perf stat -h 2>&1 | grep -q -- --cgroup-backend; then
	events_opt=--cgroup-backend=events
	[ "${BENCH_DRIVER:-perf}" = perf ] && perf_backends=1
else
	events_opt='' perf_backends=''
fi
# every level: the leaves cgbl<i> and the levels above them cgbd<i>
perf_stat() { # DIR EVENTS OPTIONS... -- COMMAND
	local dir=$1 ev=$2
	shift 2
	perf stat -a -x, -e "$ev" --for-each-cgroup 'cgb[ld][0-9]*$' -o "$dir/perf.txt" "$@"
}

counting() {
	local b=$1 ev=$2 list=$3 sub=$4 dir=$5
	shift 5
	case $b in
	none) shift; "$@" ;;
	floor|floor-read) shift
		cgbench count -b "$b" -e "$ev" -f "$list" -o "$dir/floor.txt" -- "$@" ;;
	events) perf_stat "$dir" "$ev" $events_opt "$@" ;;
	bperf) perf_stat "$dir" "$ev" --bpf-counters "$@" ;;
	shared|rstat)
		if [ -n "$perf_backends" ]; then
			perf_stat "$dir" "$ev" --cgroup-backend="$b" "$@"
		else
			shift
			cgbench count -b "$b" -e "$ev" -f "$list.all" -R "$sub" -o "$dir/counts.txt" -- "$@"
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

session() { # BACKEND G E D REP LIST SUBTREE (REP < 0: a warm-up, nothing recorded)
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
	[ "$rep" -lt 0 ] && return
	if [ -n "${BENCH_RAW:-}" ]; then
		mkdir -p "$out/raw/$b-$g-$e-$d-$rep"
		cp "$dir"/*.txt "$out/raw/$b-$g-$e-$d-$rep/"
	fi
	declare -A w
	while IFS='=' read -r k v; do w[$k]=$v; done <"$dir/workload.txt"
	local r=(session "$b" "$g" "$e" "$d" "$rep")
	row "${r[@]}" setup_ms $(((w[start_ns] - t0) / 1000000)) ms
	row "${r[@]}" teardown_ms $(((t1 - w[end_ns]) / 1000000)) ms
	row "${r[@]}" pipe_us_per_op "${w[pipe_us_per_op]}" us
	row "${r[@]}" pipe_host_us_per_op "${w[pipe_host_us_per_op]}" us
	row "${r[@]}" ring_us_per_msg "${w[ring_us_per_msg]}" us
	row "${r[@]}" ring_host_us_per_msg "${w[ring_host_us_per_msg]}" us
	row "${r[@]}" ring_cpu_us_per_msg "${w[ring_cpu_us_per_msg]}" us
	row "${r[@]}" fds "$([ "$b" = none ] && echo 0 || echo "${w[fds]}")" fds
	row "${r[@]}" perf_events "$([ "$b" = none ] && echo 0 || echo "${w[perf_events]}")" events
	row "${r[@]}" slab_kb $((w[slab_kb] - slab0)) kB
	row "${r[@]}" percpu_kb $((w[percpu_kb] - pcpu0)) kB
	row "${r[@]}" bpf_map_kb "${w[bpf_map_kb]}" kB
	case $b in none|floor|floor-read) return ;; esac
	read -r err ratio <<<"$(accuracy "$dir")"
	row "${r[@]}" cpu_clock_err_pct "${err:-nan}" %
	row "${r[@]}" cpu_clock_ratio "${ratio:-nan}" ratio
}

# switches G E D LIST: the cgroup switches (and context switches) of each
# workload part, counted cpu-wide by perf stat around it: what the
# instructions per cgroup switch divide by
switches() {
	local dir=$tmp/switches k v
	rm -rf "$dir"; mkdir -p "$dir"
	WORKLOAD_COUNT_SWITCHES=1 bench/workload.sh "$dir" "$4" "$pipe_loops" "$ring_loops"
	while IFS='=' read -r k v; do
		case $k in *_switches_per_*) row switches none "$1" "$2" "$3" 0 "$k" "$v" switches ;; esac
	done <"$dir/workload.txt"
}

cost() { # BACKEND G E D LIST SUBTREE
	local line k v
	line=$(cgbench cost -b "$1" -e "$(events_of "$3")" -f "$5.all" -R "$6" -r 3 -m "$cost_batch_us") || {
		echo "bench: cgbench cost -b $1 failed" >&2; failures=$((failures + 1)); return; }
	for kv in $line; do
		k=${kv%%=*} v=${kv#*=}
		case $k in backend|cgroups|events) continue ;; esac
		row cost "$1" "$2" "$3" "$4" 0 "$k" "$v" "${k##*_}"
	done
}
# cost_pass G E D LIST SUBTREE: cost for each backend of BENCH_BACKENDS that
# cgbench cost knows
cost_pass() {
	local b
	for b in none events shared rstat; do
		[[ " ${backends[*]} " != *" $b "* ]] || cost "$b" "$@"
	done
}
# creating and removing cgroups below the counted subtree, counted with
# everything created below it: what a backend adds to mkdir and rmdir (the
# events backend adds nothing: it opens events only for the cgroups it is
# given)
churn() { # BACKEND G E D SUBTREE
	local line k v
	line=$(cgbench churn -b "$1" -e "$(events_of "$3")" -R "$cg_root$5" -l "$churn_cgroups") || {
		echo "bench: cgbench churn -b $1 failed" >&2; failures=$((failures + 1)); return; }
	for kv in $line; do
		k=${kv%%=*} v=${kv#*=}
		case $k in mkdir_us|rmdir_us) row churn "$1" "$2" "$3" "$4" 0 "$k" "$v" us ;; esac
	done
}
churn_cgroups=500
[ "$mode" = smoke ] && churn_cgroups=20

# a read timed in batches of at least this long: the wall clock may tick in
# milliseconds; the exact guest's clock counts instructions
cost_batch_us=50000
[ "$exact" = 1 ] && cost_batch_us=2000

# bperf's read of every cgroup, which cgbench cannot do in-process: the
# extra cpu time of perf stat -I 500 (4 interval reads in 2 s) over -I 10000
# (none), per read (it includes perf formatting G x E lines: an upper bound)
bperf_read() { # G E D
	local i cpu=()
	for i in 10000 500; do
		cpu+=("$( { TIMEFORMAT="%3U %3S"; time perf stat --bpf-counters -a -x, -e "$(events_of "$2")" \
			--for-each-cgroup 'cgb[ld][0-9]*$' -I $i -o /dev/null -- sleep 2 >/dev/null; } 2>&1 |
			awk '{ print ($1 + $2) * 1000000 }')")
	done
	row cost bperf "$1" "$2" "$3" 0 read_all_us "$(awk -v a="${cpu[0]}" -v b="${cpu[1]}" 'BEGIN { print (b - a) / 4 }')" us
}

memcg() { # memory.stat (read, read+parse) vs the BPF reader, 1 and -c cgroups
	local many=${memcg_args##*-c } n
	many=${many%% *}
	# shellcheck disable=SC2086 # memcg_args holds several options
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
		perf bench sched pipe -G "${first#"$cg_root"/},${last#"$cg_root"/}" -l "$pipe_loops" >/dev/null 2>&1
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
# event's flush and hash lookups (kernel patch 0001), counter reads, BPF
# programs' entry points (tracepoint and perf overflow) and rstat's update.
PATH_FUNCS='__perf_event_task_sched_(in|out)|perf_cgroup_switch|ctx_sched_(in|out)|event_sched_(in|out)'
PATH_FUNCS+='|x86_pmu_(add|del)|cpu_clock_event_(add|del)|perf_swevent_(add|del)'
PATH_FUNCS+='|perf_cgroup_share_flush(_cpu)?|rhashtable_lookup(\.[a-z0-9.]+)?'
PATH_FUNCS+='|perf_event_read_local|bpf_trace_run[0-9]|__perf_event_overflow|cgroup_rstat_updated'
# pmu->add, pmu->del and pmu->read of the x86 and arm64 hardware PMUs
# (arm_pmu.c's armpmu_*) and of the software PMUs the event pool uses
# (cpu-clock, task-clock, the swevents)
PMU_FUNCS='(x86_pmu|armpmu|cpu_clock_event|task_clock_event|perf_swevent)_(add|del|read)'
# arm64: the PMUv3 driver's functions (drivers/perf/arm_pmuv3.c) that the
# arm_pmu core calls to touch the PMU's system registers, and what one call
# executes: "function writes reads isbs" (MSR to a PMU register, MRS from
# one, ISB). Read from the driver's code and its disassembly in the bench
# kernel, for what the bench counts: events that are not chained (no
# 64-bit event counters asked for), no KVM host, perf_user_access off.
#   enable_event   PMEVTYPER<n> or PMCCFILTR, PMINTENSET, ISB, PMCNTENSET
#   disable_event  PMCNTENCLR, ISB, PMINTENCLR, ISB, PMOVSCLR, ISB
#   write_counter  PMEVCNTR<n> or PMCCNTR (the period, at every pmu->start)
#   read_counter   reads PMEVCNTR<n> or PMCCNTR
#   start          PMUSERENR, then PMCR read, ISB, PMCR write (counting on)
#   stop           PMCR read, ISB, PMCR write (counting off)
# arm64 has no counter-select write (PMSELR): the kernel names each
# counter's register directly.
PMU_REG_COST='armv8pmu_enable_event 3 0 1
armv8pmu_disable_event 3 0 3
armv8pmu_write_counter 1 0 0
armv8pmu_read_counter 0 1 0
armv8pmu_start 2 1 1
armv8pmu_stop 1 1 1'
PMU_REG_FUNCS=$(awk '{ printf "%s%s", (NR > 1 ? "|" : ""), $1 }' <<<"$PMU_REG_COST")

# ftrace_calls FUNCS_ERE LOOPS BACKEND EVENTS LIST SUBTREE: calls of the
# functions FUNCS_ERE on cpu 0 while the ping-pong pinned there makes LOOPS
# round trips counted by BACKEND; prints "calls function" lines
ftrace_calls() {
	local funcs=$1 loops=$2 b=$3 t=/sys/kernel/tracing dir=$tmp/f-$3 first last
	first=$(head -1 "$5") last=$(tail -1 "$5")
	rm -rf "$dir"; mkdir -p "$dir"
	echo 0 >$t/tracing_on
	echo nop >$t/current_tracer
	grep -oE "^($funcs)( |$)" $t/available_filter_functions | sort -u >$t/set_ftrace_filter
	echo 16384 >$t/buffer_size_kb
	echo function >$t/current_tracer
	: >$t/trace
	counting "$b" "$4" "$5" "$6" "$dir" -- bash -c "echo 1 >$t/tracing_on
		taskset -c 0 perf bench sched pipe -G ${first#"$cg_root"/},${last#"$cg_root"/} -l $loops >/dev/null 2>&1
		echo 0 >$t/tracing_on"
	awk '$2 == "[000]" { for (i = 3; i <= NF; i++) if ($i ~ /:$/ && $(i + 1) != "") { c[$(i + 1)]++; break } }
		END { for (f in c) print c[f], f }' $t/trace
	grep -h "^# entries-in-buffer" $t/trace >&2
	echo nop >$t/current_tracer
	: >$t/set_ftrace_filter
}

# path_counts BACKEND G E D LIST SUBTREE: calls of PATH_FUNCS on cpu 0 per
# round trip of the ping-pong pinned there (two cgroup switches)
path_counts() {
	local loops=200
	{
		echo "## $1: G=$2 E=$3 depth=$4: calls per round trip on cpu 0 ($loops round trips, ftrace)"
		ftrace_calls "$PATH_FUNCS" $loops "$1" "$(events_of "$3")" "$5" "$6" 2>&1 |
			awk -v n=$loops 'NF == 2 && $1 ~ /^[0-9]+$/ { printf "%10.2f  %s\n", $1 / n, $2; next } { print "# " $0 }' |
			sort -k2
		echo
	} >>"$out/profile.txt"
}

# pmu_counts BACKEND G E D LIST SUBTREE: pmu->add, ->del and ->read calls
# per round trip of the pinned ping-pong (what reprograms or reads a PMU
# counter on hardware), rows pmu,BACKEND,...,add|del|read_per_op; on arm64
# also the calls of each PMU_REG_COST function (rows <function>_per_op) and
# the PMU register writes, reads and ISBs they make (sysreg_writes_per_op,
# sysreg_reads_per_op, isb_per_op)
pmu_counts() {
	local loops=500 calls op
	calls=$(ftrace_calls "$PMU_FUNCS|$PMU_REG_FUNCS" $loops "$1" "$(events_of "$3")" "$5" "$6" 2>"$tmp/pmu-ftrace.txt")
	# a full ring buffer loses calls: say so rather than count too few
	awk '{ split($3, n, "/") } n[1] != n[2] { print "bench: PMU pass of " b ": the trace buffer overran (" $0 ")" }' \
		b="$1" "$tmp/pmu-ftrace.txt" >&2
	for op in add del read; do
		row pmu "$1" "$2" "$3" "$4" 0 "${op}_per_op" \
			"$(awk -v n=$loops -v op="$op" '$2 ~ "_" op "$" { s += $1 } END { printf "%.3f\n", s / n }' <<<"$calls")" calls
	done
	grep -qE " ($PMU_REG_FUNCS)$" <<<"$calls" || return 0
	awk -v n=$loops 'FNR == NR { cost[$1] = $2 " " $3 " " $4; next }
		$2 in cost { calls[$2] = $1 }
		END { for (f in cost) { split(cost[f], c); k = calls[f] + 0
			printf "%s_per_op %.3f calls\n", f, k / n
			w += k * c[1]; r += k * c[2]; i += k * c[3] }
			printf "sysreg_writes_per_op %.3f writes\nsysreg_reads_per_op %.3f reads\nisb_per_op %.3f isbs\n",
				w / n, r / n, i / n }' <(echo "$PMU_REG_COST") - <<<"$calls" |
	while read -r metric value what; do
		row pmu "$1" "$2" "$3" "$4" 0 "$metric" "$value" "$what"
	done
}

# The PMU pass patches the traced functions' call sites (text_poke) while
# they run: safe on hardware and in the exact guest (one host thread), but
# QEMU's multi-threaded TCG may run a stale translation of a site being
# rewritten on the other vcpu (scripts/run-tests.sh, hold_switch_path). So
# a wall-clock guest skips it unless BENCH_PMU=1.
pmu_pass=${BENCH_PMU:-$exact}
# Linux 7.3.4 built with the guest configuration, without any patch of
# ours, calls a NULL ftrace callback (RIP 0 from cpu_clock_event_add's
# call site, global_ops in %rdx) when the function tracer filters the PMU
# callbacks and cpu-clock events are installed after an earlier perf
# run (docs/known-issues.md): the PMU pass stays off there unless
# BENCH_PMU=1 asks for it. The arm64 build of the same tree runs it (the
# PMU pass of every backend, hardware events, E = 2 and 8).
case $(uname -m):$(uname -r) in
x86_64:7.3.*) if [ -z "${BENCH_PMU:-}" ] && [ "$pmu_pass" = 1 ]; then
	pmu_pass=0
	echo "# no PMU pass on $(uname -r): its function tracer crashes this kernel (docs/known-issues.md)"
fi ;;
esac

if [ "$mode" = profile ]; then
	rm -f "$out/profile.txt"
	for c in "${configs[@]}"; do
		read -r g e d <<<"$c"
		sub=$(make_cgroups "$g" "$d" "$tmp/list")
		for b in "${backends[@]}"; do profile "$b" "$g" "$e" "$d" "$tmp/list" "$sub"; done
		for b in "${backends[@]}"; do path_counts "$b" "$g" "$e" "$d" "$tmp/list" "$sub"; done
		# what perf stat holds open while its workload runs
		for b in events bperf; do
			echo "## fds of perf stat ($b) while counting G=$g: by link target"
			# shellcheck disable=SC2016 # expanded by the inner bash
			counting "$b" "$(events_of "$e")" "$tmp/list" "$sub" "$tmp" -- \
				bash -c 'ls -l /proc/$PPID/fd | awk "NR > 1 { print \$NF }" | sed "s/[0-9]\+/N/g" | sort | uniq -c'
			echo
		done >>"$out/profile.txt"
		remove_cgroups "$tmp/list"
	done
	rm -rf "$tmp" build/bench/.host-clock-*
	exit 0
fi

# settle: let the work a session leaves behind (RCU callbacks freeing its
# events, kworkers freeing BPF maps and links) finish before the next one.
# In an exact guest every vcpu's instructions advance the one clock, so
# that work, done on the other vcpu during the next workload, would be
# counted as the next backend's; idle time costs nothing there (the clock
# skips it).
settle() { [ "$exact" = 1 ] && sleep 2; return 0; }

failures=0
start=$(now_ns)
elapsed() { echo "$((($(now_ns) - start) / 1000000000)) s"; }
# finish: the run's last line; the exit status says whether any session failed
finish() {
	echo "# done in $(elapsed), $failures failures"
	rm -rf "$tmp" build/bench/.host-clock-*
	[ $failures = 0 ]
	exit
}
if [ "$mode" = cost ]; then
	for c in "${configs[@]}"; do
		read -r g e d <<<"$c"
		echo "# G=$g E=$e depth=$d ($(elapsed))"
		sub=$(make_cgroups "$g" "$d" "$tmp/list")
		cost_pass "$g" "$e" "$d" "$tmp/list" "$sub"
		remove_cgroups "$tmp/list"
	done
	finish
fi
echo "# bench $mode: ${#configs[@]} configurations x ${#backends[@]} backends x $reps repetitions$([ "$exact" = 1 ] && echo ", instruction-exact guest")"
echo "# shared and rstat through $([ -n "$perf_backends" ] && echo "perf stat --cgroup-backend" || echo cgbench)"
{
	echo "driver=$([ -n "$perf_backends" ] && echo "perf stat --cgroup-backend=events|bpf|shared|rstat" || echo "perf stat (events, bperf), cgbench (shared, rstat)"), cgbench (floor, floor-read)"
	echo "reps=$reps pipe_loops=$pipe_loops ring_loops=$ring_loops perf=$(command -v perf) ($(perf version 2>/dev/null))"
	echo "backends=${backends[*]}"
	echo "cgroup2=$(findmnt -n -o OPTIONS "$cg_root")"
} >>"$out/meta.txt"
for c in "${configs[@]}"; do
	read -r g e d <<<"$c"
	list=$tmp/list
	echo "# G=$g E=$e depth=$d ($(elapsed))"
	sub=$(make_cgroups "$g" "$d" "$list")
	session none "$g" "$e" "$d" -1 "$list" "$sub"
	settle
	echo "#   cgroups made, warm-up done ($(elapsed))"
	for ((rep = 0; rep < reps; rep++)); do
		for ((i = 0; i < ${#backends[@]}; i++)); do
			b=${backends[(i + rep) % ${#backends[@]}]}
			session "$b" "$g" "$e" "$d" "$rep" "$list" "$sub"
			echo "#   $b rep $rep done ($(elapsed))"
			settle
		done
	done
	switches "$g" "$e" "$d" "$list"
	if [ "$pmu_pass" = 1 ]; then
		for b in "${backends[@]:1}"; do pmu_counts "$b" "$g" "$e" "$d" "$list" "$sub"; done
	fi
	echo "#   cgroup switches$([ "$pmu_pass" = 1 ] && echo " and PMU calls") counted ($(elapsed))"
	if [ "${BENCH_COST:-1}" = 1 ]; then
		cost_pass "$g" "$e" "$d" "$list" "$sub"
		for b in none shared rstat; do churn "$b" "$g" "$e" "$d" "$sub"; done
		# (not in smoke: two more perf runs, and no time is judged there)
		[ "$mode" = smoke ] || [[ " ${backends[*]} " != *" bperf "* ]] || bperf_read "$g" "$e" "$d"
	fi
	echo "#   cost done ($(elapsed))"
	remove_cgroups "$list"
done
# (make arm64 does not build memcg_stat_bench: no memcg row there)
if [ -x build/bin/memcg_stat_bench ]; then
	echo "# memcg-stat ($(elapsed))"
	memcg
fi
finish
