#!/usr/bin/env python3
"""Split the guest's test list over N guests that boot side by side.

    scripts/shard-tests.py N OUTDIR SECONDS-FILE... < selected-lines
    scripts/shard-tests.py --remember SECONDS-FILE KTAP...

Reads the selected tests on stdin as scripts/run-tests.sh --list prints them
(name, scope, list line; tab-separated) and writes OUTDIR/guest<i>/tests.list for i in 1..N (fewer when there are fewer
tests). Each test goes to the guest with the least expected time so far,
longest tests first; within a guest the lines keep their list order. Tests
of scope "every-guest" (kmemleak's scan) run at the end of every guest.

Expected times come from the SECONDS-FILEs ("name seconds" per line; a later
file wins): tests/vm-tests.d/seconds.txt, measured once and committed, then
build/test-seconds.txt, which `make check` rewrites after every run. A test
in neither counts as 10 seconds. Prints the number of guests written.

--remember adds to SECONDS-FILE what each test took in the KTAP outputs of
scripts/run-tests.sh ("ok 3 name # 21s", "not ok 4 name # exit status 1 (3s)",
"ok 5 stock-6.1: name # 9s"). The first kernel's shards (guest<i>.ktap) are
remembered by the test's name, the other kernels' (guest<name>.ktap) as
"kernel:name": only the first kernel's tests are split over guests.
"""
import os
import re
import sys

DEFAULT_SECONDS = 10.0


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


def assign(tests, guests, seconds):
    """tests: [(name, line)]. Longest expected time first, each to the least
    loaded guest; returns the guest of each test by index."""
    load = [0.0] * guests
    owner = {}
    cost = [seconds.get(name, DEFAULT_SECONDS) for name, _ in tests]
    for i in sorted(range(len(tests)), key=lambda i: -cost[i]):
        g = load.index(min(load))
        owner[i] = g
        load[g] += cost[i]
    return owner


TOP_RESULT = re.compile(r"^(?:not ok|ok) \d+ (?:(\S+): )?(\S+) # .*?\(?(\d+)s\)?$")
SHARD = re.compile(r"guest\d+\.ktap$")


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
                    if kernel and not SHARD.search(path):
                        name = f"{kernel}:{name}"
                    seconds[name] = float(secs)
        except OSError:
            continue
    with open(seen_path + ".tmp", "w") as f:
        f.write("".join(f"{name} {secs:g}\n" for name, secs in sorted(seconds.items())))
    os.replace(seen_path + ".tmp", seen_path)


def main(args):
    if args and args[0] == "--remember":
        remember(args[1], args[2:])
        return
    if len(args) < 2:
        sys.exit(__doc__)
    wanted, outdir = int(args[0]), args[1]
    seconds = read_seconds(args[2:])
    every, shared = [], []
    for row in sys.stdin:
        if not row.strip():
            continue
        name, scope, line = row.rstrip("\n").split("\t", 2)
        if scope == "every-guest":
            every.append(line)
        else:
            shared.append((name, line))
    guests = max(1, min(wanted, len(shared)))
    owner = assign(shared, guests, seconds)
    for g in range(guests):
        os.makedirs(f"{outdir}/guest{g + 1}", exist_ok=True)
        mine = [line for i, (_, line) in enumerate(shared) if owner[i] == g] + every
        with open(f"{outdir}/guest{g + 1}/tests.list", "w") as f:
            f.write("".join(line + "\n" for line in mine))
    print(guests)


if __name__ == "__main__":
    main(sys.argv[1:])
