# What the Python guest tests of the tools share (imported by
# tests/tools/*.py, which run from the repository's root: their directory
# is on sys.path): TAP output, the tools' binaries, the processes a test
# starts and must not leave behind, and the kernel's own count of a
# cgroup's cpu time.
#
# TOOLS_BIN selects the binaries (default build/bin).
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

BIN = os.environ.get("TOOLS_BIN", "build/bin")
CGROOT = "/sys/fs/cgroup"

# one entry per test point: whether it passed
results = []
# every process a test started: killed by kill_procs() at its end
procs = []


def check(what, cond, detail=""):
    """A test point: "ok N WHAT", or "not ok N WHAT # DETAIL"."""
    results.append(bool(cond))
    print("%s %d %s%s" % ("ok" if cond else "not ok", len(results), what,
                          " # " + detail if detail and not cond else ""), flush=True)


def skip(why):
    results.append(True)
    print("ok %d # SKIP %s" % (len(results), why), flush=True)


def note(msg):
    for line in str(msg).splitlines():
        print("# " + line, flush=True)


def bail(why):
    print("Bail out! " + why, flush=True)
    sys.exit(1)


def passed(plan=None):
    """Whether every test point passed (and PLAN of them ran, if given)."""
    return all(results) and (plan is None or len(results) == plan)


def loopback_up():
    """The guest's init leaves loopback down."""
    ip = shutil.which("ip") or "/usr/sbin/ip"
    subprocess.run([ip, "link", "set", "lo", "up"], check=False)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port, host="127.0.0.1", timeout=60):
    with urllib.request.urlopen("http://%s:%d/metrics" % (host, port), timeout=timeout) as r:
        return r.read().decode()


def cgroup_dir(cgroup):
    """The directory of CGROUP, a path below the cgroup2 root ("/a/b" or "a/b")."""
    return os.path.join(CGROOT, cgroup.lstrip("/"))


def usage_usec(cgroup):
    """cpu.stat's usage_usec of CGROUP: the kernel's own count of its cpu time."""
    with open(os.path.join(cgroup_dir(cgroup), "cpu.stat")) as f:
        for line in f:
            key, value = line.split()
            if key == "usage_usec":
                return int(value)
    raise RuntimeError("no usage_usec in %s" % cgroup)


def enter(cgroup):
    """Move the calling process into CGROUP."""
    with open(os.path.join(cgroup_dir(cgroup), "cgroup.procs"), "w") as f:
        f.write("0")


def spin_in(cgroup):
    """A loop spinning in CGROUP until killed."""
    proc = subprocess.Popen(["sh", "-c", "while :; do :; done"],
                            preexec_fn=lambda: enter(cgroup))
    procs.append(proc)
    return proc


class Process:
    """ARGV started with its stderr in the file ERR_PATH (POPEN: more of
    subprocess.Popen's arguments); killed by kill_procs() if still running."""

    def __init__(self, argv, err_path, **popen):
        self.err_path = err_path
        with open(err_path, "w") as err:
            self.proc = subprocess.Popen(argv, stderr=err, **popen)
        procs.append(self.proc)

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def wait_listening(self, seconds):
        """Whether it said "listening" within SECONDS (False if it exited)."""
        end = time.monotonic() + seconds
        while "listening" not in self.stderr():
            if self.proc.poll() is not None or time.monotonic() > end:
                return False
            time.sleep(0.1)
        return True

    def stop(self, seconds=30):
        """SIGTERM: its exit status, or a sentence if it had to be killed."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "none (killed after %d s)" % seconds

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime, fields 14 and 15 of proc(5)
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def open_fds(self):
        return len(os.listdir("/proc/%d/fd" % self.proc.pid))


def kill_procs():
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def run_test(main, cleanup=None):
    """sys.exit(MAIN()), after kill_procs() and CLEANUP (if any) whatever happened."""
    status = 1
    try:
        status = main()
    finally:
        kill_procs()
        if cleanup:
            cleanup()
    sys.exit(status)
