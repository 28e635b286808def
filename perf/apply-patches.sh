#!/bin/bash
# perf/apply-patches.sh SRC WORKTREE
#
# Make WORKTREE a git worktree of the kernel tree SRC (its HEAD: Linux 6.12
# with the kernel series applied) with perf/patches/series applied
# on top (git apply --cached, patch by patch), and libcgrstat's program and
# loader, with the helpers of lib/cgutil the loader calls, copied into
# tools/perf (CGRSTAT_COPIES: perf's rstat backend runs the library's own,
# byte for byte; tests/perf/cgrstat-copies.sh).  Recreated only when SRC's HEAD or a perf patch
# changed (key in WORKTREE/.perf-patches-applied); perf's own make then
# rebuilds what changed.  Fails naming the patch that does not apply.
set -euo pipefail

SRC=$(realpath "$1")
WT=$2
PATCHDIR=$(cd "$(dirname "$0")" && pwd)/patches
LIB_DIR=$(cd "$(dirname "$0")/../lib" && pwd)
# file of lib/ -> its path in the kernel tree
CGRSTAT_COPIES=(
	"cgrstat/cgrstat.bpf.c tools/perf/util/bpf_skel/cgrstat.bpf.c"
	"cgrstat/cgrstat_kfuncs.bpf.h tools/perf/util/bpf_skel/cgrstat_kfuncs.bpf.h"
	"cgrstat/cgrstat_maps.bpf.h tools/perf/util/bpf_skel/cgrstat_maps.bpf.h"
	"cgrstat/cgrstat_abi.h tools/perf/util/cgrstat_abi.h"
	"cgrstat/cgrstat_load.c tools/perf/util/cgrstat_load.c"
	"cgrstat/cgrstat_read.c tools/perf/util/cgrstat_read.c"
	"cgrstat/cgrstat_track.c tools/perf/util/cgrstat_track.c"
	"cgrstat/cgrstat.h tools/perf/util/cgrstat.h"
	"cgrstat/cgrstat_int.h tools/perf/util/cgrstat_int.h"
	"cgutil/cgroup.c tools/perf/util/cgutil.c"
	"cgutil/perf_open.c tools/perf/util/cgutil_perf_open.c"
	"cgutil/cgutil.h tools/perf/util/cgutil.h"
)
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
		for c in "${CGRSTAT_COPIES[@]}"; do cat "$LIB_DIR/${c%% *}"; done
	} | sha256sum | cut -d' ' -f1
}

[ -d "$SRC/.git" ] || die "$SRC is not the kernel's git tree: run 'make kernel'"
want=$(want_key)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] &&
   git -C "$WT" rev-parse --git-dir >/dev/null 2>&1; then
	exit 0
fi

echo "  PERF    applying perf/patches/series on $(git -C "$SRC" log -1 --format=%h HEAD)"
# Apply the series to a scratch index of SRC's HEAD (the same check as git am
# --no-3way: each patch must apply exactly), commit that tree, then check the
# commit out in WT: only the files that differ are rewritten, so perf's make
# rebuilds only what the change touches.
base=$(git -C "$SRC" rev-parse HEAD)
index=$(mktemp)
trap 'rm -f "$index"' EXIT
GIT_INDEX_FILE=$index git -C "$SRC" read-tree "$base"
for p in $(series_patches); do
	[ -f "$PATCHDIR/$p" ] || die "perf/patches/series names $p, which does not exist"
	GIT_INDEX_FILE=$index git -C "$SRC" apply --cached "$PATCHDIR/$p" ||
		die "perf patch $p does not apply to the kernel tree (see above)"
	echo "  PERF    applied $p"
done
for c in "${CGRSTAT_COPIES[@]}"; do
	blob=$(git -C "$SRC" hash-object -w "$LIB_DIR/${c%% *}")
	GIT_INDEX_FILE=$index git -C "$SRC" update-index --add --cacheinfo "100644,$blob,${c#* }"
done
echo "  PERF    copied lib/cgrstat's program and loader (and the lib/cgutil helpers it calls) into tools/perf"
tree=$(GIT_INDEX_FILE=$index git -C "$SRC" write-tree)
commit=$(git -C "$SRC" -c user.name="linux-multicgroup build" -c user.email=build@localhost \
	commit-tree "$tree" -p "$base" -m "perf/patches/series")
rm -f "$STAMP"
if git -C "$WT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$WT" checkout -q -f --detach "$commit"
else
	rm -rf "$WT"
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$(realpath -m "$WT")" "$commit"
fi
echo "$want" >"$STAMP"
