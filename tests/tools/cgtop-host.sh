#!/bin/bash
# Host test (TAP) of cgtop's batch options and of its screen on a narrow
# terminal, on the host's kernel with the events backend counting the
# cgroup2 root:
#  - -b -n 3 -d 0.1 -s context-switches: exactly three tables, each sorted
#    by context-switches, a count of the root's cpu-clock in each, exit 0;
#  - in tmux on a 60 x 12 window with three events, every line fits the
#    width (capture-pane -J joins what the terminal wrapped) and the screen
#    starts with cgtop's header (nothing scrolled off); q quits with 0.
# (cgtop on every backend, its sort keys and a window full of cgroups:
# tests/cgcount/tools.sh and tests/tools/cgtop-tmux.sh in the guest.)
# Skipped (exit 4) when cgtop cannot count here.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${TOOLS_BIN:-build/bin}
COLS=60
ROWS=12
tmp=$(mktemp -d)
TMUX_CMD=(tmux -S "$tmp/sock")

# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	"${TMUX_CMD[@]}" kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

timeout 60 "$BIN/cgtop" --backend events -b -n 3 -d 0.1 -e cpu-clock,context-switches \
	-s context-switches -r '^/$' >"$tmp/batch" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q 'not supported\|permission\|Permission' "$tmp/err"; then
	sed 's/^/# /' "$tmp/err"
	echo "1..0 # SKIP cgtop cannot count here"
	exit 4
fi
echo "TAP version 13"
echo "1..4"
sed 's/^/# /' "$tmp/batch" "$tmp/err"
tables=$(grep -c '^cgtop: ' "$tmp/batch")
sorted=$(grep -c '^cgtop: .*sorted by context-switches' "$tmp/batch")
counted=$(awk '$NF == "/" && $1 > 0' "$tmp/batch" | wc -l)
check "-b -n 3: exit $rc, $tables tables, $sorted sorted by context-switches, / counted in $counted" \
	[ $rc -eq 0 -a "$tables" = 3 -a "$sorted" = 3 -a "$counted" = 3 ]

timeout 20 "$BIN/cgtop" --backend events -b -n 1 -s no-such-column -r '^/$' >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-s no-such-column: exit $rc, $(head -1 "$tmp/err")" \
	[ $rc -eq 2 -a ! -s "$tmp/out" -a "$(grep -c no-such-column "$tmp/err")" -ge 1 ]

export TERM=xterm
"${TMUX_CMD[@]}" -f /dev/null new-session -d -s cgtop -x $COLS -y $ROWS \
	"$BIN/cgtop --backend events -e cpu-clock,context-switches,task-clock -s task-clock -d 0.2 -r '^/$'; echo exit=\$? >$tmp/status; sleep 30"
for _ in $(seq 100); do
	"${TMUX_CMD[@]}" capture-pane -J -p -t cgtop >"$tmp/screen"
	grep -qE 'iteration ([3-9]|[0-9]{2,})' "$tmp/screen" && break
	sleep 0.2
done
sed 's/^/# /' "$tmp/screen"
widest=$(awk '{ sub(/ +$/, ""); if (length > w) w = length } END { print w + 0 }' "$tmp/screen")
check "$COLS x $ROWS: the widest line $widest columns, the first '$(head -1 "$tmp/screen" | cut -c1-20)...'" \
	[ "$widest" -le $COLS -a "$(head -1 "$tmp/screen" | grep -c '^cgtop: 1 of 1 cgroups')" = 1 ]
"${TMUX_CMD[@]}" send-keys -t cgtop q
for _ in $(seq 50); do [ -s "$tmp/status" ] && break; sleep 0.2; done
check "'q' quits: $(cat "$tmp/status" 2>/dev/null)" grep -qx "exit=0" "$tmp/status"
exit "$fail"
