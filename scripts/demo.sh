#!/bin/bash
# `make demo`: boot the patched kernel, start a small tree of cgroups with
# different workloads and show perf stat -a --for-each-cgroup counting them
# on the automatic backend (-v says which one it picked), then on every
# backend at the same time (scripts/demo-guest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
KERNEL=build/bzImage
[ "${1:-}" = --kernel ] && KERNEL=$2
exec scripts/vm-run.sh --kernel "$KERNEL" --timeout 600 -- 'bash scripts/demo-guest.sh'
