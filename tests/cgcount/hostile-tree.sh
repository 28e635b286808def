#!/bin/bash
# Guest test (KTAP): libcgcount and its tools on a cgroup tree built as the
# owner of a delegated subtree may build it (tests/cgcount/hostile_tree.c:
# 1,500 levels, a 4,095-byte path with a child, names with 0xff bytes and
# terminal escapes, 2,000 siblings):
#  - libcgcount's subtree, regex, path and id adds count every cgroup of
#    it, each path whole (hostile_tree's checks against the paths it made),
#    through the rstat backend and through auto's choice;
#  - cgtop -b -n 2 on it (--subtree and -r) exits 0 and counts every cgroup;
#  - one scrape of cgroup-exporter --subtree answers HTTP 200 with a series
#    for every cgroup, and the exporter exits 0 on SIGTERM.
# CGC_BIN selects the tools (default build/bin; the ASan run passes
# build/cgcount/asan/bin), HOSTILE_TREE the program (the ASan build),
# HOSTILE_DEPTH and HOSTILE_WIDE the chain's levels and the siblings (the
# debug kernel's smaller tree: tests/vm-tests.d/60-cgcount.list).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
BIN=${CGC_BIN:-build/bin}
HOSTILE_TREE=${HOSTILE_TREE:-build/cgcount/asan/hostile_tree}
ROOT=$(findmnt -n -f -t cgroup2 -o TARGET)
NAME=cghostile-$$
CG=$ROOT/$NAME
PORT=${CGC_PORT:-9466}
n=0
fail=0
exporter=

ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; fail=1; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -n "$exporter" ] && kill -9 "$exporter" 2>/dev/null
	wait 2>/dev/null
	# children first, each removed relative to its parent: any depth, any length
	[ -d "$CG" ] && find "$CG" -depth -type d -delete
}
trap cleanup EXIT

echo "TAP version 13"
echo "1..15"
mkdir "$CG" || exit 1
ip link set lo up 2>/dev/null || /usr/sbin/ip link set lo up

# ---- libcgcount ----
# hostile_tree's checks through BACKEND on a tree it builds in DIR; sets count
hostile_tree() { # DIR BACKEND
	local out rc nr_results=0 verdict what i
	mkdir "$1" || exit 1
	out=$("$HOSTILE_TREE" "$1" "$2" 2>&1)
	rc=$?
	grep -v '^RESULT \|^COUNT ' <<<"$out" | sed '/^#/!s/^/# /'
	count=$(awk '$1 == "COUNT" { print $2 }' <<<"$out")
	while read -r _ verdict what; do
		nr_results=$((nr_results + 1))
		if [ "$verdict" = ok ]; then ok "$2: $what"; else not_ok "$2: $what"; fi
	done < <(grep '^RESULT ' <<<"$out")
	for i in $(seq $((nr_results + 1)) 4); do
		not_ok "$2: hostile_tree check $i (no result, exit $rc)"
	done
	check "$2: hostile_tree exits 0 (ASan: no error, no leak)" [ "$rc" -eq 0 ]
	count=${count:-0}
}
# through rstat (which reads a subtree past PATH_MAX through an ancestor's
# path) and through auto's choice
hostile_tree "$CG/rstat" rstat
hostile_tree "$CG/auto" auto
SUB=/$NAME/auto

# ---- cgtop ----
# cgtop's headers as comments; the number of cgroups in the last one
# ("cgtop: S of N cgroups, ..."), "exit N" if it failed
cgtop_count() { # cgtop arguments...
	local out rc
	out=$("$BIN/cgtop" -e cpu-clock -b -n 2 -d 1 --rows 3 "$@" 2>&1)
	rc=$?
	grep '^cgtop:' <<<"$out" | sed 's/^/# /' >&2
	if [ $rc -ne 0 ]; then
		tail -3 <<<"$out" | tr -cd '[:print:]\n' | sed 's/^/# /' >&2
		echo "exit $rc"
		return
	fi
	awk '/^cgtop:/ { n = $4 } END { print n }' <<<"$out"
}
got=$(cgtop_count --subtree "$SUB")
echo "# cgtop --subtree: $got of $count cgroups"
check "cgtop -b -n 2 --subtree on the hostile tree exits 0 and counts every cgroup" \
	[ "$got" = "$count" ]
got=$(cgtop_count -r "^$SUB(/|\$)")
echo "# cgtop -r: $got of $count cgroups"
check "cgtop -b -n 2 -r on the hostile tree exits 0 and counts every cgroup" \
	[ "$got" = "$count" ]

# ---- cgroup-exporter ----
"$BIN/cgroup-exporter" --web.listen-address="127.0.0.1:$PORT" -e cpu-clock --subtree "$SUB" \
	--no-collector.leaves-only &
exporter=$!
py_out=$(python3 - "$PORT" "$SUB" <<'EOF' 2>&1
import re, sys, time, urllib.request, urllib.error

port, sub = sys.argv[1], sys.argv[2]
url = "http://127.0.0.1:%s/metrics" % port
for _ in range(300):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            status, body = r.status, r.read()
        break
    except (urllib.error.URLError, ConnectionError):
        time.sleep(0.1)
else:
    raise SystemExit("# no answer from " + url)
# label values are bytes as the cgroup names are: 0xff is not UTF-8
text = body.decode("utf-8", "surrogateescape")
series = re.compile(r'^perf_cgroup_event_seconds_total\{cgroup="((?:[^"\\]|\\.)*)",event="cpu-clock"\} ')
cgroups = set()
for line in text.splitlines():
    m = series.match(line)
    if m and (m.group(1) == sub or m.group(1).startswith(sub + "/")):
        cgroups.add(m.group(1))
longest = max((len(c) for c in cgroups), default=0)
print("# HTTP %d, %d bytes, %d cgroups served, the longest label %d bytes"
      % (status, len(body), len(cgroups), longest))
print("SERVED %d %d" % (status, len(cgroups)))
EOF
)
grep -v '^SERVED ' <<<"$py_out"
read -r _ status served < <(grep '^SERVED ' <<<"$py_out" || echo "SERVED 0 0")
check "cgroup-exporter --subtree answers a scrape of the hostile tree (HTTP 200)" [ "$status" = 200 ]
check "cgroup-exporter serves a series for every cgroup of it" [ "$served" = "$count" ]
kill -TERM "$exporter"
wait "$exporter"
rc=$?
exporter=
check "cgroup-exporter exits 0 on SIGTERM (ASan: no error, no leak)" [ $rc -eq 0 ]
exit $fail
