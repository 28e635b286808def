#!/bin/bash
# `make check`: host-side unit tests, then every VM test on every kernel of
# the matrix, then one summary line "N passed, N failed, N skipped".
#
#   scripts/check.sh [--kernel IMAGE] [--kernels NAME,...] [--timeout SEC]
#                    [--vm-tests DIR] [--out DIR] [--guests N] [--slots N]
#                    [--guest-cpus N] [NAME-PREFIX...]
#
# The kernel matrix, tests/kernels.list: one line per kernel,
#   name  image  tests  [cpu=MODEL]
# e.g. "stock-6.1  deb:linux-image-6.1.0-*-cloud-amd64  no-patch". The image
# is a path in the repository (a kernel this project builds) or deb:GLOB,
# Debian's newest package matching GLOB, which scripts/fetch-kernels.sh
# downloads into build/stock/<name>/ (never installs it). "all" runs every
# test of the lists, "no-patch" only the tests whose list line carries the
# option no-patch (they need no kernel patch of ours: the rstat backend,
# libcgcount's auto, perf stat on events and rstat, the memcg reader). A
# patched 7.3 is one more line: "patched-7.3  build/bzImage-7.3  all".
# Every guest result line names its kernel: "ok 12 stock-6.1: cgrstat";
# a test sees its kernel's name in $KERNEL_NAME. A kernel that no selected
# test runs on is not booted.
#
# --kernel IMAGE boots IMAGE for the first line (default build/bzImage; make
# check-debug passes the debug kernel). --kernels NAME,... (default
# $CHECK_KERNELS, else every line) picks lines by name. --vm-tests DIR
# reads the guest's test lists from DIR (inside the repository) instead of
# tests/vm-tests.d and, without --kernels, boots only --kernel, unnamed
# (the runner's self-test); --out DIR writes results there (build/check).
#
# Every guest runs single-threaded TCG (VM_TCG_THREAD=single in
# scripts/vm-run.sh): one host thread runs both of its vcpus, so it takes
# one host cpu, and a rewrite of kernel text (BPF trampolines, static calls)
# and every translation of it are ordered. --slots N (default $CHECK_SLOTS,
# else the host's cpus) guests run at once, the host tests in one of the
# slots from the start: no more runnable vcpu threads than host cpus, as
# timed workloads need (two guests of two multi-threaded vcpus each beside
# the host tests on 2 host cpus read 7 % off cpu.stat). Each kernel's tests
# are split over as many guests as keep each guest short against the whole
# run, the longest guests first (scripts/shard-tests.py plans it from the
# time each test took last run), so the slots stay busy to the end; --guests
# N (default $CHECK_GUESTS) fixes the first kernel's number of guests. The
# first kernel's guest 1 holds its "parallel" tests, which judge no times,
# and starts first, beside the host tests, whose runner self-test boots
# guests of its own.
# Single-threaded TCG runs one vcpu at a time, for up to 100 ms while the
# other waits: a test that compares backends charging at different points
# of a context switch, over a workload that switches cgroups many times a
# second, reads off when such a wait falls inside a switch (under it,
# tools-prometheus read a duty-cycled cgroup 7 % above cpu.stat). A test
# marked "one-vcpu" therefore runs in a guest of its own kernel with one
# vcpu, where no vcpu waits for another, planned like the other guests.
#
# Result lines stream as they come, prefixed [host] or with their guest
# ([guest 1]: the first kernel's guest 1; [guest]: another kernel's, named
# in the line); a single guest's output streams in full. The full outputs
# are OUT/host.ktap and OUT/guest<id>.ktap (id: 1..N for the first kernel,
# then the kernel's name, NAME-1..NAME-k when it has several guests,
# NAME-1cpu for its one-vcpu tests).
# --guest-cpus N gives each guest N vcpus (default 2; the runner's
# self-test boots its guests with 1 beside the test guest).
#
# Fails when a test fails, when a guest hangs or dies, and when a guest's
# kernel log shows a BUG, WARNING, Oops, lockdep or KASAN report or a panic.
# No set -e: a failing test or guest is counted and reported, and the run goes on.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
KERNEL=
KERNELS_LIST=tests/kernels.list
KERNELS=${CHECK_KERNELS:-}
MATRIX_ONLY_IF_NAMED=0
TIMEOUT=${CHECK_TIMEOUT:-2400}
LISTDIR=
OUT=build/check
GUESTS=${CHECK_GUESTS:-}
SLOTS=${CHECK_SLOTS:-$(nproc)}
GUEST_CPUS=2
# what the host tests take, for the plan (the runner self-test 28 s,
# checkpatch 12 s, the rest a few seconds each)
HOST_SECONDS=60
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift 2 ;;
	--kernels) KERNELS=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--vm-tests) LISTDIR=$2; MATRIX_ONLY_IF_NAMED=1; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--guests) GUESTS=$2; shift 2 ;;
	--slots) SLOTS=$2; shift 2 ;;
	--guest-cpus) GUEST_CPUS=$2; shift 2 ;;
	*) break ;;
	esac
done
[ "$SLOTS" -ge 1 ] 2>/dev/null || SLOTS=1
# what each test took last time, per first kernel image: a debug kernel's
# times (a 600 s stress run) would mislead the plan of a plain make check
SECONDS_SEEN=build/test-seconds.txt
case ${KERNEL:-build/bzImage} in
build/bzImage) ;;
*) SECONDS_SEEN=build/test-seconds-$(basename "$KERNEL").txt ;;
esac
# Two checks writing one result directory would mix their results: the
# second waits for the first.
mkdir -p "$(dirname "$OUT")"
exec 8>"$OUT.lock"
flock -n 8 || { echo "check: waiting for another check writing $OUT"; flock 8; }
rm -rf "$OUT"; mkdir -p "$OUT"
FAILURES=()

# The matrix: "name image tests" per kernel to boot, the first kernel first.
# With --vm-tests, only --kernel, unnamed.
MATRIX=()
if [ $MATRIX_ONLY_IF_NAMED = 1 ] && [ -z "$KERNELS" ]; then
	MATRIX=("- ${KERNEL:-build/bzImage} all")
else
	LISTDIR=${LISTDIR:-tests/vm-tests.d}
	first=1
	while read -r name image set cpu; do
		[ $first = 1 ] && [ -n "$KERNEL" ] && image=$KERNEL
		first=0
		case ",${KERNELS//[[:space:]]/,}," in ,,|*",$name,"*) MATRIX+=("$name $image $set $cpu") ;; esac
	done < <(grep -Ev '^[[:space:]]*(#|$)' "$KERNELS_LIST")
	[ ${#MATRIX[@]} -gt 0 ] || { echo "check: no kernel named $KERNELS in $KERNELS_LIST" >&2; exit 2; }
fi
read -r FIRST_NAME _ <<<"${MATRIX[0]}"
declare -A IMAGE TEST_SETS CPU_MODEL
for line in "${MATRIX[@]}"; do
	read -r name image set cpu <<<"$line"
	IMAGE[$name]=$image
	TEST_SETS[$name]=$set
	CPU_MODEL[$name]=${cpu#cpu=}
done

# select_tests NAME SET PREFIX...: the selected tests of SET (all, no-patch)
# on kernel NAME ("-": unnamed) as scripts/run-tests.sh --list prints them
select_tests() { # NAME SET PREFIX...
	local name=$1 set=$2
	shift 2
	[ "$name" = - ] && name=
	KERNEL_NAME=$name VM_TESTS_DIR=$LISTDIR TEST_SET=$set scripts/run-tests.sh --list "$@"
}

# The plan: each guest's tests in $OUT/guest<id>/tests.list, and in
# $OUT/plan one line per guest, "id kernel seconds tcg", in the order to
# start them.
for line in "${MATRIX[@]}"; do
	read -r name image set _ <<<"$line"
	select_tests "$name" "$set" "$@" | awk -v k="$name" '{ print k "\t" $0 }'
done | scripts/shard-tests.py --plan "$SLOTS" "$OUT" ${GUESTS:+--guests "$GUESTS"} \
	--host-seconds "$HOST_SECONDS" "$LISTDIR/seconds.txt" "$SECONDS_SEEN" >"$OUT/plan"
PLAN=()
mapfile -t PLAN <"$OUT/plan"

# Debian's kernels (deb: images) are fetched now (a warm run fetches
# nothing) and booted by name (scripts/vm-run.sh finds them).
fetch=()
for job in "${PLAN[@]}"; do
	read -r _ name _ <<<"$job"
	[[ ${IMAGE[$name]} == deb:* ]] && [[ " ${fetch[*]} " != *" $name "* ]] && fetch+=("$name")
done
if [ ${#fetch[@]} -gt 0 ] && ! scripts/fetch-kernels.sh "${fetch[@]}"; then
	FAILURES+=("scripts/fetch-kernels.sh ${fetch[*]} failed: the tests of those not fetched did not run")
	kept=()
	for job in "${PLAN[@]}"; do
		read -r _ name _ <<<"$job"
		[[ ${IMAGE[$name]} != deb:* ]] || [ -e "build/stock/$name/vmlinuz" ] && kept+=("$job")
	done
	PLAN=("${kept[@]}")
fi
# how many guests the first kernel has: "guest 2 of 3" in a verdict
NFIRST=0
for job in "${PLAN[@]}"; do
	case $job in [0-9]*) NFIRST=$((NFIRST + 1)) ;; esac
done

# run_guest ID KERNEL NAME [--quiet]: boots guest ID (1..N or a kernel's
# name) on its list, its output streaming on stdout unless --quiet; its exit
# status in $OUT/guest<ID>.rc. NAME "-": result lines name no kernel.
# $VCPUS: the guest's vcpus (default $GUEST_CPUS).
run_guest() {
	local id=$1 kernel=$2 name=$3 quiet=${4:-} env=
	local root=()
	[ "$name" = - ] || env="KERNEL_NAME=$name"
	# a systemd set boots the Debian 12 host (scripts/systemd-host-image.sh)
	[ "${TEST_SETS[$name]:-}" = systemd ] && root=(--root debian12)
	# the guest's runner keeps the tests of the kernel's set (hw: only hw tests)
	VM_TCG_THREAD=single scripts/vm-run.sh --kernel "$kernel" --cpus "${VCPUS:-$GUEST_CPUS}" \
		${CPU_MODEL[$name]:+--cpu-model "${CPU_MODEL[$name]}"} "${root[@]}" \
		--timeout "$TIMEOUT" ${quiet:+"$quiet"} --keep "$OUT/vm$id" -- \
		${env:+"$env"} TEST_SET="${TEST_SETS[$name]:-all}" GUEST_TCG=single VM_TESTS_DIR="$OUT/guest$id" \
		scripts/run-tests.sh 2>"$OUT/vm$id-run.err"
	echo $? >"$OUT/guest$id.rc"
}

# stream_results FILE PREFIX PID: the top-level result lines of FILE as they
# come, until PID exits
stream_results() {
	tail -n +1 -F --pid="$3" "$1" 2>/dev/null |
		grep --line-buffered -E '^(ok|not ok) ' | sed -u "s/^/$2 /"
}

# start_job JOB: starts a job of the plan ("id kernel seconds vcpus") or
# the host tests ("host") in the background, its result lines streaming;
# sets JOB_PID to its pid
start_job() {
	local id name _ image prefix="[guest]  " VCPUS
	if [ "$1" = host ]; then
		scripts/run-tests.sh --host "${FILTERS[@]}" >"$OUT/host.ktap" &
		JOB_PID=$!
		stream_results "$OUT/host.ktap" "[host]   " "$JOB_PID" &
		return
	fi
	read -r id name _ VCPUS <<<"$1"
	[ "$VCPUS" = 1 ] || VCPUS=
	image=${IMAGE[$name]}
	case $id in [0-9]*) prefix="[guest $id]" ;; esac
	# a Debian kernel is booted by its name (scripts/vm-run.sh finds it);
	# a guest that dies is a failure, on every kernel: never booted again
	[[ $image == deb:* ]] && image=$name
	set -- run_guest "$id" "$image" "$name"
	if [ ${#PLAN[@]} = 1 ]; then
		"$@" &	# a single guest streams its whole output
		JOB_PID=$!
		return
	fi
	# the others their result lines (vm-run.sh --quiet prints the whole
	# output at the end: dropped)
	"$@" --quiet >/dev/null &
	JOB_PID=$!
	stream_results "$OUT/vm$id/out" "$prefix" "$JOB_PID" &
}

# guest_verdict ID: adds the guest's own failures (hang, death, splat
# outside a test) to FAILURES
guest_verdict() {
	local i=$1 ktap=$OUT/guest$1.ktap where="" status
	case $i in
	[0-9]*) [ "$NFIRST" = 1 ] || where="guest $i of $NFIRST, "
		[ "$FIRST_NAME" = - ] || where="$FIRST_NAME, $where" ;;
	*) where="$i, " ;;
	esac
	status=$(cat "$OUT/guest$i.rc" 2>/dev/null || echo 125)
	[ -f "$OUT/vm$i/out" ] && cp "$OUT/vm$i/out" "$ktap"
	cat "$OUT/vm$i-run.err" >&2
	case $status in
	124) FAILURES+=("guest hung: no result within ${TIMEOUT}s (${where}log: $OUT/vm$i/console.log)") ;;
	125) FAILURES+=("guest died: $(grep -m1 'vm-run: ' "$OUT/vm$i-run.err" | sed 's/^vm-run: //') (${where}log: $OUT/vm$i/console.log)") ;;
	126)	# a splat during a test already failed that test; count only the others
		grep -q "# kernel log shows a splat while it ran" "$ktap" 2>/dev/null ||
			FAILURES+=("kernel log shows a splat outside the tests: $(grep -A1 'splat' "$OUT/vm$i-run.err" | tail -1) (${where}log: $OUT/vm$i/dmesg)") ;;
	*) ;; # test failures: counted from the KTAP output
	esac
}

FILTERS=("$@")
# Stopped (Ctrl-C, kill), stop every guest and the host tests too: each
# guest's scripts/vm-run.sh stops its QEMU when signalled.
# descendants PID: the pids below PID, collected before any is signalled
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}
# shellcheck disable=SC2317 # run by the trap
stop_all() {
	trap - INT TERM HUP
	# shellcheck disable=SC2046 # one pid per word
	kill -TERM $(descendants $$) 2>/dev/null
	exit 143
}
trap stop_all INT TERM HUP
IDS=()
order=
for job in "${PLAN[@]}"; do
	read -r id name secs vcpus <<<"$job"
	IDS+=("$id")
	order+=" $id"
	case $id in [0-9]*) [ "$name" = - ] || order+=" ($name)" ;; esac
	order+=" ~${secs}s"
	[ "$vcpus" = 1 ] && order+=" (one vcpu)"
	order+=","
done
echo "== host tests and ${#PLAN[@]} guest(s), $SLOTS at a time (one host cpu each):${order%,}; full output in $OUT/"
# the host tests and the guests, $SLOTS at a time
QUEUE=(host "${PLAN[@]}")
running=()
for job in "${QUEUE[@]}"; do
	while [ ${#running[@]} -ge "$SLOTS" ]; do
		wait -n "${running[@]}"
		mapfile -t running < <(for p in "${running[@]}"; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
	done
	start_job "$job"
	running+=("$JOB_PID")
done
wait
for i in "${IDS[@]}"; do guest_verdict "$i"; done
scripts/shard-tests.py --remember "$SECONDS_SEEN" "$OUT"/guest*.ktap

echo "== summary"
args=()
for f in "${FAILURES[@]}"; do args+=(--failure "$f"); done
files=("$OUT/host.ktap")
for i in "${IDS[@]}"; do
	[ -f "$OUT/guest$i.ktap" ] || [ ${#FAILURES[@]} -eq 0 ] && files+=("$OUT/guest$i.ktap")
done
exec scripts/ktap-summary.py "${args[@]}" "${files[@]}"
