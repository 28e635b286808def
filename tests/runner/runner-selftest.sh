#!/bin/bash
# Self-test of `make check`'s runner: a failing test, a guest that panics
# (ours, or a Debian kernel's, which is not booted again) and a guest that
# hangs must each make the check fail with a message that says what
# happened, a kernel report (here sysrq-l's backtraces) must fail the
# test during which it appeared, tests run at once ("parallel") must be
# reported each under its own name, every case of every program must be
# counted, and a test for one kernel ("kernel=NAME") must be selected on
# that kernel only. Prints TAP.
#   tests/runner/runner-selftest.sh [--kernel IMAGE]
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
KERNEL=build/bzImage
[ "${1:-}" = --kernel ] && KERNEL=$2
WORK=build/tests/runner
# the first Debian x86 kernel of the matrix (scripts/check.sh fetches it)
DEBIAN_KERNEL=$(awk '$1 ~ /^stock-/ && $1 !~ /arm64/ { print $1; exit }' tests/kernels.list)
rm -rf "$WORK"
mkdir -p "$WORK/empty"
n=0
failed=0

# run_case NAME LIST-CONTENT TIMEOUT [GUESTS [KERNEL-NAME]]: runs check.sh on
# a one-off test list in GUESTS guests (default 1) of our kernel, or of
# KERNEL-NAME of tests/kernels.list, in the background; leaves its
# output in $WORK/NAME.log and its exit status in $WORK/NAME.rc. The guests
# are independent: they boot side by side, beside make check's test guest.
# One vcpu each: with more vcpu threads than host cpus, a guest's vcpus spin
# on each other's locks and IPIs while preempted (the two-guest case took
# 23-49 s of cpu with two vcpus each, wasting the test guest's cpu time).
run_case() {
	local name=$1 list=$2 timeout=$3 guests=${4:-1} kernel=(--kernel "$KERNEL")
	[ -n "${5:-}" ] && kernel=(--kernels "$5")
	mkdir -p "$WORK/$name.d"
	printf '%s\n' "$list" >"$WORK/$name.d/cases.list"
	(
		HOST_TESTS='' HOST_TESTS_DIR="$WORK/empty" scripts/check.sh "${kernel[@]}" \
			--timeout "$timeout" --vm-tests "$WORK/$name.d" --out "$WORK/$name.out" \
			--guests "$guests" --guest-cpus 1 \
			>"$WORK/$name.log" 2>&1
		echo $? >"$WORK/$name.rc"
	) &
}
rc_of() { cat "$WORK/$1.rc"; }

# expect NAME DESCRIPTION CONDITION...: one TAP line
expect() {
	local name=$1 what=$2
	shift 2
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $name: $what"
	else
		echo "not ok $n $name: $what"
		failed=1
		sed 's/^/# /' "$WORK/$name.log" | tail -25
	fi
}
# shellcheck disable=SC2317 # called through expect
log_has() { grep -qE -- "$2" "$WORK/$1.log"; }

echo "TAP version 13"
echo "1..23"

# A failing test and a kernel report share one guest; a panic and a hang
# need a guest each.
run_case mixed $'one true\ntwo  echo ok 1 inner; echo ok 2 inner2\nbad  echo "expected failure" >&2; exit 3\nsplatter  echo l > /proc/sysrq-trigger; sleep 1\nquiet true\nparallel par-a  sleep 2; echo a-out\nparallel par-b  echo "expected failure" >&2; exit 5' 300
run_case panic $'crash  echo c > /proc/sysrq-trigger\nnever-run true' 300
run_case hang $'timeout=3000 sleeper  sleep 3000' 12
# make check splits its tests over two guests: one of them panics
run_case split $'one  true\ncrash  echo c > /proc/sysrq-trigger' 300 2
# a Debian kernel's guest that panics once: booted again, it would pass
run_case debian-panic "no-patch crash-once  [ -e $WORK/crashed ] || { touch $WORK/crashed; echo c > /proc/sysrq-trigger; }" 300 1 "$DEBIAN_KERNEL"
wait

expect mixed "exit status non-zero" test "$(rc_of mixed)" != 0
expect mixed "counts every case of every program" log_has mixed '^5 passed, 3 failed'
expect mixed "names the failing test" log_has mixed '^FAILED: bad: not ok 3 bad # exit status 3'
expect mixed "fails the test during which the kernel reported, only it" \
	log_has mixed '^ok 5 quiet'
expect mixed "names it" log_has mixed '^FAILED: splatter: not ok 4 splatter # kernel log shows a splat while it ran'
expect mixed "reports a test run at once with another" log_has mixed '^ok 6 par-a'
expect mixed "names the failing one" log_has mixed '^FAILED: par-b: not ok 7 par-b # exit status 5'

expect panic "exit status non-zero" test "$(rc_of panic)" != 0
expect panic "says the guest panicked" log_has panic 'guest died: guest kernel panicked'

expect debian-panic "exit status non-zero" test "$(rc_of debian-panic)" != 0
expect debian-panic "says the guest panicked" log_has debian-panic "guest died: guest kernel panicked"
expect debian-panic "shows the end of its console" log_has debian-panic "Call Trace:"
expect debian-panic "does not boot it again" log_has debian-panic "^0 passed, [1-9]"

expect hang "exit status non-zero" test "$(rc_of hang)" != 0
expect hang "says the guest hung" log_has hang 'guest hung: no result within 12s'
expect split "exit status non-zero" test "$(rc_of split)" != 0
expect split "says which guest panicked" log_has split 'guest died: guest kernel panicked.*guest [12] of 2'
expect split "counts the other guest's test" log_has split '^1 passed, 2 failed'
# "kernel=NAME": selected on kernel NAME only (scripts/check.sh passes each
# kernel's name to the listing), never on an unnamed one; NAME may be a
# pattern, or several separated by commas
mkdir -p "$WORK/only.d"
printf '%s\n' 'everywhere  true' 'kernel=k1 no-patch only-k1  true' \
	'kernel=k* no-patch on-k  true' 'kernel=j1,k2 on-j1-k2  true' >"$WORK/only.d/cases.list"
# shellcheck disable=SC2317 # called through listed_is
listed() { # KERNEL_NAME: the names the runner lists there, on one line
	KERNEL_NAME=$1 VM_TESTS_DIR="$WORK/only.d" scripts/run-tests.sh --list | cut -f1 | paste -sd' '
}
# shellcheck disable=SC2317 # called through expect
listed_is() { [ "$(listed "$1")" = "$2" ] || { echo "# listed on '$1': $(listed "$1")"; false; }; }
: >"$WORK/only.log"
expect only "a kernel=k1 test is listed on k1" listed_is k1 "everywhere only-k1 on-k"
expect only "and not on another kernel" listed_is k2 "everywhere on-k on-j1-k2"
expect only "nor on an unnamed one" listed_is "" "everywhere"
expect only "a kernel=k* test is listed on every kernel whose name matches, only there" \
	listed_is j1 "everywhere on-j1-k2"
expect only "a kernel=j1,k2 test on each kernel named, only there" listed_is j2 "everywhere"
exit $failed
