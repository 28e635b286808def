#!/bin/bash
# Host test (TAP) of cgroup-exporter's serving and text file, on the host's
# kernel with the events backend counting the cgroup2 root:
#  - --textfile: one file, written atomically, that promtool check metrics
#    passes without a finding, with the event, seconds and ratio families;
#  - --textfile runs on and rewrites the file every interval with the totals
#    since its start: of two successive writes the second has the same
#    series, every counter (_total) at least its first value, the cpu time
#    of / more, and promtool passes it; SIGTERM exits 0; --textfile.writes=2
#    exits 0 after two intervals;
#  - --web.listen-address=:PORT answers over IPv6 and IPv4 loopback;
#    each scrape reports its own duration (a gauge, in seconds);
#    [::1]:PORT over IPv6 only; / links to the metrics, other paths 404;
#  - usage errors in the address exit 2.
# Skipped (exit 4) when the exporter cannot count here.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${TOOLS_BIN:-build/bin}
EXP=$BIN/cgroup-exporter
# a port no one listens on: another worktree may run this test at the same time
PORT=${EXPORTER_HOST_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
tmp=$(mktemp -d)
pid=

# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# get URL: the HTTP status code, the body in $tmp/body
get() {
	python3 - "$1" "$tmp/body" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
        code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except OSError as e:
    code, body = 0, str(e).encode()
open(sys.argv[2], "wb").write(body)
print(code)
PY
}

# serve ADDRESS: start the exporter there, wait until it listens; a TAP
# line and exit if it does not (never test another process on the port)
serve() {
	start "$@" && return 0
	sed 's/^/# /' "$tmp/serve.err"
	echo "Bail out! the exporter did not listen on $1"
	exit 1
}
start() {
	"$EXP" --backend events -e cpu-clock,context-switches -r '^/$' \
		--web.listen-address="$1" 2>"$tmp/serve.err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q listening "$tmp/serve.err" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
stop() { kill "$pid"; wait "$pid"; local rc=$?; pid=; return $rc; }

if ! "$EXP" --backend events -e cpu-clock -r '^/$' --textfile="$tmp/cg.prom" \
	--textfile.interval=0.3 --textfile.writes=1 2>"$tmp/err"; then
	sed 's/^/# /' "$tmp/err"
	echo "1..0 # SKIP the exporter cannot count here"
	exit 4
fi
echo "TAP version 13"
echo "1..13"
promtool check metrics <"$tmp/cg.prom" >"$tmp/lint" 2>&1
lint=$?
sed 's/^/# /' "$tmp/cg.prom" "$tmp/lint"
check "--textfile: promtool check metrics exit $lint, no findings" [ $lint -eq 0 -a ! -s "$tmp/lint" ]
families=$(grep -cE '^perf_cgroup_(event_seconds_total|events_scaling_ratio)\{cgroup="/",event="cpu-clock"\} [0-9.]+$' \
	"$tmp/cg.prom")
check "--textfile: the seconds and ratio series of / ($families), no temporary file left" \
	[ "$families" = 2 -a -z "$(find "$tmp" -name 'cg.prom.*')" ]

# the inode number of FILE, or none: each write renames a new file over it
inode() { stat -c %i "$1" 2>/dev/null || echo none; }
# wait_for_write FILE INODE: until FILE is another file than INODE (10 s at most)
wait_for_write() {
	for _ in $(seq 100); do
		[ "$(inode "$1")" != "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
"$EXP" --backend events -e cpu-clock,context-switches -r '^/$' --textfile="$tmp/run.prom" \
	--textfile.interval=0.5 2>"$tmp/run.err" &
pid=$!
wait_for_write "$tmp/run.prom" none
# a write may replace the file while it is copied: cp reads the one it
# opened, and the next wait is for a write after that one
first=$(inode "$tmp/run.prom")
cp "$tmp/run.prom" "$tmp/first.prom"
wait_for_write "$tmp/run.prom" "$first"
cp "$tmp/run.prom" "$tmp/second.prom"
wait_for_write "$tmp/run.prom" "$(inode "$tmp/run.prom")"
alive=$(kill -0 "$pid" 2>/dev/null && echo running || echo gone)
sed 's/^/# /' "$tmp/run.err"
grows=$(python3 - "$tmp/first.prom" "$tmp/second.prom" <<'PY'
import sys
def samples(path):
    with open(path) as f:
        return dict(line.rsplit(" ", 1) for line in f.read().splitlines()
                    if line and not line.startswith("#"))
first, second = samples(sys.argv[1]), samples(sys.argv[2])
counters = [k for k in first if k.split("{")[0].endswith("_total")]
less = [k for k in counters if k in second and float(second[k]) < float(first[k])]
cpu = 'perf_cgroup_event_seconds_total{cgroup="/",event="cpu-clock"}'
print("series %d and %d, counters %d, lower %s, cpu-clock of / %s -> %s" % (
    len(first), len(second), len(counters), less or "none", first.get(cpu), second.get(cpu)))
sys.exit(not (set(first) == set(second) and counters and not less and
              cpu in first and float(second[cpu]) > float(first[cpu])))
PY
)
check "--textfile, two writes of one run: $grows" [ $? -eq 0 ]
promtool check metrics <"$tmp/second.prom" >"$tmp/lint" 2>&1
lint=$?
sed 's/^/# /' "$tmp/lint"
check "--textfile: promtool check metrics on a later write: exit $lint, no findings" \
	[ $lint -eq 0 -a ! -s "$tmp/lint" ]
kill "$pid"
wait "$pid"
rc=$?
pid=
check "--textfile: $alive after three writes, exit $rc on SIGTERM" [ "$alive" = running -a $rc -eq 0 ]
start_ns=$(date +%s%N)
"$EXP" --backend events -e cpu-clock -r '^/$' --textfile="$tmp/two.prom" \
	--textfile.interval=0.3 --textfile.writes=2 2>"$tmp/err"
rc=$?
took_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
check "--textfile.writes=2: exit $rc after $took_ms ms (two intervals: 600 ms or more)" \
	[ $rc -eq 0 -a "$took_ms" -ge 600 -a -f "$tmp/two.prom" ]

if [ ! -e /proc/net/if_inet6 ]; then
	for _ in 1 2 3 4 5 6; do ok "# SKIP no IPv6 on this host"; done
else
	serve ":$PORT"
	v6=$(get "http://[::1]:$PORT/metrics")
	v4=$(get "http://127.0.0.1:$PORT/metrics")
	check ":$PORT answers on [::1] ($v6) and 127.0.0.1 ($v4)" [ "$v6" = 200 -a "$v4" = 200 ]
	took=$(awk '$1 == "perf_cgroup_exporter_scrape_duration_seconds" { print $2 }' "$tmp/body")
	gauges=$(grep -c '^# TYPE perf_cgroup_exporter_scrape_duration_seconds gauge$' "$tmp/body")
	check "a scrape reports its duration: ${took:-none} s, a gauge ($gauges), under 5 s" \
		awk -v t="${took:--1}" -v g="$gauges" 'BEGIN { exit !(g == 1 && t >= 0 && t < 5) }'
	root=$(get "http://127.0.0.1:$PORT/")
	check "/ answers $root and links to /metrics" [ "$root" = 200 -a "$(grep -c 'href="/metrics"' "$tmp/body")" = 1 ]
	other=$(get "http://127.0.0.1:$PORT/nope")
	check "other paths answer 404 ($other)" [ "$other" = 404 ]
	stop
	check "the exporter exits 0 on SIGTERM" [ $? -eq 0 ]
	serve "[::1]:$PORT"
	v6=$(get "http://[::1]:$PORT/metrics")
	v4=$(get "http://127.0.0.1:$PORT/metrics")
	stop
	check "[::1]:$PORT answers on IPv6 ($v6), not on IPv4 ($v4)" [ "$v6" = 200 -a "$v4" != 200 ]
fi
"$EXP" --web.listen-address=localhost 2>"$tmp/err"
rc=$?
check "--web.listen-address without a port: exit $rc, $(head -1 "$tmp/err")" [ $rc -eq 2 ]
exit $fail
