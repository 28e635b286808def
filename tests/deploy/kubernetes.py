#!/usr/bin/env python3
# Host test (TAP): deploy/kubernetes/daemonset.yaml and its image (make
# image: deploy/container/build-image.sh), without a cluster or a
# container engine:
#
#  - the manifest parses (python3-yaml) into a Namespace, a ServiceAccount
#    and a DaemonSet whose pod has the host's PID namespace (the exporter
#    enters the host's cgroup namespace through /proc/1/ns/cgroup), drops
#    every capability but PERFMON, BPF, DAC_READ_SEARCH, SYS_ADMIN and
#    SYS_PTRACE, has a read-only root file system, and mounts the host's
#    /sys/fs/cgroup read-only where the image's --path.cgroupfs points;
#  - the image's ENTRYPOINT (its configuration, skopeo inspect) and the
#    manifest's args are options cgroup-exporter --help lists, and the
#    exporter takes them together (--path.cgroupfs given the host's cgroup2
#    mount, a text file written once, exit 0); the port it listens on is
#    the container's and the prometheus.io/port annotation's;
#  - README.md's scrape configuration for the pods passes promtool check
#    config with one pod's target for its kubernetes_sd_configs (Debian's
#    Prometheus is built without Kubernetes discovery: its promtool, 2.42,
#    rejects the field), and its relabelling (RE2 matches the whole string,
#    as re.fullmatch) points a pod's address at the annotation's port and
#    keeps only the pods the annotation asks for.
# The image itself, and the DaemonSet's pod run from it: tests/deploy/image.py,
# tests/deploy/image-run.py.
# TOOLS_BIN selects the exporter (default build/bin).
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

BIN = os.environ.get("TOOLS_BIN", "build/bin")
MANIFEST = "deploy/kubernetes/daemonset.yaml"
IMAGE = "build/image/cgroup-exporter-*.oci.tar"
CAPS = {"PERFMON", "BPF", "DAC_READ_SEARCH", "SYS_ADMIN", "SYS_PTRACE"}

n = 0
failed = 0


def check(name, ok, detail=""):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%sok %d %s%s" % ("" if ok else "not ", n, name, "" if ok else " # " + str(detail)),
          flush=True)


def entrypoint():
    """The ENTRYPOINT of make image's image (built if there is none)"""
    archives = glob.glob(IMAGE)
    if not archives:
        subprocess.run(["make", "-s", "image"], check=False)
        archives = glob.glob(IMAGE)
    if len(archives) != 1:
        return None
    out = subprocess.run(["skopeo", "inspect", "--config", "oci-archive:" + archives[0]],
                         capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)["config"]["Entrypoint"] if out.returncode == 0 else None


def readme_scrape_config():
    """The YAML block of README.md's Kubernetes section that names kubernetes_sd_configs"""
    with open("README.md") as f:
        blocks = re.findall(r"^```yaml\n(.*?)^```", f.read(), re.M | re.S)
    found = [b for b in blocks if "kubernetes_sd_configs" in b]
    return found[0] if len(found) == 1 else None


def relabel(rules, labels):
    """Prometheus' keep and replace actions on a target's labels (None: dropped)"""
    labels = dict(labels)
    for r in rules:
        value = r.get("separator", ";").join(labels.get(s, "") for s in r["source_labels"])
        m = re.fullmatch(r.get("regex", "(.*)"), value)
        if r.get("action", "replace") == "keep":
            if not m:
                return None
        elif m:
            labels[r["target_label"]] = m.expand(
                re.sub(r"\$(\d+)", r"\\\1", r.get("replacement", "$1")))
    return labels


def check_scrape_config(port):
    text = readme_scrape_config()
    check("README.md has one scrape configuration for the pods", text, text)
    if not text:
        return
    config = yaml.safe_load(text)
    job = config["scrape_configs"][0]
    rules = job["relabel_configs"]
    pod = {"__address__": "10.1.2.3:8080", "__meta_kubernetes_pod_node_name": "node-a",
           "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
           "__meta_kubernetes_pod_annotation_prometheus_io_port": port}
    del job["kubernetes_sd_configs"]
    job["static_configs"] = [{"targets": [pod["__address__"]],
                              "labels": {k: v for k, v in pod.items() if k != "__address__"}}]
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        yaml.safe_dump(config, f)
        f.flush()
        lint = subprocess.run(["promtool", "check", "config", f.name],
                              capture_output=True, text=True, timeout=60)
    check("promtool check config takes it (one pod's target for kubernetes_sd_configs)",
          lint.returncode == 0, (lint.stdout + lint.stderr).strip())
    kept = relabel(rules, pod) or {}
    other = dict(pod, __meta_kubernetes_pod_annotation_prometheus_io_scrape="")
    check("its relabelling scrapes an annotated pod at 10.1.2.3:%s on its node, and no other "
          "pod" % port, kept.get("__address__") == "10.1.2.3:" + port
          and kept.get("node") == "node-a" and relabel(rules, other) is None, kept)


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

    entry = entrypoint()
    check("the image's ENTRYPOINT (%s)" % IMAGE, entry, entry)
    entry = entry or []
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

    check_scrape_config(port)

    host_cgroupfs = subprocess.run(["findmnt", "-n", "-t", "cgroup2", "-o", "TARGET"],
                                   capture_output=True, text=True).stdout.split("\n")[0]
    run = [exporter] + [a for a in entry[1:] + args if not a.startswith("--path.cgroupfs=")] + \
        ["--path.cgroupfs=" + host_cgroupfs, "--backend=events", "--textfile=-",
         "--textfile.writes=1", "--textfile.interval=0"]
    out = subprocess.run(run, capture_output=True, text=True, timeout=120)
    check("the exporter takes them together (the host's cgroup2 at %s, a text file): exit 0"
          % host_cgroupfs, out.returncode == 0 and "perf_cgroup_exporter_build_info" in out.stdout,
          "%s: exit %d: %s" % (shlex.join(run), out.returncode, out.stderr.strip()))

    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
