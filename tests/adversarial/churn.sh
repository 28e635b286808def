#!/bin/bash
# Guest test (TAP): cgroups made and removed every CHURN_PERIOD_US
# (default 1000: every millisecond) below the
# counted tree (mkdir + rmdir, a new name each time) while cgtop and
# cgroup-exporter count it, on every backend (shared where the kernel has
# it), for CHURN_SECONDS (default 4), a task spinning in another cgroup:
#  - the churn keeps its pace: one cgroup per tick on absolute deadlines
#    (tests/adversarial/churn.c), every tick done;
#  - cgtop -b -d 0.2, started before the churn (its first table printed),
#    goes on through it and exits 0 on SIGTERM after it, nothing on stderr
#    (no read failed): a table every 2 s of churn at least (a refresh
#    every 0.2 s, not timed: the debug kernel's are slow), the busy cgroup
#    in every table;
#  - the exporter, scraped every 0.2 s: every scrape HTTP 200 with the busy
#    cgroup's series; between the first and the last scrape the busy
#    cgroup's cpu-clock grows as its cpu.stat usage did (read before and
#    after each scrape: the bracket), within 10 %; exit 0 on SIGTERM;
#  - once the churn and the spinning task end, every removed cgroup is
#    freed, none held by the tools: the churn's parent reads
#    nr_dying_descendants 0 (cgroup.stat) within CHURN_FREED_SECONDS
#    (default 120).
# The tools open before the churn and exit after its cgroups are freed: the
# rstat backend's load and unload update a BPF trampoline, which waits for
# an RCU Tasks grace period, and a kworker releasing a backlog of dying
# cgroups holds one until the backlog is gone (docs/known-issues.md, "RCU
# Tasks waits behind the cgroup release backlog on our arm64 7.3").
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
# shellcheck source=tests/adversarial/adv-lib.sh
source tests/adversarial/adv-lib.sh
# shellcheck source=tests/perf/classic-clock.sh
source tests/perf/classic-clock.sh
: "${fail:=0}"	# set by tap.sh
NAME=advchurn-$$
CG=$ROOT/$NAME
PORT=${CGC_PORT:-9483}
SECONDS_=${CHURN_SECONDS:-4}
PERIOD_US=${CHURN_PERIOD_US:-1000}
FREED_LIMIT=${CHURN_FREED_SECONDS:-120}
CHURN_S=$((SECONDS_ + 2))	# the churn outlasts the scrapes
DELAY=0.2

trap adv_cleanup EXIT

mkdir -p "$CG/busy" "$CG/churn" || exit 1

# a task spinning in the busy cgroup, in the background: its pid in $spinner
spin() {
	bash -c "echo \$\$ > '$CG/busy/cgroup.procs'; while :; do :; done" &
	spinner=$!
	pids+=("$spinner")
}

# cgtop's tables so far
tables_printed() {
	grep -c '^cgtop:' "$tmp/top"
}

# waits while cgtop (pid $top) lives for its first table: 0 when printed
first_table() {
	while kill -0 "$top" 2>/dev/null; do
		[ "$(tables_printed)" -gt 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# DIR's removed descendants not yet freed (cgroup.stat)
dying() { # DIR
	awk '$1 == "nr_dying_descendants" { print $2 }' "$1/cgroup.stat"
}

# the seconds (guest time) until DIR's nr_dying_descendants reads 0, at most
# FREED_LIMIT; prints "SECONDS DYING" (DYING: the last count read)
freed() { # DIR
	local start=$EPOCHREALTIME n
	while :; do
		n=$(dying "$1")
		awk -v s="$start" -v n="$n" -v l="$FREED_LIMIT" -v now="$EPOCHREALTIME" \
			'BEGIN { t = now - s; if (n == 0 || t >= l) { printf "%.1f %d\n", t, n; exit 0 }; exit 1 }' &&
			return
		sleep 0.2
	done
}

# mkdir + rmdir every PERIOD_US for SECS, on absolute deadlines
# (tests/adversarial/churn.c); prints "CYCLES TICKS MAX_LAG_US"
churn() { # SECS
	build/tests/adversarial/churn "$CG/churn" "$1" "$PERIOD_US"
}

# scrape every DELAY s for SECS; prints "STATUSES SCRAPES WITH_BUSY COUNTED LO HI":
# the busy cgroup's counted seconds from the first to the last scrape and
# its cpu.stat usage over the same span, at least and at most
scrapes() { # SECS
	python3 - "$PORT" "$CG/busy/cpu.stat" "/$NAME/busy" "$1" "$DELAY" <<'EOF'
import sys, time, urllib.request, urllib.error
port, stat, label, secs, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
url = "http://127.0.0.1:%s/metrics" % port
want = 'perf_cgroup_event_seconds_total{cgroup="%s",event="cpu-clock"} ' % label

def usage():
    for line in open(stat):
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6

def scrape():
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""

for _ in range(300):	# the exporter listens
    try:
        urllib.request.urlopen(url, timeout=120).read()
        break
    except (urllib.error.URLError, ConnectionError):
        time.sleep(0.1)
samples, statuses, end = [], set(), time.monotonic() + secs
while time.monotonic() < end:
    before = usage()
    status, text = scrape()
    after = usage()
    statuses.add(status)
    vals = [float(l[len(want):]) for l in text.splitlines() if l.startswith(want)]
    samples.append((before, vals[0] if len(vals) == 1 else None, after))
    time.sleep(delay)
busy = [s for s in samples if s[1] is not None]
first, last = busy[0] if busy else (0, 0, 0), busy[-1] if busy else (0, 0, 0)
print(",".join(map(str, sorted(statuses))), len(samples), len(busy),
      "%.3f %.3f %.3f" % (last[1] - first[1], last[0] - first[2], last[2] - first[0]))
EOF
}

echo "TAP version 13"
echo "1..$((7 * $(wc -w <<<"$BACKENDS")))"
for b in $BACKENDS; do
	backend_runs "$b" 7 || continue
	spin
	start_exporter "$b" "^/$NAME/"
	scrape "$PORT" "$tmp/metrics" >/dev/null	# listening, its counters open
	# until SIGTERM, once the churned cgroups are freed
	"$BIN/cgtop" --log.level=warn --backend "$b" -b -d $DELAY -n 1000000 -e cpu-clock -r "^/$NAME/" \
		>"$tmp/top" 2>"$tmp/top.err" &
	top=$!
	pids+=("$top")
	first_table
	before=$(tables_printed)
	churn "$CHURN_S" >"$tmp/churned" &
	churner=$!
	read -r statuses nr with_busy counted lo hi <<<"$(scrapes "$SECONDS_")"
	wait "$churner"
	churn_rc=$?
	during=$(($(tables_printed) - before))
	at_end=$(dying "$CG/churn")
	kill -9 "$spinner"
	wait "$spinner" 2>/dev/null
	scrape "$PORT" "$tmp/metrics" >/dev/null	# the exporter lets the removed cgroups go
	read -r freed_s dying <<<"$(freed "$CG/churn")"
	kill -TERM "$top"
	wait "$top"
	top_rc=$?
	kill -TERM "$exporter"
	wait "$exporter"
	exp_rc=$?
	tables=$(tables_printed)
	busy_rows=$(awk -v p="/$NAME/busy" '$NF == p' "$tmp/top" | wc -l)
	read -r cycles ticks max_lag <"$tmp/churned"
	echo "# --backend $b: churn: exit $churn_rc, $cycles cgroups made and removed in $CHURN_S s ($ticks ticks of $PERIOD_US us, the latest $max_lag us late)"
	echo "# --backend $b: cgtop: exit $top_rc, $tables tables ($during during the churn), busy in $busy_rows; $(head -c 200 "$tmp/top.err")"
	echo "# --backend $b: exporter: HTTP $statuses, $nr scrapes, busy in $with_busy; busy counted $counted s, cpu.stat $lo-$hi s"
	echo "# --backend $b: cgroups dying: $at_end when the churn ended, $dying $freed_s s later (the spinner stopped)"
	tail -3 "$tmp/exp.err" | sed 's/^/# /'
	check "--backend $b: a cgroup made and removed every $PERIOD_US us ($cycles of $ticks ticks, exit $churn_rc)" \
		[ "$churn_rc" = 0 -a "$cycles" = "$ticks" ]
	check "--backend $b: cgtop under churn exits 0 on SIGTERM, nothing on stderr ($top_rc)" \
		[ "$top_rc" = 0 -a ! -s "$tmp/top.err" ]
	check "--backend $b: cgtop printed $during tables in the churn's $CHURN_S s, one every 2 s at least, the busy cgroup in each of its $tables ($busy_rows)" \
		[ "$during" -ge $((CHURN_S / 2)) -a "$busy_rows" = "$tables" ]
	check "--backend $b: the exporter under churn answers every scrape (HTTP $statuses) with the busy cgroup ($with_busy of $nr)" \
		[ "$statuses" = 200 -a "$nr" -ge 5 -a "$with_busy" = "$nr" ]
	# the events backend is the kernel's classic cgroup events: 6.16's
	# cpu-clock ones count 0 (tests/perf/classic-clock.sh)
	if [ "$b" = events ] && broken=$(classic_clock_broken); then
		skip "--backend $b: the busy cgroup's count against cpu.stat: $broken"
	else
		check "--backend $b: the busy cgroup's count follows cpu.stat within 10 % ($counted s, cpu.stat $lo-$hi s)" \
			awk -v c="$counted" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo > 0.5 && c >= 0.9 * lo && c <= 1.1 * hi) }'
	fi
	check "--backend $b: every removed cgroup freed, none held by the tools: none dying $freed_s s after the churn ($dying)" \
		[ "$dying" = 0 ]
	check "--backend $b: the exporter exits 0 on SIGTERM (exit $exp_rc)" [ "$exp_rc" = 0 ]
done
exit "$fail"
