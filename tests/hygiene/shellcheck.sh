#!/bin/bash
# Host test (TAP): every shell script of the repository is shellcheck clean
# and says how it handles errors.
#
# The scripts are the files git tracks that end in .sh or start with a
# shell's #! line (sh, bash, dash). For each one:
#  - `shellcheck -x` at its default severity (style notes included) finds
#    nothing; -x follows the files a script sources. A finding that is wrong
#    for one line is silenced on that line with `# shellcheck disable=SCnnnn`
#    and the reason, never here for the whole tree;
#  - it sets `set -euo pipefail`, or a comment says why not (a line
#    `# No set -e: ...`, `# No pipefail: ...` or the like, naming `set -e` or
#    pipefail): a TAP test reports a failed check and goes on, a sourced
#    library leaves the options to the script that sources it.
#
# No `set -e` here: every script is a result of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

if ! command -v shellcheck >/dev/null; then
	echo "1..0 # SKIP shellcheck is not installed (make deps installs it)"
	exit 4
fi

# shell_scripts: the tracked shell scripts, one per line
shell_scripts() {
	local f
	git ls-files -z | while IFS= read -r -d '' f; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		case $f in
		*.sh) echo "$f" ;;
		*) head -n1 "$f" 2>/dev/null | grep -qE '^#!.*[/ ](ba|da)?sh( |$)' && echo "$f" ;;
		esac
	done
}

# The error handling a script chose: set -euo pipefail, or a comment saying
# why it does without (or a sourced file, which takes its caller's options).
says_how_it_fails() {
	grep -qE '^[[:space:]]*set -euo pipefail' "$1" ||
		grep -qiE '^[[:space:]]*#.*(set -e|pipefail)' "$1"
}

mapfile -t SCRIPTS < <(shell_scripts)
echo "TAP version 13"
echo "1..$((2 * ${#SCRIPTS[@]}))"
echo "# $(shellcheck --version | sed -n 's/^version: /shellcheck /p')"
for f in "${SCRIPTS[@]}"; do
	if out=$(shellcheck -x -f gcc "$f" 2>&1); then
		ok "shellcheck $f"
	else
		not_ok "shellcheck $f"
		sed 's/^/# /' <<<"$out"
	fi
	check "set -euo pipefail or why not: $f" says_how_it_fails "$f"
done
exit "$fail"
