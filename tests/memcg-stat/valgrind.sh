#!/bin/bash
# memcg-stat under valgrind: no leaked memory or file descriptors and no
# memory errors, with both backends and on error paths. Prints TAP.
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "1..0 # SKIP valgrind not installed"; exit 4; }
VG=(valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all
    --track-fds=yes --error-exitcode=99)
BIN=${MEMCG_STAT:-build/bin/memcg-stat}
CG=/sys/fs/cgroup/memcg-stat-vg-$$
mkdir -p "$CG/a" || exit 1
trap 'rmdir "$CG/a" "$CG"' EXIT
CASES=(
	"bpf-subtree|0|-r -f anon,slab,pgfault,usage,events.oom $CG"
	"bpf-one|0|-f anon,file,pgscan $CG/a"
	"unknown-stat|1|-f anon,no_such_stat $CG"
	"missing-cgroup|1|$CG/no-such"
)
echo "TAP version 13"
echo "1..${#CASES[@]}"
n=0 fail=0
for c in "${CASES[@]}"; do
	IFS='|' read -r name want args <<<"$c"
	n=$((n + 1))
	log=$(mktemp)
	# shellcheck disable=SC2086
	"${VG[@]}" "$BIN" $args >/dev/null 2>"$log"
	rc=$?
	fds=$(grep -o 'FILE DESCRIPTORS: [0-9]* open' "$log" | awk '{ print $3 }')
	if [ "$rc" = "$want" ] && [ "$fds" = 3 ]; then
		echo "ok $n $name"
	else
		grep -v "unhandled eBPF" "$log" | sed 's/^/# /' | tail -40
		echo "not ok $n $name # exit $rc (want $want), $fds fds open at exit (want 3)"
		fail=1
	fi
	rm -f "$log"
done
exit $fail
