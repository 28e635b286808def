#!/usr/bin/env python3
"""Host test (TAP): what `make demo`, `make perf` and one program's build
make, read from make's database (`make -pn help`: nothing is built).

`make demo` boots build/bzImage (6.12) alone, and a program needs only the
6.12 tree's uapi headers: neither may reach the `kernel` target, which also
builds the 7.3 kernel (about 20 minutes from an empty ccache), or
`kernel-7.3`. The targets that boot it (tests, check, all) must build it.
Nor does `make demo` build the ASan/UBSan variants (build/sanitize/,
*/asan/), which only the tests run.

    tests/hygiene/make-graph.py
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.chdir(ROOT)

# the goals a user types that must not build the 7.3 kernel
GOALS = ["demo", "perf", "tools", "build/bin/cgtop", "build/bin/cgrstat",
         "build/tests/cgrstat/vmscan_test", "build/headers/include/linux/perf_event.h"]
FORBIDDEN = {"kernel", "kernel-7.3", "build/bzImage-7.3"}
# the goals that boot the 7.3 kernel, and must build it
NEEDS_73 = ["tests", "check", "all"]
RULE = re.compile(r"^([^\s#:=][^:=]*?):(?!=)\s*(.*)$")


def rules():
    """target -> its prerequisites (normal and order-only), explicit rules"""
    out = subprocess.run(["make", "-pn", "help"], capture_output=True, text=True)
    if out.returncode:
        sys.exit("make -pn help failed:\n" + out.stderr)
    graph = {}
    for line in out.stdout.splitlines():
        m = RULE.match(line)
        if not m or line.startswith("\t"):
            continue
        prereqs = m.group(2).replace("|", " ").split()
        for target in m.group(1).split():
            graph.setdefault(target, set()).update(prereqs)
    return graph


def prerequisites(graph, patterns, target):
    """TARGET's prerequisites: its explicit rules' and those of every
    pattern rule of ours (under build/, not make's built-in ones) it
    matches, with the stem put in"""
    found = set(graph.get(target, ()))
    for regex, prereqs in patterns:
        m = regex.match(target)
        if m:
            found.update(p.replace("%", m.group(1)) for p in prereqs)
    return found


def reached(graph, goal):
    """every target make would consider for GOAL, and by which path"""
    patterns = [(re.compile("^" + re.escape(t).replace("%", "(.+)", 1) + "$"), p)
                for t, p in graph.items() if "%" in t and t.startswith("build/")]
    seen, todo = {goal: [goal]}, [goal]
    while todo:
        t = todo.pop()
        for p in prerequisites(graph, patterns, t):
            if p not in seen:
                seen[p] = seen[t] + [p]
                todo.append(p)
    return seen


def main():
    graph = rules()
    print("TAP version 13")
    print(f"1..{len(GOALS) + len(NEEDS_73) + 2}")
    n, fail = 1, 0
    ok = "demo" in graph and "kernel" in graph
    print(f"{'ok' if ok else 'not ok'} {n} make's database has the demo and kernel rules")
    fail |= not ok
    for goal in GOALS:
        n += 1
        seen = reached(graph, goal)
        bad = sorted(FORBIDDEN & seen.keys())
        print(f"{'not ok' if bad else 'ok'} {n} make {goal} does not build the 7.3 kernel")
        for b in bad:
            print("#   " + " -> ".join(seen[b]))
        fail |= bool(bad)
    n += 1
    demo = reached(graph, "demo")
    asan = sorted(t for t in demo if "/asan/" in t or t.startswith("build/sanitize/"))
    print(f"{'not ok' if asan else 'ok'} {n} make demo builds no sanitizer variant")
    for t in asan:
        print("#   " + " -> ".join(demo[t]))
    fail |= bool(asan)
    for goal in NEEDS_73:
        n += 1
        ok = "kernel" in reached(graph, goal)
        print(f"{'ok' if ok else 'not ok'} {n} make {goal} builds both kernels (the kernel target)")
        fail |= not ok
    return fail


if __name__ == "__main__":
    sys.exit(main())
