# Sourced by bench/ scripts in the guest: host_ns prints the host's clock in
# ns. Without scripts/vm-run.sh's tsc_early_khz the TCG guest's clock
# (refined-jiffies: the TSC fails calibration) drifts and jumps against
# real time by up to several times under host load, so spans are also
# timed by the host: appending to a file on the 9p share makes the host set
# its mtime, which stat reads back (a few ms).
HOST_CLOCK_FILE=${HOST_CLOCK_FILE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/bench/.host-clock-$$}
host_ns() {
	echo >>"$HOST_CLOCK_FILE"
	stat -c %.9Y "$HOST_CLOCK_FILE" | tr -d .
}
