#!/bin/bash
# Guest test (TAP): a counted cgroup restarted under the same name many
# times (rmdir + mkdir, as systemctl restart does to a service's cgroup),
# on every backend (shared where the kernel has it):
#  - cgroup-exporter -r '^/NAME/svc$', scraped after each of the restarts:
#    every scrape HTTP 200, one series for the path afterwards, the same
#    number of open descriptors (/proc/PID/fd) after the restarts as after
#    the first scrape (the events backend opens a perf event per cgroup and
#    cpu: a leak would add restarts x cpus), exit 0 on SIGTERM;
#  - cgtop -b -d 0.1 with as many restarts, each seen by a refresh: the same
#    descriptors after them as after its first table, one row for the path
#    in its last table, exit 0 on SIGTERM (ASan: no error, no leak).
# ADV_RESTARTS sets the number of restarts (default 60; fewer on the debug
# kernel: tests/vm-tests.d/66-adversarial.list).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
# shellcheck source=tests/adversarial/adv-lib.sh
source tests/adversarial/adv-lib.sh
: "${fail:=0}"	# set by tap.sh
NAME=advrestart-$$
CG=$ROOT/$NAME
PORT=${CGC_PORT:-9482}
RESTARTS=${ADV_RESTARTS:-60}

trap adv_cleanup EXIT

mkdir -p "$CG/svc" || exit 1

# the exporter's restarts: RESTARTS x (rmdir, mkdir, scrape); prints
# "STATUSES first-fds last-fds series" (statuses: the distinct HTTP codes)
exporter_restarts() { # PID
	python3 - "$PORT" "$CG/svc" "/$NAME/svc" "$RESTARTS" "$1" <<'EOF'
import os, sys, time, urllib.request, urllib.error
port, path, label, restarts, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
url = "http://127.0.0.1:%s/metrics" % port

def scrape():
    for _ in range(300):
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, ""
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    return 0, ""

def fds():
    time.sleep(0.2)	# the scrape's connection closed
    return len(os.listdir("/proc/%s/fd" % pid))

statuses = {scrape()[0]}
first = fds()
for _ in range(restarts):
    os.rmdir(path)
    os.mkdir(path)
    status, text = scrape()
    statuses.add(status)
want = 'perf_cgroup_event_seconds_total{cgroup="%s",event="cpu-clock"} ' % label
series = sum(line.startswith(want) for line in text.splitlines())
print(",".join(map(str, sorted(statuses))), first, fds(), series)
EOF
}

echo "TAP version 13"
echo "1..$((5 * $(wc -w <<<"$BACKENDS")))"
for b in $BACKENDS; do
	backend_runs "$b" 5 || continue

	# ---- cgroup-exporter ----
	start_exporter "$b" "^/$NAME/svc\$"
	read -r statuses first last series <<<"$(exporter_restarts "$exporter")"
	echo "# --backend $b: exporter: HTTP $statuses, $first descriptors after the first scrape, $last after $RESTARTS restarts, $series series"
	check "--backend $b: exporter over $RESTARTS restarts: every scrape 200, one series, no descriptor leaked ($first, $last)" \
		[ "$statuses" = 200 -a "$series" = 1 -a "$first" -gt 0 -a "$last" = "$first" ]
	kill -TERM "$exporter"
	wait "$exporter"
	rc=$?
	tail -3 "$tmp/exp.err" | sed 's/^/# /'
	check "--backend $b: exporter exits 0 on SIGTERM (exit $rc)" [ $rc = 0 ]

	# ---- cgtop ----
	"$BIN/cgtop" --log.level=warn --backend "$b" -b -d 0.1 -n 1000000 -e cpu-clock -r "^/$NAME/svc\$" \
		>"$tmp/top" 2>"$tmp/top.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 300); do grep -q '^cgtop:' "$tmp/top" && break; sleep 0.1; done
	first=$(open_fds "$pid")
	tables=$(grep -c '^cgtop:' "$tmp/top")
	for _ in $(seq "$RESTARTS"); do
		kill -0 "$pid" 2>/dev/null || break	# cgtop ended: its status says why
		rmdir "$CG/svc" && mkdir "$CG/svc"
		# the next table: a refresh saw it
		seen=$(grep -c '^cgtop:' "$tmp/top")
		for _ in $(seq 100); do [ "$(grep -c '^cgtop:' "$tmp/top")" -gt "$seen" ] && break; sleep 0.05; done
	done
	sleep 0.3
	last=$(open_fds "$pid")
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	total=$(grep -c '^cgtop:' "$tmp/top")
	# the last table's rows for the path
	rows=$(awk -v p="/$NAME/svc" '/^cgtop:/ { n = 0 } $NF == p { n++ } END { print n + 0 }' "$tmp/top")
	echo "# --backend $b: cgtop: $first descriptors after table $tables, $last after $RESTARTS restarts and $((total - tables)) tables"
	tail -3 "$tmp/top.err" | sed 's/^/# /'
	check "--backend $b: cgtop over $RESTARTS restarts: no descriptor leaked ($first, $last)" \
		[ "$first" -gt 0 -a "$last" = "$first" ]
	check "--backend $b: cgtop's last table has one row for the path ($rows)" [ "$rows" = 1 ]
	check "--backend $b: cgtop exits 0 on SIGTERM (exit $rc), nothing on stderr" [ $rc = 0 -a ! -s "$tmp/top.err" ]
done
exit "$fail"
