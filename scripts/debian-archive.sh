#!/bin/bash
# scripts/debian-archive.sh [main|security]
#
# Prints the URI of the Debian archive (main, the default) or of its
# security archive that the host's apt already uses, read from apt's own
# configuration (apt-get indextargets), so that the project's private apt
# setups (scripts/fetch-kernels.sh, scripts/build-kernel.sh) fetch from the
# same place as the host. DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR override it.
set -euo pipefail
want=${1:-main}
case $want in
main) override=${DEBIAN_MIRROR:-} ;;
security) override=${DEBIAN_SECURITY_MIRROR:-} ;;
*) echo "usage: $0 [main|security]" >&2; exit 2 ;;
esac
if [ -n "$override" ]; then
	echo "${override%/}"
	exit 0
fi
# shellcheck disable=SC2016 # $(REPO_URI) is apt's format, not the shell's
uris=$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 2>/dev/null | sort -u)
if [ "$want" = security ]; then
	uri=$(grep -m1 -e '-security/$' <<<"$uris" || true)
else
	uri=$(grep -v -e '-security/$' <<<"$uris" | grep -m1 -e '/debian/$' || true)
fi
if [ -z "$uri" ]; then
	echo "debian-archive: the host's apt has no Debian $want archive; set" \
		"DEBIAN_MIRROR (and DEBIAN_SECURITY_MIRROR)" >&2
	exit 1
fi
echo "${uri%/}"
