#!/bin/bash
# Guest test of the libcgcount tools (KTAP): a busy loop in cgroup "busy",
# a sleeper in "idle".
#  - cgtop -b on every backend the kernel supports names "busy" first;
#  - cgroup-exporter serves GET /metrics over loopback to a real HTTP client
#    (python3 urllib): parseable exposition text with HELP/TYPE lines, and
#    the busy cgroup's cpu-clock counter grows between two scrapes, by about
#    the scrape interval, more than the idle one's; other paths are 404;
#  - cgroup-exporter --subtree: a cgroup created after it started is
#    served, with cpu-clock seconds equal to its cpu.stat usage (auto picks
#    shared on this kernel, which counts it from its creation);
#  - both exit 0 (with the ASan build: no leaks, no errors).
# CGC_BIN selects the binaries (default build/bin; the ASan run passes
# build/cgcount/asan/bin).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
BIN=${CGC_BIN:-build/bin}
ROOT=/sys/fs/cgroup
NAME=cgtools-$$
CG=$ROOT/$NAME
PORT=${CGC_PORT:-9464}
BACKENDS="auto events shared rstat"
pids=()
# shellcheck source=tests/lib/tap.sh
source "$(dirname "$0")/../lib/tap.sh"
: "${fail:=0}"	# set by tap.sh

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -e "$CG/cgroup.kill" ] && echo 1 > "$CG/cgroup.kill"
	sleep 0.2
	rmdir "$CG/later" "$CG/busy" "$CG/idle" "$CG" 2>/dev/null
}
trap cleanup EXIT

mkdir -p "$CG/busy" "$CG/idle"
# the exporter listens on loopback, which the guest's init leaves down
ip link set lo up 2>/dev/null || /usr/sbin/ip link set lo up
bash -c "echo \$\$ > $CG/busy/cgroup.procs; while :; do :; done" &
pids+=($!)
bash -c "echo \$\$ > $CG/idle/cgroup.procs; exec sleep 1000" &
pids+=($!)
sleep 0.5

echo "TAP version 13"
echo "1..$(( $(wc -w <<<"$BACKENDS") * 2 + 7 ))"

# ---- cgtop ----
for b in $BACKENDS; do
	out=$("$BIN/cgtop" --backend "$b" -e cpu-clock --rows 5 -d 1 -n 2 -b \
		-r "^/$NAME/.+" 2>&1)
	rc=$?
	# a backend this kernel lacks: skipped, but not on our patched kernels
	# (KERNEL_PATCHED=1, scripts/run-tests.sh), which have every one
	if [ $rc -ne 0 ] && [ "${KERNEL_PATCHED:-0}" != 1 ] &&
		echo "$out" | grep -q "not supported by this kernel\|rstat backend not available"; then
		skip "cgtop --backend $b: $(echo "$out" | head -1)"
		skip "cgtop --backend $b exit status"
		continue
	fi
	# shellcheck disable=SC2001 # a prefix on every line, not one substitution
	sed 's/^/# /' <<<"$out"
	# the last table's first row (after its two header lines), and its
	# count against the second row's
	first=$(echo "$out" | awk '/^cgtop:/ { row = -2; next } { row++ }
		row == 1 { first = $NF; v1 = $1 } row == 2 { v2 = $1 }
		END { if (v1 > 0 && v1 > 10 * v2) print first }')
	check "cgtop --backend $b names the busy cgroup first, with a count" [ "$first" = "/$NAME/busy" ]
	check "cgtop --backend $b exits 0" [ $rc -eq 0 ]
done

# ---- cgroup-exporter ----
"$BIN/cgroup-exporter" --web.listen-address="127.0.0.1:$PORT" -e cpu-clock,context-switches \
	-r "^/$NAME(/.*)?$" --no-collector.leaves-only &
exporter=$!
pids+=("$exporter")

py_out=$(python3 - "$PORT" "$NAME" 2>&1 <<'EOF'
import re, sys, time, urllib.request, urllib.error

port, name = sys.argv[1], sys.argv[2]
url = "http://127.0.0.1:%s/metrics" % port

def scrape():
    for _ in range(100):
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.headers.get("Content-Type", ""), r.read().decode()
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise SystemExit("# no answer from " + url)

sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{cgroup="((?:[^"\\]|\\.)*)",event="([^"]*)"\} ([0-9.e+]+)$')

def parse(text):
    helps, types, values, bad = set(), {}, {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
        elif line.startswith("# TYPE "):
            types[line.split()[2]] = line.split()[3]
        elif line.startswith(("perf_cgroup_exporter_", "process_")):
            continue
        else:
            m = sample.match(line)
            if not m:
                bad.append(line)
                continue
            values[(m.group(1), m.group(2), m.group(3))] = float(m.group(4))
    return helps, types, values, bad

results = []
def check(what, cond):
    results.append((what, cond))

status, ctype, text1 = scrape()
t1 = time.monotonic()
time.sleep(1.5)
_, _, text2 = scrape()
t2 = time.monotonic()
for line in text2.splitlines()[:12]:
    print("# " + line)
h, types, v1, bad1 = parse(text1)
_, _, v2, bad2 = parse(text2)
metric = "perf_cgroup_event_seconds_total"
busy, idle = "/%s/busy" % name, "/%s/idle" % name
check("exporter: HTTP 200, text/plain; version=0.0.4",
      status == 200 and ctype.startswith("text/plain; version=0.0.4"))
check("exporter: every line parses, HELP and TYPE counter for each metric",
      not bad1 and not bad2 and metric in h and types.get(metric) == "counter"
      and types.get("perf_cgroup_events_total") == "counter"
      and types.get("perf_cgroup_events_scaling_ratio") == "gauge")
key_busy, key_idle = (metric, busy, "cpu-clock"), (metric, idle, "cpu-clock")
d_busy = v2.get(key_busy, 0) - v1.get(key_busy, 0)
d_idle = v2.get(key_idle, 0) - v1.get(key_idle, 0)
print("# busy grew %.3f s, idle %.3f s in %.2f s between scrapes" % (d_busy, d_idle, t2 - t1))
# the busy loop shares 2 cpus with the guest: at least a third of the time
check("exporter: the busy cgroup's cpu-clock seconds grow between scrapes",
      d_busy > (t2 - t1) / 3 and d_busy > 10 * d_idle)
try:
    with urllib.request.urlopen(url.replace("/metrics", "/nope"), timeout=10) as r:
        code = r.status
except urllib.error.HTTPError as e:
    code = e.code
check("exporter: other paths answer 404", code == 404)
for what, cond in results:
    print("RESULT %s %s" % ("ok" if cond else "fail", what))
EOF
)
echo "$py_out" | grep -v '^RESULT '
nr_results=0
while read -r _ verdict what; do
	nr_results=$((nr_results + 1))
	if [ "$verdict" = ok ]; then ok "$what"; else not_ok "$what"; fi
done < <(echo "$py_out" | grep '^RESULT ')
for i in $(seq $((nr_results + 1)) 4); do not_ok "exporter: check $i (no result)"; done

kill -TERM "$exporter"
wait "$exporter"
check "exporter exits 0 on SIGTERM" [ $? -eq 0 ]

# ---- cgroup-exporter --subtree ----
"$BIN/cgroup-exporter" --web.listen-address="127.0.0.1:$((PORT + 1))" -e cpu-clock \
	--subtree "/$NAME" --no-collector.leaves-only &
exporter=$!
pids+=("$exporter")
# the cpu-clock seconds of CGROUP in one scrape (-1 when not served),
# waiting for the exporter to answer
scrape_seconds() { # CGROUP
	python3 - "$((PORT + 1))" "$1" <<'EOF'
import sys, time, urllib.request, urllib.error
url = "http://127.0.0.1:%s/metrics" % sys.argv[1]
want = 'perf_cgroup_event_seconds_total{cgroup="%s",event="cpu-clock"} ' % sys.argv[2]
for _ in range(100):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode()
        break
    except (urllib.error.URLError, ConnectionError):
        time.sleep(0.1)
else:
    raise SystemExit("# no answer from " + url)
print(next((line[len(want):] for line in text.splitlines() if line.startswith(want)), -1))
EOF
}
scrape_seconds "/$NAME/later" >/dev/null
mkdir "$CG/later"
timeout 1 bash -c "echo \$\$ > $CG/later/cgroup.procs; while :; do :; done"
used=$(awk '$1 == "usage_usec" { print $2 / 1e6 }' "$CG/later/cpu.stat")
got=$(scrape_seconds "/$NAME/later")
echo "# --subtree: /$NAME/later, created after the start: $got s, cpu.stat $used s"
check "exporter --subtree serves a cgroup created later, counted from its creation (cpu.stat 5%)" \
	awk -v g="$got" -v u="$used" 'BEGIN { exit !(u > 0.2 && g >= 0.95 * u && g <= 1.05 * u) }'
kill -TERM "$exporter"
wait "$exporter"
check "exporter --subtree exits 0 on SIGTERM" [ $? -eq 0 ]
exit $fail
