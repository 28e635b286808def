#!/bin/bash
# `make demo`: boot the patched kernel and show what it can do.
# Until the perf front end lands this runs the configuration smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."
KERNEL=build/bzImage
[ "${1:-}" = --kernel ] && KERNEL=$2
exec scripts/vm-run.sh --kernel "$KERNEL" --timeout 600 -- \
	'uname -a; echo; build/tests/smoke/smoke'
