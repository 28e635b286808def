#!/usr/bin/env python3
# Guest test (TAP): cgroup-exporter as deploy/kubernetes/daemonset.yaml runs
# it.  A kubelet's tree, both cgroup drivers' shapes: a burstable pod with
# two containers (systemd: kubepods.slice/.../cri-containerd-<id>.scope) and
# a guaranteed one with one (cgroupfs: kubepods/pod<uid>/<id>), a busy loop
# in each container.  Each exporter runs as a container does: moved into a
# cgroup of its own, then unshare --mount --cgroup (its cgroup namespace's
# root is that cgroup), the host's cgroup2 bind-mounted at
# HOST/sys/fs/cgroup, its own cgroup2 mounted at /sys/fs/cgroup, and
# --path.cgroupfs=HOST/sys/fs/cgroup.  Two scrapes 2 s apart, each between
# two reads of every cgroup's cpu.stat:
#
#  - with CAP_SYS_ADMIN (the manifest's) it enters the host's cgroup
#    namespace: auto picks there what it picks outside any namespace, and
#    --backend=rstat (whose reads find cgroups by id) counts; without, it
#    says so and counts with events; --backend=shared without it is refused
#    with what to do;
#  - each container's series carry its pod_uid, container_id and qos_class,
#    and its cpu-clock increase is within 5 % of its cpu.stat usage_usec's;
#  - by default no exported cgroup is another's ancestor, and the sum over
#    each kubepods tree's series is within 5 % of its top cgroup's cpu.stat
#    (nothing counted twice);
#  - --collector.depth, -include and -exclude export the cgroups they say,
#    the leaves of what they keep; --no-collector.leaves-only every level,
#    a parent within 5 % of its children's sum;
#  - cgtop, cgrstat and memcg-stat take --path.cgroupfs there too: cgtop
#    shows the containers with and without CAP_SYS_ADMIN, cgrstat counts
#    with it and refuses without, memcg-stat reads as outside any namespace
#    (as text without it).
# TOOLS_BIN selects the binaries (default build/bin).
import os
import re
import shutil
import subprocess
import tempfile
import time

import tooltest
from tooltest import (BIN, CGROOT, Process, check, loopback_up, passed, results, run_test,
                      spin_in)

PORT = int(os.environ.get("EXPORTER_PORT", "9470"))
TOLERANCE = 0.05
SLACK = 0.02            # seconds: a scrape's own spread on a loaded guest

UID1, UID2 = "0f7c4b1e-2a3d-4c5e-8f90-a1b2c3d4e5f6", "6b0f8a5f-5c0b-1c3d-9e8f-7a6b5c4d3e2f"
ID1, ID2, ID3 = "a1" * 32, "b2" * 32, "c3" * 32
SYSTEMD = "/kubepods.slice"
BURSTABLE = SYSTEMD + "/kubepods-burstable.slice"
POD1 = BURSTABLE + "/kubepods-burstable-pod" + UID1.replace("-", "_") + ".slice"
C1 = POD1 + "/cri-containerd-" + ID1 + ".scope"
C2 = POD1 + "/cri-containerd-" + ID2 + ".scope"
CGROUPFS = "/kubepods"
POD2 = CGROUPFS + "/pod" + UID2
C3 = POD2 + "/" + ID3
CONTAINERS = {C1: (UID1, ID1, "burstable"), C2: (UID1, ID2, "burstable"),
              C3: (UID2, ID3, "guaranteed")}
TREE = [SYSTEMD, BURSTABLE, POD1, C1, C2, CGROUPFS, POD2, C3]
POD_CG = "/exporter-pod-%d" % os.getpid()

def usage(cg):
    return tooltest.usage_usec(cg) / 1e6


def in_container(tmp, name, argv, caps):
    """ARGV (its first word a tool of BIN) as a container runs it: a
    command line and the --path.cgroupfs to give"""
    host = os.path.join(tmp, name, "host/sys/fs/cgroup")
    os.makedirs(host)
    drop = [] if caps else [shutil.which("setpriv") or "/usr/bin/setpriv",
                            "--bounding-set=-sys_admin"]
    script = ('mount --bind /sys/fs/cgroup "$1" && umount -l /sys/fs/cgroup && '
              'mount -t cgroup2 none /sys/fs/cgroup && shift && exec "$@"')
    return (["unshare", "--mount", "--cgroup", "--propagation", "private", "sh", "-c",
             script, "sh", host] + drop + [os.path.join(BIN, argv[0]),
                                           "--path.cgroupfs=" + host] + argv[1:])


def enter_pod_cgroup():
    tooltest.enter(POD_CG)


def run_in_container(tmp, name, argv, caps):
    return subprocess.run(in_container(tmp, name, argv, caps), capture_output=True, text=True,
                          timeout=120, preexec_fn=enter_pod_cgroup)


class Exporter(Process):
    """cgroup-exporter in a container's namespaces (see the top)."""

    def __init__(self, tmp, name, args, caps=True, port=None):
        self.port = port
        listen = ["--web.listen-address=127.0.0.1:%d" % port] if port else []
        super().__init__(in_container(tmp, name, ["cgroup-exporter", "-e", "cpu-clock"] + listen
                                      + args, caps),
                         os.path.join(tmp, name + ".err"), preexec_fn=enter_pod_cgroup)

    def scrape(self):
        return tooltest.scrape(self.port)


SAMPLE = re.compile(r'^perf_cgroup_event_seconds_total\{(.*)\} ([0-9.e+]+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def cpu_series(body):
    """{cgroup: (value, labels)} of the cpu-clock series of a scrape."""
    out = {}
    for line in body.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = dict(LABEL.findall(m.group(1)))
            out[labels["cgroup"]] = (float(m.group(2)), labels)
    return out


def backend(body):
    m = re.search(r'perf_cgroup_exporter_build_info\{backend="([a-z]+)"', body)
    return m.group(1) if m else None


def below(parent, path):
    return path != parent and (parent == "/" or path.startswith(parent + "/"))


def within(value, low, high):
    return low * (1 - TOLERANCE) - SLACK <= value <= high * (1 + TOLERANCE) + SLACK


THP = "/sys/kernel/mm/transparent_hugepage/enabled"


def thp_off():
    """The spinners fill the guest's two cpus: on Debian's kernels
    khugepaged (nice 19), preempted inside collapse_huge_page's RCU
    read-side section, then waited 21 s and more for a cpu, and the kernel
    logged an RCU stall (no RCU priority boosting there), which fails the
    run. Nothing the test checks involves huge pages, so none are made
    while it runs. Returns what to restore, or None without THP."""
    try:
        with open(THP) as f:
            was = re.search(r"\[(\w+)\]", f.read()).group(1)
        with open(THP, "w") as f:
            f.write("never")
        return was
    except OSError:
        return None


def thp_restore(was):
    if was is not None:
        with open(THP, "w") as f:
            f.write(was)


tmp = tempfile.mkdtemp(prefix="k8s-")
thp_was = None


def main():
    global thp_was
    print("TAP version 13", flush=True)
    thp_was = thp_off()
    loopback_up()
    for cg in TREE + [POD_CG]:
        os.mkdir(CGROOT + cg)
    run(tmp)
    print("1..%d" % len(results))
    return 0 if passed() else 1


def cleanup():
    thp_restore(thp_was)
    for cg in reversed(TREE + [POD_CG]):
        for _ in range(50):
            try:
                os.rmdir(CGROOT + cg)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)
    shutil.rmtree(tmp, ignore_errors=True)


def run(tmp):
    for cg in CONTAINERS:
        spin_in(cg)
    include = r"/kubepods(\.slice)?(/.*)?"
    exps = {
        "default": Exporter(tmp, "default", [], port=PORT),
        "rstat": Exporter(tmp, "rstat", ["--backend=rstat"], port=PORT + 4),
        "no-sys-admin": Exporter(tmp, "no-sys-admin", [], caps=False, port=PORT + 1),
        "depth-regex": Exporter(tmp, "depth-regex", [
            "--collector.depth=3", "--collector.cgroup-include=" + include,
            "--collector.cgroup-exclude=/kubepods/pod[^/]*/.*"], port=PORT + 2),
        "all-levels": Exporter(tmp, "all-levels", [
            "--no-collector.leaves-only", r"--collector.cgroup-include=/kubepods\.slice(/.*)?"],
            port=PORT + 3),
    }
    refused = Exporter(tmp, "refused", ["--backend=shared", "--textfile=-"], caps=False)
    rc = refused.proc.wait(timeout=120)
    check("--backend=shared without CAP_SYS_ADMIN is refused, saying what to do (exit 1)",
          rc == 1 and "CAP_SYS_ADMIN and CAP_SYS_PTRACE, or --backend=events" in refused.stderr(),
          "exit %d: %s" % (rc, refused.stderr().strip()))
    for name, e in exps.items():
        if not e.wait_listening(120):
            check("%s: listening" % name, False, e.stderr().strip())
            return
    first, second, truths = {}, {}, {}
    for name, e in exps.items():
        first[name] = bracketed(e)
    time.sleep(2)
    for name, e in exps.items():
        second[name] = bracketed(e)
        (b0, a, b1), (c0, c, c1) = first[name], second[name]
        # the least and the most each cgroup can have run between the two scrapes
        truths[name] = {cg: (c0[cg] - b1[cg], c1[cg] - b0[cg]) for cg in TREE}
        first[name], second[name] = a, c
    plain = auto_backend()
    check("with CAP_SYS_ADMIN it enters the host's cgroup namespace and auto picks what it "
          "picks outside any namespace (%s)" % plain,
          "entered the host's" in exps["default"].stderr() and backend(second["default"]) == plain,
          "backend %s: %s" % (backend(second["default"]), exps["default"].stderr().strip()))
    check("there --backend=rstat, whose reads find cgroups by id, counts",
          backend(second["rstat"]) == "rstat", exps["rstat"].stderr().strip())
    check("without CAP_SYS_ADMIN it says so and counts with events",
          "could not be entered" in exps["no-sys-admin"].stderr()
          and backend(second["no-sys-admin"]) == "events", exps["no-sys-admin"].stderr().strip())
    for name in ("default", "rstat", "no-sys-admin"):
        check_default(name, cpu_series(first[name]), cpu_series(second[name]), truths[name])
    check_filters(cpu_series(first["depth-regex"]), cpu_series(second["depth-regex"]),
                  truths["depth-regex"])
    check_all_levels(cpu_series(first["all-levels"]), cpu_series(second["all-levels"]))
    check_other_tools(tmp)


def check_other_tools(tmp):
    """cgtop, cgrstat and memcg-stat with --path.cgroupfs in the same namespaces"""
    for caps in (True, False):
        how = "with" if caps else "without"
        out = run_in_container(tmp, "cgtop-" + how, ["cgtop", "-b", "-n", "1", "-d", "0.5",
                                                     "-e", "cpu-clock", "-r", "^/kubepods"], caps)
        check("cgtop %s CAP_SYS_ADMIN shows the containers" % how,
              out.returncode == 0 and all(cg in out.stdout for cg in CONTAINERS),
              "exit %d: %s" % (out.returncode, out.stderr.strip()))
    argv = ["cgrstat", "-e", "cpu-clock", "-r", POD1, "-d", "1"]
    out = run_in_container(tmp, "cgrstat-with", argv, True)
    check("cgrstat with CAP_SYS_ADMIN counts the pod's containers",
          out.returncode == 0 and "cgroup %s\n" % C1 in out.stdout
          and "cgroup %s\n" % C2 in out.stdout, "exit %d: %s" % (out.returncode, out.stderr))
    out = run_in_container(tmp, "cgrstat-without", argv, False)
    check("cgrstat without it exits 1 saying why", out.returncode == 1
          and "find cgroups by id" in out.stderr, "exit %d: %s" % (out.returncode, out.stderr))
    plain = subprocess.run([os.path.join(BIN, "memcg-stat"), "-f", "anon", CGROOT + C1],
                           capture_output=True, text=True, timeout=120)
    for caps in (True, False):
        how = "with" if caps else "without"
        out = run_in_container(tmp, "memcg-" + how, ["memcg-stat", "-f", "anon", C1[1:]], caps)
        said = "reading memory.stat as text" in out.stderr
        check("memcg-stat %s CAP_SYS_ADMIN reads a relative cgroup as outside any namespace "
              "(exit %d)%s" % (how, plain.returncode, "" if caps else ", as text"),
              out.returncode == plain.returncode and said != caps
              and len(out.stdout.splitlines()) == len(plain.stdout.splitlines()),
              "exit %d: %s %s / %s" % (out.returncode, out.stdout, out.stderr, plain.stdout))


def bracketed(e):
    """cpu.stat of every cgroup, a scrape, cpu.stat again"""
    before = {cg: usage(cg) for cg in TREE}
    body = e.scrape()
    return before, body, {cg: usage(cg) for cg in TREE}


def auto_backend():
    """The backend auto picks in the guest's own namespaces"""
    out = subprocess.run([os.path.join(BIN, "cgroup-exporter"), "--textfile=-",
                          "--textfile.writes=1", "--textfile.interval=0", "-r", "^/$"],
                         capture_output=True, text=True, timeout=120)
    return backend(out.stdout)


def increases(a, b):
    return {cg: b[cg][0] - a[cg][0] for cg in b if cg in a}


def check_default(name, a, b, truth):
    d = increases(a, b)
    for cg, (uid, cid, qos) in CONTAINERS.items():
        labels = b.get(cg, (0, {}))[1]
        check("%s: %s... has pod_uid, container_id and qos_class" % (name, cg[:40]),
              labels.get("pod_uid") == uid and labels.get("container_id") == cid
              and labels.get("qos_class") == qos, str(labels))
        low, high = truth[cg]
        check("%s: its cpu-clock increase %.3f s is within 5 %% of cpu.stat's %.3f-%.3f s"
              % (name, d.get(cg, -1), low, high), cg in d and within(d[cg], low, high))
    nested = [(p, c) for p in b for c in b if below(p, c)]
    check("%s: no exported cgroup is another's ancestor (%d exported)" % (name, len(b)),
          not nested, str(nested[:3]))
    check("%s: no pod or kubepods cgroup is exported, only their containers" % name,
          not any(cg in b for cg in (SYSTEMD, BURSTABLE, POD1, CGROUPFS, POD2)))
    for top in (SYSTEMD, CGROUPFS):
        total = sum(v for cg, v in d.items() if below(top, cg))
        low, high = truth[top]
        check("%s: the sum over %s's series, %.3f s, is within 5 %% of its cpu.stat's "
              "%.3f-%.3f s" % (name, top, total, low, high), within(total, low, high))


def check_filters(a, b, truth):
    got = sorted(b)
    check("depth 3, include kubepods, exclude cgroupfs containers: the pods are the leaves",
          got == sorted([POD1, POD2]), str(got))
    d = increases(a, b)
    total = sum(d.values())
    low = truth[SYSTEMD][0] + truth[CGROUPFS][0]
    high = truth[SYSTEMD][1] + truth[CGROUPFS][1]
    check("their sum %.3f s is within 5 %% of both kubepods trees' %.3f-%.3f s"
          % (total, low, high), within(total, low, high))


def check_all_levels(la, lb):
    got = sorted(lb)
    check("--no-collector.leaves-only exports every level of kubepods.slice",
          got == sorted([SYSTEMD, BURSTABLE, POD1, C1, C2]), str(got))
    d = increases(la, lb)
    children = d.get(C1, 0) + d.get(C2, 0)
    check("a parent's increase %.3f s is within 5 %% of its children's %.3f s"
          % (d.get(POD1, -1), children), POD1 in d and within(d[POD1], children, children))


if __name__ == "__main__":
    run_test(main, cleanup)
