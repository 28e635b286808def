# shellcheck shell=bash
# Helpers of the guest tests that compare perf stat --for-each-cgroup with
# cgroup cpu.stat (rstat-cpustat.sh, event-groups.sh).  Source it after
# setting TOP (the tests' cgroup, under the cgroup2 mount) and tmp (a
# temporary directory); it sets CG to the cgroup2 mount and removes both at
# exit.  No set -e or pipefail here: a sourced file keeps the options of
# its caller.
: "${TOP:?}" "${tmp:?}"
CG=$(findmnt -n -f -t cgroup2 -o TARGET)

# shellcheck disable=SC2317 # run by the EXIT trap
cpustat_cleanup() {
	find "$CG/$TOP" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$tmp"
}
trap cpustat_cleanup EXIT

# usage_ns CGROUP: its cpu.stat usage in ns
usage_ns() { awk '$1 == "usage_usec" { print $2 * 1000 }' "$CG/$1/cpu.stat"; }
# within5 VALUE REF: VALUE is within 5 % of REF, and REF is not 0
within5() { awk -v v="$1" -v r="$2" 'BEGIN { d = v - r; if (d < 0) d = -d; exit !(r > 0 && d * 100 <= 5 * r) }'; }
