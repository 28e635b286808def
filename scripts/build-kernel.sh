#!/bin/bash
# Build a patched test kernel.
#
#   scripts/build-kernel.sh [--linux 6.12|7.3] [--arch x86_64|arm64] [--background|--wait]
#                           [default|debug|bench|irqsoff|source]
#
# ("source" stops after step 2: the patched tree, for porting a patch.)
# --background runs all of it in the background, output in
# build/kernel-<linux>-<variant>.log, and returns at once; --wait waits for
# that build (nothing to do if none was started), prints its output and
# exits with its status. `make tests` builds the 7.3 kernel so, while the
# programs build: on two cores the programs' serial compiles and the
# kernel's serial link steps fill each other's idle cpu.
#
# Two kernels, each from its own Debian source package and series:
#   6.12 (default)  linux-source-6.12 (bookworm, installed by `make deps`)
#                   + kernel/backport-6.12 -> build/linux, build/bzImage[-VARIANT]
#   7.3             linux-source-7.3 (trixie-backports, fetched into build/)
#                   + kernel/mainline-7.3  -> build/linux-7.3, build/bzImage-7.3[-VARIANT]
#
# 0. (7.3) Downloads linux-source-7.3 with scripts/fetch-kernels.sh
#    --download (apt-get through a private sources list and state under
#    build/apt: the host's apt setup is not touched, no package is
#    installed); the .deb is kept in build/debs, so a warm run downloads
#    nothing.
# 1. Unpacks the source tarball into build/linux[-7.3] once, as a git
#    repository whose first commit (tag "base") is the pristine tarball.
# 2. Applies the series with `git am` (no fuzz, no 3-way merge);
#    re-applies from "base" only when the series or a patch changed.
# 3. Configures tinyconfig + kvm_guest.config + kernel/config/guest.fragment
#    (+ systemd.fragment for the x86_64 default and debug variants, whose
#    guests also boot the Debian 12 systemd host; + debug.fragment for the debug
#    variant, bench.fragment for the benchmark variant, bench.fragment and
#    irqsoff.fragment for the IRQs-off measurement variant), checks that
#    every requested option survived olddefconfig (a later fragment
#    overrides an earlier one).
# 4. Builds bzImage with ccache into build/kbuild[-debug] and copies it to
#    build/bzImage, bzImage-debug, bzImage-bench or bzImage-irqsoff (with
#    the version for 7.3: bzImage-7.3-irqsoff); installs uapi headers to
#    build/headers.
#    Skips the build when no file of the tree and not the .config is newer
#    than the image.
#
# --arch arm64 (7.3 only) cross-builds the same tree with Debian's
# gcc-aarch64-linux-gnu for QEMU's arm64 "virt" machine, whose emulated
# PMUv3 runs the kernel's armv8_pmuv3 driver (hardware events): + the
# fragment kernel/config/arm64.fragment, into build/kbuild-7.3-arm64[-VARIANT],
# the image build/Image-7.3-arm64[-VARIANT] (uncompressed, what QEMU's
# -kernel boots) and the uapi headers build/headers-7.3-arm64.
#
# Developers of a patch may build their own tree with the 6.12 config:
#   KSRC=build/dev-foo scripts/build-kernel.sh
# builds build/dev-foo as it is (no unpack, no series) into build/kbuild-dev-foo,
# producing build/bzImage-dev-foo and build/headers-dev-foo.
# Kernel builds take a lock (build/.kernel-build.lock): on two cores, builds
# one after another finish sooner than builds side by side.
set -euo pipefail

LINUX=6.12
KARCH=x86_64
while :; do
	case ${1:-} in
	--linux) LINUX=${2:?--linux needs 6.12 or 7.3}; shift 2 ;;
	--arch) KARCH=${2:?--arch needs x86_64 or arm64}; shift 2 ;;
	*) break ;;
	esac
done
MODE=
case ${1:-} in --background|--wait) MODE=$1; shift ;; esac
VARIANT=${1:-default}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
CONFIG_DIR=$ROOT/kernel/config
JOBS=${JOBS:-$(nproc)}
case $LINUX in
6.12)	SRC=$BUILD/linux; SUFFIX=
	SERIES_DIR=${SERIES_DIR:-$ROOT/kernel/backport-6.12}
	TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz} ;;
7.3)	SRC=$BUILD/linux-7.3; SUFFIX=-7.3
	SERIES_DIR=${SERIES_DIR:-$ROOT/kernel/mainline-7.3}
	# from Debian's trixie-backports, the only suite with 7.3 (7.3.4)
	DEB_PACKAGE=linux-source-7.3
	TARBALL=$BUILD/debs/linux-source-7.3.tar.xz ;;
*)	echo "error: --linux 6.12 or 7.3" >&2; exit 2 ;;
esac

# the architecture: its make ARCH, image target, image file and fragment;
# HOST_FRAGMENTS, for the default and debug variants: what booting the
# Debian 12 systemd host needs (an amd64 image: x86_64 only)
ARCH_FRAGMENTS=()
HOST_FRAGMENTS=()
ARCH_TAG=
case $KARCH in
x86_64)	CROSS=; KIMAGE=bzImage; IMAGE_NAME=bzImage
	HOST_FRAGMENTS=("$CONFIG_DIR/systemd.fragment") ;;
arm64)	[ "$LINUX" = 7.3 ] || { echo "error: --arch arm64 builds Linux 7.3 only" >&2; exit 2; }
	CROSS=aarch64-linux-gnu-; KIMAGE=Image; IMAGE_NAME=Image
	ARCH_TAG=-arm64; SUFFIX=$SUFFIX$ARCH_TAG
	ARCH_FRAGMENTS=("$CONFIG_DIR/arm64.fragment") ;;
*)	echo "error: --arch x86_64 or arm64" >&2; exit 2 ;;
esac
HEADERS=$BUILD/headers$SUFFIX
DEVTREE=
if [ -n "${KSRC:-}" ]; then
	SRC=$(cd "$KSRC" && pwd); DEVTREE=$(basename "$SRC")
fi

case $VARIANT in
default) OBJ=$BUILD/kbuild$SUFFIX; IMAGE=$BUILD/$IMAGE_NAME$SUFFIX
	FRAGMENTS=("$CONFIG_DIR/guest.fragment" "${HOST_FRAGMENTS[@]}" "${ARCH_FRAGMENTS[@]}") ;;
debug) OBJ=$BUILD/kbuild$SUFFIX-debug; IMAGE=$BUILD/$IMAGE_NAME$SUFFIX-debug
	FRAGMENTS=("$CONFIG_DIR/guest.fragment" "${HOST_FRAGMENTS[@]}" "${ARCH_FRAGMENTS[@]}"
		   "$CONFIG_DIR/debug.fragment") ;;
bench) OBJ=$BUILD/kbuild$SUFFIX-bench; IMAGE=$BUILD/$IMAGE_NAME$SUFFIX-bench
	FRAGMENTS=("$CONFIG_DIR/guest.fragment" "${ARCH_FRAGMENTS[@]}" "$CONFIG_DIR/bench.fragment") ;;
irqsoff) OBJ=$BUILD/kbuild$SUFFIX-irqsoff; IMAGE=$BUILD/$IMAGE_NAME$SUFFIX-irqsoff
	FRAGMENTS=("$CONFIG_DIR/guest.fragment" "${ARCH_FRAGMENTS[@]}" "$CONFIG_DIR/bench.fragment"
		   "$CONFIG_DIR/irqsoff.fragment") ;;
source) ;;
*) echo "usage: $0 [--linux 6.12|7.3] [--background|--wait] [default|debug|bench|irqsoff|source]" >&2; exit 2 ;;
esac
if [ -n "$DEVTREE" ]; then
	OBJ=$OBJ-$DEVTREE; IMAGE=$IMAGE-$DEVTREE; HEADERS=$HEADERS-$DEVTREE
fi

log() { echo "  KERNEL  $*"; }
die() { echo "error: $*" >&2; exit 1; }

# The state of a background build: its pid, its output, its exit status.
BG=$BUILD/kernel-$LINUX$ARCH_TAG-$VARIANT
start_background() {
	mkdir -p "$BUILD"
	rm -f "$BG.rc"
	log "Linux $LINUX ($VARIANT) builds in the background (output: ${BG#"$ROOT"/}.log)"
	# shellcheck disable=SC2016 # expanded by the background shell
	setsid bash -c '"$@" >"$0.log" 2>&1; echo $? >"$0.rc"' "$BG" \
		"$0" --linux "$LINUX" --arch "$KARCH" "$VARIANT" </dev/null >/dev/null 2>&1 &
	echo $! >"$BG.pid"
}

wait_background() {
	local pid status
	[ -f "$BG.pid" ] || return 0
	pid=$(cat "$BG.pid")
	while [ ! -f "$BG.rc" ] && kill -0 "$pid" 2>/dev/null; do sleep 1; done
	cat "$BG.log" 2>/dev/null
	status=$(cat "$BG.rc" 2>/dev/null || echo 1)
	rm -f "$BG.pid" "$BG.rc"
	[ "$status" = 0 ] || die "the background build of Linux $LINUX ($VARIANT) failed (exit $status)"
}

case $MODE in
--background) start_background; exit 0 ;;
--wait) wait_background; exit 0 ;;
esac

# fetch_source: the tarball of a backports kernel, from the .deb that
# scripts/fetch-kernels.sh downloads once into build/debs (a private apt
# setup under build/apt, from the Debian archive the host's apt uses).
fetch_source() {
	[ -f "$TARBALL" ] && return 0
	[ -n "${DEB_PACKAGE:-}" ] || die "$TARBALL missing: run 'make deps'"
	local deb
	deb=$("$ROOT/scripts/fetch-kernels.sh" --download "$DEB_PACKAGE" "$BUILD/debs") ||
		die "cannot download $DEB_PACKAGE"
	dpkg-deb --fsys-tarfile "$deb" | tar -C "$BUILD/debs" -x --strip-components=3 \
		"./usr/src/$(basename "$TARBALL")"
}

unpack_source() {
	[ -d "$SRC/.git" ] && return 0
	fetch_source
	[ -f "$TARBALL" ] || die "$TARBALL missing: run 'make deps'"
	local top
	top=$(basename "$TARBALL" .tar.xz)
	log "unpacking $(basename "$TARBALL")"
	rm -rf "$SRC" "${BUILD:?}/$top"
	tar -C "$BUILD" -xf "$TARBALL"
	mv "$BUILD/$top" "$SRC"
	# Debian's top-level .gitignore ignores everything: add with -f.
	git -C "$SRC" init -q
	git -C "$SRC" config user.name "linux-multicgroup build"
	git -C "$SRC" config user.email "build@localhost"
	# no "git gc --auto" in the background, holding the build lock
	git -C "$SRC" config gc.auto 0
	git -C "$SRC" add -f -A
	git -C "$SRC" commit -q -m "Linux $LINUX (Debian $(basename "$TARBALL" .tar.xz))"
	git -C "$SRC" tag base
	# the .deb in build/debs stays the cache; the tarball is not needed
	[ -z "${DEB_PACKAGE:-}" ] || rm -f "$TARBALL"
}

series_patches() {
	grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$SERIES_DIR/series" || true
}

series_hash() {
	{
		cat "$SERIES_DIR/series"
		series_patches | while read -r p; do cat "$SERIES_DIR/$p"; done
	} | sha256sum | cut -d' ' -f1
}

apply_series() {
	local stamp=$SRC/.git/applied-series want
	want=$(series_hash)
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
	log "applying ${SERIES_DIR#"$ROOT"/}/series"
	git -C "$SRC" am --abort >/dev/null 2>&1 || true
	remember_series_files
	git -C "$SRC" reset -q --hard base
	rm -f "$stamp"
	local p
	for p in $(series_patches); do
		[ -f "$SERIES_DIR/$p" ] || die "series names $p, which does not exist"
		if ! git -C "$SRC" am -q --no-3way "$SERIES_DIR/$p"; then
			git -C "$SRC" am --abort >/dev/null 2>&1 || true
			die "patch $p does not apply cleanly to Linux $LINUX (see above)"
		fi
		log "applied $p"
	done
	restore_unchanged_times
	echo "$want" >"$stamp"
}

# Re-applying a series rewrites every file it touches; the ones whose
# content comes out as it was get their old modification time back, so
# that make rebuilds only what a patch changed (a new commit message, or
# a change to core.c alone, would otherwise rebuild everything that
# includes linux/perf_event.h).
remember_series_files() {
	local f
	: >"$SRC/.git/series-files"
	git -C "$SRC" diff --name-only base | while read -r f; do
		[ -f "$SRC/$f" ] || continue
		printf '%s %s %s\n' "$(git -C "$SRC" hash-object "$f")" \
			"$(stat -c %Y "$SRC/$f")" "$f"
	done >"$SRC/.git/series-files"
}

restore_unchanged_times() {
	local blob mtime f
	[ -f "$SRC/.git/series-files" ] || return 0
	while read -r blob mtime f; do
		[ -f "$SRC/$f" ] && [ "$(git -C "$SRC" hash-object "$f")" = "$blob" ] &&
			touch -d "@$mtime" "$SRC/$f"
	done <"$SRC/.git/series-files"
	rm -f "$SRC/.git/series-files"
}

# kmake ARGS...: the kernel's make for this tree, object directory and architecture
kmake() {
	make -s -C "$SRC" O="$OBJ" ARCH="$KARCH" ${CROSS:+CROSS_COMPILE=$CROSS} "$@"
}

configure() {
	local stamp=$OBJ/.config-inputs want
	# the fragments and the code that applies them (not the whole script:
	# a change elsewhere in it must not reconfigure and relink every kernel)
	want=$({ cat "${FRAGMENTS[@]}"; declare -f configure check_config
		echo "$ONE_KERNEL_OPTIONS"; } | sha256sum | cut -d' ' -f1)
	[ -f "$stamp" ] && [ -f "$OBJ/.config" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
	log "configuring $VARIANT kernel"
	mkdir -p "$OBJ"
	kmake tinyconfig >/dev/null
	(cd "$OBJ" && ARCH=$KARCH "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" \
		"$SRC/kernel/configs/kvm_guest.config" "${FRAGMENTS[@]}" >/dev/null)
	kmake olddefconfig >/dev/null
	check_config
	echo "$want" >"$stamp"
}

# Options the fragments name for one kernel only, because a later kernel
# renamed or merged them; every other option must exist in both.
#   PROC_SYSCTL  6.12; 7.x has only SYSCTL (which 6.12's PROC_SYSCTL selects)
ONE_KERNEL_OPTIONS=" CONFIG_PROC_SYSCTL "

# Every option the fragments ask for (the last assignment of each wins, as
# in merge_config.sh) must be in the final .config.
check_config() {
	local line sym val missing=0 defined
	declare -A want
	while IFS= read -r line; do
		case $line in CONFIG_*=*) want[${line%%=*}]=${line#*=} ;; esac
	done < <(cat "${FRAGMENTS[@]}")
	defined=$(find "$SRC" -name 'Kconfig*' -not -path '*/.git/*' -exec \
		sed -n 's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/CONFIG_\2/p' {} + |
		sort -u)
	for sym in "${!want[@]}"; do
		val=${want[$sym]}
		if [[ $ONE_KERNEL_OPTIONS == *" $sym "* ]] && ! grep -qx "$sym" <<<"$defined"; then
			continue
		fi
		if [ "$val" = n ]; then
			grep -q "^$sym=" "$OBJ/.config" && { echo "error: $sym is set, fragment wants it off" >&2; missing=1; }
		elif [ "$sym" != CONFIG_NR_CPUS ]; then
			grep -qx "$sym=$val" "$OBJ/.config" || { echo "error: $sym=$val requested but not in .config (missing dependency?)" >&2; missing=1; }
		fi
	done
	[ $missing = 0 ] || die "kernel configuration is incomplete"
}

# up_to_date: the image is newer than the configuration and every file of
# the tree (a patch applied, a file edited or a new configuration makes it
# older). Saves kbuild's own walk of the tree, 5.6 s of every make check.
up_to_date() {
	[ -f "$IMAGE" ] && [ -f "$OBJ/.config" ] && [ ! "$OBJ/.config" -nt "$IMAGE" ] || return 1
	[ "$VARIANT" != default ] || [ -f "$HEADERS/include/linux/perf_event.h" ] || return 1
	[ -z "$(find "$SRC" -path "$SRC/.git" -prune -o -newer "$IMAGE" -type f -print -quit)" ]
}

build() {
	if up_to_date; then
		log "$IMAGE up to date"
		return
	fi
	log "building $VARIANT $KIMAGE ($KARCH, -j$JOBS)"
	export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache} CCACHE_BASEDIR=$SRC CCACHE_NOHASHDIR=1
	kmake CC="ccache ${CROSS}gcc" -j"$JOBS" "$KIMAGE"
	cp "$OBJ/arch/${KARCH/x86_64/x86}/boot/$KIMAGE" "$IMAGE.tmp" && mv "$IMAGE.tmp" "$IMAGE"
	if [ "$VARIANT" = default ]; then
		kmake headers_install INSTALL_HDR_PATH="$HEADERS" >/dev/null
	fi
	log "$IMAGE ready"
}

mkdir -p "$BUILD"
exec 9>"$BUILD/.kernel-build.lock"
flock 9
if [ -z "$DEVTREE" ]; then
	unpack_source
	apply_series
fi
[ "$VARIANT" != source ] || exit 0
configure
build
