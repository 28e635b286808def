#!/bin/bash
# The arm64 user space: one Debian 12 arm64 tree under build/arm64/rootfs
# that is both the cross compiler's sysroot (aarch64-linux-gnu-gcc
# --sysroot=...: the arm64 -dev packages perf, libcgcount and the tests link
# with) and the arm64 guest's /usr (bash, coreutils, the shared libraries
# the programs load), as the host's /usr is for the x86 guest.
#
#   scripts/arm64-rootfs.sh [--update]
#
# mmdebstrap --variant=extract unpacks the packages below and what they
# depend on from the Debian archive the host's apt uses
# (scripts/debian-archive.sh), with a private apt setup of its own: the
# host's apt sources, architectures and package state are not touched, and
# no maintainer script runs (nothing of arm64 executes on the host). /bin,
# /sbin and /lib are then merged into /usr, as on an installed Debian 12,
# so that the guest's /lib -> usr/lib finds the dynamic loader. Done once:
# the tree is rebuilt only when the package list below changes (or with
# --update, which takes the archive's newest versions).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build/arm64/rootfs
PACKAGES=(
	# what the guest's tests run: bash and the shell's tools
	bash coreutils grep sed gawk findutils procps util-linux diffutils
	# the tests that scrape the exporter (urllib) or parse its answers
	python3
	# the initramfs's static busybox (scripts/mkinitramfs.sh)
	busybox-static
	# the sysroot: libc, libcgcount's and perf's libraries
	libc6-dev libelf-dev zlib1g-dev libzstd-dev liblzma-dev libpfm4-dev
	libnuma-dev libcap-dev libtraceevent-dev libdw-dev libstdc++6 libmicrohttpd-dev
	libseccomp-dev libyaml-dev libgnutls28-dev
)
UPDATE=0
[ "${1:-}" = --update ] && UPDATE=1

stamp=$OUT/.packages
want=$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -d' ' -f1)
if [ $UPDATE = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi
command -v mmdebstrap >/dev/null || { echo "arm64-rootfs: mmdebstrap missing (make deps)" >&2; exit 1; }
MIRROR=$(scripts/debian-archive.sh main)
SECURITY_MIRROR=$(scripts/debian-archive.sh security)
echo "  FETCH   arm64 user space (Debian 12): $OUT"
mkdir -p build/arm64
tmp=$(mktemp -d build/arm64/.rootfs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
include=$(IFS=,; echo "${PACKAGES[*]}")
mmdebstrap --quiet --mode=root --variant=extract --architectures=arm64 \
	--include="$include" bookworm "$tmp" \
	"deb $MIRROR bookworm main" "deb $SECURITY_MIRROR bookworm-security main" >&2
for d in bin sbin lib; do
	[ -L "$tmp/$d" ] && continue
	mkdir -p "$tmp/usr/$d"
	cp -a "$tmp/$d/." "$tmp/usr/$d/"
	rm -rf "${tmp:?}/$d"
	ln -s "usr/$d" "$tmp/$d"
done
[ -x "$tmp/usr/lib/ld-linux-aarch64.so.1" ] || { echo "arm64-rootfs: no arm64 dynamic loader in $tmp" >&2; exit 1; }
echo "$want" >"$tmp/.packages"
rm -rf "$OUT"
mv "$tmp" "$OUT"
trap - EXIT
