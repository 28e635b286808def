#!/usr/bin/env python3
"""Host test (TAP): no file of the repository names a file, program or make
target that does not exist.

    tests/hygiene/stale-refs.py [--kernel-tree DIR]

What it checks, in every file git tracks but the kernel patches (whose
paths are the kernel tree's) and data (bench/results, *.csv, *.json):
  - a path that starts with one of the repository's top-level folders
    (bench/, docs/, lib/, tests/, ...): it exists in the repository, as a
    file, a folder, a glob (lib/*/README.md) or the start of a name
    (kernel/backport-6.12/0005 for 0005-*.patch, tools/cgrstat for the
    program tools/cgrstat.c builds); a path the kernel tree has
    (tools/perf/util/cgroup.c, kernel/events/core.c, perf's own
    tests/shell/*.sh), one of our kernel and perf patches creates, or one
    of our files copied into the kernel tree (tools/perf/util/cgrstat.c:
    perf/apply-patches.sh), is the kernel's when the repository has none;
  - a program under build/bin/, and any build/ path of a test list
    (tests/*-tests.d/*.list): make has a rule for it;
  - any other path under build/: its first folder or file (bzImage-debug,
    check, stock) is named by the code that makes it (Makefile, *.mk,
    scripts), so a kernel or folder no script makes any more is found; the
    same for a kernel image, headers or object folder named alone
    (bzImage-bench, headers-7.3);
  - `make TARGET` in a Markdown or man page: make knows TARGET.
And, in the same files (the patches included): no host machine's path
(below /work, /root or /home) and no tracker number ("issue" or "seed" and its
number): the
repository speaks of itself alone.
Placeholders are passed over: <name>, NAME, X.Y.Z, $(VAR), ${VAR}, %, {a,b},
foo; so are #include lines (<perf/evsel.h> is libperf's) and NOT_PATHS.
One TAP line per file that names anything; a not-ok line lists what is
missing, with the line numbers.
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.chdir(ROOT)

SKIP_FILE = re.compile(r"(\.patch$|\.csv$|\.json$|\.svg$|\.png$|^bench/results/|/series$)")
# a path: a top-level folder, then path characters; * and ? as globs
PATH = re.compile(r"(?<![\w./$<-])((?:\.ci|bench|build|docs|examples|kernel|lib|perf|scripts|tests|tools)"
                  r"/[\w.*?+@/-]*[\w*])")
# a kernel image, header or object folder named without build/ (bzImage-debug)
BUILD_NAME = re.compile(r"(?<![\w/$.-])((?:bzImage|headers|kbuild)-[\w.-]*\w)")
MAKE_CMD = re.compile(r"`make(?: -[a-zA-Z]\S*)* ([a-z][\w.-]*)")
PLACEHOLDER = re.compile(r"[<>$%{}]|(?:^|/)[A-Z][A-Z0-9_]*(?:[/.]|$)|X\.Y|\.\.\.|foo")
# words that look like paths and are not: the tip tree's perf branch, a
# kernel package's module folder
NOT_PATHS = {"perf/core", "lib/modules"}
CODE = re.compile(r"(^Makefile$|\.mk$|\.sh$|\.py$|^\.ci/run$|^scripts/guest/init$)")


def tracked(skip=SKIP_FILE):
    out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f and not skip.search(f)]


HOST_PATH = re.compile(r"(?<![\w$\"'}./-])/(?:work|root|home)/[\w.-]")
# an issue or a source document by its number: "issue", "seed", then " N" or "-N"
TRACKER = re.compile(r"\b(?:[Ii]ssues? #?|[Ss]eeds?[ -])\d+\b")


def foreign_mentions():
    """host paths and tracker numbers, as "file:line: text" """
    found = []
    for f in tracked(re.compile(r"(\.csv$|\.json$|\.svg$|\.png$)")):
        try:
            lines = open(f, encoding="utf-8").read().splitlines()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        for n, line in enumerate(lines, 1):
            if HOST_PATH.search(line) or TRACKER.search(line):
                found.append(f"{f}:{n}: {line.strip()[:100]}")
    return found


def make_targets():
    """Every target make's database names, and the folders they lie in."""
    out = subprocess.run(["make", "-pq", "-f", "Makefile", ".hygiene-nothing"],
                         capture_output=True, text=True).stdout
    targets = set()
    for line in out.splitlines():
        m = re.match(r"^([^\s#:=][^:=]*?):(?!=)", line)
        if m:
            targets.update(m.group(1).split())
    dirs = set()
    for t in targets:
        parts = t.split("/")
        for i in range(1, len(parts)):
            dirs.add("/".join(parts[:i]))
    return targets, dirs


# the top-level folders the kernel tree has too: without the kernel tree
# (before make kernel), a path there that the repository lacks cannot be
# judged
KERNEL_TOP = ("kernel/", "lib/", "scripts/", "tools/")


def exists(path, kernel_tree):
    path = path.rstrip("/.")
    path = re.sub(r"/(\d{4})-\d{4}$", r"/\1", path)	# a range of patches
    if any(c in path for c in "*?"):
        return bool(glob.glob(path)) or any(fnmatch.fnmatch(p, "*" + path) for p in PATCHED)
    if os.path.lexists(path) or glob.glob(glob.escape(path) + "*"):
        return True
    if any(p == path or p.endswith("/" + path) for p in PATCHED):
        return True
    if path.startswith(KERNEL_TOP) and os.path.basename(path) in OUR_NAMES:
        return True		# one of our files, copied into the kernel tree
    if not kernel_tree:
        return None if path.startswith(KERNEL_TOP) else False
    # the kernel tree, perf's own tree (its tests/shell/*.sh), perf as patched
    # (with the files perf/apply-patches.sh copies in)
    return any(os.path.lexists(os.path.join(tree, path))
               for tree in (kernel_tree, kernel_tree + "/tools/perf",
                            "build/perf-src", "build/perf-src/tools/perf"))


def patched_paths():
    """The files our kernel and perf patches create or change"""
    paths = set()
    for patch in glob.glob("kernel/*/*.patch") + glob.glob("perf/patches/*.patch"):
        for line in open(patch, encoding="utf-8", errors="replace"):
            if line.startswith("+++ b/"):
                paths.add(line[6:].strip())
    return paths


def made_by_code(name, code_text):
    """build/NAME...: NAME is named by a Makefile, *.mk or script"""
    return re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", code_text) is not None


def build_path_ok(path, targets, code_text, must_be_target=False):
    parts = path.rstrip("/").split("/")
    if must_be_target or (len(parts) >= 3 and parts[1] == "bin"):
        return path in targets or any(fnmatch.fnmatch(path, t.replace("%", "*"))
                                      for t in targets if "%" in t)
    # kbuild-7.3, bzImage-7.3-bench, Image-7.3-arm64: the code makes
    # kbuild$(SUFFIX) and bzImage$(SUFFIX)-bench for each kernel version
    # and architecture
    name = re.sub(r"-(\d+(\.\d+)*|arm64)(?=-|$)", "", parts[1].rstrip("*")) if len(parts) > 1 else ""
    return not name or made_by_code(name, code_text) or made_by_code(parts[1].rstrip("*"), code_text)


PATCHED = patched_paths()
OUR_NAMES = {os.path.basename(f) for f in tracked() if f.endswith((".c", ".h"))}


def main():
    kernel_tree = "build/linux"
    if len(sys.argv) > 2 and sys.argv[1] == "--kernel-tree":
        kernel_tree = sys.argv[2]
    if not os.path.isdir(os.path.join(kernel_tree, "kernel")):
        kernel_tree = None
    targets, _ = make_targets()
    files = tracked()
    code_text = "\n".join(open(f, encoding="utf-8", errors="replace").read()
                          for f in files if CODE.search(f) and os.path.isfile(f))
    results = []
    for f in files:
        try:
            text = open(f, encoding="utf-8").read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        named, missing = 0, []
        doc = f.endswith(".md") or re.search(r"\.[1-8]$", f)
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#include"):
                continue
            for m in PATH.finditer(line):
                p = m.group(1).rstrip(".,:;")
                if PLACEHOLDER.search(p) or p in NOT_PATHS:
                    continue
                named += 1
                if p.startswith("build/"):
                    ok = build_path_ok(p, targets, code_text, f.endswith(".list"))
                else:
                    ok = exists(p, kernel_tree)
                    if ok is None:		# the kernel's, perhaps
                        named -= 1
                        continue
                if not ok:
                    missing.append(f"{p} (line {n})")
            for m in BUILD_NAME.finditer(line):
                p = m.group(1)
                if PLACEHOLDER.search(p) or CODE.search(f):
                    continue
                named += 1
                if not build_path_ok("build/" + p, targets, code_text):
                    missing.append(f"{p} (line {n})")
            if doc:
                for m in MAKE_CMD.finditer(line):
                    named += 1
                    if m.group(1) not in targets:
                        missing.append(f"make {m.group(1)} (line {n})")
        if named:
            results.append((f, named, missing))
    foreign = foreign_mentions()
    lines = [(f"{f}: the {named} files, programs and targets it names exist",
              f"{f}: {len(missing)} of {named} names do not exist",
              [f"{f}: {m}" for m in missing]) for f, named, missing in results]
    lines.append(("no file names a host path (/work, /root, /home) or a tracker number",
                  f"{len(foreign)} lines name a host path or a tracker number", foreign))
    print("TAP version 13")
    print(f"1..{len(lines)}")
    if not kernel_tree:
        print("# no kernel tree in build/linux (make kernel): paths below kernel/, lib/, "
              "scripts/, tools/ that the repository lacks are not judged")
    failed = 0
    for i, (good, bad, notes) in enumerate(lines, 1):
        print(f"not ok {i} {bad}" if notes else f"ok {i} {good}")
        for note in notes:
            print(f"# {note}")
        failed |= bool(notes)
    return int(failed)

if __name__ == "__main__":
    sys.exit(main())
