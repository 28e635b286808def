#!/bin/bash
# Report kmemleak's findings as a failure. Runs last in the guest; kernels
# without kmemleak (the default `make check` kernel) skip it.
# kmemleak reports an object once it has been unreferenced for 5 seconds
# across a scan, so scan, wait, scan again.
# No set -e or pipefail: the report is cut short by head, and read whole.
set -u
KMEMLEAK=/sys/kernel/debug/kmemleak
echo "TAP version 13"
if [ ! -e $KMEMLEAK ]; then
	echo "1..0 # SKIP kernel without CONFIG_DEBUG_KMEMLEAK"
	exit 4
fi
echo "1..1"
echo scan >$KMEMLEAK
sleep 6
echo scan >$KMEMLEAK
report=$(cat $KMEMLEAK)
if [ -z "$report" ]; then
	echo "ok 1 kmemleak reports no unreferenced objects"
	exit 0
fi
echo "$report" | sed 's/^/# /' | head -120
echo "not ok 1 kmemleak reports $(grep -c '^unreferenced object' <<<"$report") unreferenced objects"
exit 1
