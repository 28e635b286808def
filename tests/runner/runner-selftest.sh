#!/bin/bash
# Self-test of `make check`'s runner: a failing test, a guest that panics and
# a guest that hangs must each make the check fail with a message that says
# what happened, a kernel report (here sysrq-l's backtraces) must fail the
# test during which it appeared, and every case of every program must be
# counted. Prints TAP.
#   tests/runner/runner-selftest.sh [--kernel IMAGE]
set -uo pipefail
cd "$(dirname "$0")/../.."
KERNEL=build/bzImage
[ "${1:-}" = --kernel ] && KERNEL=$2
WORK=build/tests/runner
rm -rf "$WORK"
mkdir -p "$WORK/empty"
n=0
failed=0

# run_case NAME LIST-CONTENT TIMEOUT: runs check.sh on a one-off test list,
# leaves its output in $WORK/NAME.log and its exit status in $rc.
run_case() {
	local name=$1 list=$2 timeout=$3
	mkdir -p "$WORK/$name.d"
	printf '%s\n' "$list" >"$WORK/$name.d/cases.list"
	HOST_TESTS= HOST_TESTS_DIR="$WORK/empty" scripts/check.sh --kernel "$KERNEL" \
		--timeout "$timeout" --vm-tests "$WORK/$name.d" --out "$WORK/$name.out" \
		>"$WORK/$name.log" 2>&1
	rc=$?
}

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
log_has() { grep -qE -- "$2" "$WORK/$1.log"; }

echo "TAP version 13"
echo "1..10"

run_case mixed $'one true\ntwo  echo ok 1 inner; echo ok 2 inner2\nbad  echo "expected failure" >&2; exit 3' 300
expect mixed "exit status non-zero" test $rc != 0
expect mixed "counts every case of every program" log_has mixed '^3 passed, 1 failed'
expect mixed "names the failing test" log_has mixed '^FAILED: bad: not ok 3 bad # exit status 3'

run_case splat $'quiet true\nsplatter  echo l > /proc/sysrq-trigger; sleep 1' 300
expect splat "exit status non-zero" test $rc != 0
expect splat "fails the test during which the kernel reported, once" log_has splat '^1 passed, 1 failed'
expect splat "names it" log_has splat '^FAILED: splatter: not ok 2 splatter # kernel log shows a splat while it ran'

run_case panic $'crash  echo c > /proc/sysrq-trigger\nnever-run true' 300
expect panic "exit status non-zero" test $rc != 0
expect panic "says the guest panicked" log_has panic 'guest died: guest kernel panicked'

run_case hang $'timeout=3000 sleeper  sleep 3000' 25
expect hang "exit status non-zero" test $rc != 0
expect hang "says the guest hung" log_has hang 'guest hung: no result within 25s'
exit $failed
