#!/bin/bash
# Manual measurement (not a test): the cost of cgtop (libcgcount) over N
# cgroups on each backend, in the guest:
#   scripts/vm-run.sh --kernel build/bzImage -- 'bash tests/cgcount/scale-bench.sh 1000'
# Creates N empty cgroups under one parent and a busy loop in one of them,
# then times `cgtop --iterations 1 -d 1` (open, add by regex, two reads,
# close) per backend and checks the busy cgroup came first.
# No set -e: a backend that fails is reported with its exit status and the next runs.
set -u
N=${1:-1000}
BIN=${CGC_BIN:-build/bin}
CG=/sys/fs/cgroup/cgscale-$$
mkdir -p "$CG"
for i in $(seq 1 "$N"); do mkdir "$CG/c$i"; done
bash -c "echo \$\$ > $CG/c1/cgroup.procs; while :; do :; done" &
busy=$!
cleanup() { kill -9 $busy; wait 2>/dev/null; sleep 0.2; for i in $(seq 1 "$N"); do rmdir "$CG/c$i"; done; rmdir "$CG"; }
trap cleanup EXIT
ulimit -n 1048576 2>/dev/null || ulimit -n 65536
echo "# $N cgroups, fd limit $(ulimit -n)"
for b in shared rstat events; do
	start=$(date +%s.%N)
	out=$("$BIN/cgtop" --backend "$b" --rows 1 -d 1 --iterations 1 --batch -r "^/cgscale-$$/" 2>&1)
	rc=$?
	end=$(date +%s.%N)
	echo "$b: exit $rc, $(echo "$end - $start" | bc) s wall for open + add + 2 reads + close (1 s of it the interval)"
	# shellcheck disable=SC2001 # a prefix on every line, not one substitution
	sed 's/^/    /' <<<"$out"
done
