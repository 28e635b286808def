#!/bin/bash
# Run bench/ in one guest boot and make its report (host side; `make bench`,
# `make bench-quick`, `make bench-smoke`):
#
#   bench/run.sh [--mode smoke|quick|full|profile|cost] [--out DIR] [--events LIST] [--configs 'G E D;...']
#                [--kernel IMAGE] [--wall] [--reps N] [--cpus N]
#
# The guest is instruction-exact (scripts/vm-run.sh --exact): its clock
# counts the instructions it executes, whatever the host load, so one
# repetition after a warm-up measures each configuration. --wall boots the
# ordinary guest instead (the wall clock: KVM, or the scripts' own checks)
# with several repetitions; --reps N sets the repetitions either way;
# --cpus N the guest's vcpus (default 2).
#
# DIR (default bench/results/<UTC time>-<mode>, build/bench/smoke for smoke)
# gets results.csv (one measurement per row, with machine, kernel and
# commit), summary.md and the PNG plots (bench/report.py).
# --events: the event pool (first E are used), e.g. cycles,instructions on
# bare metal; --configs: replace the mode's configurations. Variables
# BENCH_* of the environment reach bench/guest.sh in the guest (e.g.
# BENCH_PMU=0 or BENCH_COST=0: no PMU pass, no in-process cost pass).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=quick out='' kernel=build/bzImage events='' configs='' exact=1 reps=''
while [ $# -gt 0 ]; do
	case $1 in
	--mode) mode=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--events) events=$2; shift 2 ;;
	--configs) configs=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--wall) exact=0; shift ;;
	--reps) reps=$2; shift 2 ;;
	--cpus) vm_cpus=$2; shift 2 ;;
	*) sed -n '2,/^set/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
case $mode in
smoke) timeout=300 ;;
quick) timeout=3600 ;;
full) timeout=36000 ;;
profile) timeout=1200 ;;
cost) timeout=3600 ;;
*) echo "bench/run.sh: unknown mode $mode" >&2; exit 2 ;;
esac
# an arm64 guest (scripts/vm-run.sh: an image path naming arm64) sees
# build/arm64/bench at build/bench: its smoke output goes elsewhere
smoke_out=build/bench/smoke
case $kernel in *arm64*) smoke_out=build/bench-arm64/smoke ;; esac
if [ -z "$out" ]; then
	[ "$mode" = smoke ] && out=$smoke_out || out=bench/results/$(date -u +%Y%m%d-%H%M)-$mode
fi
mkdir -p "$out"
# the patched tree the kernel was built from (scripts/build-kernel.sh)
case $kernel in *-7.3*) tree=build/linux-7.3 ;; *) tree=build/linux ;; esac
rm -f "$out"/results.csv "$out"/*.png
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- bench lib kernel perf tools examples || echo -dirty)"
	echo "host=$(uname -r) $(nproc) cpus, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "host_load=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "series=$(git -C "$tree" log -1 --format=%h 2>/dev/null || echo unknown) ($tree)"
	echo "clock=$([ $exact = 1 ] && echo "exact (QEMU -icount shift=0: 1 guest ns = 1 instruction)" || echo wall)"
} >"$out/meta.txt"
env='' vm_opts=()
[ -n "${vm_cpus:-}" ] && vm_opts+=(--cpus "$vm_cpus")
[ -n "$events" ] && env+="BENCH_EVENTS=$events "
[ -n "$configs" ] && env+="BENCH_CONFIGS='$configs' "
[ -n "$reps" ] && env+="BENCH_REPS=$reps "
for v in "${!BENCH_@}"; do env+="$v='${!v}' "; done
if [ $exact = 1 ]; then
	env+="BENCH_EXACT=1 "
	vm_opts+=(--exact)
fi
scripts/vm-run.sh "${vm_opts[@]}" --kernel "$kernel" --timeout $timeout -- \
	"${env}bench/guest-run.sh $mode $out"
echo "host_load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"
if [ "$mode" = profile ]; then
	echo "bench: kernel profiles in $out/profile.txt"
elif [ "$mode" = cost ]; then
	# backend G E depth metric value unit, from the cost rows
	awk -F, '$1 == "cost" { print $2, "G=" $3, "E=" $4, "D=" $5, $7 "=" $8, $9 }' "$out/results.csv"
	echo "bench: results in $out/results.csv"
else
	bench/report.py "$out"
	echo "bench: results in $out (summary.md)"
fi
