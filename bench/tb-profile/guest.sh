#!/bin/bash
# In the guest (bench/tb-profile/run.sh): BACKEND EVENTS LOOPS: the pipe
# ping-pong between two cgroups on cpu 0 (as bench/workload.sh), counted by
# BACKEND through cgbench (none: not counted).
set -euo pipefail
b=$1 ev=$2 loops=$3
export PATH=$PWD/build/bin:$PATH
r=/sys/fs/cgroup
# no RCU grace period on the ends' moves (bench/guest.sh)
mount -o remount,favordynmods $r 2>/dev/null || true
mkdir -p $r/tbpa $r/tbpb
printf '%s\n' $r/tbpa $r/tbpb >/tmp/tb-list
run() { taskset -c 0 perf bench sched pipe -G tbpa,tbpb -l "$loops"; }
if [ "$b" = none ]; then
	run
else
	cgbench count -b "$b" -e "$ev" -f /tmp/tb-list -o /tmp/tb-counts -- \
		taskset -c 0 perf bench sched pipe -G tbpa,tbpb -l "$loops"
fi
rmdir $r/tbpa $r/tbpb
