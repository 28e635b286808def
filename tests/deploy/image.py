#!/usr/bin/env python3
# Host test (TAP): the image of deploy/kubernetes/daemonset.yaml as
# `make image` builds it (deploy/container/build-image.sh), and the
# commands of README.md's Kubernetes section, each as written there:
#
#  - make image prints build/image/cgroup-exporter-<version>.oci.tar, the
#    archive the README's other commands name, whose index names the image
#    the DaemonSet runs (localhost/cgroup-exporter:<the package's version>);
#  - ctr -n k8s.io images import (a containerd of the test's own: its
#    config, root and socket in a temporary directory, CONTAINERD_ADDRESS)
#    and podman load (its storage there: CONTAINERS_STORAGE_CONF and
#    CONTAINERS_CONF) load it
#    under that name, with the image's ENTRYPOINT;
#  - the archive is a valid OCI image layout: every blob's sha256 is its
#    name, the manifest's config and layers are there with their sizes,
#    skopeo inspect and umoci stat read it;
#  - its configuration: the ENTRYPOINT is the package's exporter with
#    --path.cgroupfs the DaemonSet's mount of the host's /sys/fs/cgroup, the
#    one exposed port the DaemonSet's containerPort, the
#    org.opencontainers.image labels title and version;
#  - its root (build/image/bundle, umoci unpack of the archive) is Debian 12
#    with the package installed at its version (dpkg-query), and the
#    exporter there runs (--version, with the image's libraries: chroot),
#    the program make built.
# TOOLS_BIN selects make's exporter (default build/bin).
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../tools"))
from tooltest import BIN, check, note, passed, results  # noqa: E402
import yaml  # noqa: E402

MANIFEST = "deploy/kubernetes/daemonset.yaml"
ROOTFS = "build/image/bundle/rootfs"
README = "README.md"


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)


def daemonset():
    with open(MANIFEST) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet"]
    pod = docs[0]["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def readme_commands():
    """The commands of README.md's Kubernetes section's sh block: [argv]"""
    with open(README) as f:
        text = f.read()
    section = text[text.index("\n### Kubernetes\n"):]
    block = re.search(r"^```sh\n(.*?)^```$", section, re.M | re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def containerd(tmp):
    """A containerd of the test's own in TMP: (its process, its socket)"""
    sock = os.path.join(tmp, "containerd.sock")
    with open(os.path.join(tmp, "config.toml"), "w") as f:
        f.write('version = 2\nroot = "%s/root"\nstate = "%s/state"\n'
                'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
                '[grpc]\n  address = "%s"\n[ttrpc]\n  address = "%s.ttrpc"\n'
                % (tmp, tmp, sock, sock))
    with open(os.path.join(tmp, "containerd.log"), "w") as log:
        proc = subprocess.Popen(["containerd", "--config", os.path.join(tmp, "config.toml")],
                                stdout=log, stderr=log)
    for _ in range(300):
        if os.path.exists(sock) or proc.poll() is not None:
            break
        time.sleep(0.1)
    return proc, sock


def check_loaded(commands, archive, name, entry):
    """Each README command but make image, in a store of the test's own"""
    for argv in commands:
        with tempfile.TemporaryDirectory(prefix="image-load-") as tmp:
            env = dict(os.environ)
            daemon = None
            if argv[0] == "ctr":
                daemon, env["CONTAINERD_ADDRESS"] = containerd(tmp)
                listed = ["ctr", "-n", "k8s.io", "images", "ls", "-q"]
            elif argv[0] == "podman":
                with open(os.path.join(tmp, "storage.conf"), "w") as f:
                    f.write('[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\n'
                            'runroot = "%s/run"\n' % (tmp, tmp))
                with open(os.path.join(tmp, "containers.conf"), "w") as f:
                    f.write('[engine]\ntmp_dir = "%s/tmp"\n' % tmp)
                env["CONTAINERS_STORAGE_CONF"] = os.path.join(tmp, "storage.conf")
                env["CONTAINERS_CONF"] = os.path.join(tmp, "containers.conf")
                listed = ["podman", "image", "inspect", "--format",
                          "{{json .Config.Entrypoint}}", name]
            else:
                check("README: %s is a command this test knows" % shlex.join(argv), False)
                continue
            try:
                out = run(argv, env=env)
                got = run(listed, env=env)
            finally:
                if daemon:
                    daemon.terminate()
                    daemon.wait(timeout=60)
            if argv[0] == "ctr":
                ok = name in got.stdout.split()
            else:
                ok = got.returncode == 0 and json.loads(got.stdout) == entry
            check("README: %s loads %s%s" % (shlex.join(argv), name,
                                             ", its ENTRYPOINT" if argv[0] == "podman" else ""),
                  archive in argv and out.returncode == 0 and ok,
                  "exit %d: %s %s %s" % (out.returncode, out.stderr[-300:], got.stdout,
                                         got.stderr[-300:]))


def blobs_valid(archive):
    """Every blob's sha256 is its name; the manifest's config and layers are
    blobs of their sizes. Returns (manifest, config, problems)."""
    problems = []
    with tarfile.open(archive) as tar:
        blobs = {}
        for m in tar.getmembers():
            if m.isfile() and m.name.startswith("blobs/sha256/"):
                data = tar.extractfile(m).read()
                digest = m.name.rsplit("/", 1)[1]
                if hashlib.sha256(data).hexdigest() != digest:
                    problems.append("%s: sha256 differs" % m.name)
                blobs["sha256:" + digest] = data
        index = json.load(tar.extractfile("index.json"))
        layout = json.load(tar.extractfile("oci-layout"))
    if layout.get("imageLayoutVersion") != "1.0.0":
        problems.append("oci-layout %s" % layout)
    manifests = index.get("manifests", [])
    if len(manifests) != 1:
        return None, None, problems + ["%d manifests" % len(manifests)]
    manifest = json.loads(blobs[manifests[0]["digest"]])
    for d in [manifest["config"]] + manifest["layers"]:
        if len(blobs.get(d["digest"], b"")) != d["size"]:
            problems.append("%s: missing or not %d bytes" % (d["digest"], d["size"]))
    config = json.loads(blobs.get(manifest["config"]["digest"], b"{}"))
    return manifests[0], config, problems


def main():
    print("TAP version 13", flush=True)
    pod, container = daemonset()
    commands = readme_commands()
    start = time.monotonic()
    made = run(commands[0] + ["-s"]) if commands[0] == ["make", "image"] else None
    archive = made.stdout.strip().splitlines()[-1] if made and made.stdout.strip() else ""
    note("make image: %.1f s" % (time.monotonic() - start))
    check("README: make image prints build/image/cgroup-exporter-<version>.oci.tar (%s)"
          % archive, made and made.returncode == 0
          and archive.startswith("build/image/cgroup-exporter-")
          and archive.endswith(".oci.tar") and os.path.isfile(archive),
          "%s: %s %s" % (commands[0], made and made.stdout, made and made.stderr[-500:]))
    if not os.path.isfile(archive):
        return 1
    version = archive[len("build/image/cgroup-exporter-"):-len(".oci.tar")]
    entry, config, problems = blobs_valid(archive)
    name = entry and entry.get("annotations", {}).get("org.opencontainers.image.ref.name")
    check("its one image is named %s, the DaemonSet's image" % name,
          name == container.get("image") == "localhost/cgroup-exporter:" + version,
          "%s, DaemonSet: %s" % (name, container.get("image")))
    check("a valid OCI image layout: blobs named by their sha256, the manifest's config "
          "and %d layers there" % len((config or {}).get("rootfs", {}).get("diff_ids", [])),
          config and not problems, "; ".join(problems))
    inspect = run(["skopeo", "inspect", "oci-archive:" + archive])
    labels = json.loads(inspect.stdout).get("Labels", {}) if inspect.returncode == 0 else {}
    with tempfile.TemporaryDirectory(prefix="image-") as tmp:
        layout = os.path.join(tmp, "oci")
        copied = run(["skopeo", "copy", "--quiet", "oci-archive:" + archive,
                      "oci:%s:%s" % (layout, version)])
        stat = run(["umoci", "stat", "--json", "--image", "%s:%s" % (layout, version)])
    check("skopeo inspect and umoci stat read it",
          inspect.returncode == 0 and copied.returncode == 0 and stat.returncode == 0,
          inspect.stderr + copied.stderr + stat.stderr)
    check_loaded(commands[1:], archive, name, (config or {}).get("config", {}).get("Entrypoint"))

    cfg = (config or {}).get("config", {})
    ep = cfg.get("Entrypoint") or []
    with open("debian/cgroup-exporter.install") as f:
        installed = ["/" + line.split()[0] for line in f if line.strip()]
    cgroupfs = [a.split("=", 1)[1] for a in ep if a.startswith("--path.cgroupfs=")]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mount = [m for m in container.get("volumeMounts", [])
             if cgroupfs and m.get("mountPath") == cgroupfs[0]]
    check("ENTRYPOINT %s: the package's exporter, --path.cgroupfs the DaemonSet's "
          "read-only mount of the host's /sys/fs/cgroup" % ep,
          ep and ep[0] in installed and len(mount) == 1 and mount[0].get("readOnly")
          and volumes[mount[0]["name"]]["hostPath"]["path"] == "/sys/fs/cgroup"
          and not cfg.get("Cmd"), "%s %s" % (cfg, mount))
    ports = ["%d/%s" % (p["containerPort"], p.get("protocol", "TCP").lower())
             for p in container.get("ports", [])]
    check("it exposes %s, the DaemonSet's containerPort" % ports,
          sorted(cfg.get("ExposedPorts", {})) == ports, str(cfg.get("ExposedPorts")))
    check("labels org.opencontainers.image.title cgroup-exporter, version %s" % version,
          labels.get("org.opencontainers.image.title") == "cgroup-exporter"
          and labels.get("org.opencontainers.image.version") == version
          and cfg.get("Labels") == labels, str(labels))

    with open(os.path.join(ROOTFS, "etc/os-release")) as f:
        release = dict(line.strip().split("=", 1) for line in f if "=" in line)
    dpkg = run(["chroot", ROOTFS, "dpkg-query", "-W", "-f", "${Status} ${Version}",
                "cgroup-exporter"])
    check("its root is Debian 12 with cgroup-exporter %s installed" % version,
          release.get("VERSION_ID") == '"12"'
          and dpkg.stdout == "install ok installed " + version,
          "%s %s %s" % (release.get("VERSION_ID"), dpkg.stdout, dpkg.stderr))
    out = run(["chroot", ROOTFS, ep[0] if ep else "/usr/bin/cgroup-exporter", "--version"])
    made = run([os.path.join(BIN, "cgroup-exporter"), "--version"])
    check("its exporter runs there: --version says what make's says (%s)" % made.stdout.strip(),
          out.returncode == 0 and made.returncode == 0 and out.stdout == made.stdout,
          "exit %d: %s %s" % (out.returncode, out.stdout, out.stderr))
    print("1..%d" % len(results))
    return 0 if passed() else 1


if __name__ == "__main__":
    sys.exit(main())
