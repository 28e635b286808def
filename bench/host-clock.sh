# shellcheck shell=bash
# No set -e or pipefail here: a sourced file keeps the options of its caller.
# Sourced by bench/ scripts in the guest: host_ns prints the clock that
# spans are timed with, in ns.
# Instruction-exact guest (BENCH_EXACT=1, scripts/vm-run.sh --exact): the
# guest's own clock, which counts instructions (1 ns = 1 instruction).
# Otherwise the host's clock: without scripts/vm-run.sh's tsc_early_khz the
# TCG guest's clock (refined-jiffies: the TSC fails calibration) drifts and
# jumps against real time by up to several times under host load, so
# appending to a file on the 9p share makes the host set its mtime, which
# stat reads back (a few ms).
HOST_CLOCK_FILE=${HOST_CLOCK_FILE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/bench/.host-clock-$$}
if [ "${BENCH_EXACT:-0}" = 1 ]; then
	host_ns() { date +%s%N; }
else
	host_ns() {
		echo >>"$HOST_CLOCK_FILE"
		stat -c %.9Y "$HOST_CLOCK_FILE" | tr -d .
	}
fi
