#!/bin/bash
# Guest test (KTAP): the tools on cgroups named and restarted by others.
# Whoever owns a delegated subtree names its cgroups as they like, and a
# service restart removes its cgroup and makes it again under the same name.
#  - cgroup names with byte 0xff, a terminal escape, a C1 control (U+009B,
#    CSI in UTF-8), a backslash and a quote: cgroup-exporter's scrape is
#    valid UTF-8, promtool accepts it, and each name is served in the
#    documented notation (\xHH for what is not printable UTF-8, \\ for a
#    backslash); cgtop -b prints no control byte of a name;
#  - --textfile into a directory anyone can write, with links planted at
#    the file and at the temporary name the exporter used to use: no link
#    followed, the file replaced whole;
#  - rmdir + mkdir of a counted cgroup between two scrapes: one series per
#    event for its path (the old cgroup is dropped by id), and its count is
#    the new cgroup's (counted from the scrape that found it), on every
#    backend the kernel has.
# CGC_BIN selects the binaries (default build/bin).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
CG=/sys/fs/cgroup/cgnames-$$	# made here, removed at exit
NAME=${CG##*/}
pids=()
BIN=${CGC_BIN:-build/bin} PORT=${CGC_PORT:-9470}
# shellcheck source=tests/lib/tap.sh
source "$(dirname "$0")/../lib/tap.sh"
: "${fail:=0}"	# set by tap.sh

FF=$'ff\xff'
ESC=$'esc\e[31mred'
CSI=$'csi\xc2\x9b2J'
ODD='back\slash"quote'

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -e "$CG/cgroup.kill" ] && echo 1 >"$CG/cgroup.kill"
	sleep 0.2
	for d in "$CG"/*/; do rmdir "$d" 2>/dev/null; done
	rmdir "$CG" 2>/dev/null
}
trap cleanup EXIT

mkdir -p "$CG/$FF" "$CG/$ESC" "$CG/$CSI" "$CG/$ODD" "$CG/svc"
ip link set lo up 2>/dev/null || /usr/sbin/ip link set lo up

# a busy loop in cgroup $1 for $2 microseconds from its move there (in the background)
busy_in() {
	# shellcheck disable=SC2016 # expanded by the child
	bash -c 'echo $$ > "$1/cgroup.procs"; end=$((${EPOCHREALTIME/./} + $2))
		while ((${EPOCHREALTIME/./} < end)); do :; done' busy "$1" "$2" &
	pids+=($!)
}

# one scrape of the exporter on port $1 into file $2, waiting for it to answer
scrape() {
	python3 - "$1" "$2" <<'EOF'
import sys, time, urllib.request, urllib.error
url = "http://127.0.0.1:%s/metrics" % sys.argv[1]
for _ in range(100):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            open(sys.argv[2], "wb").write(r.read())
        sys.exit(0)
    except (urllib.error.URLError, ConnectionError):
        time.sleep(0.1)
sys.exit("# no answer from " + url)
EOF
}

# how many cpu-clock seconds series file $1 has for cgroup label $2, and their sum
series_of() {
	python3 - "$1" "$2" <<'EOF'
import sys
want = 'perf_cgroup_event_seconds_total{cgroup="%s",event="cpu-clock"} ' % sys.argv[2]
vals = [float(l[len(want):]) for l in open(sys.argv[1], encoding="utf-8").read().splitlines()
        if l.startswith(want)]
print(len(vals), sum(vals))
EOF
}

echo "TAP version 13"
echo "1..17"	# 8 + 3 per backend

# ---- names ----
out=$(mktemp)
"$BIN/cgroup-exporter" --web.listen-address="127.0.0.1:$PORT" -e cpu-clock -r "^/$NAME/" \
	--no-collector.leaves-only &
exporter=$!
pids+=("$exporter")
scrape "$PORT" "$out"
check "exporter: the scrape is valid UTF-8" python3 -c \
	'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$out"
if command -v promtool >/dev/null; then
	check "exporter: promtool check metrics accepts the scrape" \
		bash -c "promtool check metrics <'$out' 2>&1 | grep -v 'counter metrics should have' | grep -q . && exit 1 || exit 0"
else
	not_ok "exporter: promtool (Debian's prometheus package, from make deps) is missing"
fi
# the labels, in the exposition's own escaping (a backslash doubled again)
want_ff='\\xff' want_esc='\\x1b[31mred' want_csi='\\xc2\\x9b2J' want_odd='back\\\\slash\"quote'
labels_ok=1
for w in "/$NAME/ff$want_ff" "/$NAME/esc$want_esc" "/$NAME/csi$want_csi" "/$NAME/$want_odd"; do
	grep -qF "{cgroup=\"$w\",event=\"cpu-clock\"}" "$out" || { echo "# no series with cgroup=\"$w\""; labels_ok=0; }
done
check "exporter: names are served as \\xHH and \\\\ (unambiguous, printable)" [ $labels_ok = 1 ]
kill -TERM "$exporter"
wait "$exporter"
check "exporter exits 0 on SIGTERM" [ $? -eq 0 ]

top=$("$BIN/cgtop" -b -n 1 -d 0.2 -e cpu-clock -r "^/$NAME/" 2>&1)
# shellcheck disable=SC2001 # a prefix on every line
sed 's/^/# /' <<<"$top" | LC_ALL=C tr -d '\000-\011\013-\037\177'
check "cgtop -b: no control byte of a name reaches the output" \
	python3 -c 'import sys, re; t = sys.stdin.buffer.read()
sys.exit(bool(re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", t)))' <<<"$top"
check "cgtop -b: the escape's name is shown as \\x1b" grep -qF 'esc\x1b[31mred' <<<"$top"

# ---- --textfile in a directory others can write ----
# A link planted where the exporter used to write its temporary file
# (FILE.<pid>.tmp, the pid known before exec) and one at FILE itself:
# neither may be followed, the victim keeps its bytes, FILE is the text.
shared=$(mktemp -d)
chmod 1777 "$shared"
echo secret >"$shared/victim"
chmod 600 "$shared/victim"
ln -s victim "$shared/cg.prom"
# shellcheck disable=SC2016 # expanded by the child
bash -c 'ln -s victim "$1/cg.prom.$$.tmp"; exec "$2" -e cpu-clock -r "^/$3/svc$" \
	--textfile="$1/cg.prom" --textfile.interval=0.1 --textfile.writes=1' textfile "$shared" "$BIN/cgroup-exporter" "$NAME" \
	2>"$out.err"
rc=$?
sed 's/^/# /' "$out.err"
check "--textfile: exit 0, no planted link followed, the victim unchanged" \
	[ $rc = 0 -a "$(cat "$shared/victim")" = secret ]
check "--textfile: FILE is a regular file with the metrics, no temporary file left" \
	bash -c "[ -f '$shared/cg.prom' ] && [ ! -L '$shared/cg.prom' ] &&
		grep -q '^perf_cgroup_event_seconds_total{cgroup=\"/$NAME/svc\"' '$shared/cg.prom' &&
		[ \$(find '$shared' -name 'cg.prom.*' ! -type l | wc -l) = 0 ]"
rm -rf "$shared"

# ---- restart under the same name ----
for b in events shared rstat; do
	port=$((PORT + 1))
	"$BIN/cgroup-exporter" --backend "$b" --web.listen-address="127.0.0.1:$port" \
		-e cpu-clock -r "^/$NAME/svc$" 2>"$out.err" &
	exporter=$!
	pids+=("$exporter")
	if ! scrape "$port" "$out" || grep -q "not supported by this kernel\|not available" "$out.err"; then
		skip "--backend $b: $(head -1 "$out.err")"
		skip "--backend $b restart"
		skip "--backend $b exit status"
		kill -9 "$exporter" 2>/dev/null
		wait "$exporter" 2>/dev/null
		continue
	fi
	busy_in "$CG/svc" 600000
	wait "${pids[-1]}"
	scrape "$port" "$out"
	read -r nr before <<<"$(series_of "$out" "/$NAME/svc")"
	echo "# --backend $b: before the restart, $nr series, $before s"
	rmdir "$CG/svc" && mkdir "$CG/svc"
	scrape "$port" "$out"	# drops the removed cgroup, adds the new one
	busy_in "$CG/svc" 400000
	wait "${pids[-1]}"
	used=$(awk '$1 == "usage_usec" { print $2 / 1e6 }' "$CG/svc/cpu.stat")
	scrape "$port" "$out"
	read -r nr after <<<"$(series_of "$out" "/$NAME/svc")"
	echo "# --backend $b: after, $nr series, $after s; the new cgroup's cpu.stat $used s"
	check "--backend $b: before the restart, the cgroup's time is served" \
		awk -v b="$before" 'BEGIN { exit !(b > 0.3) }'
	check "--backend $b: after rmdir + mkdir, one series for the path, the new cgroup's count (cpu.stat 10%)" \
		awk -v n="$nr" -v a="$after" -v u="$used" 'BEGIN { exit !(n == 1 && u > 0.1 && a >= 0.9 * u && a <= 1.1 * u) }'
	kill -TERM "$exporter"
	wait "$exporter"
	check "--backend $b: exporter exits 0 on SIGTERM" [ $? -eq 0 ]
done
rm -f "$out" "$out.err"
exit $fail
