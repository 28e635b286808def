#!/bin/bash
# In the guest: note the machine and kernel, then run bench/guest.sh.
#   bench/guest-run.sh MODE OUTDIR
# No set -e: a machine fact that cannot be read leaves its line empty and
# the bench runs anyway.
set -u
cd "$(dirname "$0")/.." || exit
{
	echo "kernel=$(uname -r) $(uname -v)"
	echo "machine=$(uname -m), $(nproc) vcpus, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), QEMU $(grep -qw hypervisor /proc/cpuinfo && echo guest)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "guest_mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
} >>"$2/meta.txt"
exec bench/guest.sh "$1" "$2"
