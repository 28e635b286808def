#!/bin/bash
# Host test (TAP) of cgtop's batch options and of its screen on a narrow
# terminal, on the host's kernel with the events backend counting the
# cgroup2 root:
#  - -b -n 3 -d 0.1 -s context-switches: exactly three tables, each sorted
#    by context-switches, a count of the root's cpu-clock in each, exit 0;
#  - as systemd-cgtop: with stdout a file and no -n, one table and exit 0;
#    `cgtop | head -2` returns within seconds, with and without -n 1000
#    (the reader gone, cgtop ends: exit 0 or 141, nothing on stderr);
#  - in tmux on a 60 x 12 window with three events, every line fits the
#    width (capture-pane -J joins what the terminal wrapped) and the screen
#    starts with cgtop's header (nothing scrolled off); 'h' and '?' show
#    the keys, any key returns to the table; q quits with 0.
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

timeout 60 "$BIN/cgtop" --log.level=warn --backend events -b -n 3 -d 0.1 -e cpu-clock,context-switches \
	-s context-switches -r '^/$' >"$tmp/batch" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q 'not supported\|permission\|Permission' "$tmp/err"; then
	sed 's/^/# /' "$tmp/err"
	echo "1..0 # SKIP cgtop cannot count here"
	exit 4
fi
echo "TAP version 13"
echo "1..11"
sed 's/^/# /' "$tmp/batch" "$tmp/err"
tables=$(grep -c '^cgtop: ' "$tmp/batch")
sorted=$(grep -c '^cgtop: .*sorted by context-switches' "$tmp/batch")
counted=$(awk '$NF == "/" && $1 > 0' "$tmp/batch" | wc -l)
check "-b -n 3: exit $rc, $tables tables, $sorted sorted by context-switches, / counted in $counted" \
	[ $rc -eq 0 -a "$tables" = 3 -a "$sorted" = 3 -a "$counted" = 3 ]

timeout 20 "$BIN/cgtop" --log.level=warn --backend events -b -n 1 -s no-such-column -r '^/$' >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-s no-such-column: exit $rc, $(head -1 "$tmp/err")" \
	[ $rc -eq 2 -a ! -s "$tmp/out" -a "$(grep -c no-such-column "$tmp/err")" -ge 1 ]

# ---- without a terminal, as systemd-cgtop ----
start=$SECONDS
timeout 30 "$BIN/cgtop" --log.level=warn --backend events -d 0.1 -e cpu-clock -r '^/$' >"$tmp/file" 2>"$tmp/err"
rc=$?
tables=$(grep -c '^cgtop: ' "$tmp/file")
check "cgtop > file (no -n): exit $rc, $tables table(s) in $((SECONDS - start)) s, stderr '$(head -c 80 "$tmp/err")'" \
	[ $rc -eq 0 -a "$tables" = 1 -a ! -s "$tmp/err" ]
# cgtop | head -2: ARGS... of cgtop; "rc=cgtop's status lines=... secs=..."
piped() {
	local start=$SECONDS rcs
	timeout 30 "$BIN/cgtop" --log.level=warn --backend events -e cpu-clock -r '^/$' "$@" 2>"$tmp/err" |
		head -2 >"$tmp/head"
	rcs=("${PIPESTATUS[@]}")
	echo "rc=${rcs[0]} lines=$(grep -c '' "$tmp/head") secs=$((SECONDS - start))"
}
# within 10 s, status 0 or 141 (SIGPIPE), both lines, nothing on stderr
# shellcheck disable=SC2317 # run by check
piped_ok() {
	[[ $1 =~ ^rc=(0|141)\ lines=2\ secs=([0-9]+)$ ]] && [ "${BASH_REMATCH[2]}" -le 10 ] &&
		[ ! -s "$tmp/err" ]
}
for args in "-d 0.2" "-n 1000 -d 0.1"; do
	# shellcheck disable=SC2086 # the arguments are split on purpose
	got=$(piped $args)
	check "cgtop $args | head -2: $got, stderr '$(head -c 80 "$tmp/err")'" \
		piped_ok "$got"
done

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
# wait_screen REGEX: until the screen shows a line matching REGEX (20 s)
wait_screen() {
	for _ in $(seq 100); do
		"${TMUX_CMD[@]}" capture-pane -J -p -t cgtop >"$tmp/screen"
		grep -qE -- "$1" "$tmp/screen" && return 0
		sleep 0.2
	done
	return 1
}
# all 6 keys listed ($1), the help still shown after refreshes (0.2 s each)
# shellcheck disable=SC2317 # run by check
help_shown() {
	[ "$1" = 6 ] || return 1
	sleep 0.6
	"${TMUX_CMD[@]}" capture-pane -J -p -t cgtop | grep -q '^cgtop: keys'
}
# the help lists every key the man page's KEYS section names
for key in h '?'; do
	"${TMUX_CMD[@]}" send-keys -t cgtop "$key"
	wait_screen '^cgtop: keys'
	sed 's/^/# /' "$tmp/screen"
	keys=$(grep -cE '^ +(q|< >|p|r|space|h \?) +[a-z]' "$tmp/screen")
	check "'$key' shows the keys ($keys of 6 listed), for longer than a refresh" \
		help_shown "$keys"
	"${TMUX_CMD[@]}" send-keys -t cgtop x
	check "after '$key', any key returns to the table" wait_screen '^cgtop: 1 of 1 cgroups'
done
"${TMUX_CMD[@]}" send-keys -t cgtop q
for _ in $(seq 50); do [ -s "$tmp/status" ] && break; sleep 0.2; done
check "'q' quits: $(cat "$tmp/status" 2>/dev/null)" grep -qx "exit=0" "$tmp/status"
exit "$fail"
