#!/bin/bash
# The bench smoke test `make check` runs in the guest (tests/vm-tests.d/
# 06-bench-smoke.list): bench/guest.sh smoke + bench/report.py --no-plots,
# then checks that every backend produced every measurement and that the
# summary was written. It judges no times: it keeps the scripts working.
# In an exact guest (scripts/vm-run.sh --exact, BENCH_EXACT=1) it also
# checks the PMU pass: scripts/vm-run.sh --exact -- BENCH_EXACT=1 bench/smoke-test.sh
# The plots are checked on the host (bench/report-test.sh): gnuplot's start
# alone took 20 s of this test under TCG.
# No set -e or pipefail: a TAP test reports each failed check and goes on.
set -u
cd "$(dirname "$0")/.." || exit
out=build/bench/smoke-check
rm -rf "$out"; mkdir -p "$out"
echo "TAP version 13"
echo "1..3"
fail=0
ok() { # N DESCRIPTION STATUS
	if [ "$3" = 0 ]; then echo "ok $1 $2"; else echo "not ok $1 $2"; fail=1; fi
}
echo "machine=smoke" >"$out/meta.txt"
BENCH_RAW=1 bench/guest.sh smoke "$out" 2>&1 | sed 's/^/# /'
ok 1 "bench/guest.sh smoke" "${PIPESTATUS[0]}"

missing=0
# the PMU pass (ftrace) runs in an exact guest only (bench/guest.sh)
pmu=${BENCH_EXACT:-0}
for b in none floor floor-read events bperf shared rstat; do
	for m in setup_ms teardown_ms pipe_us_per_op pipe_host_us_per_op ring_us_per_msg ring_host_us_per_msg fds perf_events slab_kb bpf_map_kb; do
		# a Slab delta may be negative (SLUB's per-cpu caches); nothing else
		sign=
		[ $m = slab_kb ] && sign='-\?'
		grep -q "^session,$b,.*,$m,${sign}[0-9.]" "$out/results.csv" || { echo "# missing: session $b $m"; missing=1; }
	done
	[ $b = none ] && continue
	for m in add_per_op del_per_op read_per_op; do
		[ "$pmu" = 1 ] || break
		grep -q "^pmu,$b,.*,$m,[0-9.]" "$out/results.csv" || { echo "# missing: pmu $b $m"; missing=1; }
	done
	case $b in floor|floor-read) continue ;; esac
	grep -q "^session,$b,.*,cpu_clock_err_pct,[0-9.]" "$out/results.csv" ||
		{ echo "# missing: session $b accuracy"; missing=1; }
done
# the cgroup switches that instructions per switch divide by: the pipe
# makes two per round trip
for m in pipe_cgroup_switches_per_op ring_cgroup_switches_per_msg; do
	awk -F, -v m="$m" '$1 == "switches" && $7 == m && $8 > 0 { found = 1 } END { exit !found }' \
		"$out/results.csv" || { echo "# missing or zero: switches $m"; missing=1; }
done
# per-cgroup events schedule their events in and out at a cgroup switch;
# plain cpu-wide events never do (tests running beside this one may add
# task events of their own, hence no exact zero)
pmu_calls() { awk -F, -v b="$1" -v m="$2" '$1 == "pmu" && $2 == b && $7 == m { print $8 }' "$out/results.csv"; }
if [ "$pmu" = 1 ] && ! awk -v e="$(pmu_calls events add_per_op)" -v f="$(pmu_calls floor add_per_op)" \
		'BEGIN { exit !(e >= f + 1) }'; then
	echo "# pmu->add per round trip: events $(pmu_calls events add_per_op), floor $(pmu_calls floor add_per_op)"
	missing=1
fi
for b in events shared rstat; do
	for m in setup_us teardown_us read_all_us read_one_us fds; do
		grep -q "^cost,$b,.*,$m,[0-9.]" "$out/results.csv" || { echo "# missing: cost $b $m"; missing=1; }
	done
done
for b in none shared rstat; do
	for m in mkdir_us rmdir_us; do
		grep -q "^churn,$b,.*,$m,[0-9.]" "$out/results.csv" || { echo "# missing: churn $b $m"; missing=1; }
	done
done
grep -q "^memcg,bpf-walk,.*,us_per_read," "$out/results.csv" || { echo "# missing: memcg"; missing=1; }
ok 2 "every backend measured" $missing

python3 bench/report.py --no-plots "$out" >/dev/null 2>"$out/report.err"
status=$?
grep -q "^## G = 2, E = 1, depth 2" "$out/summary.md" 2>/dev/null || status=1
sed 's/^/# /' "$out/report.err"
ok 3 "bench/report.py: summary.md" $status
exit $fail
