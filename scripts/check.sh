#!/bin/bash
# `make check`: host-side unit tests, then every VM test, then one summary
# line "N passed, N failed, N skipped".
#
#   scripts/check.sh [--kernel IMAGE] [--timeout SEC] [--vm-tests DIR]
#                    [--out DIR] [--guests N] [--guest-cpus N] [NAME-PREFIX...]
#
# --vm-tests DIR reads the guest's test lists from DIR (inside the repository)
# instead of tests/vm-tests.d; --out DIR writes results there (build/check).
# --guests N (default $CHECK_GUESTS, else one guest per two host cpus: each
# guest has two vcpus, and on 2 host cores two guests starved each other's
# timed workloads; measured in README.md) splits the selected guest tests
# over N guests that boot side by side (scripts/shard-tests.py balances them
# by the time each took last run). The host tests run beside the guests;
# their result lines stream prefixed with [host]. With one guest its output
# streams in full; with more, each test's result line streams as it comes,
# prefixed with its guest. The full outputs are OUT/host.ktap and
# OUT/guest<i>.ktap. --guest-cpus N gives each guest N vcpus (default 2;
# the runner's self-test boots its guests with 1 beside the test guest).
#
# Fails when a test fails, when a guest hangs or dies, and when a guest's
# kernel log shows a BUG, WARNING, Oops, lockdep or KASAN report or a panic.
set -uo pipefail
cd "$(dirname "$0")/.."
KERNEL=build/bzImage
TIMEOUT=${CHECK_TIMEOUT:-2400}
LISTDIR=tests/vm-tests.d
OUT=build/check
GUESTS=${CHECK_GUESTS:-$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))}
GUEST_CPUS=2
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--vm-tests) LISTDIR=$2; shift 2 ;;
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

# Split the selected guest tests into $OUT/guest<i>/tests.list.
VM_TESTS_DIR=$LISTDIR scripts/run-tests.sh --list "$@" |
	scripts/shard-tests.py "$GUESTS" "$OUT" "$LISTDIR/seconds.txt" "$SECONDS_SEEN" >"$OUT/guests"
NGUESTS=$(cat "$OUT/guests")

# run_guest I [--quiet]: boots guest I on its list (its output streams on
# stdout unless --quiet); its exit status in $OUT/guest<I>.rc
run_guest() {
	local i=$1 quiet=${2:-}
	scripts/vm-run.sh --kernel "$KERNEL" --cpus "$GUEST_CPUS" --timeout "$TIMEOUT" $quiet --keep "$OUT/vm$i" -- \
		VM_TESTS_DIR="$OUT/guest$i" scripts/run-tests.sh 2>"$OUT/vm$i-run.err"
	echo $? >"$OUT/guest$i.rc"
}

# stream_results FILE PREFIX PID: the top-level result lines of FILE as they
# come, until PID exits
stream_results() {
	tail -n +1 -F --pid="$3" "$1" 2>/dev/null |
		grep --line-buffered -E '^(ok|not ok) ' | sed -u "s/^/$2 /"
}

# guest_verdict I: adds the guest's own failures (hang, death, splat outside
# a test) to FAILURES
guest_verdict() {
	local i=$1 ktap=$OUT/guest$1.ktap where="" status
	[ "$NGUESTS" = 1 ] || where="guest $i of $NGUESTS, "
	status=$(cat "$OUT/guest$i.rc" 2>/dev/null || echo 125)
	[ -f "$OUT/vm$i/out" ] && cp "$OUT/vm$i/out" "$ktap"
	cat "$OUT/vm$i-run.err" >&2
	case $status in
	124) FAILURES+=("guest hung: no result within ${TIMEOUT}s (${where}log: $OUT/vm$i/console.log)") ;;
	125) FAILURES+=("guest died: $(grep -m1 'vm-run: guest' "$OUT/vm$i-run.err" | sed 's/^vm-run: //') (${where}log: $OUT/vm$i/console.log)") ;;
	126)	# a splat during a test already failed that test; count only the others
		grep -q "# kernel log shows a splat while it ran" "$ktap" 2>/dev/null ||
			FAILURES+=("kernel log shows a splat outside the tests: $(grep -A1 'splat' "$OUT/vm$i-run.err" | tail -1) (${where}log: $OUT/vm$i/dmesg)") ;;
	*) ;; # test failures: counted from the KTAP output
	esac
}

echo "== host tests and $NGUESTS guest(s) ($KERNEL) side by side; full output in $OUT/"
scripts/run-tests.sh --host "$@" >"$OUT/host.ktap" &
pids=($!)
stream_results "$OUT/host.ktap" "[host]   " "$!" &
if [ "$NGUESTS" = 1 ]; then
	run_guest 1
else
	for i in $(seq "$NGUESTS"); do
		run_guest "$i" --quiet >/dev/null &
		pids+=($!)
		stream_results "$OUT/vm$i/out" "[guest $i]" "$!" &
	done
fi
wait "${pids[@]}"
wait
for i in $(seq "$NGUESTS"); do guest_verdict "$i"; done
scripts/shard-tests.py --remember "$SECONDS_SEEN" "$OUT"/guest*.ktap

echo "== summary"
args=()
for f in "${FAILURES[@]}"; do args+=(--failure "$f"); done
files=("$OUT/host.ktap")
for i in $(seq "$NGUESTS"); do
	[ -f "$OUT/guest$i.ktap" ] || [ ${#FAILURES[@]} -eq 0 ] && files+=("$OUT/guest$i.ktap")
done
exec scripts/ktap-summary.py "${args[@]}" "${files[@]}"
