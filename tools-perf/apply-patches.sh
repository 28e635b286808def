#!/bin/bash
# tools-perf/apply-patches.sh SRC WORKTREE
#
# Make WORKTREE a git worktree of the kernel tree SRC (its HEAD: Linux 6.12
# with kernel-patches/series applied) with tools-perf/patches/series applied
# on top by `git am`.  Recreated only when SRC's HEAD or a tools-perf patch
# changed (key in WORKTREE/.perf-patches-applied); perf's own make then
# rebuilds what changed.  Fails naming the patch that does not apply.
set -euo pipefail

SRC=$(realpath "$1")
WT=$2
PATCHDIR=$(cd "$(dirname "$0")" && pwd)/patches
STAMP=$WT/.perf-patches-applied

die() { echo "error: $*" >&2; exit 1; }

series_patches() {
	grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$PATCHDIR/series" || true
}

want_key() {
	{
		git -C "$SRC" rev-parse HEAD
		cat "$PATCHDIR/series"
		series_patches | while read -r p; do cat "$PATCHDIR/$p"; done
	} | sha256sum | cut -d' ' -f1
}

[ -d "$SRC/.git" ] || die "$SRC is not the kernel's git tree: run 'make kernel'"
want=$(want_key)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] &&
   git -C "$WT" rev-parse --git-dir >/dev/null 2>&1; then
	exit 0
fi

echo "  PERF    applying tools-perf/patches/series on $(git -C "$SRC" log -1 --format=%h HEAD)"
if git -C "$WT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$WT" am --abort >/dev/null 2>&1 || true
	git -C "$WT" checkout -q --detach "$(git -C "$SRC" rev-parse HEAD)"
	git -C "$WT" reset -q --hard
	git -C "$WT" clean -q -fdx -e .perf-patches-applied
else
	rm -rf "$WT"
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$(realpath -m "$WT")" HEAD
fi
rm -f "$STAMP"
for p in $(series_patches); do
	[ -f "$PATCHDIR/$p" ] || die "tools-perf/patches/series names $p, which does not exist"
	if ! git -C "$WT" -c user.name="linux-multicgroup build" -c user.email=build@localhost \
		am -q --no-3way "$PATCHDIR/$p"; then
		git -C "$WT" am --abort >/dev/null 2>&1 || true
		die "tools-perf patch $p does not apply to the kernel tree (see above)"
	fi
	echo "  PERF    applied $p"
done
echo "$want" >"$STAMP"
