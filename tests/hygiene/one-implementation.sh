#!/bin/bash
# Host test (TAP): each mechanism lib/README.md says exists once is written
# once, in the C the repository tracks (the kernel and perf patches aside:
# perf cannot link our libraries and keeps its own, perf/patches/README.md).
#
# For each mechanism, a pattern that finds code doing it, and the files
# allowed to; a file outside them that matches fails the mechanism's line
# and is named with its line (comment lines are passed over):
#  - the walk of a cgroup tree: cgutil_walk() in lib/cgutil; no nftw(3) or
#    fts(3) anywhere else;
#  - where cgroup2 is mounted: only lib/cgutil reads /proc/self/mounts
#    (getmntent(3), which undoes the octal escapes sscanf leaves); scripts
#    ask findmnt(8), which undoes them too, and parse no mount table;
#  - a cgroup's id: name_to_handle_at(2) only in lib/cgutil;
#  - event names -> perf_event_attr: one table of generic names, in lib/cgutil;
#  - libpfm4's encoding: lib/cgutil/pfm.c;
#  - the multi-cgroup ioctls (ATTACH/DETACH/READ_CGROUP(S)): libcgcount.
# Allowed besides, each for the reason given in its file:
#  - examples/cgroup-counter/cgroup-counter.c: one self-contained file that
#    teaches the ioctl ABI with libc alone (its own small event table, id
#    and READ_CGROUPS loop);
#  - tests/kernel/*: the ioctls' own tests, which call them directly
#    (with bad sizes and ids on purpose) so as not to test the library with
#    itself;
#  - tests/smoke/smoke.c: checks the kernel's cgroup file handle itself
#    (handle == inode number) on each guest kernel.
#
# No set -e: a failed check is a TAP line and the test goes on.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

EXAMPLE=examples/cgroup-counter/cgroup-counter.c

# mechanism NAME REGEX ALLOWED...: no tracked C file (the files $FILES
# names) outside ALLOWED (paths, or folders ending in /) has a line
# matching the extended REGEX
FILES=("*.c" "*.h")
mechanism() {
	local name=$1 regex=$2 hit file allowed a stray=()
	shift 2
	while IFS= read -r hit; do
		file=${hit%%:*}
		# a comment's line names a mechanism, it does not do it
		[[ ${hit#*:*:} =~ ^[[:space:]]*(\*|/\*|//|#) ]] && continue
		# a patch's code is its added lines
		[[ $file != *.patch || ${hit#*:*:} == +* ]] || continue
		allowed=0
		for a in "$@"; do
			if [[ $a == */ && $file == "$a"* ]] || [[ $file == "$a" ]]; then
				allowed=1
			fi
		done
		[ "$allowed" = 1 ] || stray+=("$hit")
	done < <(git grep -nE "$regex" -- "${FILES[@]}" | cut -c1-160)
	if [ ${#stray[@]} -eq 0 ]; then
		ok "$name: only in $*"
	else
		not_ok "$name: only in $*"
		printf '#   also in %s\n' "${stray[@]}"
	fi
}

echo "TAP version 13"
echo "1..7"
mechanism "the walk of a directory tree (nftw, fts_open)" \
	'(^|[^a-z_])(nftw|ftw|fts_open) *\(' lib/cgutil/
mechanism "where cgroup2 is mounted (/proc/self/mounts)" \
	'"/proc/(self/)?(mounts|mountinfo)"' lib/cgutil/
mechanism "a cgroup's id (name_to_handle_at)" \
	'name_to_handle_at *\(' lib/cgutil/ "$EXAMPLE" tests/smoke/smoke.c
mechanism "the table of generic event names" \
	'\{ *"[a-z][a-z0-9-]*", *(PERF_TYPE_[A-Z]+, *)?PERF_COUNT_(SW|HW)_' lib/cgutil/ "$EXAMPLE"
mechanism "libpfm4's event encoding" \
	'pfm_get_os_event_encoding *\(|pfm_initialize *\(' lib/cgutil/
mechanism "the multi-cgroup ioctls (ATTACH/DETACH/READ_CGROUP(S))" \
	'PERF_EVENT_IOC_(ATTACH|DETACH|READ)_CGROUPS?[,)]' lib/cgcount/ "$EXAMPLE" tests/kernel/
FILES=("*.sh" "*.patch" "*.py" "*.mk" Makefile)
mechanism "scripts parse no mount table (findmnt)" '/proc/(self/)?(mounts|mountinfo)([^a-z_]|$)' \
	tests/hygiene/one-implementation.sh
exit "$fail"
