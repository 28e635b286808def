#!/bin/bash
# Host test (TAP): the make fragments (*/*.mk, */*/*.mk) mean the same in any
# order, as the Makefile's header promises.
#
# A fragment that reads another component's variable while it is parsed (a
# `:=` assignment, a prerequisite written $(VAR) instead of $$(VAR)) gets
# an empty word when that component's fragment comes later: a library left
# out of a link line, a rule that does not rebuild when the library
# changes. The root Makefile includes the fragments sorted by path, which
# hides such a dependency until a folder is renamed. This reads make's
# database (`make -pnq`: every variable and rule, nothing built) once with
# the fragments in the Makefile's order and once in the reverse order, and
# compares them. Only the lists fragments append to (GUEST_BINS, HOST_TESTS,
# .PHONY, the `tests` rule built from them, and `make help`'s list of
# makefiles) may differ in word order.
# scripts/bpf-toolchain.mk stays first in both: every component builds with it.
#
# No set -e: a failed check is a TAP line.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t frags < <(git ls-files '*.mk' | grep -E '^[^/]+/([^/]+/)?[^/]+\.mk$' |
	grep -v '^scripts/' | LC_ALL=C sort)
# shellcheck disable=SC2016 # make's $(sort ...), not the shell's
include_line=$(grep -n '^include \$(sort ' Makefile | cut -d: -f1)

# The lists whose word order is the include order: GUEST_BINS, HOST_TESTS, ARM64_BINS,
# .PHONY, the `tests` rule, `make help`'s command (-n prints it, with every
# makefile read). SORT_WORDS sorts their words.
SORT_WORDS='
import re, sys
LIST = re.compile(r"^((?:GUEST_BINS|HOST_TESTS|ARM64_BINS) :?= |(?:\.PHONY|tests):|sed -n .s/\^## //p. )(.*)$")
for line in sys.stdin:
    m = LIST.match(line)
    sys.stdout.write(m.group(1) + " ".join(sorted(m.group(2).split())) + "\n" if m else line)
'

# database OUT ORDER...: into OUT, make's database (`make -pn help`) with
# the fragments included in that order, comments and the Makefile's own
# name left out, the lists above sorted; fails when make does
# shellcheck disable=SC2317 # called through check
database() {
	local out=$1 mk=$tmp/Makefile.$RANDOM
	shift
	sed "${include_line}s|.*|include $*|" Makefile >"$mk"
	make -f "$mk" -pn help >"$tmp/db" 2>&1 || { sed 's/^/# /' "$tmp/db"; return 1; }
	grep -v -e '^#' -e '^MAKEFILE_LIST' -e '^$' "$tmp/db" | sed "s|$mk|Makefile|g" |
		python3 -c "$SORT_WORDS" | LC_ALL=C sort >"$out"
}

mapfile -t reversed < <(printf '%s\n' "${frags[@]}" | LC_ALL=C sort -r)

echo "TAP version 13"
echo "1..5"
check "the Makefile includes the fragments in one line (line ${include_line:-none})" \
	[ -n "$include_line" ]
check "found the fragments (${#frags[@]}): ${frags[*]}" [ "${#frags[@]}" -ge 10 ]
check "make reads the fragments in the Makefile's order" database "$tmp/forward" "${frags[@]}"
check "make reads the fragments in the reverse order" database "$tmp/reverse" "${reversed[@]}"
if diff -u "$tmp/forward" "$tmp/reverse" >"$tmp/diff"; then
	ok "make's database is the same with the fragments in reverse order"
else
	not_ok "make's database is the same with the fragments in reverse order"
	sed 's/^/# /' "$tmp/diff" | head -60
fi
exit "$fail"
