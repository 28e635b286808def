#!/bin/bash
# Guest test (TAP), arm64 guests only (QEMU's emulated PMUv3: 6 general
# counters and the cycle counter): perf stat --for-each-cgroup with
# hardware events, on each --cgroup-backend named, against exact truths.
#
#   tests/perf/hw-perf.sh BACKEND...       (events bperf shared rstat)
#
# The workload is build/bin/hw-loop (tests/perf/hw-loop.c): it stops
# itself, is moved into its cgroup while stopped, then retires 2 * N + 3
# user instructions (the loop, and the three around it up to its exit
# syscall: measured, the same on every kernel).  $TOP/a/b runs N1
# iterations, $TOP/a itself N2 after it: a counts both, since every
# backend documents a cgroup's counts as including its descendants'
# (perf-stat.txt, --for-each-cgroup).
#  1. counts: every backend at once on one workload, instructions:u (one
#     counter each, the events backend two): each exactly the truth + 3
#     per loop, unscaled (100 %), and all backends identical.
#     Then each backend on its own, -e cycles,cycles:u,instructions:u,
#     cpu-clock: cycles:u equals instructions:u (-icount shift=0: the
#     virtual clock advances 1 ns, the cycle counter 1 cycle, per
#     instruction), and cycles is within CYCLES_TOLERANCE % of the same
#     cgroup's cpu-clock: both are virtual time, and differ only by the
#     switch path between the points where each is turned on and off (the
#     events backend reprograms the PMU at each cgroup switch: its cycles
#     read 0.10-0.26 % below its cpu-clock; the others within 0.02 %, on
#     Debian's 6.1, 6.12, 7.3 and our 7.3).
#  2. groups: -e '{cycles,instructions:u}',cpu-clock: every backend keeps
#     the group (instructions:u exact, cycles as in 1, both members with
#     the same running time).
#  3. multiplexing: eight instructions:u events on six counters: each is
#     shown running part of the time (below 100 %) and its scaled count is
#     within 5 % of the truth.  Four groups of two instructions:u on six
#     counters (eight events: rstat counts at most eight) multiplex as
#     groups (each member below 100 %, the members of a group with the same
#     running time, each scaled count within 5 % of the truth), and a group
#     the PMU can never schedule ({instructions:u x 7} on six counters;
#     x 8, which the kernel does not even open whole) shows <not counted>
#     or <not supported> for every member, never a number.
# One vcpu only (the one-vcpu guest of make check, scripts/vm-run.sh
# --cpus 1): under single-threaded TCG a vcpu's instruction counter reads
# QEMU's one instruction count, so on two vcpus a loop's instructions:u
# also takes whatever the other vcpu ran while it was counting (20,000,003
# read as up to 20,019,615 on two vcpus; exact on one).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
LOOP=build/bin/hw-loop

# run_loops ITERATIONS:CGROUP...: each loop in turn, moved into its cgroup
# (under the cgroup2 mount) while stopped; perf stat's workload
run_loops() {
	local cg2 spec pid
	cg2=$(findmnt -n -f -t cgroup2 -o TARGET)
	for spec in "$@"; do
		"$LOOP" "${spec%%:*}" &
		pid=$!
		until grep -q '^State:.*stopped' "/proc/$pid/status"; do sleep 0.01; done
		echo "$pid" >"$cg2/${spec#*:}/cgroup.procs" || return 1
		kill -CONT "$pid"
		wait "$pid" || return 1
	done
}
# hold READY GO: perf stat's workload while the backends start: say it
# counts (READY), then wait for GO
hold() {
	touch "$1"
	until [ -e "$2" ]; do sleep 0.05; done
}
case ${1:-} in
--run) shift; run_loops "$@"; exit ;;
--hold) hold "$2" "$3"; exit ;;
esac

[ $# -gt 0 ] || { echo "usage: $0 BACKEND..." >&2; exit 2; }
BACKENDS=("$@")
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
TOP=hw-perf-$$
tmp=$(mktemp -d)
# shellcheck source=tests/perf/cpustat.sh
source tests/perf/cpustat.sh	# CG, and the cleanup of $TOP and $tmp
N1=10000000
N2=2500000
N_MUX=50000000
LOOP_EXTRA=3
CYCLES_TOLERANCE=0.5
mkdir -p "$CG/$TOP/a/b"
WORK=("$N1:$TOP/a/b" "$N2:$TOP/a")
# the truths: instructions:u of each cgroup, without the LOOP_EXTRA per loop
declare -A TRUTH=([a/b]=$((2 * N1)) [a]=$((2 * N1 + 2 * N2)))
declare -A LOOPS=([a/b]=1 [a]=2)

# perf_stat BACKEND OUT CGROUPS EVENTS [WORKLOAD...]: perf stat -x, into OUT
# (OUT.err: its stderr), exit status in $rc; the workload is WORK's loops
perf_stat() {
	local b=$1 out=$2 cgs=$3 events=$4
	shift 4
	[ $# -gt 0 ] || set -- "$0" --run "${WORK[@]}"
	perf stat -a -x, --cgroup-backend="$b" --for-each-cgroup "$cgs" \
		-e "$events" -o "$out" -- "$@" 2>"$out.err"
	rc=$?
	sed 's/^/# /' "$out.err" "$out"
}
# field FILE EVENT CGROUP COLUMN: that column of the first CSV line of EVENT
# in CGROUP ($TOP/ prefixed); 1 the count, 5 the running time, 6 the %
field() {
	awk -F, -v ev="$2" -v cg="$TOP/$3" -v c="$4" \
		'$3 == ev && $4 == cg { print $c; exit }' "$1"
}
# exact VALUE CGROUP: VALUE is the cgroup's truth plus LOOP_EXTRA per loop
exact() {
	[[ $1 =~ ^[0-9]+$ ]] && [ "$1" -eq $((TRUTH[$2] + LOOP_EXTRA * LOOPS[$2])) ]
}
# within_pct VALUE REF PCT: |VALUE - REF| <= PCT % of REF, REF > 0
within_pct() {
	awk -v v="$1" -v r="$2" -v p="$3" \
		'BEGIN { d = v - r; if (d < 0) d = -d; exit !(v ~ /^[0-9.]+$/ && r > 0 && d * 100 <= p * r) }'
}
# repeat EVENT K: EVENT K times, comma-separated
repeat() { local s=$1 i; for ((i = 1; i < $2; i++)); do s+=",$1"; done; echo "$s"; }
# The checks below (called through check: SC2317) read perf stat's CSV
# (FILE) of instructions:u events, and $rc: its exit status.
# multiplexed FILE K: perf exited 0 and printed K lines, each running
# part of the time (0 < % < 100)
# shellcheck disable=SC2317
multiplexed() {
	[ "$rc" = 0 ] && awk -F, -v k="$2" '$3 == "instructions:u" {
		n++; if (!($6 > 0 && $6 < 100)) bad = 1 }
		END { exit !(n == k && !bad) }' "$1"
}
# groups_multiplexed FILE K N: perf exited 0 and printed K groups of N
# lines, each running part of the time (0 < % < 100), the N members of
# each group (consecutive lines) with the same running time, within 0.01 %
# (bperf and rstat read the members one after the other; rstat shows the
# leader's times for every member)
# shellcheck disable=SC2317
groups_multiplexed() {
	[ "$rc" = 0 ] && awk -F, -v k="$2" -v m="$3" '$3 == "instructions:u" {
		if (n % m == 0) run = $5
		d = $5 - run; if (d < 0) d = -d; if (d * 10000 > run) bad = 1
		n++; if (!($6 > 0 && $6 < 100)) bad = 1 }
		END { exit !(n == k * m && !bad) }' "$1"
}
# scaled_within5 FILE TRUTH: every count is within 5 % of TRUTH
# shellcheck disable=SC2317
scaled_within5() {
	awk -F, -v t="$2" '$3 == "instructions:u" {
		n++; d = $1 - t; if (d < 0) d = -d; if ($1 !~ /^[0-9]+$/ || d * 100 > 5 * t) bad = 1 }
		END { exit !(n > 0 && !bad) }' "$1"
}
# none_counted FILE K: perf exited 0 and printed K lines, none a number
# shellcheck disable=SC2317
none_counted() {
	[ "$rc" = 0 ] && awk -F, -v k="$2" '$3 == "instructions:u" {
		n++; if ($1 != "<not counted>" && $1 != "<not supported>") bad = 1 }
		END { exit !(n == k && !bad) }' "$1"
}
echo "TAP version 13"
echo "1..$((3 + ${#BACKENDS[@]} * 8))"
cpus=$(nproc --all)
check "one vcpu (a vcpu's instruction counter counts every vcpu's instructions): $cpus" \
	[ "$cpus" = 1 ]

# 1. every backend at once on one workload
declare -A pids
for b in "${BACKENDS[@]}"; do
	perf stat -a -x, --cgroup-backend="$b" --for-each-cgroup "$TOP/a,$TOP/a/b" \
		-e instructions:u -o "$tmp/all.$b" -- "$0" --hold "$tmp/ready.$b" "$tmp/go" \
		2>"$tmp/all.$b.err" &
	pids[$b]=$!
done
# each counting, or failed (its output tells)
for b in "${BACKENDS[@]}"; do
	until [ -e "$tmp/ready.$b" ] || ! kill -0 "${pids[$b]}" 2>/dev/null; do sleep 0.05; done
done
run_loops "${WORK[@]}"
touch "$tmp/go"
wait
what=
ok=0
for b in "${BACKENDS[@]}"; do
	sed 's/^/# /' "$tmp/all.$b.err" "$tmp/all.$b"
	for cg in a/b a; do
		v=$(field "$tmp/all.$b" instructions:u "$cg" 1)
		pct=$(field "$tmp/all.$b" instructions:u "$cg" 6)
		what+=" $b $cg ${v:-none} (${pct:-none} %);"
		exact "${v:-x}" "$cg" && [ "$pct" = 100.00 ] || ok=1
	done
done
check "at once, instructions:u a/b ${TRUTH[a/b]} + $LOOP_EXTRA, a (itself and a/b) ${TRUTH[a]} + $((2 * LOOP_EXTRA)), 100 %:$what" \
	[ "$ok" = 0 ]
counts=$(for b in "${BACKENDS[@]}"; do
	for cg in a/b a; do field "$tmp/all.$b" instructions:u "$cg" 1; done | xargs
done | sort -u)
check "every backend counts the same: $(xargs <<<"$counts")" [ "$(wc -l <<<"$counts")" = 1 ]

for b in "${BACKENDS[@]}"; do
	# 1. cycles against the virtual clock, each backend on its own
	perf_stat "$b" "$tmp/clk.$b" "$TOP/a,$TOP/a/b" cycles,cycles:u,instructions:u,cpu-clock
	what=
	ok=0
	for cg in a/b a; do
		cyc=$(field "$tmp/clk.$b" cycles "$cg" 1)
		cycu=$(field "$tmp/clk.$b" cycles:u "$cg" 1)
		ins=$(field "$tmp/clk.$b" instructions:u "$cg" 1)
		ms=$(field "$tmp/clk.$b" cpu-clock "$cg" 1)
		ns=$(awk -v ms="${ms:-0}" 'BEGIN { printf "%.0f", ms * 1000000 }')
		what+=" $cg instructions:u ${ins:-none} cycles:u ${cycu:-none} cycles ${cyc:-none} cpu-clock ${ns} ns;"
		{ [ "$rc" = 0 ] && exact "${ins:-x}" "$cg" && [ "$cycu" = "$ins" ] &&
			within_pct "${cyc:-x}" "$ns" "$CYCLES_TOLERANCE"; } || ok=1
	done
	check "$b: instructions:u truth + $LOOP_EXTRA per loop, cycles:u = instructions:u, cycles within $CYCLES_TOLERANCE % of cpu-clock:$what" \
		[ "$ok" = 0 ]

	# 2. the group {cycles,instructions:u}
	perf_stat "$b" "$tmp/grp.$b" "$TOP/a,$TOP/a/b" '{cycles,instructions:u},cpu-clock'
	what=
	ok=0
	for cg in a/b a; do
		cyc=$(field "$tmp/grp.$b" cycles "$cg" 1)
		ins=$(field "$tmp/grp.$b" instructions:u "$cg" 1)
		ms=$(field "$tmp/grp.$b" cpu-clock "$cg" 1)
		ns=$(awk -v ms="${ms:-0}" 'BEGIN { printf "%.0f", ms * 1000000 }')
		rcyc=$(field "$tmp/grp.$b" cycles "$cg" 5)
		rins=$(field "$tmp/grp.$b" instructions:u "$cg" 5)
		what+=" $cg cycles ${cyc:-none} instructions:u ${ins:-none} cpu-clock $ns ns, running ${rcyc:-none} ${rins:-none} ns;"
		{ [ "$rc" = 0 ] && exact "${ins:-x}" "$cg" &&
			within_pct "${cyc:-x}" "$ns" "$CYCLES_TOLERANCE" &&
			within_pct "${rins:-x}" "${rcyc:-0}" 0.01; } || ok=1
	done
	check "$b keeps {cycles,instructions:u}: instructions:u truth + $LOOP_EXTRA per loop, cycles within $CYCLES_TOLERANCE % of cpu-clock, the members' running times within 0.01 %:$what" \
		[ "$ok" = 0 ]

	# 3. more events than counters
	perf_stat "$b" "$tmp/mux.$b" "$TOP/a/b" "$(repeat instructions:u 8)" "$0" --run "$N_MUX:$TOP/a/b"
	what=$(awk -F, -v cg="$TOP/a/b" '$3 == "instructions:u" && $4 == cg { printf " %s (%s %%)", $1, $6 }' "$tmp/mux.$b")
	check "$b: 8 instructions:u on 6 counters: 8 lines, each multiplexed, 0 < % < 100:$what" \
		multiplexed "$tmp/mux.$b" 8
	check "$b: each scaled count within 5 % of $((2 * N_MUX))" \
		scaled_within5 "$tmp/mux.$b" $((2 * N_MUX))
	g2="{$(repeat instructions:u 2)}"
	perf_stat "$b" "$tmp/gmux.$b" "$TOP/a/b" "$(repeat "$g2" 4)" "$0" --run "$N_MUX:$TOP/a/b"
	what=$(awk -F, -v cg="$TOP/a/b" '$3 == "instructions:u" && $4 == cg { printf " %s (%s ns, %s %%)", $1, $5, $6 }' "$tmp/gmux.$b")
	check "$b: 4 groups of 2 instructions:u on 6 counters: multiplexed as groups, 0 < % < 100, a group's members with one running time (0.01 %):$what" \
		groups_multiplexed "$tmp/gmux.$b" 4 2
	check "$b: each scaled count of the groups within 5 % of $((2 * N_MUX))" \
		scaled_within5 "$tmp/gmux.$b" $((2 * N_MUX))
	for k in 7 8; do
		perf_stat "$b" "$tmp/never$k.$b" "$TOP/a/b" "{$(repeat instructions:u "$k")}" "$0" --run "$N1:$TOP/a/b"
		what=$(awk -F, '$3 == "instructions:u" { printf " %s", $1 }' "$tmp/never$k.$b")
		check "$b: {instructions:u x $k} (never schedulable): $k members, none with a number:$what" \
			none_counted "$tmp/never$k.$b" "$k"
	done
done
exit "$fail"
