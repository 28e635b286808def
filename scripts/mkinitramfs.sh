#!/bin/bash
# Pack the test guest's initramfs: busybox, /init and a skeleton of
# directories. Everything else reaches the guest over 9p: the repository
# (test binaries, scripts, perf, tools under build/) at /repo and the
# host's /usr (bash, python3, shared libraries) read-only at /usr, so the
# image never has to be repacked when a test changes.
#   scripts/mkinitramfs.sh OUTPUT.cpio.gz
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$1
BUSYBOX=${BUSYBOX:-/bin/busybox}
case $(ldd "$BUSYBOX" 2>&1) in *"not a dynamic"*) ;; *) false ;; esac ||
	{ echo "error: $BUSYBOX is not the static busybox (make deps installs busybox-static)" >&2; exit 1; }

STAGE=$(mktemp -d "${OUT%/*}/initramfs.XXXXXX")
trap 'rm -rf "$STAGE" "$STAGE.cpio.gz"' EXIT
mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,run,usr,repo,root,etc,mnt,var/tmp}
ln -s usr/lib "$STAGE/lib"
ln -s usr/lib64 "$STAGE/lib64"
cp "$BUSYBOX" "$STAGE/bin/busybox"
# scripts say #!/bin/bash: the host's bash (merged /usr) arrives over 9p
ln -s /usr/bin/bash "$STAGE/bin/bash"
install -m 0755 "$ROOT/scripts/guest/init" "$STAGE/init"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$STAGE/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$STAGE/etc/group"
# a temporary name of its own, renamed into place only when complete
(cd "$STAGE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$STAGE.cpio.gz"
mv "$STAGE.cpio.gz" "$OUT"
