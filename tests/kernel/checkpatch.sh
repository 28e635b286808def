#!/bin/bash
# Every patch of every kernel series (kernel/*/series) passes the kernel's
# scripts/checkpatch.pl --strict with no error, warning or check, and has no
# line ending in white space anywhere in the file (blank diff context is
# written as an empty line, no format-patch "-- " signature), so the patch
# files pass as plain files too. Each series is checked with the
# checkpatch.pl of its own tree (build/linux-7.3 for kernel/mainline-7.3,
# when it is unpacked; build/linux otherwise). Prints TAP.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
ROOT=$PWD
# checkpatch_tree SERIES-DIR: the kernel tree whose checkpatch.pl judges it
checkpatch_tree() {
	case $1 in
	*-7.3) [ -x build/linux-7.3/scripts/checkpatch.pl ] && { echo build/linux-7.3; return; } ;;
	esac
	echo build/linux
}
patches=()
for series in kernel/*/series; do
	dir=$(dirname "$series")
	while read -r p; do
		patches+=("$dir/$p")
	done < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$series")
done
echo "TAP version 13"
echo "1..${#patches[@]}"
failed=0
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	# checkpatch must run from the top of a kernel tree
	KSRC=$(checkpatch_tree "$(dirname "$p")")
	report=$(cd "$KSRC" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict -q "$ROOT/$p" 2>&1)
	report+=$(grep -n '[[:space:]]$' "$p" | sed 's/^/trailing white space at line /')
	if [ -z "$report" ]; then
		echo "ok $n checkpatch --strict $p"
	else
		printf '# %s\n' "${report//$'\n'/$'\n'# }"
		echo "not ok $n checkpatch --strict $p"
		failed=1
	fi
done
exit $failed
