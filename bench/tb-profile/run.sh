#!/bin/bash
# Where a backend's instructions go at a cgroup switch, by kernel function.
#
#   bench/tb-profile/run.sh [--kernel IMAGE] [--map SYSTEM.MAP] [--events LIST]
#                           [--loops N] [--top N] [--pmu-regs] BACKEND...
#
# Boots one instruction-exact guest (scripts/vm-run.sh --exact) per backend
# and one with no counting, each running the pipe ping-pong between two
# cgroups on cpu 0 (N round trips, default 20000: 2N cgroup switches) under
# BACKEND through cgbench (bench/tb-profile/guest.sh). QEMU loads
# tbcount.c, a TCG plugin built here against QEMU 7.2's plugin API
# (QEMU_PLUGIN_VERSION 1; only the functions it uses are declared), which
# counts the instructions each translation block executes. The run's counts
# minus no counting's, mapped to the kernel's functions with its System.map
# (default: build/kbuild<suffix> of the image), per cgroup switch: exact,
# but whole runs, so boot and setup differences show as small +- noise
# below the switch path's functions. Output in build/tb-profile/.
# --pmu-regs (an arm64 IMAGE: its path names arm64; scripts/vm-run.sh boots
# it on QEMU's virt machine with the emulated PMUv3) loads pmuregs.c
# instead, which counts the PMU register accesses the guest executes: per
# backend, the MSRs to PMU registers, the MRSs from them and the ISBs per
# cgroup switch over no counting, by kernel function, with their total.
set -euo pipefail
cd "$(dirname "$0")/../.."
kernel=build/bzImage-7.3-bench map='' events=cpu-clock,context-switches loops=20000 top=40
plugin=tbcount
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--map) map=$2; shift 2 ;;
	--events) events=$2; shift 2 ;;
	--loops) loops=$2; shift 2 ;;
	--top) top=$2; shift 2 ;;
	--pmu-regs) plugin=pmuregs; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [options] BACKEND..." >&2; exit 2; }
[ -n "$map" ] || map=$(dirname "$kernel")/$(basename "$kernel" | sed 's/^bzImage/kbuild/; s/^Image/kbuild/')/System.map
[ -f "$map" ] || { echo "tb-profile: no $map (--map)" >&2; exit 1; }
out=build/tb-profile
mkdir -p "$out/bin"
cc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$out/lib$plugin.so" "bench/tb-profile/$plugin.c"
# scripts/vm-run.sh runs QEMU from PATH: this one adds the plugin
qemu="qemu-system-x86_64"
case $kernel in *arm64*) qemu="qemu-system-aarch64" ;; esac
real=$(command -v $qemu)
cat >"$out/bin/$qemu" <<EOS
#!/bin/sh
exec $real -plugin "$PWD/$out/lib$plugin.so,out=\$TBCOUNT_OUT" "\$@"
EOS
chmod +x "$out/bin/$qemu"
# the files a guest's plugin writes: tbcount one, pmuregs one per kind
kinds=(tb)
[ $plugin = pmuregs ] && kinds=(writes reads isb)
for b in none "$@"; do
	for k in "${kinds[@]}"; do rm -f "$out/$k-$b.txt"; done
	prefix=$PWD/$out/tb-$b.txt
	[ $plugin = pmuregs ] && prefix=$PWD/$out/pmuregs-$b
	TBCOUNT_OUT=$prefix PATH=$PWD/$out/bin:$PATH \
		scripts/vm-run.sh --exact --kernel "$kernel" -- \
		"bench/tb-profile/guest.sh $b $events $loops" | grep usecs/op |
		sed "s/^ */$b: /"
	[ -e "$prefix" ] || [ -e "$prefix-writes.txt" ] ||
		{ echo "tb-profile: no counts from the $b guest" >&2; exit 1; }
done
for b in "$@"; do
	if [ $plugin = tbcount ]; then
		echo "== $b over none, $kernel, $events, $((2 * loops)) cgroup switches"
		python3 bench/tb-profile/prof.py "$map" "$out/tb-none.txt" "$out/tb-$b.txt" \
			$((2 * loops)) "$top" | tee "$out/$b.txt"
		continue
	fi
	for k in "${kinds[@]}"; do
		echo "== $b over none, PMU register accesses ($k), $kernel, $events, $((2 * loops)) cgroup switches"
		python3 bench/tb-profile/prof.py "$map" "$out/pmuregs-none-$k.txt" "$out/pmuregs-$b-$k.txt" \
			$((2 * loops)) "$top" "PMU register $k"
	done | tee "$out/pmuregs-$b.txt"
done
