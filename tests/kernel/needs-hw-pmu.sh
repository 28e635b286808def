#!/bin/bash
# Run a test that needs a hardware PMU (PERF_TYPE_HARDWARE events), or report
# it skipped (exit 4, as kselftest) on a machine without one, such as QEMU TCG.
#   tests/kernel/needs-hw-pmu.sh PROGRAM [ARGS...]
set -euo pipefail
if [ ! -d /sys/bus/event_source/devices/cpu ] &&
   [ ! -d /sys/bus/event_source/devices/cpu_core ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP $(basename "$1"): no hardware PMU (/sys/bus/event_source/devices/cpu)"
	exit 4
fi
exec "$@"
