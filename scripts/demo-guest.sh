#!/bin/bash
# The guest half of `make demo` (scripts/demo.sh): a small tree of cgroups
# with different workloads, counted by perf stat -a --for-each-cgroup on
# the automatic backend, then by every backend at the same time.
# No set -e: a backend this kernel lacks is shown as such and the demo goes on.
set -uo pipefail

CG=/sys/fs/cgroup
TOP=demo
SECS=${DEMO_SECS:-3}
EVENTS=cpu-clock,context-switches,page-faults
CGROUPS="$TOP/services,$TOP/services/busy,$TOP/services/forking,$TOP/batch,$TOP/batch/sleepy,$TOP/batch/pingpong,$TOP/idle"
TMP=$(mktemp -d)
pids=()

cleanup() {
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	for d in services/busy services/forking batch/sleepy batch/pingpong idle services batch ""; do
		rmdir "$CG/$TOP/$d" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# run_in CGROUP COMMAND...: start COMMAND in CGROUP, in the background
run_in() {
	local cg=$1
	shift
	(echo $BASHPID > "$CG/$TOP/$cg/cgroup.procs" && exec "$@") &
	pids+=($!)
}

start_workloads() {
	mkdir -p "$CG/$TOP"/services/{busy,forking} "$CG/$TOP"/batch/{sleepy,pingpong} "$CG/$TOP/idle"
	run_in services/busy     bash -c 'while :; do :; done'
	run_in services/forking  bash -c 'while :; do /bin/true; done'
	run_in batch/sleepy      bash -c 'while :; do sleep 0.05; done'
	run_in batch/pingpong    bash -c 'exec perf bench sched pipe -T -l 100000000 >/dev/null'
}

stop_workloads() {
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
}

echo "== $(uname -sr): patched with kernel/backport-6.12/series"
cat <<EOF
== cgroups under $CG/$TOP:
   services/busy      a busy loop
   services/forking   a loop forking /bin/true
   batch/sleepy       a loop sleeping 50 ms
   batch/pingpong     perf bench sched pipe -T (two threads ping-ponging a pipe)
   idle               nothing
   (services and batch count their children: a cgroup's counts include its descendants)

EOF

# 1. The automatic backend, as a user would type it.
start_workloads
sleep 1
echo "== perf stat -v -a --for-each-cgroup \$CGROUPS -e $EVENTS sleep $SECS"
perf stat -v -a --for-each-cgroup "$CGROUPS" -e "$EVENTS" -o "$TMP/auto.txt" sleep "$SECS" \
	2>"$TMP/auto.err"
grep '^cgroup backend' "$TMP/auto.err"
sed -n '/Performance counter stats/,$p' "$TMP/auto.txt" | grep -v '^$'
stop_workloads

# 2. Every backend at once on the same workload: each perf stat says it is
#    counting before the workloads start, and stops after they ended.
echo
echo "== every backend counting the same $SECS s at the same time (perf stat -x, per backend)"
backends=()
for b in events shared bperf rstat; do
	if perf stat -a --cgroup-backend=$b --for-each-cgroup "$TOP/idle" -e cpu-clock true \
		>"$TMP/probe.$b" 2>&1; then
		backends+=("$b")
	else
		echo "   $b: not available here: $(grep -m1 -v '^ *$' "$TMP/probe.$b")"
	fi
done
for b in "${backends[@]}"; do
	perf stat -a --cgroup-backend="$b" --for-each-cgroup "$CGROUPS" -e "$EVENTS" -x, \
		-o "$TMP/$b.csv" -- \
		bash -c "touch $TMP/ready.$b; while [ ! -e $TMP/stop ]; do sleep 0.1; done" &
done
tries=600
while [ "$(find "$TMP" -name 'ready.*' | wc -l)" -lt ${#backends[@]} ] && [ $tries -gt 0 ]; do
	sleep 0.1
	tries=$((tries - 1))
done
start_workloads
sleep "$SECS"
stop_workloads
sleep 0.5
touch "$TMP/stop"
wait

for ev in cpu-clock context-switches page-faults; do
	printf '\n   %-20s' "$ev"
	for b in "${backends[@]}"; do printf '%12s' "$b"; done
	echo
	for cg in ${CGROUPS//,/ }; do
		printf '   %-20s' "${cg#"$TOP"/}"
		for b in "${backends[@]}"; do
			awk -F, -v cg="$cg" -v ev="$ev" '$3 == ev && $4 == cg { printf "%12s", $1; found = 1 }
				END { if (!found) printf "%12s", "-" }' "$TMP/$b.csv"
		done
		echo
	done
done
cat <<'EOF'

   events: one perf event per event, cgroup and cpu (perf stat -G)
   shared: one event per event and cpu counting for all cgroups (PERF_EVENT_IOC_ATTACH_CGROUP)
   bperf:  perf's BPF counters (--bpf-counters); known to over-count in this guest
   rstat:  BPF at each cgroup switch, summed up the hierarchy by rstat when read
EOF
