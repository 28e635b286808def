#!/bin/bash
# Boot the test kernel in QEMU and run one shell command in it as root.
#
#   scripts/vm-run.sh [options] -- 'command'
#   scripts/vm-run.sh --shell            interactive guest
#
# Options:
#   --kernel KERNEL  kernel to boot: an image path (default build/bzImage) or a
#                    name from tests/kernels.list (stock-6.1, ...; a Debian
#                    kernel is fetched by scripts/fetch-kernels.sh if needed).
#                    An arm64 kernel (its list name ends in -arm64, or its
#                    path names arm64: build/Image-7.3-arm64) boots on QEMU's
#                    arm64 "virt" machine with the emulated PMUv3
#                    (-cpu max,pmu=on): see "arm64" below.
#   --timeout SEC    kill the guest after SEC seconds (default 1800)
#   --mem SIZE       guest memory (default 2G)
#   --cpus N         guest cpus (default 2)
#   --allow-splat    do not fail on a kernel BUG/WARNING/... in the guest log
#   --quiet          do not stream the command's output while it runs
#   --keep DIR       use DIR (under build/) as the run directory and keep it
#   --root ROOT      boot a whole Debian system with systemd as init, from
#                    the disk image ROOT (debian12: the Debian 12 host that
#                    scripts/systemd-host-image.sh builds): the initramfs
#                    switches to it, and its guest-command.service runs the
#                    command (a Debian kernel: virtio_blk and ext4)
#   --cpu-model M    an arm64 guest's QEMU cpu model (default max, with
#                    pauth-impdef=on): cortex-a72 has the PMUv3 of ARMv8.0,
#                    whose event counters are 32 bits wide (max: PMUv3p5, 64)
#   --exact          instruction-exact guest: one host thread runs every vcpu
#                    (-accel tcg,thread=single) and -icount shift=0,sleep=off
#                    makes the guest clock and TSC advance one ns per guest
#                    instruction (executed on any vcpu; idle time skipped),
#                    whatever the host load; the guest is told its TSC runs
#                    at 1 GHz. For benchmarks that count instructions.
#
# arm64: the guest's /usr is build/arm64/rootfs/usr (scripts/arm64-rootfs.sh,
# Debian 12 arm64) instead of the host's, and build/arm64/<dir> (the arm64
# builds of perf, the libraries, tools and tests: make arm64) is mounted
# over /repo/build/<dir>, so that every path the test lists name runs the
# arm64 program. An arm64 guest is always instruction-exact (as --exact):
# QEMU's PMU counts instructions only then.
# The guest sees the repository at /repo (read-write; build/bin is a copy in
# guest memory taken at boot) and the host's /usr read-only; build/bin is on
# its PATH; cgroup2, bpffs, tracefs and debugfs are mounted. The command
# runs from /repo with bash. The exit status is the command's; 124 when
# the guest hung, 125 when it died (panic, crash) or could not start, 126
# when the command passed but the kernel log shows a splat. The reason is
# printed on stderr as "vm-run: ...".
# No set -e: the guest's and QEMU's statuses are read and reported below.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
KERNEL=build/bzImage
TIMEOUT=1800
MEM=2G
CPUS=2
ALLOW_SPLAT=0
QUIET=0
MODE=run
RUNDIR=
KEEP=0
EXACT=0
CPU_MODEL=max,pauth-impdef=on
ROOTIMG=

usage() { sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--cpus) CPUS=$2; shift 2 ;;
	--allow-splat) ALLOW_SPLAT=1; shift ;;
	--quiet) QUIET=1; shift ;;
	--keep) RUNDIR=$2; KEEP=1; shift 2 ;;
	--exact) EXACT=1; shift ;;
	--cpu-model) CPU_MODEL=$2; shift 2 ;;
	--root) ROOTIMG=$2; shift 2 ;;
	--shell) MODE=shell; shift ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) break ;;
	esac
done
CMD="$*"
[ "$MODE" = shell ] || [ -n "$CMD" ] || usage

say() { echo "vm-run: $*" >&2; }

# A packaged (Debian) kernel, from tests/kernels.list: its name, its modules
# for the initramfs, and virtiofs instead of 9p (Debian's cloud kernels
# build no 9p). Our own kernels: 9p, no modules.
KNAME=
MODDIR=
VMFS=9p
resolve_kernel() {
	local image
	image=$(awk -v k="$KERNEL" '!/^[[:space:]]*#/ && $1 == k { print $2 }' tests/kernels.list)
	case $image in
	deb:*)
		KNAME=$KERNEL
		[ -e "build/stock/$KNAME/vmlinuz" ] || scripts/fetch-kernels.sh "$KNAME" || exit 125
		KERNEL=build/stock/$KNAME/vmlinuz ;;
	?*) KNAME=$KERNEL; KERNEL=$image ;;
	*) case $KERNEL in
	   build/stock/*/vmlinuz|*/build/stock/*/vmlinuz) KNAME=$(basename "$(dirname "$KERNEL")") ;;
	   esac ;;
	esac
	if [ -n "$KNAME" ] && [ -f "build/stock/$KNAME/release" ]; then
		VMFS=virtiofs
		[ -d "build/stock/$KNAME/modules" ] && MODDIR=build/stock/$KNAME/modules
	fi
}
resolve_kernel
[ -f "$KERNEL" ] || { say "no kernel at $KERNEL (run 'make kernel')"; exit 125; }
GUEST_ARCH=x86_64
case ${KNAME:-}:$KERNEL in *-arm64:*|*:*arm64*) GUEST_ARCH=arm64 ;; esac
HOSTUSR=/usr
if [ $GUEST_ARCH = arm64 ]; then
	scripts/arm64-rootfs.sh || exit 125
	HOSTUSR=$ROOT/build/arm64/rootfs/usr
	export BUSYBOX=$HOSTUSR/bin/busybox
fi

mkdir -p build/vm
INITRD=build/vm/initramfs${MODDIR:+-$KNAME}.cpio.gz
[ $GUEST_ARCH = arm64 ] && [ -z "$MODDIR" ] && INITRD=build/vm/initramfs-arm64.cpio.gz
# Guests boot side by side (the runner's self-test does): one packs the
# image, the others wait for it rather than pack it at the same time.
(
	flock 7
	if [ ! -f "$INITRD" ] || [ scripts/guest/init -nt "$INITRD" ] ||
	   [ scripts/mkinitramfs.sh -nt "$INITRD" ] ||
	   { [ -n "$MODDIR" ] && [ "build/stock/$KNAME/release" -nt "$INITRD" ]; }; then
		scripts/mkinitramfs.sh "$INITRD" ${MODDIR:+"$MODDIR"}
	fi
) 7>build/vm/initramfs.lock || exit 125

if [ -z "$RUNDIR" ]; then
	RUNDIR=$(mktemp -d build/vm/run-XXXXXX)
else
	rm -rf "$RUNDIR"; mkdir -p "$RUNDIR"
fi
RUNDIR=${RUNDIR%/}
# shellcheck disable=SC2317 # run by the trap
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$RUNDIR"; }
trap cleanup EXIT
printf 'cd /repo\n%s\n' "$CMD" >"$RUNDIR/cmd.sh"

accel() {
	# /dev/kvm may exist yet hang (nested virtualization missing): probe
	# once, cache the answer.
	local cache=build/vm/accel
	if [ ! -f $cache ]; then
		echo tcg >$cache
		if [ -w /dev/kvm ] && timeout 20 qemu-system-x86_64 -accel kvm -cpu host -m 256M \
			-nodefaults -nographic -no-reboot -serial stdio -bios /usr/share/qemu/qboot.rom \
			-kernel "$KERNEL" -append "console=ttyS0 panic=-1 rdinit=/bin/busybox-absent" \
			2>/dev/null | grep -q "Linux version"; then
			echo kvm >$cache
		fi
	fi
	case $(cat $cache) in
	kvm) echo "-accel kvm -cpu host" ;;
	*) echo "-accel tcg,thread=multi -cpu max" ;;
	esac
}

# Under TCG the guest's TSC runs at the host's TSC rate, but the guest cannot
# calibrate it (no usable PIT/HPET reference under emulation) and falls back
# to the jiffies clocksource: clock_gettime() then moves in 4 ms steps, which
# ruins every timing the benchmarks take. Hand it the host's TSC frequency
# when the host knows it exactly (tsc_known_freq: "cpu MHz" is the TSC's).
tsc_args() {
	case $1 in *kvm*) return ;; *icount*) echo " tsc_early_khz=1000000 tsc=reliable"; return ;; esac
	grep -qw tsc_known_freq /proc/cpuinfo && grep -qw constant_tsc /proc/cpuinfo || return 0
	awk -F': *' '/^cpu MHz/ { printf " tsc_early_khz=%d tsc=reliable", $2 * 1000; exit }' /proc/cpuinfo
}

# no_timer_check: under TCG on a loaded host the IO-APIC timer check can
# fail and panic the boot ("IO-APIC + timer doesn't work!").
if [ $GUEST_ARCH = arm64 ]; then
	# pmu=on: PMUv3 (6 counters + the cycle counter); pauth-impdef: QEMU's
	# own pointer-authentication hash instead of the architected QARMA,
	# which is several times slower to emulate (every kernel function
	# signs its return address). Always instruction-exact: QEMU counts the
	# PMU's instructions event (INST_RETIRED) only under precise icount,
	# and its cycles follow the virtual clock, one per instruction.
	ACCEL="-accel tcg,thread=single -cpu $CPU_MODEL,pmu=on -icount shift=0,sleep=off"
else
	ACCEL=$(accel)
	[ $EXACT = 1 ] && ACCEL="-accel tcg,thread=single -cpu max -icount shift=0,sleep=off"
fi
# VM_TCG_THREAD=single: one host thread runs every vcpu (no icount). Under
# multi-threaded TCG a vcpu can run a stale translation of kernel text that
# another vcpu is rewriting (text_poke_bp: BPF trampolines, static calls),
# which shows as "Oops: int3" or a vcpu spinning forever; with one thread
# the rewrite and every translation are ordered.
[ "${VM_TCG_THREAD:-multi}" = single ] && ACCEL=${ACCEL/thread=multi/thread=single}
if [ $GUEST_ARCH = arm64 ]; then
	APPEND="console=ttyAMA0 panic=-1 oops=panic loglevel=4 vmdir=$RUNDIR vmmode=$MODE vmarch=arm64"
	# shellcheck disable=SC2206 # ACCEL holds several options
	QEMU=(qemu-system-aarch64 -M virt $ACCEL -smp "$CPUS" -m "$MEM")
else
	APPEND="console=ttyS0 panic=-1 oops=panic loglevel=4 no_timer_check$(tsc_args "$ACCEL") vmdir=$RUNDIR vmmode=$MODE"
	# shellcheck disable=SC2206 # ACCEL holds several options
	QEMU=(qemu-system-x86_64 $ACCEL -smp "$CPUS" -m "$MEM" -bios /usr/share/qemu/qboot.rom)
fi
# how /repo and /usr arrive (scripts/guest/init), the kernel's matrix name
APPEND+=" vmfs=$VMFS${KNAME:+ vmkernel=$KNAME}"
if [ -n "$ROOTIMG" ]; then
	[ "$ROOTIMG" = debian12 ] && { ROOTIMG=$(scripts/systemd-host-image.sh) || exit 125; }
	# snapshot=on: the guest's writes go to a temporary file, not the image
	QEMU+=(-drive "file=$ROOTIMG,if=virtio,format=raw,snapshot=on")
	APPEND+=" vmroot=/dev/vda"
fi
QEMU+=(-nodefaults -nographic -no-reboot -kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND")

# share_dirs: the repository and the host's /usr for the guest's init
share_dirs() {
	if [ $VMFS = 9p ]; then
		QEMU+=(-virtfs "local,path=$ROOT,mount_tag=repo,security_model=none,id=repo"
			-virtfs "local,path=$HOSTUSR,mount_tag=hostusr,security_model=none,readonly=on,id=hostusr")
		return
	fi
	# virtiofs: one QEMU virtiofsd per directory (each exits when QEMU
	# closes its socket); the guest's memory must be shared with them.
	# /usr does not change while the guest runs: cache=always keeps the
	# programs and libraries in the guest's page cache (bash -c true took
	# 1.3 s with cache=none under TCG).
	local tag dir sock cache
	QEMU+=(-object "memory-backend-memfd,id=mem,size=$MEM,share=on" -numa "node,memdev=mem")
	for tag in repo hostusr; do
		dir=$ROOT cache=none
		[ $tag = hostusr ] && dir=$HOSTUSR cache=always
		sock=$RUNDIR/$tag.sock
		/usr/lib/qemu/virtiofsd --socket-path="$sock" -o source="$dir" -o cache=$cache \
			-o sandbox=chroot -o no_posix_lock -o no_flock >"$RUNDIR/virtiofsd-$tag.log" 2>&1 &
		QEMU+=(-chardev "socket,id=fs-$tag,path=$sock"
			-device "vhost-user-fs-pci,queue-size=1024,chardev=fs-$tag,tag=$tag")
	done
	for tag in repo hostusr; do
		for _ in $(seq 100); do [ -S "$RUNDIR/$tag.sock" ] && break; sleep 0.05; done
		[ -S "$RUNDIR/$tag.sock" ] || { say "virtiofsd did not start: $(cat "$RUNDIR/virtiofsd-$tag.log")"; exit 125; }
	done
}
share_dirs

if [ $MODE = shell ]; then
	exec "${QEMU[@]}" -serial mon:stdio
fi

CONSOLE=$RUNDIR/console.log
timeout "$TIMEOUT" "${QEMU[@]}" -serial "file:$CONSOLE" </dev/null &
QPID=$!
# timeout runs QEMU in a process group of its own, which a Ctrl-C or a
# kill of the run does not reach: stop it ourselves (timeout passes the
# signal on to QEMU)
# shellcheck disable=SC2317 # run by the trap
stop_guest() { kill "$QPID" 2>/dev/null; exit 143; }
trap stop_guest INT TERM HUP
if [ $QUIET = 0 ]; then
	( while [ ! -f "$RUNDIR/out" ] && kill -0 $QPID 2>/dev/null; do sleep 0.2; done
	  [ -f "$RUNDIR/out" ] && exec tail -n +1 -s 0.3 -f --pid=$QPID "$RUNDIR/out" ) &
	TPID=$!
fi
wait $QPID
QEMU_STATUS=$?
HUNG=0
[ $QEMU_STATUS = 124 ] && HUNG=1
[ $QUIET = 0 ] && wait "$TPID" 2>/dev/null
[ $QUIET = 1 ] && [ -f "$RUNDIR/out" ] && cat "$RUNDIR/out"

# The kernel log: what the console caught, and dmesg if the guest got that far.
# The kernel reports that fail a run: scripts/kernel-splats.ere (shared with
# scripts/run-tests.sh, which attributes them to the test that caused them).
splat_lines() { cat "$CONSOLE" "$RUNDIR/dmesg" 2>/dev/null | grep -E -f scripts/kernel-splats.ere | sort -u | head -5; }

if [ $HUNG = 1 ]; then
	say "guest hung: no result after ${TIMEOUT}s, killed (console log: $CONSOLE)"
	tail -20 "$CONSOLE" >&2
	KEEP=1; exit 124
fi
if [ ! -f "$RUNDIR/status" ]; then
	if grep -q "Kernel panic" "$CONSOLE"; then
		say "guest kernel panicked: $(grep -m1 'Kernel panic' "$CONSOLE")"
	else
		say "guest died before the command finished (qemu exit $QEMU_STATUS)"
	fi
	splat_lines >&2
	tail -30 "$CONSOLE" >&2
	say "console log: $CONSOLE"
	KEEP=1; exit 125
fi
STATUS=$(cat "$RUNDIR/status")
if [ $ALLOW_SPLAT = 0 ] && [ -n "$(splat_lines)" ]; then
	say "kernel log shows a splat:"
	splat_lines >&2
	say "full log: $RUNDIR/dmesg"
	KEEP=1
	[ "$STATUS" = 0 ] && exit 126
fi
exit "$STATUS"
