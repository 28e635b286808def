#!/bin/bash
# Run a list of tests and report them as KTAP (used by `make check`).
#
#   scripts/run-tests.sh [--host] [--list] [NAME-PREFIX...]
#
# In the guest (default) it reads every tests/vm-tests.d/*.list; with --host,
# tests/host-tests.d/*.list plus the programs named in $HOST_TESTS (each a
# path to a program that prints TAP), and does not watch the kernel log.
# Each list line is
#   name  command...
# (blank lines and lines starting with # are ignored). Options may come
# before the name: "timeout=SEC" (default 600); "debug-timeout=SEC", the
# limit on the debug kernel (CHECK_DEBUG=1, below) instead of timeout=, for
# a test that is slower there even with its work sized by CHECK_DEBUG;
# "every-guest" for a test
# that `make check` runs at the end of each guest when it splits the list
# over several (scripts/shard-tests.py); "parallel" for a test that judges
# no times and may share the cpus: consecutive parallel tests run at once,
# and their results are printed in list order when the last one ends;
# "no-patch" for a test that needs no kernel patch of ours: `make check`
# runs it on every kernel of tests/kernels.list, Debian's own included;
# "one-vcpu" for a test that needs a guest where no vcpu waits for another:
# `make check` runs it in a guest of its own with one vcpu (scripts/check.sh
# says why);
# "kernel=NAME" for a test that runs on that kernel of the list only (a
# long one that one kernel is enough for, or one whose result does not
# depend on the kernel): it is selected only when $KERNEL_NAME is NAME.
# NAME may be a pattern, or several separated by commas: "kernel=stock-*"
# selects a line on Debian's kernels only (their names in
# tests/kernels.list), e.g. the part of a test that depends on the kernel,
# when our patched kernels run all of it.
# "hw" for a test of hardware events (cycles, instructions): it needs a
# PMU, which only the arm64 guests have (QEMU's PMUv3; x86 under TCG has
# none), and runs on the kernels whose tests are "hw" or "hw-no-patch" in
# tests/kernels.list, and on no other.
# "exact-clock" for a test that needs the instruction-exact guest clock
# (guest time is instructions retired, whatever the host's load), which
# only the arm64 guests have (scripts/vm-run.sh): it runs where the hw
# tests run (the kernels whose tests are "hw" or "hw-no-patch"), and on no
# other; with no-patch, on the hw-no-patch kernels too.
# "systemd" for a test of a whole Debian host with systemd as init (the
# image of scripts/systemd-host-image.sh): it runs on the kernels whose
# tests are "systemd" in tests/kernels.list, which scripts/check.sh boots
# with that root, and on no other.
# TEST_SET=no-patch selects only the no-patch tests (default: all, every
# test but the hw ones); TEST_SET=hw only the hw tests, and
# TEST_SET=hw-no-patch the hw tests that are also no-patch, TEST_SET=systemd
# only the systemd tests. With $KERNEL_NAME
# set (scripts/check.sh sets it), every result line names the kernel:
# "ok 3 stock-6.1: cgrstat # 16s".
# --list prints, instead of running them, one line per selected test: its
# name, "every-guest" or "one-guest", "parallel" or "serial", "one-vcpu" or
# "any-vcpus", and its list line, separated by tabs: parse_line below is the
# one parser of the list grammar, scripts/shard-tests.py plans from these
# fields.
# Each test runs from /repo with bash; its own KTAP/TAP output is indented
# under a top-level result line.
# A test fails when it exits non-zero (4 = skipped, as kselftest), or when the
# kernel log gained a BUG/WARNING/lockdep/KASAN report while it ran.
# In the guest, tests see CHECK_DEBUG=1 on the debug kernel (`make
# check-debug`; the only one with kmemleak, kernel/config/debug.fragment),
# else 0: a list line runs longer there with, e.g.,
# PCG_STRESS_SECONDS=$((CHECK_DEBUG ? 600 : 12)) (its timeout= must fit).
# No set -e or pipefail: each test's exit status is its result, read and reported.
set -u
cd "$(dirname "$0")/.." || exit 1
HOST=0
LIST_ONLY=0
while [ $# -gt 0 ]; do
	case $1 in
	--host) HOST=1; shift ;;
	--list) LIST_ONLY=1; shift ;;
	*) break ;;
	esac
done
if [ $HOST = 1 ]; then
	LISTDIR=${HOST_TESTS_DIR:-tests/host-tests.d}
else
	LISTDIR=${VM_TESTS_DIR:-tests/vm-tests.d}
fi
CHECK_DEBUG=0
[ $HOST = 0 ] && [ -e /sys/kernel/debug/kmemleak ] && CHECK_DEBUG=1
export CHECK_DEBUG
# KERNEL_PATCHED=1 in a guest of our patched kernels (TEST_SET all or hw in
# tests/kernels.list: every test), else 0: a test of the kernel series fails
# there, and may skip only elsewhere, when the ioctls are missing.
KERNEL_PATCHED=0
case ${TEST_SET:-all} in all|hw) [ $HOST = 0 ] && KERNEL_PATCHED=1 ;; esac
export KERNEL_PATCHED

selected() {
	local name=$1 p
	[ ${#FILTERS[@]} -eq 0 ] && return 0
	for p in "${FILTERS[@]}"; do
		case $name in "$p"*) return 0 ;; esac
	done
	return 1
}

# parse_line LINE: sets limit (debug-timeout='s on the debug kernel), scope
# (every-guest or one-guest), parallel (0 or 1), onevcpu (0 or 1), nopatch
# (0 or 1), hw (0 or 1), exact (0 or 1: exact-clock), systemd (0 or 1), only
# (a kernel's name, or empty), name and cmd
parse_line() {
	local rest=$1
	limit=600
	debug_limit=
	scope=one-guest
	parallel=0
	onevcpu=0
	nopatch=0
	hw=0
	exact=0
	systemd=0
	only=
	while :; do
		case $rest in
		timeout=*) limit=${rest%%[[:space:]]*}; limit=${limit#timeout=} ;;
		debug-timeout=*) debug_limit=${rest%%[[:space:]]*}; debug_limit=${debug_limit#debug-timeout=} ;;
		kernel=*) only=${rest%%[[:space:]]*}; only=${only#kernel=} ;;
		every-guest[[:space:]]*) scope=every-guest ;;
		parallel[[:space:]]*) parallel=1 ;;
		one-vcpu[[:space:]]*) onevcpu=1 ;;
		no-patch[[:space:]]*) nopatch=1 ;;
		hw[[:space:]]*) hw=1 ;;
		exact-clock[[:space:]]*) exact=1 ;;
		systemd[[:space:]]*) systemd=1 ;;
		*) break ;;
		esac
		rest=${rest#*[[:space:]]}
		rest=${rest#"${rest%%[![:space:]]*}"}
	done
	name=${rest%%[[:space:]]*}
	cmd=${rest#"$name"}
	if [ "$CHECK_DEBUG" = 1 ] && [ -n "$debug_limit" ]; then limit=$debug_limit; fi
}

# kernel_matches PATTERN[,PATTERN...]: $KERNEL_NAME is set and matches one
kernel_matches() {
	local p pats
	[ -n "${KERNEL_NAME:-}" ] || return 1
	IFS=, read -ra pats <<<"$1"
	for p in "${pats[@]}"; do
		# shellcheck disable=SC2053 # a pattern
		[[ $KERNEL_NAME == $p ]] && return 0
	done
	return 1
}

FILTERS=("$@")
TESTS=()
for list in "$LISTDIR"/*.list; do
	[ -f "$list" ] || continue
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		parse_line "$line"
		case ${TEST_SET:-all} in
		all) [ $hw = 0 ] && [ $exact = 0 ] && [ $systemd = 0 ] ;;
		no-patch) [ $hw = 0 ] && [ $exact = 0 ] && [ $systemd = 0 ] && [ $nopatch = 1 ] ;;
		hw) [ $hw = 1 ] || [ $exact = 1 ] ;;
		hw-no-patch) { [ $hw = 1 ] || [ $exact = 1 ]; } && [ $nopatch = 1 ] ;;
		systemd) [ $systemd = 1 ] ;;
		*) false ;;
		esac || continue
		[ -n "$only" ] && ! kernel_matches "$only" && continue
		selected "$name" && TESTS+=("$line")
	done <"$list"
done
for prog in ${HOST_TESTS:-}; do
	[ $HOST = 1 ] && selected "${prog##*/}" && TESTS+=("${prog##*/} $prog")
done

if [ $LIST_ONLY = 1 ]; then
	for line in "${TESTS[@]}"; do
		parse_line "$line"
		run=serial vcpus=any-vcpus
		[ $parallel = 1 ] && run=parallel
		[ $onevcpu = 1 ] && vcpus=one-vcpu
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$scope" "$run" "$vcpus" "$line"
	done
	exit 0
fi

# read_new_splats: sets splat to the splat lines (at most 3) the kernel log
# gained since the last call. One dmesg per call: under TCG each program
# started in the guest costs 50-150 ms, and the runner's own ones had added
# about a second to every test.
log_seen=0
splat=
read_new_splats() {
	local log
	[ $HOST = 1 ] && return
	mapfile -t log < <(dmesg)
	splat=
	# grep only what is new: most tests add nothing to the log
	[ ${#log[@]} -gt "$log_seen" ] &&
		splat=$(printf '%s\n' "${log[@]:log_seen}" | grep -m3 -E -f scripts/kernel-splats.ere)
	log_seen=${#log[@]}
}

# run_test LINE RCFILE: runs the test, its output indented on stdout; writes
# "<exit status> <seconds>" to RCFILE
run_test() {
	local start rc
	parse_line "$1"
	start=$EPOCHSECONDS
	timeout -k 10 "$limit" bash -c "$cmd" </dev/null 2>&1 | sed 's/^/  /'
	rc=${PIPESTATUS[0]}
	echo "$rc $((EPOCHSECONDS - start))" >"$2"
}

# result N LINE RCFILE SPLAT: prints test N's result line
result() {
	local n=$1 splat=$4 rc secs
	parse_line "$2"
	name=${KERNEL_NAME:+$KERNEL_NAME: }$name
	read -r rc secs <"$3"
	if [ -n "$splat" ]; then
		# shellcheck disable=SC2001 # prefixes every line
		echo "$splat" | sed 's/^/  # kernel: /'
		echo "not ok $n $name # kernel log shows a splat while it ran (${secs}s)"
	elif [ "$rc" = 0 ]; then
		echo "ok $n $name # ${secs}s"
	elif [ "$rc" = 4 ]; then
		echo "ok $n $name # SKIP (${secs}s)"
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "not ok $n $name # timed out after ${limit}s"
	else
		echo "not ok $n $name # exit status $rc (${secs}s)"
	fi
}

# run_group FIRST LAST: runs tests FIRST..LAST (1-based list positions).
# One test streams its output; several run at once, and their outputs and
# results are printed in order when the last one ends.  A kernel splat
# while they ran fails all of them.
run_group() {
	local first=$1 last=$2 i names='' pids=()
	if [ "$first" = "$last" ]; then
		parse_line "${TESTS[first - 1]}"
		echo "# test $first: $name"
		run_test "${TESTS[first - 1]}" "$tmp/$first.rc"
	else
		for ((i = first; i <= last; i++)); do
			parse_line "${TESTS[i - 1]}"
			names+=" $name"
			run_test "${TESTS[i - 1]}" "$tmp/$i.rc" >"$tmp/$i.out" &
			pids+=("$!")
		done
		echo "# tests $first-$last run at once:$names"
		wait "${pids[@]}"
	fi
	read_new_splats
	for ((i = first; i <= last; i++)); do
		if [ "$first" != "$last" ]; then
			parse_line "${TESTS[i - 1]}"
			echo "# test $i: $name"
			cat "$tmp/$i.out"
		fi
		result "$i" "${TESTS[i - 1]}" "$tmp/$i.rc" "$splat"
	done
}

# QEMU's multi-threaded TCG can run a stale translation of a call site that
# the kernel rewrites with text_poke_bp() while another vcpu executes it
# (seen once: "Oops: int3" in __schedule at the sched_switch tracepoint's
# static call, flipped from the iterator to a single probe while
# perf-test-cgroup-backends' 16 perf sessions came and went). On hardware
# the int3 protocol makes that rewrite safe. In the guest, hold two
# sched_switch probes (ftrace's, with tracing off, and perf's), the
# switch-path software events and a task event for the whole run, so that
# the scheduler's static calls and keys keep one state while tests attach
# and detach their BPF programs and events. Not under single-threaded TCG
# ($GUEST_TCG=single, from scripts/check.sh), where a rewrite and every
# translation are ordered: there the holders only slowed each context
# switch (perf bench sched pipe 11 % slower with them).
hold_switch_path() {
	local t=/sys/kernel/tracing
	[ $HOST = 1 ] && return
	[ "${GUEST_TCG:-}" = single ] && return
	tracing_was=$(cat $t/tracing_on 2>/dev/null)
	echo 0 >$t/tracing_on 2>/dev/null
	echo 1 >$t/events/sched/sched_switch/enable 2>/dev/null
	perf stat -a -e sched:sched_switch,context-switches,cgroup-switches -o /dev/null \
		-- sleep 1000000 >/dev/null 2>&1 &
	holders=$!
	perf stat -e cpu-clock -p 1 -o /dev/null >/dev/null 2>&1 &
	holders+=" $!"
}

release_switch_path() {
	[ $HOST = 1 ] || [ -z "${holders:-}" ] && return 0
	# shellcheck disable=SC2086 # a list of pids
	[ -n "${holders:-}" ] && kill $holders 2>/dev/null
	echo 0 >/sys/kernel/tracing/events/sched/sched_switch/enable 2>/dev/null
	[ -n "${tracing_was:-}" ] && echo "$tracing_was" >/sys/kernel/tracing/tracing_on 2>/dev/null
	return 0
}

tmp=$(mktemp -d)
trap 'release_switch_path; rm -rf "$tmp"' EXIT
hold_switch_path
read_new_splats	# what the log held before the first test
echo "TAP version 13"
echo "1..${#TESTS[@]}"
n=1
while [ $n -le ${#TESTS[@]} ]; do
	last=$n
	parse_line "${TESTS[n - 1]}"
	while [ $parallel = 1 ] && [ $last -lt ${#TESTS[@]} ]; do
		parse_line "${TESTS[last]}"
		[ $parallel = 1 ] || break
		last=$((last + 1))
	done
	run_group $n $last
	n=$((last + 1))
done
