#!/bin/bash
# Run a libcgcount test program, or report it skipped (exit 4, as kselftest)
# on a kernel whose classic per-cgroup cpu-clock events count 0 (Linux 6.16,
# see tests/perf/classic-clock.sh): cgcount_test holds every backend
# against those events (the events backend is them), so its verdicts there
# would say nothing about the library. rstat on such a kernel is checked by
# cgrstat and perf-stat-rstat-cpustat against cpu.stat.
#   tests/cgcount/needs-classic-clock.sh PROGRAM [ARGS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/perf/classic-clock.sh
source tests/perf/classic-clock.sh
if reason=$(classic_clock_broken); then
	echo "TAP version 13"
	echo "1..0 # SKIP $(basename "$1"): $reason"
	exit 4
fi
exec "$@"
