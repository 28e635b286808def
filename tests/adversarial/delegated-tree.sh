#!/bin/bash
# Guest test (TAP): the tools on a cgroup tree built by an unprivileged user
# in a subtree delegated to it, as systemd's user@.service delegates one
# (the cgroup and its cgroup.procs, cgroup.subtree_control and
# cgroup.threads chowned to the user). As that user, with no capability:
#  - hostile_tree (tests/cgcount/hostile_tree.c) builds a chain 1,500
#    levels deep, a 4,095-byte path with a child, names with byte 0xff and
#    terminal escapes, 2,000 siblings (HOSTILE_DEPTH and HOSTILE_WIDE
#    set the levels and siblings: the debug kernel's smaller tree,
#    tests/vm-tests.d/66-adversarial.list), and checks libcgcount's
#    subtree, regex, path and id adds on it (through auto's backend);
#  - a directory "private" made 0700 with three children, whose files are
#    made 000, and 000 files in the hostile tree: what the user controls.
# Then on every backend (shared where the kernel has it):
#  - cgtop -b -n 2 --subtree exits 0 and counts every cgroup (root reads
#    past the modes: CAP_DAC_READ_SEARCH);
#  - cgtop as root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH exits 0
#    and counts the cgroups it can read: all but private's children;
#  - cgroup-exporter --subtree answers HTTP 200 with a series for every
#    cgroup, promtool check metrics accepts the scrape, and it exits 0 on
#    SIGTERM (ASan: no error, no leak).
# The truth: the cgroups made (hostile_tree's count, each mkdir that
# succeeded, and the four of private).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
# shellcheck source=tests/adversarial/adv-lib.sh
source tests/adversarial/adv-lib.sh
: "${fail:=0}"	# set by tap.sh
HOSTILE_TREE=${HOSTILE_TREE:-build/cgcount/asan/hostile_tree}
USER_ID=${DELEGATE_UID:-4242}
NAME=advdeleg-$$
CG=$ROOT/$NAME
SUB=/$NAME
PORT=${CGC_PORT:-9481}
# The guest's root directory (its initramfs) is 0700: a user could run
# nothing from /usr. Opened for the test, as a host's is.
root_mode=$(stat -c %a /)
chmod 755 /

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	adv_cleanup
	chmod "$root_mode" /
}
trap cleanup EXIT

as_user() { setpriv --reuid="$USER_ID" --regid="$USER_ID" --clear-groups "$@"; }

# the events backend opens an event per cgroup and cpu: 3,500 cgroups
ulimit -n 65536

echo "TAP version 13"
echo "1..$((8 + 6 * $(wc -w <<<"$BACKENDS")))"

# ---- the delegation, then the user's tree ----
mkdir "$CG" || exit 1
chown "$USER_ID:$USER_ID" "$CG" "$CG/cgroup.procs" "$CG/cgroup.subtree_control" "$CG/cgroup.threads"
check "the user makes a cgroup in its delegated subtree" as_user mkdir "$CG/tree"
as_user mkdir "$ROOT/$NAME-outside" 2>"$tmp/err"
check "the user may not make one outside it: $(head -1 "$tmp/err")" grep -q "Permission denied" "$tmp/err"
out=$("$HOSTILE_TREE" "$CG/tree" auto "$USER_ID" 2>&1)
rc=$?
grep -v '^RESULT \|^COUNT ' <<<"$out" | sed '/^#/!s/^/# /'
count=$(awk '$1 == "COUNT" { print $2 }' <<<"$out")
nr_results=0
while read -r _ verdict what; do
	nr_results=$((nr_results + 1))
	if [ "$verdict" = ok ]; then ok "built by uid $USER_ID: $what"; else not_ok "built by uid $USER_ID: $what"; fi
done < <(grep '^RESULT ' <<<"$out")
for i in $(seq $((nr_results + 1)) 4); do
	not_ok "hostile_tree check $i (no result, exit $rc)"
done
# every cgroup of the tree is the user's
owners=$(find "$CG/tree" -type d ! -uid "$USER_ID" | wc -l)
echo "# hostile_tree exit $rc, $count cgroups made, $owners not owned by uid $USER_ID"
check "hostile_tree exits 0 (ASan: no error, no leak), every cgroup the user's ($owners of another owner)" \
	[ "$rc" -eq 0 -a "$owners" = 0 ]
count=${count:-0}

# what the user controls: a directory only it can read, files no one can
as_user mkdir -p "$CG/private/a" "$CG/private/b" "$CG/private/c"
as_user find "$CG/private" -mindepth 2 -type f -exec chmod 000 {} +
as_user chmod 700 "$CG/private"
as_user find "$CG/tree/names" "$CG/tree/wide/s7" -type f -exec chmod 000 {} +
as_user chmod 000 "$CG/tree/wide/s9"
all=$((count + 5))	# the tree's, $CG and private's four
# those root without DAC capabilities can open: not private (0700, the
# user's) and its children, not wide/s9 (000); fwalk: relative opens, past
# PATH_MAX
readable=$(setpriv --bounding-set=-dac_override,-dac_read_search python3 -c '
import os, sys
sys.setrecursionlimit(100000)	# one frame per level: 1,500 levels
print(sum(1 for _ in os.fwalk(sys.argv[1], onerror=lambda e: None)))' "$CG")
echo "# $all cgroups, $readable of them readable without DAC capabilities"
setpriv --bounding-set=-dac_override,-dac_read_search ls "$CG/private" >/dev/null 2>"$tmp/err"
modes="$(stat -c %a "$CG/private") $(stat -c %a "$CG/private/a/cgroup.procs")"
check "uid $USER_ID made private $modes: root without capabilities: $(head -1 "$tmp/err")" \
	[ "$modes" = "700 0" -a "$(grep -c "Permission denied" "$tmp/err")" = 1 ]

# cgtop -b -n 2 on the tree: its last header's "S of N cgroups" N, or "exit RC"
cgtop_count() { # BACKEND [setpriv's options]
	local b=$1 rc
	shift
	# shellcheck disable=SC2068 # no options: no word
	setpriv $@ "$BIN/cgtop" --backend "$b" -e cpu-clock -b -n 2 -d 0.5 --subtree "$SUB" \
		>"$tmp/top" 2>"$tmp/top.err"
	rc=$?
	grep '^cgtop:' "$tmp/top" | sed 's/^/# /' >&2
	tail -3 "$tmp/top.err" | tr -cd '[:print:]\n' | sed 's/^/# /' >&2
	if [ $rc -ne 0 ]; then
		echo "exit $rc"
		return
	fi
	awk '/^cgtop:/ { n = $4 } END { print n }' "$tmp/top"
}

for b in $BACKENDS; do
	backend_runs "$b" 6 || continue
	got=$(cgtop_count "$b")
	check "--backend $b: cgtop -b -n 2 --subtree exits 0 and counts every cgroup ($got of $all)" \
		[ "$got" = "$all" ]
	got=$(cgtop_count "$b" --bounding-set=-dac_override,-dac_read_search)
	check "--backend $b: cgtop without DAC capabilities exits 0 and counts the readable ($got of $readable)" \
		[ "$got" = "$readable" ]
	"$BIN/cgroup-exporter" --backend "$b" --web.listen-address="127.0.0.1:$PORT" -e cpu-clock \
		--subtree "$SUB" --no-collector.leaves-only 2>"$tmp/exp.err" &
	exporter=$!
	pids+=("$exporter")
	rm -f "$tmp/metrics"
	status=$(scrape "$PORT" "$tmp/metrics" "$exporter")
	served=$(python3 - "$tmp/metrics" "$SUB" <<'EOF'
import re, sys
# label values are UTF-8 (the exporter writes other bytes as \xHH)
text = open(sys.argv[1], "rb").read().decode("utf-8", "surrogateescape")
series = re.compile(r'^perf_cgroup_event_seconds_total\{cgroup="((?:[^"\\]|\\.)*)",event="cpu-clock"\} ')
sub = sys.argv[2]
print(len({m.group(1) for m in map(series.match, text.splitlines())
           if m and (m.group(1) == sub or m.group(1).startswith(sub + "/"))}))
EOF
	)
	echo "# --backend $b: HTTP $status, $(wc -c <"$tmp/metrics" 2>/dev/null) bytes, $served cgroups served"
	check "--backend $b: cgroup-exporter answers the scrape (HTTP $status)" [ "$status" = 200 ]
	check "--backend $b: cgroup-exporter serves a series for every cgroup ($served of $all)" \
		[ "$served" = "$all" ]
	promtool check metrics <"$tmp/metrics" >"$tmp/lint" 2>&1
	grep -v 'counter metrics should have' "$tmp/lint" | head -5 | sed 's/^/# promtool: /'
	check "--backend $b: promtool check metrics accepts the scrape" \
		bash -c "! grep -v 'counter metrics should have' '$tmp/lint' | grep -q ."
	kill -TERM "$exporter"
	wait "$exporter"
	rc=$?
	tail -3 "$tmp/exp.err" | sed 's/^/# /'
	check "--backend $b: cgroup-exporter exits 0 on SIGTERM (exit $rc)" [ $rc -eq 0 ]
done
exit "$fail"
