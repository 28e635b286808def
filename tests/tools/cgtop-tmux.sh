#!/bin/bash
# Guest test (TAP): cgtop driven in a terminal as a user would, in tmux
# (send-keys, capture-pane), on a 100 x 15 window, with 30 idle cgroups, a
# busy loop, a sleep loop (awake 100 times a second) and a cgroup with a
# 90-character name:
#  - the table fits the window: no line wider than 100 columns, no more rows
#    than the window has, the header saying how many of the cgroups it shows;
#  - the busy cgroup is first (sorted by cpu-clock), near 100 % of a cpu;
#  - '>' sorts by context-switches, the largest first; 'p' by path;
#  - a long path is cut from the left, keeping its end;
#  - 'q' quits with exit status 0 and restores the terminal.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
BIN=${TOOLS_BIN:-build/bin}
CG=${CGROOT:-/sys/fs/cgroup}
TOP=tmux-$$
LONG=$(printf 'l%.0s' $(seq 90))
tmp=$(mktemp -d)
TMUX_CMD=(tmux -S "$tmp/sock")
pids=()

# shellcheck source=tests/lib/tap.sh
source "$(dirname "$0")/../lib/tap.sh"
: "${fail:=0}"	# set by tap.sh

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	"${TMUX_CMD[@]}" kill-server 2>/dev/null
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	find "$CG/$TOP" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# -J: a line the terminal wrapped comes back whole, as wide as it was
capture() { "${TMUX_CMD[@]}" capture-pane -J -p -t cgtop >"$tmp/screen"; }

# wait_screen REGEX: until the screen shows a line matching REGEX (30 s)
wait_screen() {
	for _ in $(seq 150); do
		capture
		grep -qE -- "$1" "$tmp/screen" && return 0
		nap 0.2
	done
	sed 's/^/# /' "$tmp/screen"
	return 1
}

# the first data row's path (rows start after the 3 header lines)
first_path() { awk 'NR == 4 { print $NF }' "$tmp/screen"; }

mkdir -p "$CG/$TOP/busy" "$CG/$TOP/sleepy" "$CG/$TOP/$LONG"
for i in $(seq 30); do mkdir "$CG/$TOP/idle$i"; done
bash -c "echo \$\$ > $CG/$TOP/busy/cgroup.procs; while :; do :; done" &
pids+=($!)
# the sleepers and the polls wait on a fifo no one writes (read -t: bash's
# own timer), not in a forked sleep: a fork every 10 ms costs a debug
# kernel (KASAN, lockdep) more cpu than the busy loop gets
mkfifo "$tmp/never"
exec 4<>"$tmp/never"
nap() { read -r -t "$1" -u 4; }
sleeper() { # CGROUP SECONDS
	bash -c "echo \$\$ > '$1/cgroup.procs'; exec 3<>'$tmp/never'; while :; do read -r -t $2 -u 3; done" &
	pids+=($!)
}
sleeper "$CG/$TOP/sleepy" 0.01
sleeper "$CG/$TOP/$LONG" 0.5

echo "TAP version 13"
echo "1..8"
export TERM=xterm
"${TMUX_CMD[@]}" -f /dev/null new-session -d -s cgtop -x 100 -y 15 \
	"$BIN/cgtop -e cpu-clock,context-switches -d 1 -r '^/$TOP/'; echo exit=\$? >$tmp/status; sleep 30"
wait_screen "^cgtop: 11 of 33 cgroups.*iteration ([2-9]|[0-9]{2,}),"
sed 's/^/# /' "$tmp/screen"
lines=$(grep -c '' "$tmp/screen")
rows=$(awk 'NR > 3 && NF' "$tmp/screen" | wc -l)
widest=$(awk '{ sub(/ +$/, ""); if (length > w) w = length } END { print w }' "$tmp/screen")
check "fits 100 x 15: $lines lines, the widest $widest columns, $rows of 33 cgroups shown" \
	[ "$lines" -le 15 -a "$widest" -le 100 -a "$rows" = 11 ]
busy_cpu=$(awk -v p="/$TOP/busy" '$NF == p { print int($1) }' "$tmp/screen")
check "sorted by cpu-clock: /$TOP/busy first ($(first_path)), at ${busy_cpu:-?} % of a cpu" \
	[ "$(first_path)" = "/$TOP/busy" -a "${busy_cpu:-0}" -ge 40 -a "${busy_cpu:-0}" -le 105 ]
check "the long path cut from the left, its end kept" \
	grep -qE " \.\.\.l+$" "$tmp/screen"

"${TMUX_CMD[@]}" send-keys -t cgtop '>'
wait_screen "sorted by context-switches"
sed 's/^/# /' "$tmp/screen"
# the context-switches column (1.2k = 1200) from the top row down
switches=$(awk 'NR > 3 && NF { v = $2; m = 1
	if (v ~ /k$/) m = 1e3; else if (v ~ /M$/) m = 1e6
	sub(/[kM]$/, "", v); print v * m }' "$tmp/screen")
check "'>' sorts by context-switches: $(echo "$switches" | head -3 | tr '\n' ' ')... per second, non-increasing" \
	[ "$(head -1 <<<"$switches")" != 0 -a "$switches" = "$(sort -g -r <<<"$switches")" ]

"${TMUX_CMD[@]}" send-keys -t cgtop 'p'
wait_screen "sorted by path"
sorted=$(awk 'NR > 3 { print $NF }' "$tmp/screen" | sed '/^$/d')
check "'p' sorts by path: $(echo "$sorted" | head -3 | tr '\n' ' ')..." \
	[ "$sorted" = "$(LC_ALL=C sort <<<"$sorted")" -a "$(echo "$sorted" | head -1)" = "/$TOP/busy" ]

"${TMUX_CMD[@]}" send-keys -t cgtop 'r'
wait_screen "sorted by path \(reversed\)"
check "'r' reverses: /$TOP/sleepy first ($(first_path))" [ "$(first_path)" = "/$TOP/sleepy" ]

"${TMUX_CMD[@]}" send-keys -t cgtop 'q'
for _ in $(seq 50); do [ -s "$tmp/status" ] && break; nap 0.2; done
check "'q' quits: $(cat "$tmp/status" 2>/dev/null)" grep -qx "exit=0" "$tmp/status"
capture
check "the terminal's screen is restored (no table left on it)" \
	[ "$(grep -cE '^cgtop: [0-9]+ of ' "$tmp/screen")" = 0 ]
exit $fail
