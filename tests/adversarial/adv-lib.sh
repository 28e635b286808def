# shellcheck shell=bash
# What the adversarial suite's scripts share (tests/vm-tests.d/66-adversarial.list):
# the tools under test, the backends a kernel must have, scraping the
# exporter, a process's open descriptors. Source it after tests/lib/tap.sh.
#   BIN       the tools (CGC_BIN; default the ASan + UBSan build, LSan on)
#   BACKENDS  every backend: events, shared, rstat
#   backend_usable B ERRFILE   0: B opened; 1: the kernel lacks B where it
#             may (shared on Debian's kernels), said on stdout as a reason;
#             2: B failed where the kernel must have it
#   scrape PORT FILE [PID]     one GET /metrics into FILE (waits for the
#             exporter to listen, 30 s, or while PID lives, 600 s, and for
#             its answer, 300 s); the HTTP status on stdout, 0 for none
#   open_fds PID               the number of PID's open descriptors, the
#             fewest of 10 looks over half a second (40 over 2 s on the
#             debug kernel)
#   backend_runs B N           0 when B opens; else N results, skips (the
#             kernel lacks B where it may) or failures, and 1
#   start_exporter B REGEX     cgroup-exporter on 127.0.0.1:$PORT counting the
#             cpu-clock of the cgroups matching REGEX, in the background:
#             its pid in $exporter (and pids), its stderr in $tmp/exp.err
#   ROOT, tmp, pids            the cgroup2 mount, a temporary directory, the
#             background processes: adv_cleanup (the EXIT trap) kills them,
#             empties the cgroup $CG (cgroup.kill) and removes its tree
# No set -e or pipefail here: a sourced file keeps the options of its caller.
BIN=${CGC_BIN:-build/cgcount/asan/bin}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# shellcheck disable=SC2034 # read by the sourcing test
BACKENDS=${ADV_BACKENDS:-events shared rstat}

# The kernel series' shared backend is on our kernels only; events and rstat
# need no patch: every kernel of tests/kernels.list has them.
backend_required() {
	[ "$1" != shared ] || [[ ${KERNEL_NAME:-patched} == patched* ]]
}

backend_usable() { # BACKEND ERRFILE
	"$BIN/cgtop" --backend "$1" -b -n 1 -d 0.05 -e cpu-clock -r '^/$' >/dev/null 2>"$2" &&
		return 0
	if ! backend_required "$1" && grep -q "not supported by this kernel" "$2"; then
		echo "the $KERNEL_NAME kernel has no $1 backend: $(head -1 "$2")"
		return 1
	fi
	return 2
}

# With the exporter's PID, waiting for it to listen lasts while it lives:
# opening thousands of counters before it listens takes minutes in a
# loaded guest.
scrape() { # PORT FILE [PID]
	python3 - "$1" "$2" "${3:-}" <<'EOF'
import sys, time, urllib.request, urllib.error
url = "http://127.0.0.1:%s/metrics" % sys.argv[1]
pid = sys.argv[3]
deadline = time.monotonic() + (600 if pid else 30)


def alive():
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


while time.monotonic() < deadline and (not pid or alive()):
    try:
        with urllib.request.urlopen(url, timeout=300) as r:
            open(sys.argv[2], "wb").write(r.read())
            print(r.status)
        sys.exit(0)
    except urllib.error.HTTPError as e:
        print(e.code)
        sys.exit(0)
    except (urllib.error.URLError, ConnectionError):
        time.sleep(0.1)
    except TimeoutError:
        break
print(0)
EOF
}

backend_runs() { # BACKEND N
	local why _
	why=$(backend_usable "$1" "$tmp/usable.err")
	case $? in
	0) return 0 ;;
	1) for _ in $(seq "$2"); do skip "--backend $1: $why"; done ;;
	*) for _ in $(seq "$2"); do not_ok "--backend $1 does not open: $(head -1 "$tmp/usable.err")"; done ;;
	esac
	return 1
}

start_exporter() { # BACKEND REGEX
	"$BIN/cgroup-exporter" --backend "$1" --web.listen-address="127.0.0.1:$PORT" -e cpu-clock \
		-r "$2" --no-collector.leaves-only 2>"$tmp/exp.err" &
	exporter=$!
	pids+=("$exporter")
}

open_fds() { # PID
	local n fds min=''
	# the fewest of 10 looks 0.05 s apart (40 on the debug kernel, whose
	# refreshes take seconds): a refresh's walk holds a directory open for
	# a moment, a leak stays
	for _ in $(seq $((${CHECK_DEBUG:-0} ? 40 : 10))); do
		fds=("/proc/$1/fd"/*)
		n=${#fds[@]}
		[ -L "${fds[0]}" ] || n=0	# no match: the pattern itself
		[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
		sleep 0.05
	done
	echo "$min"
}

# shellcheck disable=SC2034 # read by the sourcing test
ROOT=$(findmnt -n -f -t cgroup2 -o TARGET)
tmp=$(mktemp -d)
pids=()

# shellcheck disable=SC2317 # run by the EXIT trap
adv_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -e "$CG/cgroup.kill" ] && echo 1 >"$CG/cgroup.kill"
	sleep 0.2
	# children first, each removed relative to its parent: any depth, any length
	[ -d "$CG" ] && find "$CG" -depth -type d -delete
	rm -rf "$tmp"
}

# the exporter listens on loopback, which the guest's init leaves down
ip link set lo up 2>/dev/null || /usr/sbin/ip link set lo up
