# shellcheck shell=bash
# classic_clock_broken: do this kernel's classic per-cgroup cpu-clock events
# count (perf stat -G)? Linux 6.16 broke them: "perf: Fix the throttle error
# of some clock events" (bc4394e5e79c) updates a cpu-clock count at stop
# only with PERF_EF_UPDATE, which the scheduling out of a cgroup event never
# passes, so the event counts 0; "perf: Fix 0 count issue of cpu-clock"
# (f1f96511b1c4, 6.18 and 6.17.y) fixed it after 6.16.y had ended.
# Returns 0 (broken) and prints the reason, else 1 and prints nothing:
#   if reason=$(classic_clock_broken); then ...
# The answer is the running kernel's: the first call of a boot probes (a perf
# stat of a busy loop, about a second under TCG) and keeps the answer in
# /tmp for the others (three tests of every guest ask).
# Source it; needs perf and a cgroup2 mount.  No set -e or pipefail here: a
# sourced file keeps the options of its caller.
classic_clock_broken() {
	local cg probe v boot cache reason=
	read -r boot 2>/dev/null </proc/sys/kernel/random/boot_id
	cache=${TMPDIR:-/tmp}/classic-clock-${boot:-unknown}
	if [ -n "$boot" ] && [ -f "$cache" ]; then
		IFS= read -r reason <"$cache"
		[ -n "$reason" ] || return 1
		echo "$reason"
		return 0
	fi
	cg=$(findmnt -n -f -t cgroup2 -o TARGET)
	probe=$cg/classic-clock-probe-$$
	mkdir -p "$probe" || return 1
	v=$(perf stat -a -x, -e cpu-clock -G "${probe#"$cg"/}" -- bash -c \
		"echo \$\$ > $probe/cgroup.procs; i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done" \
		2>&1 >/dev/null | awk -F, '$3 == "cpu-clock" { print $1; exit }')
	rmdir "$probe" 2>/dev/null
	if awk -v v="$v" 'BEGIN { exit !(v + 0 == 0 && v != "") }'; then
		reason="$(uname -r): classic per-cgroup cpu-clock events count 0 ns (Linux 6.16: bc4394e5e79c \"perf: Fix the throttle error of some clock events\", fixed by f1f96511b1c4 \"perf: Fix 0 count issue of cpu-clock\" in 6.17.y and 6.18, never in 6.16.y)"
	elif [ -z "$v" ]; then
		return 1	# no answer (perf failed): probe again next time
	fi
	[ -n "$boot" ] && printf '%s\n' "$reason" >"$cache.$$" && mv -f "$cache.$$" "$cache"
	[ -n "$reason" ] || return 1
	echo "$reason"
	return 0
}
