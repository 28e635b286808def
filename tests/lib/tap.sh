# shellcheck shell=bash
# TAP helpers for the shell tests: source it, print the plan, call check.
#   check "what it shows" COMMAND...   ok when COMMAND succeeds
#   skip "why"                         a result that is a skip
# $n counts the results, $fail is 1 once one failed (the test's exit status).
# No set -e or pipefail here: a sourced file keeps the options of its caller.
n=0
# shellcheck disable=SC2034 # read by the sourcing test
fail=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
# shellcheck disable=SC2034 # read by the sourcing test
not_ok() { n=$((n + 1)); echo "not ok $n $*"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
