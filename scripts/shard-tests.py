#!/usr/bin/env python3
"""Plan make check's guests: split each kernel's tests over guests and order them.

    scripts/shard-tests.py --plan SLOTS OUTDIR [--guests N] [--host-seconds S]
                           SECONDS-FILE... < selected-lines
    scripts/shard-tests.py --remember SECONDS-FILE KTAP...

--plan reads the selected tests of every kernel on stdin, one per line,
tab-separated: the kernel's name ("-" for an unnamed one), then what
scripts/run-tests.sh --list prints, whose parse_line is the one parser of the
list grammar: the test's name, its scope ("every-guest" or "one-guest"),
"parallel" or "serial", "one-vcpu" or "any-vcpus", and its list line; the
first kernel read is the first kernel of the matrix. Each guest
takes one host cpu (single-threaded TCG) and SLOTS of them run at once, the
host tests (S seconds) in one slot from the start. The plan splits a
kernel's tests over as many guests as it needs so that no guest is long
against the whole run (a third of a slot's share of it, and at least
MIN_GUEST_SECONDS: each guest boots), and
writes OUTDIR/guest<id>/tests.list for each guest: ids 1..N for the first
kernel (--guests N fixes N), the kernel's name for another kernel in one
guest, NAME-1..NAME-k in several. Within a guest the lines keep their list
order; tests of scope "every-guest" (kmemleak's scan) run at the end of
every guest of their kernel; the first kernel's "parallel" tests, which
judge no times, stay together in its guest 1, which starts first, beside
the host tests (whose runner self-test boots five guests of its own). Each
test goes to the guest of its kernel with the least expected time so far,
longest first.

A kernel's "one-vcpu" tests, which need a guest where no vcpu waits for
another, go to a guest of their own with one vcpu, NAME-1cpu, planned like
the others.

Prints one line per guest, in the order to start them: its id, its kernel,
its expected seconds and its vcpus ("2", or "1" for a one-vcpu guest),
tab-separated. Guest 1 of the first kernel comes first, then the longest
first, so that the short ones fill the end.

Expected times come from the SECONDS-FILEs ("name seconds" per line; a later
file wins): tests/vm-tests.d/seconds.txt, measured once and committed, then
build/test-seconds.txt, which `make check` rewrites after every run
(build/test-seconds-IMAGE.txt when another image is the first kernel, as
`make check-debug`'s debug kernel). A test
is looked up as "kernel:name" first, then by its name. A test in neither counts
as 10 seconds; consecutive "parallel" tests, run at once, as the longest of
them; a guest's boot and the runner's setup as BOOT_SECONDS.

--remember adds to SECONDS-FILE what each test took in the KTAP outputs of
scripts/run-tests.sh ("ok 3 name # 21s", "not ok 4 name # exit status 1 (3s)",
"ok 5 stock-6.1: name # 9s"). The first kernel's guests (guest<i>.ktap) are
remembered by the test's name, the other kernels' (guest<name>.ktap) as
"kernel:name".
"""
import math
import os
import re
import sys

DEFAULT_SECONDS = 10.0
BOOT_SECONDS = 10.0
# no kernel is split into guests shorter than this: each costs a boot
MIN_GUEST_SECONDS = 120.0


def read_seconds(paths):
    seconds = {}
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    words = line.split()
                    if len(words) == 2 and not line.startswith("#"):
                        seconds[words[0]] = float(words[1])
        except (OSError, ValueError):
            continue
    return seconds


TOP_RESULT = re.compile(r"^(?:not ok|ok) \d+ (?:(\S+): )?(\S+) # .*?\(?(\d+)s\)?$")
FIRST_KERNEL_GUEST = re.compile(r"guest\d+\.ktap$")


def remember(seen_path, ktaps):
    seconds = read_seconds([seen_path])
    for path in ktaps:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = TOP_RESULT.match(line.rstrip("\n"))
                    if not m:
                        continue
                    kernel, name, secs = m.groups()
                    if kernel and not FIRST_KERNEL_GUEST.search(path):
                        name = f"{kernel}:{name}"
                    seconds[name] = float(secs)
        except OSError:
            continue
    with open(seen_path + ".tmp", "w") as f:
        f.write("".join(f"{name} {secs:g}\n" for name, secs in sorted(seconds.items())))
    os.replace(seen_path + ".tmp", seen_path)


class Test:
    """One selected test, as scripts/run-tests.sh --list parsed its line."""
    def __init__(self, name, line, parallel):
        self.name = name
        self.line = line
        self.parallel = parallel


def guest_seconds(tests, seconds):
    """Expected seconds of one guest's tests in list order: consecutive
    parallel tests run at once and cost the longest of them."""
    total, run = BOOT_SECONDS, 0.0
    for test in tests:
        secs = seconds(test.name)
        if test.parallel:
            run = max(run, secs)
            continue
        total += run + secs
        run = 0.0
    return total + run


class Kernel:
    def __init__(self, name):
        self.name = name
        self.every = []     # Tests of scope every-guest
        self.shared = []    # Tests, in list order
        self.alone = []     # Tests marked one-vcpu


def split(kernel, nguests, lookup, pin_parallel):
    """Splits kernel.shared over nguests guests; returns, per guest, its
    Tests in list order, every-guest tests last."""
    tests = kernel.shared
    owner = {}
    load = [0.0] * nguests
    if pin_parallel:
        pinned = [i for i, test in enumerate(tests) if test.parallel]
        for i in pinned:
            owner[i] = 0
        load[0] = max([lookup(tests[i].name) for i in pinned], default=0.0)
    rest = [i for i in range(len(tests)) if i not in owner]
    for i in sorted(rest, key=lambda i: -lookup(tests[i].name)):
        g = load.index(min(load))
        owner[i] = g
        load[g] += lookup(tests[i].name)
    guests = [[t for i, t in enumerate(tests) if owner[i] == g] for g in range(nguests)]
    return [g + kernel.every for g in guests if g]


def plan(args):
    slots, outdir = int(args[0]), args[1]
    args = args[2:]
    wanted = None
    host = 0.0
    while args and args[0].startswith("--"):
        if args[0] == "--guests":
            wanted = int(args[1])
        elif args[0] == "--host-seconds":
            host = float(args[1])
        else:
            sys.exit(f"shard-tests.py: unknown option {args[0]}")
        args = args[2:]
    seconds = read_seconds(args)
    kernels = []
    by_name = {}
    for row in sys.stdin:
        if not row.strip():
            continue
        kname, name, scope, run, vcpus, line = row.rstrip("\n").split("\t", 5)
        if kname not in by_name:
            by_name[kname] = Kernel(kname)
            kernels.append(by_name[kname])
        k = by_name[kname]
        test = Test(name, line, run == "parallel")
        if scope == "every-guest":
            k.every.append(test)
        elif vcpus == "one-vcpu":
            k.alone.append(test)
        else:
            k.shared.append(test)
    kernels = [k for k in kernels if k.shared or k.alone]

    def lookup_for(k, first):
        def lookup(name):
            if f"{k.name}:{name}" in seconds:
                return seconds[f"{k.name}:{name}"]
            return seconds.get(name, DEFAULT_SECONDS)
        return lookup

    # a guest should be at most a third of a slot's share of the whole run
    total = host + sum(guest_seconds(k.shared + k.every, lookup_for(k, i == 0))
                       for i, k in enumerate(kernels) if k.shared)
    cap = max(total / max(slots, 1) / 3, MIN_GUEST_SECONDS)
    jobs = []   # (id, kernel, seconds, tests, vcpus)
    for i, k in enumerate(kernels):
        first = i == 0
        lookup = lookup_for(k, first)
        if k.alone:
            gid = "1cpu" if k.name == "-" else f"{k.name}-1cpu"
            tests = k.alone + k.every
            jobs.append((gid, k.name, guest_seconds(tests, lookup), tests, 1))
        if not k.shared:
            continue
        if first and wanted:
            n = wanted
        else:
            n = math.ceil(guest_seconds(k.shared + k.every, lookup) / cap)
        n = max(1, min(n, len(k.shared)))
        guests = split(k, n, lookup, pin_parallel=first)
        for g, tests in enumerate(guests):
            if first:
                gid = str(g + 1)
            elif len(guests) == 1:
                gid = k.name
            else:
                gid = f"{k.name}-{g + 1}"
            jobs.append((gid, k.name, guest_seconds(tests, lookup), tests, 2))
    for gid, _, _, tests, _ in jobs:
        os.makedirs(f"{outdir}/guest{gid}", exist_ok=True)
        with open(f"{outdir}/guest{gid}/tests.list", "w") as f:
            f.write("".join(test.line + "\n" for test in tests))
    # the first kernel's guest 1, beside the host tests; then the longest
    # first
    first = [j for j in jobs if j[0] == "1"]
    order = first + sorted((j for j in jobs if j[0] != "1"), key=lambda j: -j[2])
    for gid, kname, secs, _, vcpus in order:
        print(f"{gid}\t{kname}\t{secs:.0f}\t{vcpus}")


def main(args):
    if args and args[0] == "--remember":
        remember(args[1], args[2:])
        return
    if len(args) < 3 or args[0] != "--plan":
        sys.exit(__doc__)
    plan(args[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
