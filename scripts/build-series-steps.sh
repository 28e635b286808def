#!/bin/bash
# Build the kernel at every step of a series (bisectability), then with the
# options its code depends on turned off: CONFIG_CGROUP_PERF (at the first
# patch and at the end) and CONFIG_MEMCG (at the end).
#
#   scripts/build-series-steps.sh                (kernel/backport-6.12 on build/linux)
#   scripts/build-series-steps.sh --linux 7.3    (kernel/mainline-7.3 on build/linux-7.3)
#
# (after `make kernel`)
#
# Uses a detached worktree of build/linux (build/series-steps/linux) and the
# test kernel's configuration (build/kbuild/.config) so it never touches
# the trees `make kernel` builds. The worktree and object directories sit
# side by side as build/linux and build/kbuild do, so the compiler command
# lines match and ccache serves every file a patch did not change. Prints one line per build; exits non-zero
# when any fails (log: build/series-steps/<step>.log). Takes one full (ccache)
# build plus an incremental one per patch: about 10-20 minutes here.
# No set -e: a step that fails to build is reported and the next one is built.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
SUFFIX=
if [ "${1:-}" = --linux ]; then
	case ${2:-} in
	6.12) ;;
	7.3) SUFFIX=-7.3 ;;
	*) echo "usage: $0 [--linux 6.12|7.3]" >&2; exit 2 ;;
	esac
fi
LINUX=$BUILD/linux$SUFFIX
KCONFIG=$BUILD/kbuild$SUFFIX/.config
OUT=$BUILD/series-steps$SUFFIX
SRC=$OUT/linux
LINUX_HEAD=$(git -C "$LINUX" rev-parse HEAD)
FIRST=$(git -C "$LINUX" rev-list --reverse base..HEAD | head -1)
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache} CCACHE_BASEDIR=$SRC CCACHE_NOHASHDIR=1

[ -f "$KCONFIG" ] || { echo "error: run 'make kernel' first" >&2; exit 1; }
mkdir -p "$OUT"
if [ ! -d "$SRC" ]; then
	git -C "$LINUX" worktree prune
	git -C "$LINUX" worktree add -q --detach "$SRC" base || exit 1
fi

# build_at COMMIT NAME [CONFIG-OPTION-TO-DISABLE...]: builds in $OUT/kbuild
# (one object directory: each build is incremental on the one before)
build_at() {
	local commit=$1 obj=$OUT/kbuild opt
	shift 2
	git -C "$SRC" checkout -q --detach "$commit" || return 1
	mkdir -p "$obj"
	cp "$KCONFIG" "$obj/.config"
	for opt in "$@"; do "$SRC/scripts/config" --file "$obj/.config" --disable "$opt"; done
	make -s -C "$SRC" O="$obj" ARCH=x86_64 olddefconfig >/dev/null 2>&1 &&
		for opt in "$@"; do ! grep -q "^CONFIG_$opt=y" "$obj/.config" || return 1; done &&
		nice make -s -C "$SRC" O="$obj" ARCH=x86_64 CC="ccache gcc" -j"$JOBS" bzImage
}

step() {
	local commit=$1 name=$2 start rc
	shift 2
	start=$(date +%s)
	build_at "$commit" "$name" "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	# -Werror would change every compiler command line and miss ccache:
	# a warning fails the step here instead
	[ $rc = 0 ] && grep -q "warning:" "$OUT/$name.log" && rc=1
	printf '%-4s %-58s %4ss\n' "$([ $rc = 0 ] && echo ok || echo FAIL)" \
		"$name: $(git -C "$LINUX" log -1 --format=%s "$commit" | cut -c1-40)" $(($(date +%s) - start))
	return $rc
}

failed=0
n=0
for commit in $(git -C "$LINUX" rev-list --reverse base.."$LINUX_HEAD"); do
	n=$((n + 1))
	step "$commit" "step$n" || failed=1
done
step "$LINUX_HEAD" no-cgroup-perf CGROUP_PERF || failed=1
step "$FIRST" step1-no-cgroup-perf CGROUP_PERF || failed=1
step "$LINUX_HEAD" no-memcg MEMCG || failed=1
exit $failed
