#!/bin/bash
# perf's "perf stat --for-each-cgroup backends agree" (perf/patches/0004)
# with the backends that must take part: that test compares every backend
# this kernel and perf support and only reports the others unsupported,
# which would pass on a kernel where the rstat backend does not load. The
# events backend and the rstat backend (no kernel patch needed) are
# required on every kernel (CGROUP_BACKENDS_REQUIRED adds more).
#   tests/perf/cgroup-backends.sh [--kernel-dependent]
# --kernel-dependent: only what depends on the kernel, for a kernel whose
# perf backends were all checked on another: the rstat backend against
# events, in table output and at intervals (repeated reads); which format
# prints the counts is perf's own code, the same on every kernel.
# No set -e: perf's exit status and output are the verdict, read below.
set -u
cd "$(dirname "$0")/../.." || exit 1
required="events rstat ${CGROUP_BACKENDS_REQUIRED:-}"
if [ "${1:-}" = --kernel-dependent ]; then
	export PERF_TEST_CGROUP_BACKENDS="rstat ${CGROUP_BACKENDS_REQUIRED:-}"
	export PERF_TEST_CGROUP_FORMATS="table interval"
fi
# shellcheck source=tests/perf/classic-clock.sh
source tests/perf/classic-clock.sh
# every backend is compared with the events backend: without it, nothing to
# compare with (tests/perf/rstat-cpustat.sh compares rstat with cpu.stat)
if reason=$(classic_clock_broken); then
	echo "# SKIP the events backend, the reference here, is broken on $reason"
	exit 4
fi
# -vv: the test's own output (its "backends:" line) also when it passes
out=$(PERF_TEST_VERBOSE=-vv tests/perf/perf-test.sh "perf stat --for-each-cgroup backends agree" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || exit $rc
backends=$(echo "$out" | sed -n 's/^backends://p' | tail -1)
missing=
for b in $required; do
	case " $backends " in *" $b "*) ;; *) missing+=" $b" ;; esac
done
if [ -n "$missing" ]; then
	echo "FAIL: required backend(s)$missing did not take part (ran:$backends)"
	echo "$out" | grep "not supported here" | sed 's/^/  /'
	exit 1
fi
echo "ok: required backends ($(xargs <<<"$required")) all agreed"
