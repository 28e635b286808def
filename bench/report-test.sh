#!/bin/bash
# Host test of bench/report.py with its plots: the report of the newest
# committed quick run (bench/results/*-quick), remade in build/, must have
# the targets, a table per configuration and every plot its data allows. The guest's bench
# smoke test (bench/smoke-test.sh) checks the summary of a fresh run.
# No set -e or pipefail: a TAP test reports each failed check and goes on.
set -u
cd "$(dirname "$0")/.." || exit
src=$(find bench/results -maxdepth 1 -name '*-quick' -type d 2>/dev/null | sort | tail -1)
out=build/tests/bench-report
echo "TAP version 13"
if [ -z "$src" ]; then
	echo "1..0 # SKIP no bench/results/*-quick run committed"
	exit 4
fi
echo "1..3"
rm -rf "$out"; mkdir -p "$out"
cp "$src/results.csv" "$src/meta.txt" "$out/"
python3 bench/report.py "$out" >/dev/null 2>"$out/report.err"
status=$?
sed 's/^/# /' "$out/report.err"
fail=0
ok() { # N DESCRIPTION STATUS
	if [ "$3" = 0 ]; then echo "ok $1 $2"; else echo "not ok $1 $2"; fail=1; fi
}
ok 1 "bench/report.py $src exits 0" $status
configs=$(python3 -c 'import csv, sys
print(len({(r["G"], r["E"], r["depth"]) for r in csv.DictReader(open(sys.argv[1])) if r["group"] == "session"}))' "$src/results.csv")
tables=$(grep -c '^## G = ' "$out/summary.md" 2>/dev/null)
echo "# $configs configurations in the CSV, $tables tables in summary.md"
ok 2 "summary.md has the targets and a table per configuration" \
	"$([ "$tables" = "$configs" ] && grep -q '^## Targets' "$out/summary.md" && echo 0 || echo 1)"
missing=0
plots=""
has_rows() { # GROUP: the CSV has rows of that group (a pass the run made)
	python3 -c 'import csv, sys
sys.exit(not any(r["group"] == sys.argv[2] for r in csv.DictReader(open(sys.argv[1]))))' "$src/results.csv" "$1"
}
varies() { # COLUMN: the pipe was measured at more than one value of it
	python3 -c 'import csv, sys
sys.exit(len({r[sys.argv[2]] for r in csv.DictReader(open(sys.argv[1]))
              if r["metric"] == "pipe_us_per_op"}) < 2)' "$src/results.csv" "$1"
}
# a plot against G or depth needs two values of it (--configs may give one)
varies G && plots+=" per-switch-pipe-vs-G per-switch-ring-vs-G"
varies depth && plots+=" per-switch-pipe-vs-depth"
# the cost plots need the cost pass's rows (BENCH_COST=0 leaves it out)
has_rows cost && plots+=" setup-vs-G read-all-vs-G"
# the PMU model's plot needs the PMU pass's rows (a run on 7.3 has none:
# docs/known-issues.md)
has_rows pmu && plots+=" pmu-model-vs-depth"
for png in $plots; do
	[ "$(head -c 4 "$out/$png.png" 2>/dev/null | tail -c 3)" = PNG ] || { echo "# missing plot: $png.png"; missing=1; }
done
ok 3 "every plot is a PNG" $missing
exit $fail
