#!/bin/bash
# `make check`: host-side unit tests, then every VM test on every kernel of
# the matrix, then one summary line "N passed, N failed, N skipped".
#
#   scripts/check.sh [--kernel IMAGE] [--kernels NAME,...] [--timeout SEC]
#                    [--vm-tests DIR] [--out DIR] [--guests N]
#                    [--guest-cpus N] [NAME-PREFIX...]
#
# The kernel matrix, tests/kernels.list: one line per kernel,
#   name  image  tests
# e.g. "stock-6.1  deb:linux-image-6.1.0-*-cloud-amd64  no-patch". The image
# is a path in the repository (a kernel this project builds) or deb:GLOB,
# Debian's newest package matching GLOB, which scripts/fetch-kernels.sh
# downloads into build/stock/<name>/ (never installs it). "all" runs every
# test of the lists, "no-patch" only the tests whose list line carries the
# option no-patch (they need no kernel patch of ours: the rstat backend,
# libcgcount's auto, perf stat on events and rstat, the memcg reader). A
# patched 7.3 is one more line: "patched-7.3  build/bzImage-7.3  all".
# Every guest result line names its kernel: "ok 12 stock-6.1: bpf-rstat-cgrstat";
# a test sees its kernel's name in $KERNEL_NAME. A kernel that no selected
# test runs on is not booted.
#
# --kernel IMAGE boots IMAGE for the first line (default build/bzImage; make
# check-debug passes the debug kernel). --kernels NAME,... (default
# $CHECK_KERNELS, else every line) picks lines by name. --vm-tests DIR
# reads the guest's test lists from DIR (inside the repository) instead of
# tests/vm-tests.d and, without --kernels, boots only --kernel, unnamed
# (the runner's self-test); --out DIR writes results there (build/check).
# --guests N (default $CHECK_GUESTS, else one guest per two host cpus: each
# guest has two vcpus, and on 2 host cores two guests starved each other's
# timed workloads; measured in README.md) splits the first kernel's
# selected guest tests over N guests that boot side by side
# (scripts/shard-tests.py balances them by the time each took last run).
# The host tests run beside them; their result lines stream prefixed with
# [host]. The other kernels boot one guest each, after the first kernel's
# guests, N at a time; Debian's kernels run single-threaded TCG (one host
# cpu per guest, see VM_TCG_THREAD in scripts/vm-run.sh), as many at once
# as the host has cpus ($CHECK_STOCK_GUESTS overrides). With one guest its output streams in full; otherwise
# each test's result line streams as it comes, prefixed with its guest. The
# full outputs are OUT/host.ktap and OUT/guest<id>.ktap (id: 1..N, then
# the kernel's name). --guest-cpus N gives each guest N vcpus (default 2;
# the runner's self-test boots its guests with 1 beside the test guest).
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
GUESTS=${CHECK_GUESTS:-$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))}
STOCK_GUESTS=${CHECK_STOCK_GUESTS:-$(nproc)}
GUEST_CPUS=2
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift 2 ;;
	--kernels) KERNELS=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--vm-tests) LISTDIR=$2; MATRIX_ONLY_IF_NAMED=1; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--guests) GUESTS=$2; shift 2 ;;
	--guest-cpus) GUEST_CPUS=$2; shift 2 ;;
	*) break ;;
	esac
done
SECONDS_SEEN=build/test-seconds.txt
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
	while read -r name image set; do
		[ $first = 1 ] && [ -n "$KERNEL" ] && image=$KERNEL
		first=0
		case ",${KERNELS//[[:space:]]/,}," in ,,|*",$name,"*) MATRIX+=("$name $image $set") ;; esac
	done < <(grep -Ev '^[[:space:]]*(#|$)' "$KERNELS_LIST")
	[ ${#MATRIX[@]} -gt 0 ] || { echo "check: no kernel named $KERNELS in $KERNELS_LIST" >&2; exit 2; }
fi

# select_tests NAME SET PREFIX...: the selected tests of SET (all, no-patch)
# on kernel NAME ("-": unnamed) as scripts/run-tests.sh --list prints them
select_tests() { # NAME SET PREFIX...
	local name=$1 set=$2
	shift 2
	[ "$name" = - ] && name=
	KERNEL_NAME=$name VM_TESTS_DIR=$LISTDIR TEST_SET=$set scripts/run-tests.sh --list "$@"
}

# The first kernel's tests split into $OUT/guest<i>/tests.list, i = 1..N;
# each other kernel's into $OUT/guest<name>/tests.list.
read -r FIRST_NAME FIRST_IMAGE FIRST_SET <<<"${MATRIX[0]}"
select_tests "$FIRST_NAME" "$FIRST_SET" "$@" |
	scripts/shard-tests.py "$GUESTS" "$OUT" "$LISTDIR/seconds.txt" "$SECONDS_SEEN" >"$OUT/guests"
NGUESTS=$(cat "$OUT/guests")
[ "$(wc -l <"$OUT/guest1/tests.list")" -gt 0 ] || NGUESTS=0
OTHERS=()
for line in "${MATRIX[@]:1}"; do
	read -r name image set <<<"$line"
	mkdir -p "$OUT/guest$name"
	select_tests "$name" "$set" "$@" | cut -f3 >"$OUT/guest$name/tests.list"
	[ -s "$OUT/guest$name/tests.list" ] && OTHERS+=("$line")
done

# Debian's kernels (deb: images) are fetched now (a warm run fetches
# nothing) and booted by name (scripts/vm-run.sh finds them).
fetch=()
for line in "$FIRST_NAME $FIRST_IMAGE" "${OTHERS[@]}"; do
	read -r name image set <<<"$line"
	case $image in deb:*) fetch+=("$name") ;; esac
done
if [ ${#fetch[@]} -gt 0 ] && ! scripts/fetch-kernels.sh "${fetch[@]}"; then
	FAILURES+=("scripts/fetch-kernels.sh ${fetch[*]} failed: the tests of those not fetched did not run")
	kept=()
	for line in "${OTHERS[@]}"; do
		read -r name image set <<<"$line"
		[ -e "build/stock/$name/vmlinuz" ] || [[ $image != deb:* ]] && kept+=("$line")
	done
	OTHERS=("${kept[@]}")
	[[ $FIRST_IMAGE != deb:* ]] || [ -e "build/stock/$FIRST_NAME/vmlinuz" ] || NGUESTS=0
fi
# a Debian kernel first (make check K=stock-6.17) runs single-threaded too
FIRST_TCG=multi
[[ $FIRST_IMAGE != deb:* ]] || { FIRST_IMAGE=$FIRST_NAME; FIRST_TCG=single; }

# run_guest ID KERNEL NAME [--quiet]: boots guest ID (1..N or a kernel's
# name) on its list, its output streaming on stdout unless --quiet; its exit
# status in $OUT/guest<ID>.rc. NAME "-": result lines name no kernel.
run_guest() {
	local id=$1 kernel=$2 name=$3 quiet=${4:-} env=
	[ "$name" = - ] || env="KERNEL_NAME=$name"
	scripts/vm-run.sh --kernel "$kernel" --cpus "$GUEST_CPUS" --timeout "$TIMEOUT" ${quiet:+"$quiet"} --keep "$OUT/vm$id" -- \
		${env:+"$env"} VM_TESTS_DIR="$OUT/guest$id" scripts/run-tests.sh 2>"$OUT/vm$id-run.err"
	echo $? >"$OUT/guest$id.rc"
}

# run_debian_guest ID KERNEL NAME: a Debian kernel's guest, booted once more
# if its kernel died (exit 125 with a panic on the console), a death that
# only single-threaded TCG's emulation has shown so far (a general
# protection fault in the slab allocator with impossible EFLAGS, on 6.18,
# in a process that had passed every test before). The first death stays
# visible: its console log is kept and named on stderr.
run_debian_guest() {
	local id=$1
	VM_TCG_THREAD=single run_guest "$@" --quiet
	[ "$(cat "$OUT/guest$id.rc")" = 125 ] && grep -q "Kernel panic" "$OUT/vm$id/console.log" 2>/dev/null || return 0
	cp "$OUT/vm$id/console.log" "$OUT/vm$id-first-death.log"
	echo "[guest]   # $3: the guest died ($(grep -m1 'Kernel panic' "$OUT/vm$id-first-death.log" | sed 's/^\[[^]]*\] //')); booting it once more (log: $OUT/vm$id-first-death.log)" >&2
	VM_TCG_THREAD=single run_guest "$@" --quiet
}

# stream_results FILE PREFIX PID: the top-level result lines of FILE as they
# come, until PID exits
stream_results() {
	tail -n +1 -F --pid="$3" "$1" 2>/dev/null |
		grep --line-buffered -E '^(ok|not ok) ' | sed -u "s/^/$2 /"
}

# run_others: boots each other kernel's guest, GUESTS at a time
run_others() {
	local line name image set running=() at_once kind last_kind=
	for line in "${OTHERS[@]}"; do
		read -r name image set <<<"$line"
		# a Debian kernel's guest takes one host cpu: as many at once as
		# cpus; ours take two (multi-threaded TCG) and never share the host
		# with a Debian one, whose timed workloads they would starve
		at_once=$GUESTS kind=ours
		[[ $image != deb:* ]] || { at_once=$STOCK_GUESTS; kind=deb; }
		if [ -n "$last_kind" ] && [ "$kind" != "$last_kind" ] && [ ${#running[@]} -gt 0 ]; then
			wait "${running[@]}"
			running=()
		fi
		last_kind=$kind
		if [ ${#running[@]} -ge "$at_once" ]; then
			wait -n "${running[@]}"
			mapfile -t running < <(for p in "${running[@]}"; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
		fi
		if [[ $image == deb:* ]]; then
			image=$name
			# single-threaded TCG, one host cpu per guest (scripts/vm-run.sh)
			run_debian_guest "$name" "$image" "$name" >/dev/null &
		else
			run_guest "$name" "$image" "$name" --quiet >/dev/null &
		fi
		running+=($!)
		stream_results "$OUT/vm$name/out" "[guest]  " "$!" &
	done
	wait
}

# guest_verdict ID: adds the guest's own failures (hang, death, splat
# outside a test) to FAILURES
guest_verdict() {
	local i=$1 ktap=$OUT/guest$1.ktap where="" status
	case $i in
	[0-9]*) [ "$NGUESTS" = 1 ] || where="guest $i of $NGUESTS, "
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

IDS=()
for i in $(seq "$NGUESTS"); do IDS+=("$i"); done
for line in "${OTHERS[@]}"; do IDS+=("${line%% *}"); done
others=
[ ${#OTHERS[@]} -eq 0 ] || others=", then $(for l in "${OTHERS[@]}"; do printf '%s ' "${l%% *}"; done)"
echo "== host tests and $NGUESTS guest(s) ($FIRST_IMAGE) side by side${others% }; full output in $OUT/"
scripts/run-tests.sh --host "$@" >"$OUT/host.ktap" &
pids=($!)
stream_results "$OUT/host.ktap" "[host]   " "$!" &
(
	if [ "$NGUESTS" = 1 ]; then
		VM_TCG_THREAD=$FIRST_TCG run_guest 1 "$FIRST_IMAGE" "$FIRST_NAME"
	elif [ "$NGUESTS" -gt 1 ]; then
		for i in $(seq "$NGUESTS"); do
			VM_TCG_THREAD=$FIRST_TCG run_guest "$i" "$FIRST_IMAGE" "$FIRST_NAME" --quiet >/dev/null &
			stream_results "$OUT/vm$i/out" "[guest $i]" "$!" &
		done
		wait
	fi
	run_others
) &
pids+=($!)
wait "${pids[@]}"
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
