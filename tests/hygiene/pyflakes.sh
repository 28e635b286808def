#!/bin/bash
# Host test (TAP): every Python script of the repository is pyflakes clean
# (no unused import or variable, no undefined name: what a typo leaves),
# as tests/hygiene/shellcheck.sh holds the shell scripts.
#
# The scripts are the files git tracks that end in .py or start with a
# python #! line.
#
# No set -e: every script is a result of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
# shellcheck source=tests/lib/scripts.sh
source tests/lib/scripts.sh
: "${fail:=0}"	# set by tap.sh

if ! command -v pyflakes3 >/dev/null; then
	echo "1..0 # SKIP pyflakes3 is not installed (make deps installs it)"
	exit 4
fi

mapfile -t SCRIPTS < <(tracked_scripts py '^#!.*python')
echo "TAP version 13"
echo "1..$(( ${#SCRIPTS[@]} + 1 ))"
check "found the Python scripts (${#SCRIPTS[@]})" [ "${#SCRIPTS[@]}" -gt 0 ]
for f in "${SCRIPTS[@]}"; do
	if out=$(pyflakes3 "$f" 2>&1); then
		ok "pyflakes $f"
	else
		not_ok "pyflakes $f"
		printf '# %s\n' "$out"
	fi
done
exit "$fail"
