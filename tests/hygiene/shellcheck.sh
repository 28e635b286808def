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
# shellcheck source=tests/lib/scripts.sh
source tests/lib/scripts.sh
: "${fail:=0}"	# set by tap.sh

if ! command -v shellcheck >/dev/null; then
	echo "1..0 # SKIP shellcheck is not installed (make deps installs it)"
	exit 4
fi

# The error handling a script chose: set -euo pipefail, or a comment saying
# why it does without (or a sourced file, which takes its caller's options).
# shellcheck disable=SC2317 # called through check
says_how_it_fails() {
	grep -qE '^[[:space:]]*set -euo pipefail' "$1" ||
		grep -qiE '^[[:space:]]*#.*(set -e|pipefail)' "$1"
}

mapfile -t SCRIPTS < <(tracked_scripts sh '^#!.*[/ ](ba|da)?sh( |$)')
# One shellcheck run over all of them (a quarter of the time of one run per
# script); its findings, "FILE:LINE:COL: level: text [SCnnnn]", by file.
declare -A FINDINGS=()
while IFS= read -r line; do
	f=${line%%:*}
	FINDINGS[$f]+="# $line"$'\n'
done < <(shellcheck -x -f gcc "${SCRIPTS[@]}" 2>&1)

echo "TAP version 13"
echo "1..$((2 * ${#SCRIPTS[@]} + 1))"
echo "# $(shellcheck --version | sed -n 's/^version: /shellcheck /p')"
for f in "${SCRIPTS[@]}"; do
	if [ -z "${FINDINGS[$f]:-}" ]; then
		ok "shellcheck $f"
	else
		not_ok "shellcheck $f"
		printf '%s' "${FINDINGS[$f]}"
	fi
	unset "FINDINGS[$f]"
	check "set -euo pipefail or why not: $f" says_how_it_fails "$f"
done
# what is left: a finding in no listed script, or shellcheck's own error
check "shellcheck: no finding outside the scripts${FINDINGS[*]:+: ${FINDINGS[*]}}" \
	[ ${#FINDINGS[@]} -eq 0 ]
exit "$fail"
