#!/bin/bash
# Host test (TAP): perf's rstat backend runs libcgrstat's own BPF program
# and loader. perf/apply-patches.sh copies lib/cgrstat's files (and the
# helpers of lib/cgutil the loader calls) into the
# tools/perf it builds (build/perf-src); this checks that each copy there is
# byte for byte the library's, and that no patch of perf/patches carries a
# program or loader of its own for the rstat backend (a second copy would
# drift from the one the library's tests check).
#   tests/perf/cgrstat-copies.sh
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
PERF_TREE=build/perf-src
[ -d "$PERF_TREE/tools/perf" ] || { echo "no $PERF_TREE: make perf"; exit 1; }
mapfile -t copies < <(sed -n '/^CGRSTAT_COPIES=(/,/^)/s/^\t"\(.*\)"$/\1/p' perf/apply-patches.sh)

echo "TAP version 13"
echo "1..$(( ${#copies[@]} + 2 ))"
check "perf/apply-patches.sh names the program, its kfunc and maps headers, the loader's three files and three headers, and cgutil's cgroup.c, perf_open.c and cgutil.h (${#copies[@]} copies)" \
	[ "${#copies[@]}" -eq 12 ]
for c in "${copies[@]}"; do
	lib=lib/${c%% *}
	copy=$PERF_TREE/${c#* }
	check "$copy is $lib" cmp "$lib" "$copy"
done
own=$(grep -h '^+++ b/tools/perf/util/' perf/patches/*.patch |
	grep -E 'rstat.*\.bpf\.[ch]|/cgrstat(_[a-z]+)?\.[ch]$|/cgutil(_[a-z_]+)?\.[ch]$' || true)
check "no perf patch carries its own rstat program or loader${own:+: $own}" [ -z "$own" ]
exit "$fail"
