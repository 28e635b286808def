#!/bin/bash
# Guest test (TAP) of how perf stat --for-each-cgroup chooses its backend,
# against what perf's users expect:
#  - auto loads no BPF: on this kernel it picks shared and -v says why, with
#    an event group too (shared keeps groups);
#  - the BPF backends run when asked: --bpf-counters (bperf), perf config
#    stat.cgroup-backend (rstat, with an event group too), each named with
#    what asked for it; an explicit --cgroup-backend, auto included,
#    overrides perf config; the old name "bpf" is refused;
#  - 1000 cgroups under a 1024-fd limit perf cannot raise: shared and rstat
#    count them all (the busy one's cpu-clock at least 0.5 s of the 2 s and
#    at most its cpu.stat + 5 %) with fewer than 100 fds open; the events
#    backend needs E x G x C fds (3000 here) and says that the fd limit was
#    reached;
#  - the same with a soft limit of 1024 under a hard one of 8192: the events
#    backend raises the soft limit to the hard one, as upstream perf does
#    (evsel.c: rlimit__increase_nofile() at EMFILE), and counts them all with
#    more than 1024 fds open.
# (Event groups on each backend: tests/perf/event-groups.sh.)
# PERF_BACKEND_CHOICE_CGROUPS sets the number of cgroups (default 1000).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
NR=${PERF_BACKEND_CHOICE_CGROUPS:-1000}
CG=${CGROOT:-/sys/fs/cgroup}
TOP=choice-$$
tmp=$(mktemp -d)
pids=()

# shellcheck source=tests/lib/tap.sh
source "$(dirname "$0")/../lib/tap.sh"
: "${fail:=0}"	# set by tap.sh
note() { sed 's/^/# /' "$@"; }

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	find "$CG/$TOP" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# pstat NAME ARGS...: perf stat -a -v ARGS... -- sleep 0.3; status in $rc,
# stderr (where -v and the counts go) in $tmp/NAME
pstat() {
	local name=$1
	shift
	perf stat -a -v "$@" -- sleep 0.3 >"$tmp/$name" 2>&1
	rc=$?
}

backend_line() { grep -m1 '^cgroup backend' "$tmp/$1"; }

mkdir -p "$CG/$TOP/a"
echo "TAP version 13"
echo "1..12"

pstat auto --for-each-cgroup "$TOP/a" -e cpu-clock
check "auto on a kernel with the ioctls: $(backend_line auto)" \
	grep -q '^cgroup backend: shared (auto: ' "$tmp/auto"

pstat auto-group --for-each-cgroup "$TOP/a" -e '{cpu-clock,context-switches}'
check "auto with an event group: $(backend_line auto-group)" \
	grep -q '^cgroup backend: shared (auto: ' "$tmp/auto-group"

pstat bperf --bpf-counters --for-each-cgroup "$TOP/a" -e cpu-clock
check "--bpf-counters: $(backend_line bperf)" grep -q '^cgroup backend: bperf (--bpf-counters)' "$tmp/bperf"

HOME=$tmp perf config --user stat.cgroup-backend=rstat
HOME=$tmp pstat config --for-each-cgroup "$TOP/a" -e cpu-clock
check "perf config stat.cgroup-backend=rstat: $(backend_line config)" \
	grep -q '^cgroup backend: rstat (perf config stat.cgroup-backend)' "$tmp/config"
HOME=$tmp pstat config-group --for-each-cgroup "$TOP/a" -e '{cpu-clock,context-switches}'
check "perf config stat.cgroup-backend=rstat with an event group: exit $rc, $(backend_line config-group)" \
	[ "$rc" = 0 -a "$(grep -c '^cgroup backend: rstat (perf config stat.cgroup-backend)' "$tmp/config-group")" = 1 ]
HOME=$tmp pstat config-option --cgroup-backend=shared --for-each-cgroup "$TOP/a" -e cpu-clock
check "--cgroup-backend overrides perf config: $(backend_line config-option)" \
	grep -q '^cgroup backend: shared (--cgroup-backend)' "$tmp/config-option"
# auto is also the option's value when it is not given: given, it still wins
HOME=$tmp pstat config-auto --cgroup-backend=auto --for-each-cgroup "$TOP/a" -e cpu-clock
check "--cgroup-backend=auto overrides perf config: $(backend_line config-auto)" \
	grep -q '^cgroup backend: shared (auto: ' "$tmp/config-auto"

pstat old-name --cgroup-backend=bpf --for-each-cgroup "$TOP/a" -e cpu-clock
check "the old name bpf is refused: $(grep -m1 'unknown cgroup backend' "$tmp/old-name")" \
	[ $rc -ne 0 -a "$(grep -c "unknown cgroup backend 'bpf' (auto, events, bperf, shared or rstat)" "$tmp/old-name")" = 1 ]

# ---- many cgroups, few fds ----
for i in $(seq "$NR"); do echo "$CG/$TOP/c$i"; done | xargs mkdir
bash -c "echo \$\$ > $CG/$TOP/c1/cgroup.procs; while :; do :; done" &
pids+=($!)
list=$(seq -f "$TOP/c%g" -s, "$NR")

# many BACKEND [HARD]: count every cgroup for 2 s under a soft fd limit of
# 1024 and a hard one of HARD (default 1024) that perf cannot raise: without
# CAP_SYS_RESOURCE (as root perf raises the hard limit by 1000 at each
# EMFILE, as upstream perf does)
many() {
	local b=$1 hard=${2:-1024} out before after pid

	out=$tmp/many-$b-$hard
	before=$(awk '$1 == "usage_usec" { print $2 }' "$CG/$TOP/c1/cpu.stat")
	setpriv --bounding-set=-sys_resource -- \
		bash -c "ulimit -Sn 1024 && ulimit -Hn $hard && exec \"\$@\"" limit \
		perf stat -a -x, --cgroup-backend="$b" --for-each-cgroup "$list" \
		-e cpu-clock -o "$out" -- sleep 2 2>"$out.err" &
	pid=$!
	# the fds perf holds while it counts: once its workload is sleep
	while kill -0 "$pid" 2>/dev/null && ! pgrep -P "$pid" -x sleep >/dev/null; do
		sleep 0.1
	done
	fds=$(find "/proc/$pid/fd" -mindepth 1 2>/dev/null | wc -l)
	wait "$pid"
	rc=$?
	after=$(awk '$1 == "usage_usec" { print $2 }' "$CG/$TOP/c1/cpu.stat")
	ref=$(( (after - before) * 1000 ))
	counted=$(grep -c ",cpu-clock,$TOP/c" "$out")
	busy=$(awk -F, -v cg="$TOP/c1" '$4 == cg { printf "%.0f", $1 * 1000000 }' "$out")
	busy=${busy:-0}
	note "$out.err"
	echo "# $b, hard limit $hard: exit $rc, $counted cgroups counted, $fds fds open, c1 $busy ns, cpu.stat at most $ref ns"
}

# all_counted OP FDS: the last many counted every cgroup, the busy one right
# (perf counted 2 s inside the interval cpu.stat was read around; the loop
# had at least a quarter of the guest's 2 cpus), with [ $fds OP FDS ] open
# shellcheck disable=SC2317 # run by check
all_counted() {
	[ "$rc" -eq 0 ] && [ "$counted" -eq "$NR" ] && [ "$busy" -gt 500000000 ] &&
		[ "$busy" -le "$((ref + ref / 20))" ] && test "$fds" "$1" "$2"
}

for b in shared rstat; do
	many "$b"
	check "$b: $NR cgroups under ulimit -n 1024, $fds fds open, c1 counted $busy ns (cpu.stat <= $ref)" \
		all_counted -lt 100
done

many events
check "events: $NR cgroups need E x G x C fds: exit $rc, the fd limit named" \
	[ $rc -ne 0 -a "$(grep -ci 'open file descriptors\|ulimit -n' "$tmp/many-events-1024.err")" -ge 1 ]
many events 8192
check "events, soft limit 1024, hard 8192: $counted cgroups counted, $fds fds open, c1 counted $busy ns (cpu.stat <= $ref)" \
	all_counted -gt 1024
exit $fail
