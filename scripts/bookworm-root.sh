#!/bin/bash
# scripts/bookworm-root.sh VARIANT TARGET [MMDEBSTRAP_OPTION...]
#
# A Debian 12 (bookworm) amd64 root in TARGET (a directory or a tarball),
# made by mmdebstrap --variant=VARIANT as root from the Debian archive the
# host's apt uses (scripts/debian-archive.sh: main and security), with a
# private apt setup of mmdebstrap's own: the host's apt sources and package
# state are neither read nor changed. Slim as Debian's container images:
# no recommends, no manuals, documentation (but each package's copyright),
# translations or info pages. The options that follow (--include, hooks,
# further --dpkgopt) are mmdebstrap's. The systemd host's disk
# (scripts/systemd-host-image.sh) and the DaemonSet's image
# (deploy/container/build-image.sh) are made with it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 VARIANT TARGET [MMDEBSTRAP_OPTION...]" >&2; exit 2; }
variant=$1 target=$2
shift 2
command -v mmdebstrap >/dev/null || { echo "bookworm-root: mmdebstrap missing (make deps)" >&2; exit 1; }
mirror=$(scripts/debian-archive.sh main)
security_mirror=$(scripts/debian-archive.sh security)
mmdebstrap --quiet --mode=root --variant="$variant" --architectures=amd64 \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	"$@" bookworm "$target" \
	"deb $mirror bookworm main" "deb $security_mirror bookworm-security main" >&2
