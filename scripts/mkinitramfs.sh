#!/bin/bash
# Pack the test guest's initramfs: busybox, /init and a skeleton of
# directories. Everything else reaches the guest over 9p: the repository
# (test binaries, scripts, perf, tools under build/) at /repo and the
# host's /usr (bash, python3, shared libraries) read-only at /usr, so the
# image never has to be repacked when a test changes.
#   scripts/mkinitramfs.sh OUTPUT.cpio.gz [MODULE-DIR]
#
# MODULE-DIR (a packaged kernel's lib/modules/<release>, for the stock
# kernels of tests/kernels.list) adds the modules the guest needs to reach
# the host and that the kernel may not have built in: virtio's PCI
# transport and virtiofs (Debian's cloud kernels have no 9p at all; 6.1's
# builds virtio itself as modules), and virtio_blk for the disk of
# scripts/vm-run.sh --root, with every module they depend on.
# They are stored uncompressed in /modules, and /modules/load lists them in
# dependency order for the init to insmod.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$1
MODDIR=${2:-}
GUEST_MODULES=(virtio_pci virtiofs virtio_blk)
BUSYBOX=${BUSYBOX:-/bin/busybox}
case $(ldd "$BUSYBOX" 2>&1) in *"not a dynamic"*) ;; *) false ;; esac ||
	{ echo "error: $BUSYBOX is not the static busybox (make deps installs busybox-static)" >&2; exit 1; }

# module_path MODDIR NAME: the file of module NAME under MODDIR, or nothing
# (built in). Module names use _ where file names may use -.
module_path() {
	local f
	f=$(find "$1/kernel" \( -name "$2.ko*" -o -name "${2//_/-}.ko*" \) -print -quit)
	[ -n "$f" ] && echo "$f"
	return 0
}

# add_modules MODDIR DEST: copies GUEST_MODULES and their dependencies,
# decompressed, to DEST and writes DEST/load (dependencies first)
add_modules() {
	local moddir=$1 dest=$2 order=() seen=" "
	visit() {
		local name=$1 file dep
		case $seen in *" $name "*) return ;; esac
		seen+="$name "
		file=$(module_path "$moddir" "$name")
		[ -n "$file" ] || return 0
		for dep in $(modinfo -F depends "$file" | tr , ' '); do
			visit "$dep"
		done
		order+=("$name")
		case $file in
		*.ko.xz) xz -dc "$file" ;;
		*.ko.zst) zstd -qdc "$file" ;;
		*.ko.gz) gzip -dc "$file" ;;
		*) cat "$file" ;;
		esac >"$dest/$name.ko"
	}
	mkdir -p "$dest"
	local m
	for m in "${GUEST_MODULES[@]}"; do visit "$m"; done
	printf '%s\n' "${order[@]}" >"$dest/load"
}

STAGE=$(mktemp -d "${OUT%/*}/initramfs.XXXXXX")
trap 'rm -rf "$STAGE" "$STAGE.cpio.gz"' EXIT
mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,run,usr,repo,root,etc,mnt,var/tmp}
ln -s usr/lib "$STAGE/lib"
ln -s usr/lib64 "$STAGE/lib64"
cp "$BUSYBOX" "$STAGE/bin/busybox"
# scripts say #!/bin/bash: the host's bash (merged /usr) arrives over 9p
ln -s /usr/bin/bash "$STAGE/bin/bash"
install -m 0755 "$ROOT/scripts/guest/init" "$STAGE/init"
[ -z "$MODDIR" ] || add_modules "$MODDIR" "$STAGE/modules"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$STAGE/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$STAGE/etc/group"
# a temporary name of its own, renamed into place only when complete
(cd "$STAGE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$STAGE.cpio.gz"
mv "$STAGE.cpio.gz" "$OUT"
