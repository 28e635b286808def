#!/bin/bash
# The Debian 12 host the systemd-host tests boot (tests/systemd-host/): a
# bookworm amd64 root with systemd as init, Prometheus, and the libraries
# the project's packages depend on, as an ext4 disk image.
#
#   scripts/systemd-host-image.sh [--update]
#
# Prints the image's path, build/systemd-host/debian12-<hash>.img, where
# <hash> is that of the recipe: this script, scripts/bookworm-root.sh, the
# package list below, the dependencies of the packages `make deb` built
# (into build/systemd-host/deb: tests/systemd-host/systemd-host.mk) and the
# files of tests/systemd-host/image/ copied into the root. A recipe that did not
# change is not built again; --update builds it anew from the archive's
# newest packages.
#
# mmdebstrap (--variant=apt: the Essential packages, apt, and those below,
# no recommends, no documentation, manuals or translations, nor the
# JavaScript of Prometheus' web pages: the test asks its HTTP API) installs them
# from the Debian archive the host's apt uses with a private apt setup
# (scripts/bookworm-root.sh): the host's apt sources and package state
# are neither read nor changed. The image boots with
# scripts/vm-run.sh --root debian12 (a Debian kernel: its virtio_blk and
# ext4). QEMU opens it with snapshot=on: a guest's writes never reach it.
set -euo pipefail
cd "$(dirname "$0")/.."
OUTDIR=build/systemd-host
IMAGE_DIR=tests/systemd-host/image
PACKAGES=(
	# init, and what the test (python3) and scripts/run-tests.sh run
	systemd-sysv procps curl python3
	# the operator's scraper
	prometheus
)
UPDATE=0
[ "${1:-}" = --update ] && UPDATE=1
die() { echo "systemd-host-image: $*" >&2; exit 1; }

# the Depends of the packages the test installs, without versions and
# without the project's own: they are in the image, so that apt installs
# the project's packages offline, as on a host that has its libraries
deb_depends() {
	local deb
	for deb in build/systemd-host/deb/cgroup-exporter_*.deb build/systemd-host/deb/cgcount-tools_*.deb; do
		[ -f "$deb" ] || die "no $deb (make build/systemd-host/image.path)"
		dpkg-deb -f "$deb" Depends
	done | tr ',' '\n' | sed 's/(.*)//; s/[[:space:]]//g' |
		grep -vx -e '' -e libcgcount0 -e cgcount-tools -e cgroup-exporter | sort -u
}
mapfile -t DEPENDS < <(deb_depends)
include=$(IFS=,; echo "${PACKAGES[*]},${DEPENDS[*]}")
hash=$( { cat "$0" scripts/bookworm-root.sh; echo "$include"
	find "$IMAGE_DIR" -type f | LC_ALL=C sort | xargs cat; } | sha256sum | cut -c1-16)
IMAGE=$OUTDIR/debian12-$hash.img
mkdir -p "$OUTDIR"
exec 9>"$OUTDIR/.lock"
flock 9
if [ $UPDATE = 0 ] && [ -f "$IMAGE" ]; then
	echo "$IMAGE"
	exit 0
fi
echo "  FETCH   Debian 12 systemd host: $IMAGE" >&2
tmp=$(mktemp -d "$OUTDIR/.root.XXXXXX")
trap 'rm -rf "$tmp" "$tmp.img"' EXIT
# The hooks run on the host with the root as $1 (single quotes: theirs).
# guest-command.service runs scripts/vm-run.sh's command; Prometheus is
# installed disabled (the test configures it, then enables it); no getty
# (the host has no udev, whose device units they wait for, nor dbus);
# /etc/machine-id is left empty (mmdebstrap's cleanup): systemd makes one
# at each boot, which is not a first boot.
# shellcheck disable=SC2016
scripts/bookworm-root.sh apt "$tmp" \
	--dpkgopt='path-exclude=/usr/share/javascript/*' \
	--include="$include" \
	--customize-hook="cp -r $IMAGE_DIR/. \"\$1/\"" \
	--customize-hook='chroot "$1" systemctl --quiet enable guest-command.service; chroot "$1" systemctl --quiet set-default multi-user.target' \
	--customize-hook='chroot "$1" systemctl --quiet disable prometheus.service 2>/dev/null' \
	--customize-hook='chroot "$1" systemctl --quiet mask getty@.service serial-getty@.service getty-static.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer' \
	--customize-hook='echo debian12 >"$1/etc/hostname"; mkdir -p "$1/repo"' \
	--customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages'
size=$(du -sm "$tmp" | cut -f1)
# room for the packages the test installs and Prometheus' database
mke2fs -q -t ext4 -L debian12 -d "$tmp" "$tmp.img" "$((size + 256))M" >/dev/null
rm -f "$OUTDIR"/debian12-*.img
mv "$tmp.img" "$IMAGE"
echo "$IMAGE"
