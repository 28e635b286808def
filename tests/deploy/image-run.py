#!/usr/bin/env python3
# Guest test (TAP): the image of `make image` run as
# deploy/kubernetes/daemonset.yaml runs it.  Its OCI runtime bundle
# (build/image/bundle: umoci unpack of the image archive, the image's root
# and umoci's runtime configuration, the image's ENTRYPOINT its process)
# is given the DaemonSet's pod as a kubelet asks its runtime for it, and
# crun runs it:
#
#  - the container's args after the ENTRYPOINT; hostPID: no PID namespace
#    of its own; its own mount, UTS, IPC, cgroup and network namespaces, a
#    cgroup of its own; capabilities drop ALL and add the DaemonSet's
#    (bounding, effective, permitted; none inheritable or ambient,
#    no_new_privs not set: Kubernetes' allowPrivilegeEscalation defaults to
#    true); the node's rlimits; readOnlyRootFilesystem; the hostPath
#    volume /sys/fs/cgroup bind-mounted read-only at its mountPath.  The
#    pod's RuntimeDefault seccomp profile is the runtime's own, not made
#    here (the exporter installs a filter of its own);
#  - a first container of that configuration running grep shows the
#    capability sets and no_new_privs the kernel gave it (the capability
#    numbers read from linux/capability.h) and its cgroup namespace's root;
#  - the exporter's container: the host's PID namespace and its own others,
#    its root and /host/sys/fs/cgroup (the host's cgroup2 root) mounted
#    read-only; it enters the host's cgroup namespace (CAP_SYS_ADMIN, and
#    CAP_SYS_PTRACE: /proc/1/ns/cgroup is init's, whose capabilities are
#    more than the container's) and counts with the backend it picks
#    outside any namespace; scraped inside its network namespace (setns)
#    at the DaemonSet's port twice 2 s apart, each
#    scrape between two reads of cpu.stat, a busy container cgroup of each
#    cgroup driver's kubelet tree (tests/tools/exporter-kubernetes.py's)
#    has its pod_uid, container_id and qos_class and a cpu-clock increase
#    within 5 % of its cpu.stat usage_usec's; it stops on SIGTERM (crun
#    kill) with status 0.
import copy
import ctypes
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../tools"))
import tooltest  # noqa: E402
from tooltest import Process, check, passed, results, run_test, spin_in  # noqa: E402
import yaml  # noqa: E402

MANIFEST = "deploy/kubernetes/daemonset.yaml"
BUNDLE = "build/image/bundle"
CAPABILITY_H = "/usr/include/linux/capability.h"
NAME = "cgroup-exporter-%d" % os.getpid()
PROBE = "probe-%d" % os.getpid()
LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def load_kubelet_test():
    """tests/tools/exporter-kubernetes.py: its kubelet tree and scrape parsers"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "../tools/exporter-kubernetes.py")
    spec = importlib.util.spec_from_file_location("exporter_kubernetes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kube = load_kubelet_test()
tmp = tempfile.mkdtemp(prefix="image-run-")
STATE = os.path.join(tmp, "crun")


def daemonset():
    with open(MANIFEST) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet"]
    pod = docs[0]["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def runtime_config(image, pod, container, args=None):
    """umoci's configuration of the image (IMAGE) with what the kubelet asks
    for CONTAINER of POD; ARGS replaces the process (the probe)"""
    cfg = copy.deepcopy(image)
    sc = container.get("securityContext", {})
    proc = cfg["process"]
    proc["args"] = args or proc["args"] + container.get("args", [])
    proc["terminal"] = False
    proc["user"] = {"uid": sc.get("runAsUser", 0), "gid": 0}
    caps = sc.get("capabilities", {})
    assert caps.get("drop") == ["ALL"], caps
    added = ["CAP_" + c for c in caps.get("add", [])]
    proc["capabilities"] = {"bounding": added, "effective": added, "permitted": added,
                            "inheritable": [], "ambient": []}
    proc["noNewPrivileges"] = not sc.get("allowPrivilegeEscalation", True)
    proc.pop("rlimits", None)       # the node's, as containerd leaves them
    cfg["root"] = {"path": os.path.abspath(os.path.join(BUNDLE, image["root"]["path"])),
                   "readonly": bool(sc.get("readOnlyRootFilesystem"))}
    cfg["hostname"] = container["name"]
    namespaces = [ns for ns in cfg["linux"]["namespaces"]
                  if not (ns["type"] == "pid" and pod.get("hostPID"))]
    cfg["linux"]["namespaces"] = namespaces + [{"type": "cgroup"}]
    cfg["linux"]["cgroupsPath"] = kube.POD_CG
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in container.get("volumeMounts", []):
        cfg["mounts"].append({"destination": m["mountPath"], "type": "bind",
                              "source": volumes[m["name"]]["hostPath"]["path"],
                              "options": ["rbind", "ro" if m.get("readOnly") else "rw"]})
    return cfg


def bundle(name, cfg):
    path = os.path.join(tmp, name)
    os.mkdir(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f)
    return path


def crun(*args):
    return ["crun", "--root", STATE] + list(args)


def capability_mask(names):
    with open(CAPABILITY_H) as f:
        numbers = dict(re.findall(r"^#define (CAP_[A-Z_]+)\s+(\d+)\s*$", f.read(), re.M))
    return sum(1 << int(numbers[n]) for n in names)


def check_probe(pod, container, image):
    fields = "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):|^0::"
    cfg = runtime_config(image, pod, container, ["/usr/bin/grep", "-hE", fields,
                                                 "/proc/self/status", "/proc/self/cgroup"])
    out = subprocess.run(crun("run", "--bundle", bundle(PROBE, cfg), PROBE),
                         capture_output=True, text=True, timeout=120)
    status = dict(re.findall(r"^(\w+):\s*(\S+)$", out.stdout, re.M))
    check("its cgroup namespace is its own: its cgroup is the namespace's root",
          out.returncode == 0 and re.search(r"^0::/$", out.stdout, re.M),
          "exit %d: %s %s" % (out.returncode, out.stdout, out.stderr.strip()))
    caps = cfg["process"]["capabilities"]["bounding"]
    want = "%016x" % capability_mask(caps)
    check("a container of the DaemonSet's configuration has %s bounding, effective and "
          "permitted (%s), none inheritable or ambient, no_new_privs unset"
          % (", ".join(c[4:] for c in caps), want),
          out.returncode == 0 and status.get("CapBnd") == want and status.get("CapEff") == want
          and status.get("CapPrm") == want and int(status.get("CapInh", "1"), 16) == 0
          and int(status.get("CapAmb", "1"), 16) == 0 and status.get("NoNewPrivs") == "0",
          "exit %d: %s %s" % (out.returncode, status, out.stderr.strip()))


def mounts(pid):
    """{mount point: (root, fstype, mount options + super options)} of PID"""
    out = {}
    with open("/proc/%d/mountinfo" % pid) as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, sb = left.split(), right.split()
            out[fields[4]] = (fields[3], sb[0], set(fields[5].split(",")))
    return out


def enter_netns(pid):
    """This thread into PID's network namespace (its sockets then are there)"""
    fd = os.open("/proc/%d/ns/net" % pid, os.O_RDONLY)
    try:
        if LIBC.setns(fd, CLONE_NEWNET):
            err = ctypes.get_errno()
            raise OSError(err, "setns /proc/%d/ns/net: %s" % (pid, os.strerror(err)))
    finally:
        os.close(fd)


def bracketed(port, cgroups):
    before = {cg: kube.usage(cg) for cg in cgroups}
    body = tooltest.scrape(port)
    return before, body, {cg: kube.usage(cg) for cg in cgroups}


def check_exporter(pod, container, image):
    cfg = runtime_config(image, pod, container)
    args = container.get("args", [])
    listen = [a for a in args if a.startswith("--web.listen-address=")]
    port = int(listen[0].rpartition(":")[2])
    exp = Process(crun("run", "--bundle", bundle(NAME, cfg), NAME),
                  os.path.join(tmp, "exporter.err"), stdout=subprocess.DEVNULL)
    if not exp.wait_listening(120):
        check("the exporter's container listens", False, exp.stderr().strip())
        return
    state = json.loads(subprocess.run(crun("state", NAME), capture_output=True, text=True,
                                      timeout=60, check=True).stdout)
    pid = state["pid"]

    def ns(p, kind):
        return os.readlink("/proc/%s/ns/%s" % (p, kind))
    own = [k for k in ("mnt", "uts", "ipc", "net") if ns(pid, k) == ns(1, k)]
    check("the exporter runs in the host's PID namespace and its own mount, UTS, IPC "
          "and network namespaces",
          ns(pid, "pid") == ns(1, "pid") and not own, "shared with the host: %s" % own)
    with open("/proc/%d/cgroup" % pid) as f:
        cgroup = f.read().strip()
    check("in its own cgroup %s" % kube.POD_CG, cgroup == "0::" + kube.POD_CG, cgroup)
    m = mounts(pid)
    cgroupfs = [a for a in image["process"]["args"] if a.startswith("--path.cgroupfs=")]
    host = cgroupfs[0].split("=", 1)[1] if cgroupfs else None
    check("its root is read-only, %s the host's cgroup2 root, read-only" % host,
          "ro" in m.get("/", ("", "", set()))[2] and
          m.get(host, ("", "", set()))[:2] == ("/", "cgroup2") and "ro" in m[host][2],
          "%s %s" % (m.get("/"), m.get(host)))

    enter_netns(pid)
    first = bracketed(port, kube.CONTAINERS)
    time.sleep(2)
    second = bracketed(port, kube.CONTAINERS)
    enter_netns(1)
    plain = kube.auto_backend()
    check("it entered the host's cgroup namespace and counts with %s, as outside any namespace"
          % plain, "entered the host's" in exp.stderr() and ns(pid, "cgroup") == ns(1, "cgroup")
          and kube.backend(second[1]) == plain,
          "backend %s: %s" % (kube.backend(second[1]), exp.stderr().strip()))
    a, b = kube.cpu_series(first[1]), kube.cpu_series(second[1])
    d = kube.increases(a, b)
    for cg, (uid, cid, qos) in kube.CONTAINERS.items():
        labels = b.get(cg, (0, {}))[1]
        check("%s...: pod_uid, container_id, qos_class %s" % (cg[:40], qos),
              labels.get("pod_uid") == uid and labels.get("container_id") == cid
              and labels.get("qos_class") == qos, str(labels))
        low, high = second[0][cg] - first[2][cg], second[2][cg] - first[0][cg]
        check("its cpu-clock increase %.3f s is within 5 %% of cpu.stat's %.3f-%.3f s"
              % (d.get(cg, -1), low, high), cg in d and kube.within(d[cg], low, high))

    kill = subprocess.run(crun("kill", NAME, "TERM"), capture_output=True, text=True, timeout=60)
    try:
        rc = exp.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc = "none (still running 30 s after SIGTERM)"
    check("it stops on SIGTERM with status 0 (crun kill)", kill.returncode == 0 and rc == 0,
          "status %s: %s %s" % (rc, kill.stderr.strip(), exp.stderr().strip()[-300:]))


def main():
    print("TAP version 13", flush=True)
    with open(os.path.join(BUNDLE, "config.json")) as f:
        image = json.load(f)
    pod, container = daemonset()
    kube.thp_was = kube.thp_off()
    for cg in kube.TREE:
        os.mkdir(kube.CGROOT + cg)
    for cg in kube.CONTAINERS:
        spin_in(cg)
    check_probe(pod, container, image)
    check_exporter(pod, container, image)
    print("1..%d" % len(results))
    return 0 if passed() else 1


def cleanup():
    for name in (NAME, PROBE):
        subprocess.run(crun("delete", "--force", name), capture_output=True, timeout=60)
    kube.cleanup()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    run_test(main, cleanup)
