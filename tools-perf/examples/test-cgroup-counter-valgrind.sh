#!/bin/bash
# Guest test (TAP): cgroup-counter runs clean under valgrind (no leaks, no
# invalid accesses). Exit 4 (skip) when valgrind or the example is missing.
BIN=${CGROUP_COUNTER:-build/bin/cgroup-counter}
echo "TAP version 13"
echo "1..1"
if [ ! -x "$BIN" ] || ! command -v valgrind >/dev/null; then
	echo "ok 1 # SKIP valgrind or $BIN missing"
	exit 4
fi
if valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
	--error-exitcode=9 "$BIN" -e context-switches /sys/fs/cgroup -- sleep 0.2 2>&1 |
	sed 's/^/# /'; [ "${PIPESTATUS[0]}" -eq 0 ]; then
	echo "ok 1 cgroup-counter is valgrind clean"
else
	echo "not ok 1 cgroup-counter is valgrind clean"
	exit 1
fi
