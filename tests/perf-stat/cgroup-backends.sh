#!/bin/bash
# perf's "perf stat --for-each-cgroup backends agree" (perf/patches/0004)
# with the backends that must take part: that test compares every backend
# this kernel and perf support and only reports the others unsupported,
# which would pass on a kernel where the rstat backend does not load. The
# events backend and the rstat backend (no kernel patch needed) are
# required on every kernel (CGROUP_BACKENDS_REQUIRED adds more).
#   tests/perf-stat/cgroup-backends.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
required="events rstat ${CGROUP_BACKENDS_REQUIRED:-}"
# -vv: the test's own output (its "backends:" line) also when it passes
out=$(PERF_TEST_VERBOSE=-vv tests/perf-stat/perf-test.sh "perf stat --for-each-cgroup backends agree" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || exit $rc
backends=$(echo "$out" | sed -n 's/^backends://p' | tail -1)
missing=
for b in $required; do
	case " $backends " in *" $b "*) ;; *) missing+=" $b" ;; esac
done
# perf's rstat backend (perf/patches/0003) carries its own copy of the BPF
# program, without libcgrstat's loader for 6.1-6.3 and 7.0+ (the library's
# own tests run there): where the kernel refuses that copy, say so as a skip.
if [ "$missing" = " rstat" ] && grep -q "backend rstat not supported here: .*BPF program load failed" <<<"$out"; then
	echo "# SKIP perf's rstat backend does not load on $(uname -r): perf's copy of the BPF program lacks libcgrstat's fixes for this kernel"
	exit 4
fi
if [ -n "$missing" ]; then
	echo "FAIL: required backend(s)$missing did not take part (ran:$backends)"
	echo "$out" | grep "not supported here" | sed 's/^/  /'
	exit 1
fi
echo "ok: required backends ($(xargs <<<"$required")) all agreed"
