#!/bin/bash
# `make deb`: Debian's binary packages (debian/) of what `make` built, into
# OUTDIR (build/deb), with the .changes and .buildinfo beside them.
#
#   deploy/build-deb.sh OUTDIR
#
# dpkg-buildpackage runs debian/rules in this tree, so the build reuses
# build/; --no-pre-clean keeps debian/rules clean from running first (it
# would leave build/ alone but rebuild nothing faster). Unsigned (-us -uc):
# sign the .changes with debsign to upload it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: deploy/build-deb.sh OUTDIR}
source=$(dpkg-parsechangelog -SSource)
version=$(dpkg-parsechangelog -SVersion)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
rm -rf "$out"
mkdir -p "$out"
export DEB_OUT=$out	# debian/rules' dh_builddeb
dpkg-buildpackage -b -us -uc --no-pre-clean \
	--buildinfo-option=-u"$out" --changes-option=-u"$out" \
	--buildinfo-file="$out/${source}_${version}_$arch.buildinfo" \
	--changes-file="$out/${source}_${version}_$arch.changes"
debian/rules clean
