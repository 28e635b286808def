#!/bin/bash
# The bench smoke test `make check` runs in the guest (tests/vm-tests.d/
# 06-bench-smoke.list): bench/guest.sh smoke + bench/report.py --no-plots,
# then checks that every backend produced every measurement and that the
# summary was written. It judges no times: it keeps the scripts working.
# The plots are checked on the host (bench/report-test.sh): gnuplot's start
# alone took 20 s of this test under TCG.
set -u
cd "$(dirname "$0")/.."
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
for b in none percg bperf shared rstat; do
	for m in setup_ms teardown_ms pipe_us_per_op pipe_host_us_per_op ring_us_per_msg ring_host_us_per_msg fds perf_events slab_kb bpf_map_kb; do
		# a Slab delta may be negative (SLUB's per-cpu caches); nothing else
		sign=
		[ $m = slab_kb ] && sign='-\?'
		grep -q "^session,$b,.*,$m,$sign[0-9.]" "$out/results.csv" || { echo "# missing: session $b $m"; missing=1; }
	done
	[ $b = none ] && continue
	grep -q "^session,$b,.*,cpu_clock_err_pct,[0-9.]" "$out/results.csv" ||
		{ echo "# missing: session $b accuracy"; missing=1; }
done
for b in percg shared rstat; do
	for m in setup_us teardown_us read_all_us read_one_us fds; do
		grep -q "^cost,$b,.*,$m,[0-9.]" "$out/results.csv" || { echo "# missing: cost $b $m"; missing=1; }
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
