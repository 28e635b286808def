#!/bin/bash
# The image of deploy/kubernetes/daemonset.yaml: Debian 12 with the
# cgroup-exporter package `make deb` built, as an OCI image archive, made
# from the Debian archive alone with Debian's tools (mmdebstrap, dpkg,
# umoci): no container engine, no registry.
#
#   deploy/container/build-image.sh [--update] DEBDIR      (make image)
#
# DEBDIR holds the cgroup-exporter package (make image: make's packages of
# build/systemd-host/deb, as make deb builds them). Prints the archive's
# path, build/image/cgroup-exporter-<version>.oci.tar, whose one image is
# named localhost/cgroup-exporter:<version> (the package's version);
# podman load, skopeo copy oci-archive: and ctr images import take it.
# Two layers:
#
#  - Debian 12's Essential packages and the libraries the package depends
#    on (its Depends, apt resolving what they need), installed by mmdebstrap
#    from the Debian archive the host's apt uses (scripts/bookworm-root.sh)
#    with a private apt setup: the host's apt sources and state are neither
#    read nor changed. No apt, documentation, manuals or translations (as
#    Debian's slim images). Cached under build/image/ by the hash of this
#    script and those Depends: a recipe that did not change is not fetched
#    again; --update fetches it anew from the archive's newest packages.
#  - the package, installed there by dpkg (which refuses it if a Depends is
#    not met), and the mount point of the host's cgroup2 tree.
#
# The configuration: ENTRYPOINT below, port 10464/tcp exposed, the
# org.opencontainers.image labels. The DaemonSet adds its args to the
# ENTRYPOINT (tests/deploy/kubernetes.py, tests/deploy/image.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUTDIR=build/image
NAME=cgroup-exporter
# the host's cgroup2 tree, where the DaemonSet mounts it
CGROUPFS=/host/sys/fs/cgroup
ENTRYPOINT=(/usr/bin/cgroup-exporter "--path.cgroupfs=$CGROUPFS")
PORT=10464/tcp
UPDATE=0
[ "${1:-}" = --update ] && { UPDATE=1; shift; }
DEBDIR=${1:?usage: deploy/container/build-image.sh [--update] DEBDIR}
die() { echo "build-image: $*" >&2; exit 1; }

# the base layer: an OCI layout with one image, tagged base, in $1
fetch_base() {
	local tmp=$1
	# shellcheck disable=SC2016 # the hook's $1 is mmdebstrap's
	scripts/bookworm-root.sh essential "$tmp/rootfs.tar" --include="$depends" \
		--customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*'
	umoci init --layout "$tmp/oci"
	umoci new --image "$tmp/oci:base"
	umoci raw add-layer --image "$tmp/oci:base" \
		--history.created_by "mmdebstrap --variant=essential --include=$depends bookworm" \
		"$tmp/rootfs.tar"
}

debs=("$DEBDIR"/cgroup-exporter_*.deb)
if [ ${#debs[@]} != 1 ] || [ ! -f "${debs[0]}" ]; then
	die "no single $DEBDIR/cgroup-exporter_*.deb: ${debs[*]}"
fi
DEB=${debs[0]}
VERSION=$(dpkg-deb -f "$DEB" Version)
# the Depends without versions: dpkg checks the versions when it installs
depends=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/(.*)//; s/[[:space:]]//g' |
	grep -v '^$' | sort -u | paste -sd,)
base_hash=$( { declare -f fetch_base; cat scripts/bookworm-root.sh; echo "$depends"; } |
	sha256sum | cut -c1-16)
BASE=$OUTDIR/base-$base_hash
OUT=$OUTDIR/$NAME-$VERSION.oci.tar
mkdir -p "$OUTDIR"
exec 9>"$OUTDIR/.lock"
flock 9

if [ $UPDATE = 1 ] || [ ! -f "$BASE/index.json" ]; then
	command -v umoci >/dev/null || die "umoci missing (make deps)"
	echo "  FETCH   Debian 12 base of the image: $BASE" >&2
	tmp=$(mktemp -d "$OUTDIR/.base.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	fetch_base "$tmp"
	rm -rf "$OUTDIR"/base-*
	mv "$tmp/oci" "$BASE"
	rm -rf "$tmp"
	trap - EXIT
fi

# the package's layer, on a copy of the base
if [ $UPDATE = 1 ] || [ ! -f "$OUT" ] || [ "$DEB" -nt "$OUT" ] || [ "$0" -nt "$OUT" ] ||
	[ "$BASE/index.json" -nt "$OUT" ]; then
	echo "  IMAGE   $OUT" >&2
	tmp=$(mktemp -d "$OUTDIR/.image.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	cp -a "$BASE" "$tmp/oci"
	umoci unpack --image "$tmp/oci:base" "$tmp/bundle" >/dev/null
	cp "$DEB" "$tmp/bundle/rootfs/tmp/"
	chroot "$tmp/bundle/rootfs" dpkg --install "/tmp/${DEB##*/}" >/dev/null
	rm "$tmp/bundle/rootfs/tmp/${DEB##*/}"
	mkdir -p "$tmp/bundle/rootfs$CGROUPFS"
	umoci repack --image "$tmp/oci:$VERSION" \
		--history.created_by "dpkg --install ${DEB##*/}; mkdir -p $CGROUPFS" "$tmp/bundle"
	entry=$(printf '%s\n' "${ENTRYPOINT[@]}" | sed 's/^/--config.entrypoint=/')
	mapfile -t entry <<<"$entry"
	umoci config --image "$tmp/oci:$VERSION" --no-history --clear=config.cmd \
		"${entry[@]}" --config.exposedports="$PORT" \
		--config.label=org.opencontainers.image.title="$NAME" \
		--config.label=org.opencontainers.image.version="$VERSION" \
		--config.label=org.opencontainers.image.description="$(dpkg-deb -f "$DEB" Description | head -1)"
	# the archive's index names the image in full (its
	# org.opencontainers.image.ref.name), as podman load and ctr import want
	skopeo copy --quiet "oci:$tmp/oci:$VERSION" "oci-archive:$tmp/image.tar:localhost/$NAME:$VERSION"
	# the OCI runtime bundle of what the archive holds (umoci's runtime
	# configuration, the image's root): tests/deploy/image-run.py runs it
	skopeo copy --quiet "oci-archive:$tmp/image.tar" "oci:$tmp/final:$VERSION"
	umoci unpack --image "$tmp/final:$VERSION" "$tmp/final-bundle" >/dev/null
	rm -rf "$OUTDIR/$NAME"-*.oci.tar "$OUTDIR/bundle"
	mv "$tmp/final-bundle" "$OUTDIR/bundle"
	mv "$tmp/image.tar" "$OUT"
	rm -rf "$tmp"
	trap - EXIT
fi
echo "$OUT"
