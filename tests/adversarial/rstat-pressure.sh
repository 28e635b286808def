#!/bin/bash
# Guest test (TAP): the rstat backend's BPF maps full. cgtop and
# cgroup-exporter with --rstat.max-cgroups=16 (cgcount_opts.max_cgroups)
# over 40 cgroups, more than the maps hold with the system's own:
#  - cgtop -b -n 3 exits 0 with every one of the 40 cgroups in each table
#    (the counts of a cgroup without a slot go to its nearest ancestor
#    that has one: lib/cgcount/cgcount.h, cgcount_errors);
#  - the exporter answers a scrape (HTTP 200) with a series for each of the
#    40 and exits 0 on SIGTERM.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
# shellcheck source=tests/adversarial/adv-lib.sh
source tests/adversarial/adv-lib.sh
: "${fail:=0}"	# set by tap.sh
NAME=advpressure-$$
CG=$ROOT/$NAME
PORT=${CGC_PORT:-9484}
MAX=16
NR=40

trap adv_cleanup EXIT

echo "TAP version 13"
echo "1..4"
for i in $(seq $NR); do mkdir -p "$CG/c$i" || exit 1; done
bash -c "echo \$\$ > '$CG/c$NR/cgroup.procs'; while :; do :; done" &
pids+=($!)

"$BIN/cgtop" --backend rstat --rstat.max-cgroups=$MAX -b -n 3 -d 0.5 -e cpu-clock \
	-r "^/$NAME(/|\$)" >"$tmp/top" 2>"$tmp/top.err"
rc=$?
sed 's/^/# /' "$tmp/top.err" | head -5
grep '^cgtop:' "$tmp/top" | sed 's/^/# /'
tables=$(grep -c '^cgtop:' "$tmp/top")
full=$(grep -c "^cgtop: $((NR + 1)) of $((NR + 1)) cgroups" "$tmp/top")
check "cgtop --rstat.max-cgroups=$MAX over $NR cgroups exits 0 (exit $rc)" [ $rc = 0 ]
check "cgtop printed 3 tables ($tables), each with the $NR and their parent ($full)" \
	[ "$tables" = 3 -a "$full" = 3 ]

"$BIN/cgroup-exporter" --backend rstat --rstat.max-cgroups=$MAX -e cpu-clock \
	--web.listen-address="127.0.0.1:$PORT" -r "^/$NAME/" 2>"$tmp/exp.err" &
exporter=$!
pids+=("$exporter")
status=$(scrape "$PORT" "$tmp/metrics")
served=$(grep -c "^perf_cgroup_event_seconds_total{cgroup=\"/$NAME/c[0-9]*\",event=\"cpu-clock\"}" \
	"$tmp/metrics" 2>/dev/null)
check "the exporter with --rstat.max-cgroups=$MAX answers (HTTP $status) with the $NR ($served)" \
	[ "$status" = 200 -a "$served" = $NR ]
kill -TERM "$exporter"
wait "$exporter"
rc=$?
tail -3 "$tmp/exp.err" | sed 's/^/# /'
check "the exporter exits 0 on SIGTERM (exit $rc)" [ $rc = 0 ]
exit "$fail"
