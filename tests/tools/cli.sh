#!/bin/bash
# Host test (TAP) of the command-line conventions of every tool (tools/cli.h)
# and of its man page (docs/man):
#  - --help prints the usage on stdout, nothing on stderr, exit status 0;
#  - --version prints "TOOL (linux-multicgroup) VERSION", exit status 0,
#    VERSION the packages' (debian/changelog), bench drivers included;
#  - an unknown option and a bad value print on stderr only, exit status 2;
#    so do an unknown event and a bad regex (cgtop, cgroup-exporter: what
#    libcgcount refuses of the command line is a usage error too);
#  - --help has no unexpanded printf conversion (%s);
#  - `man -l` renders the man page without a warning, every option the
#    usage names (-x, --long) appears in it, and its .TH names VERSION;
#  - the bench drivers cgbench and memcg_stat_bench (bench/README.md
#    documents them, no man page): --help, --version and an unknown option
#    the same way.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${TOOLS_BIN:-build/bin}
MAN=docs/man
TOOLS="cgtop cgroup-exporter cgrstat memcg-stat cgroup-counter"
# the version every tool says: the packages' (the image's tag follows it)
VERSION=$(dpkg-parsechangelog -l debian/changelog -S Version)
# a value each tool must refuse
declare -A BAD_VALUE=(
	[cgtop]="-d nope" [cgroup-exporter]="--textfile.interval=-1"
	[cgrstat]="--no-such-option" [memcg-stat]="-n 0 /" [cgroup-counter]="-e no-such-event /"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

# run TOOL ARGS...: exit status in $rc, output in $tmp/out and $tmp/err
run() {
	local tool=$1
	shift
	timeout 20 "$BIN/$tool" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}

# The options a usage text names: -x and --long-name (without =VALUE).
options_of() {
	grep -oE -- '(^|[ ,[|])--?[a-zA-Z][a-zA-Z0-9.-]*' "$1" | sed 's/^[ ,[|]//' | sort -u
}

echo "TAP version 13"
# the command-line input libcgcount (libcgrstat for cgrstat) refuses:
# TOOL|what|arguments|what stderr must name
LIB_USAGE=(
	"cgtop|an unknown event|-b -n 1 -d 0.1 -e no-such-event|no-such-event"
	"cgtop|a malformed PMU event|-b -n 1 -d 0.1 -e software/config=/|software/config=/"
	"cgtop|a bad regex|-b -n 1 -d 0.1 -e cpu-clock -r (|"
	"cgroup-exporter|an unknown event|--textfile=- -e no-such-event|no-such-event"
	"cgroup-exporter|a bad regex|--textfile=- --textfile.interval=0.1 -e cpu-clock -r (|"
	"cgrstat|an unknown event|-e cpu-clock,no-such-event -d 0|no-such-event"
)
echo "1..$(( $(wc -w <<<"$TOOLS") * 5 + ${#LIB_USAGE[@]} + 6 ))"
for t in $TOOLS; do
	if [ ! -x "$BIN/$t" ]; then
		for _ in 1 2 3 4 5; do not_ok "$t: $BIN/$t not built"; done
		continue
	fi
	run "$t" --help
	cp "$tmp/out" "$tmp/help"
	check "$t --help: usage on stdout, exit 0" \
		[ $rc -eq 0 -a -s "$tmp/out" -a ! -s "$tmp/err" -a "$(grep -c '^usage: ' "$tmp/out")" -ge 1 \
		  -a "$(grep -c '%[sdu]' "$tmp/out")" = 0 ]
	run "$t" --version
	check "$t --version: '$(cat "$tmp/out")', exit 0, the packages' $VERSION" \
		[ $rc -eq 0 -a "$(cat "$tmp/out")" = "$t (linux-multicgroup) $VERSION" ]
	run "$t" --no-such-option
	check "$t --no-such-option: stderr only, exit 2" [ $rc -eq 2 -a ! -s "$tmp/out" -a -s "$tmp/err" ]
	# shellcheck disable=SC2086 # the bad value is split on purpose
	run "$t" ${BAD_VALUE[$t]}
	check "$t ${BAD_VALUE[$t]}: $(head -1 "$tmp/err"), exit 2" [ $rc -eq 2 -a ! -s "$tmp/out" -a -s "$tmp/err" ]
	if [ ! -f "$MAN/$t.1" ]; then
		not_ok "$t: no man page $MAN/$t.1"
		continue
	fi
	LC_ALL=C.UTF-8 MANWIDTH=200 man --warnings -l "$MAN/$t.1" >"$tmp/man" 2>"$tmp/manerr"
	missing=""
	for opt in $(options_of "$tmp/help"); do
		case $opt in
		--*) grep -qF -- "$opt" "$tmp/man" ;;
		*) grep -qE -- "(^|[^-[:alnum:]])$opt([^[:alnum:]]|\$)" "$tmp/man" ;;	# not inside --long
		esac || missing="$missing $opt"
	done
	th=$(head -1 "$MAN/$t.1")
	check "$t.1 renders without warnings ($(head -1 "$tmp/manerr")), names every option of --help${missing:+ (missing:$missing)} and $VERSION ($th)" \
		[ -s "$tmp/man" -a ! -s "$tmp/manerr" -a -z "$missing" -a "$(grep -cF "\"linux-multicgroup $VERSION\"" <<<"$th")" = 1 ]
done
for c in "${LIB_USAGE[@]}"; do
	IFS='|' read -r t what args names <<<"$c"
	# shellcheck disable=SC2086 # the arguments are split on purpose
	run "$t" $args
	check "$t: $what ($args): $(head -c 100 "$tmp/err"), exit 2" \
		[ $rc -eq 2 -a -s "$tmp/err" -a "$(grep -cF -- "$names" "$tmp/err")" -ge 1 ]
done

# bench driver|an unknown option
BENCH_DRIVERS=("cgbench|cost --no-such-option" "memcg_stat_bench|--no-such-option")
for b in "${BENCH_DRIVERS[@]}"; do
	IFS='|' read -r t args <<<"$b"
	run "$t" --help
	check "$t --help: usage on stdout, exit 0" \
		[ $rc -eq 0 -a ! -s "$tmp/err" -a "$(grep -c '^usage: ' "$tmp/out")" = 1 ]
	run "$t" --version
	check "$t --version: '$(cat "$tmp/out")', exit 0, the packages' $VERSION" \
		[ $rc -eq 0 -a "$(cat "$tmp/out")" = "$t (linux-multicgroup) $VERSION" ]
	# shellcheck disable=SC2086 # the arguments are split on purpose
	run "$t" $args
	check "$t $args: stderr only, exit 2" [ $rc -eq 2 -a ! -s "$tmp/out" -a -s "$tmp/err" ]
done
exit "$fail"
