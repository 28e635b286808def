#!/bin/bash
# Why bperf's per-cgroup cpu-clock reads far above cpu.stat (bench/README.md):
#
#   scripts/vm-run.sh -- bench/self-move-accuracy.sh      (in the guest, 15 s)
#
# A task pinned to cpu 0 idles 1 s in the root cgroup, then moves itself
# into cgroup smacc (echo $$ > cgroup.procs: no context switch) and spins
# 100 ms. For each backend of perf stat --for-each-cgroup, prints smacc's
# cpu-clock beside its cpu.stat usage over the same run.
#
# bperf charges a cpu's counter delta since its last cgroup switch to the
# cgroup that switches out next. Idle and the root cgroup's tasks are the
# same cgroup, so the idle second has no cgroup switch in it, and the task
# that moved itself switches out of smacc with all of it. Per-cgroup
# events, the shared event (perf_cgroup_share_move, kernel patch 0001) and rstat
# (fentry/css_set_move_task) charge the old cgroup at the move.
# No set -e or pipefail: a backend perf refuses prints its error and the next one runs.
set -u
cg=/sys/fs/cgroup/smacc
mkdir -p "$cg"
usage_ms() { awk '$1 == "usage_usec" { print int($2 / 1000) }' "$cg/cpu.stat"; }
for opt in --bpf-counters --cgroup-backend=events --cgroup-backend=shared --cgroup-backend=rstat; do
	u0=$(usage_ms)
	v=$(perf stat $opt -a -x, -e cpu-clock --for-each-cgroup smacc -- \
		taskset -c 0 sh -c "sleep 1; echo \$\$ > $cg/cgroup.procs; timeout 0.1 sh -c 'while :; do :; done'" \
		2>&1 >/dev/null | awk -F, '$3 == "cpu-clock" { print $1 }')
	printf "%-24s cpu-clock %10s ms   cpu.stat %6d ms\n" "$opt" "$v" $(($(usage_ms) - u0))
done
rmdir "$cg"
