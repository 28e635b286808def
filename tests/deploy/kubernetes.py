#!/usr/bin/env python3
# Host test (TAP): deploy/kubernetes/daemonset.yaml and the image recipe
# deploy/container/Containerfile, without a cluster or a container engine:
#
#  - the manifest parses (python3-yaml) into a Namespace, a ServiceAccount
#    and a DaemonSet whose pod has the host's PID namespace (the exporter
#    enters the host's cgroup namespace through /proc/1/ns/cgroup), drops
#    every capability but PERFMON, BPF, DAC_READ_SEARCH and SYS_ADMIN, has a
#    read-only root file system, and mounts the host's /sys/fs/cgroup
#    read-only where the image's --path.cgroupfs points;
#  - the image's ENTRYPOINT and the manifest's args are options
#    cgroup-exporter --help lists, and the exporter takes them together
#    (--path.cgroupfs given the host's cgroup2 mount, a text file written
#    once, exit 0); the port it listens on is the container's and the
#    prometheus.io/port annotation's;
#  - the recipe: Debian 12 slim, the ENTRYPOINT's binary is the one the
#    cgroup-exporter package installs (debian/cgroup-exporter.install), and
#    its RUN step's apt-get install resolves the package built in build/deb
#    against this Debian 12 host's archive (apt-get --simulate: building the
#    image needs a container engine and the registry, which make check has
#    neither of).
# TOOLS_BIN selects the exporter (default build/bin).
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

BIN = os.environ.get("TOOLS_BIN", "build/bin")
MANIFEST = "deploy/kubernetes/daemonset.yaml"
RECIPE = "deploy/container/Containerfile"
CAPS = {"PERFMON", "BPF", "DAC_READ_SEARCH", "SYS_ADMIN"}

n = 0
failed = 0


def check(name, ok, detail=""):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%sok %d %s%s" % ("" if ok else "not ", n, name, "" if ok else " # " + str(detail)),
          flush=True)


def recipe():
    """The Containerfile's instructions: [(KEYWORD, argument)], lines joined."""
    with open(RECIPE) as f:
        text = re.sub(r"\\\n", " ", f.read())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, arg = line.partition(" ")
            out.append((word.upper(), arg.strip()))
    return out


def option_value(args, name):
    for a in args:
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def main():
    print("TAP version 13", flush=True)
    with open(MANIFEST) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"]: d for d in docs}
    check("the manifest is a Namespace, a ServiceAccount and a DaemonSet",
          sorted(kinds) == ["DaemonSet", "Namespace", "ServiceAccount"], sorted(kinds))
    ds = kinds.get("DaemonSet", {})
    ns = kinds.get("Namespace", {}).get("metadata", {}).get("name")
    pod = ds.get("spec", {}).get("template", {}).get("spec", {})
    check("all in the namespace %s, the pod under the ServiceAccount" % ns,
          ds["metadata"].get("namespace") == ns
          and kinds["ServiceAccount"]["metadata"].get("namespace") == ns
          and pod.get("serviceAccountName") == kinds["ServiceAccount"]["metadata"]["name"])
    check("the pod shares the host's PID namespace (/proc/1/ns/cgroup is the host's)",
          pod.get("hostPID") is True)
    containers = pod.get("containers", [])
    check("one container", len(containers) == 1, len(containers))
    c = containers[0]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    check("it drops every capability but %s" % ", ".join(sorted(CAPS)),
          caps.get("drop") == ["ALL"] and set(caps.get("add", [])) == CAPS, caps)
    check("its root file system is read-only, no privileged mode",
          sc.get("readOnlyRootFilesystem") is True and not sc.get("privileged"), sc)

    steps = recipe()
    entry = json.loads(dict(steps).get("ENTRYPOINT", "[]"))
    args = c.get("args", [])
    cgroupfs = option_value(entry + args, "--path.cgroupfs")
    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mount = [m for m in mounts.values() if m.get("mountPath") == cgroupfs]
    check("--path.cgroupfs=%s is a read-only mount of the host's /sys/fs/cgroup" % cgroupfs,
          len(mount) == 1 and mount[0].get("readOnly") is True
          and volumes.get(mount[0]["name"], {}).get("hostPath", {}).get("path")
          == "/sys/fs/cgroup", (mount, volumes))

    exporter = os.path.join(BIN, "cgroup-exporter")
    helptext = subprocess.run([exporter, "--help"], capture_output=True, text=True).stdout
    known = set(re.findall(r"(--[a-z][a-z0-9.-]*)", helptext))
    given = [a.split("=", 1)[0] for a in entry[1:] + args]
    check("the ENTRYPOINT's and args' options are in cgroup-exporter --help: %s"
          % " ".join(given), given and all(g in known for g in given),
          [g for g in given if g not in known])
    listen = option_value(args, "--web.listen-address") or ""
    port = listen.rpartition(":")[2]
    annotations = ds["spec"]["template"]["metadata"].get("annotations", {})
    check("it listens on every address of the pod, port %s, the container's and the "
          "prometheus.io/port annotation's" % port,
          listen == ":" + port
          and [p.get("containerPort") for p in c.get("ports", [])] == [int(port)]
          and annotations.get("prometheus.io/scrape") == "true"
          and annotations.get("prometheus.io/port") == port
          and annotations.get("prometheus.io/path") == "/metrics", (listen, annotations))

    host_cgroupfs = subprocess.run(["findmnt", "-n", "-t", "cgroup2", "-o", "TARGET"],
                                   capture_output=True, text=True).stdout.split("\n")[0]
    run = [exporter] + [a for a in entry[1:] + args if not a.startswith("--path.cgroupfs=")] + \
        ["--path.cgroupfs=" + host_cgroupfs, "--backend=events", "--textfile=-",
         "--textfile.writes=1", "--textfile.interval=0"]
    out = subprocess.run(run, capture_output=True, text=True, timeout=120)
    check("the exporter takes them together (the host's cgroup2 at %s, a text file): exit 0"
          % host_cgroupfs, out.returncode == 0 and "perf_cgroup_exporter_build_info" in out.stdout,
          "%s: exit %d: %s" % (shlex.join(run), out.returncode, out.stderr.strip()))

    check("the image is Debian 12 slim", steps and steps[0] == ("FROM",
          "docker.io/library/debian:12-slim"), steps[:1])
    with open("debian/cgroup-exporter.install") as f:
        installed = ["/" + line.split()[0] for line in f if line.strip()]
    check("its ENTRYPOINT %s is what the cgroup-exporter package installs" % entry[:1],
          entry and entry[0] in installed, installed)
    copy = dict(steps).get("COPY", "").split()
    debs = glob.glob(copy[0]) if copy else []
    if not debs:
        subprocess.run(["make", "-s", "deb"], check=False)
        debs = glob.glob(copy[0]) if copy else []
    check("COPY %s finds the package make deb builds" % (copy[:1]), len(debs) == 1, debs)
    run_step = dict(steps).get("RUN", "")
    m = re.search(r"apt-get install ([^&]*?)/tmp/cgroup-exporter_\*\.deb", run_step)
    flags = shlex.split(m.group(1)) if m else []
    sim = subprocess.run(["apt-get", "install", "--simulate"] + flags +
                         [os.path.abspath(d) for d in debs],
                         capture_output=True, text=True, timeout=120)
    check("the RUN step's apt-get install %s resolves the package on Debian 12"
          % " ".join(flags), m and debs and sim.returncode == 0,
          sim.stderr.strip()[-300:])
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
