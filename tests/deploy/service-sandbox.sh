#!/bin/bash
# Guest test (TAP): cgroup-exporter as its systemd unit
# (deploy/systemd/cgroup-exporter.service) runs it, on every backend of our
# kernel, without systemd: the unit's AmbientCapabilities= read from the
# unit itself, as nobody (setpriv), with the default file's ARGS, in a
# mount namespace with what the unit's sandbox makes read-only read-only
# (ProtectControlGroups: cgroupfs; ProtectKernelTunables: /proc/sys, /sys,
# /proc/kallsyms hidden) and PrivateDevices' /dev (null, zero, random,
# urandom only). Each backend writes two text files a second apart: the
# second one is read after the exporter dropped what it no longer needs.
# Each counts the context switches of a cgroup made to switch (a pipe
# ping-pong between its two tasks); removing the capability each backend
# opens its counters with (CAP_PERFMON; rstat CAP_BPF) makes it fail.
# The unit itself under systemd as init is not what this runs.
# CGC_BIN selects the binaries (default build/bin).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${CGC_BIN:-build/bin}
UNIT=deploy/systemd/cgroup-exporter.service
CG=/sys/fs/cgroup/deploy-sandbox-$$	# made here, removed at exit
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	# the ping-pong's two tasks (the forked one is no child of this shell)
	[ -e "$CG/cgroup.kill" ] && echo 1 >"$CG/cgroup.kill"
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CG" 2>/dev/null && break; sleep 0.2; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# the unit's capabilities in setpriv's notation: +perfmon,+bpf,...
caps=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_/+/' | paste -sd,)
bound=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_/+/' | paste -sd,)

# ARGS, then the exporter as the unit runs it, in the sandbox; CAPS; BACKEND
sandboxed() {
	local caps=$1 backend=$2
	# shellcheck disable=SC1091 # the packaged file
	. deploy/default/cgroup-exporter
	# shellcheck disable=SC2016,SC2086 # the inner script's own $1, $2; ARGS is a list
	unshare --mount --propagation private bash -c '
		set -e
		mount -o remount,bind,ro /sys/fs/cgroup
		mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys
		mount -o remount,bind,ro /sys
		mount --bind /dev/null /proc/kallsyms
		dev=$(mktemp -d)
		for n in null zero random urandom; do cp -a /dev/$n "$dev/"; done
		mount -t tmpfs -o mode=755 tmpfs /dev
		cp -a "$dev"/* /dev/
		shift
		exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,"$1" \
			--ambient-caps="$1" --bounding-set=-all,"$2" "${@:3}"' \
		sandbox - "$caps" "$bound" timeout 60 "$BIN/cgroup-exporter" $ARGS \
		--backend="$backend" --textfile=- --textfile.interval=1 --textfile.writes=2
}

mkdir "$CG" || exit 1
# a pipe ping-pong inside $CG: both ends switch at every byte
bash -c "echo \$\$ > $CG/cgroup.procs; exec python3 -c '
import os, time
r1, w1 = os.pipe(); r2, w2 = os.pipe()
if os.fork() == 0:
    while True:
        os.read(r1, 1); os.write(w2, b\"x\")
end = time.time() + 120
while time.time() < end:
    os.write(w1, b\"x\"); os.read(r2, 1)
'" </dev/null >/dev/null 2>&1 &
pids+=($!)

echo "TAP version 13"
echo "1..6"
for backend in shared rstat events; do
	sandboxed "$caps" "$backend" >"$tmp/$backend" 2>"$tmp/$backend.err"
	status=$?
	# the second of the two writes: after the drop
	last=$(awk '/^# HELP perf_cgroup_events_total/ { n++ } n == 2' "$tmp/$backend" |
		sed -n "s|^perf_cgroup_events_total{cgroup=\"/${CG##*/}\",event=\"context-switches\"} ||p")
	check "$backend: as nobody with $caps in the unit's sandbox, its cgroup's second reading has ${last:-no} context switches" \
		[ "$status" = 0 -a "${last:-0}" -gt 100 ]
	[ "$status" = 0 ] || sed 's/^/# /' "$tmp/$backend.err"
done
for pair in shared:perfmon rstat:bpf events:perfmon; do
	backend=${pair%%:*} cap=${pair#*:}
	less=$(echo "$caps" | tr , '\n' | grep -vx "+$cap" | paste -sd,)
	sandboxed "$less" "$backend" >/dev/null 2>"$tmp/$backend.err"
	status=$?
	check "$backend: without CAP_${cap^^} ($less) it does not start (exit $status)" [ "$status" != 0 ]
done
exit "$fail"
