#!/bin/bash
# `make check`: host-side unit tests, then every VM test in one guest boot,
# then one summary line "N passed, N failed, N skipped".
#
#   scripts/check.sh [--kernel IMAGE] [--timeout SEC] [--vm-tests DIR]
#                    [--out DIR] [NAME-PREFIX...]
#
# --vm-tests DIR reads the guest's test lists from DIR (inside the repository)
# instead of tests/vm-tests.d; --out DIR writes results there (build/check).
#
# Fails when a test fails, when the guest hangs or dies, and when the guest's
# kernel log shows a BUG, WARNING, Oops, lockdep or KASAN report or a panic.
set -uo pipefail
cd "$(dirname "$0")/.."
KERNEL=build/bzImage
TIMEOUT=${CHECK_TIMEOUT:-2400}
LISTS=
OUT=build/check
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--vm-tests) LISTS="VM_TESTS_DIR=$2"; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) break ;;
	esac
done
# Two checks writing one result directory would mix their results: the
# second waits for the first.
mkdir -p "$(dirname "$OUT")"
exec 8>"$OUT.lock"
flock -n 8 || { echo "check: waiting for another check writing $OUT"; flock 8; }
rm -rf "$OUT"; mkdir -p "$OUT"
FAILURES=()

echo "== host tests"
scripts/run-tests.sh --host "$@" | tee "$OUT/host.ktap"

echo "== guest tests ($KERNEL)"
scripts/vm-run.sh --kernel "$KERNEL" --timeout "$TIMEOUT" --keep "$OUT/vm" -- \
	$LISTS scripts/run-tests.sh "$@" 2>"$OUT/vm-run.err"
status=$?
cat "$OUT/vm-run.err" >&2
[ -f "$OUT/vm/out" ] && cp "$OUT/vm/out" "$OUT/vm.ktap"
case $status in
0) ;;
124) FAILURES+=("guest hung: no result within ${TIMEOUT}s (log: $OUT/vm/console.log)") ;;
125) FAILURES+=("guest died: $(grep -m1 'vm-run: guest' "$OUT/vm-run.err" | sed 's/^vm-run: //') (log: $OUT/vm/console.log)") ;;
126)	# a splat during a test already failed that test; count only the others
	grep -q "# kernel log shows a splat while it ran" "$OUT/vm.ktap" 2>/dev/null ||
		FAILURES+=("kernel log shows a splat outside the tests: $(grep -A1 'splat' "$OUT/vm-run.err" | tail -1) (log: $OUT/vm/dmesg)") ;;
*) ;; # test failures: counted from the KTAP output
esac

echo "== summary"
args=()
for f in "${FAILURES[@]}"; do args+=(--failure "$f"); done
files=("$OUT/host.ktap")
[ -f "$OUT/vm.ktap" ] || [ ${#FAILURES[@]} -eq 0 ] && files+=("$OUT/vm.ktap")
exec scripts/ktap-summary.py "${args[@]}" "${files[@]}"
