#!/bin/bash
# Run the memcg-stat benchmark in one guest boot.
#
#   bench/memcg-stat/run.sh [--kernel IMAGE] [-- BENCH_ARGS]
#
# BENCH_ARGS go to memcg_stat_bench (-n reads of one cgroup, -N rounds over
# -c cgroups, -f fields). The seed 003 experiment is -n 1000000 -N 1000 -c 1000;
# under QEMU TCG that takes hours, so the default here is scaled down
# (-n 20000 -N 20 -c 1000): the per-read costs and the ratios are what count.
# Build first: make memcg (or make tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
KERNEL=build/bzImage
if [ "${1:-}" = --kernel ]; then KERNEL=$2; shift 2; fi
[ "${1:-}" = -- ] && shift
ARGS=${*:--n 20000 -N 20 -c 1000}
exec scripts/vm-run.sh --kernel "$KERNEL" --timeout 3000 -- \
	"build/bin/memcg_stat_bench $ARGS"
