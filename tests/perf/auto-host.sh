#!/bin/bash
# Host test: perf stat --for-each-cgroup's automatic backend on the host's
# own kernel, which has no cgroup ioctls (an unpatched distribution kernel):
# perf must pick events, load no BPF, count, and say why with -v.  Skipped
# (exit 4) when perf cannot count cgroups here (no cgroup2, no permission).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
PERF=${PERF:-build/bin/perf}
out=$(timeout 120 "$PERF" stat -v -a --for-each-cgroup / -e cpu-clock -- sleep 0.2 2>&1)
rc=$?
# shellcheck disable=SC2001 # a prefix on every line, not one substitution
sed 's/^/# /' <<<"$out"
line=$(echo "$out" | grep -m1 '^cgroup backend')
if [ $rc -ne 0 ] && [ -z "$line" ]; then
	echo "# SKIP: perf stat --for-each-cgroup does not run here"
	exit 4
fi
case $line in
"cgroup backend: shared (auto: "*)
	echo "# this host's kernel has the cgroup ioctls: auto picked shared" ;;
"cgroup backend: events (auto: shared unavailable: "*"BPF backends bperf and rstat only on request"*)
	;;
*)
	echo "not ok: auto picked another backend, or did not say why: '$line'"
	exit 1 ;;
esac
if ! echo "$out" | grep -qE '^ +[0-9.,]+ +msec cpu-clock +/ '; then
	echo "not ok: no cpu-clock count for /"
	exit 1
fi
echo "ok: $line"
