#!/usr/bin/env python3
"""Split the guest's test list over N guests that boot side by side.

    scripts/shard-tests.py N OUTDIR SECONDS-FILE... < selected-lines
    scripts/shard-tests.py --remember SECONDS-FILE KTAP...

Reads the selected test lines (scripts/run-tests.sh --list) on stdin and
writes OUTDIR/guest<i>/tests.list for i in 1..N (fewer when there are fewer
tests). Each test goes to the guest with the least expected time so far,
longest tests first; within a guest the lines keep their list order. Lines
marked "every-guest" (kmemleak's scan) run at the end of every guest.

Expected times come from the SECONDS-FILEs ("name seconds" per line; a later
file wins): tests/vm-tests.d/seconds.txt, measured once and committed, then
build/test-seconds.txt, which `make check` rewrites after every run. A test
in neither counts as 10 seconds. Prints the number of guests written.

--remember adds to SECONDS-FILE what each test took in the KTAP outputs of
scripts/run-tests.sh ("ok 3 name # 21s", "not ok 4 name # exit status 1 (3s)").
"""
import os
import re
import sys

DEFAULT_SECONDS = 10.0


def parse(line):
    """Returns (options, name) of a test line."""
    words = line.split()
    options = []
    while words and (words[0].startswith("timeout=") or words[0] == "every-guest"):
        options.append(words.pop(0))
    return options, words[0]


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


def assign(lines, guests, seconds):
    """Longest expected time first, each to the least loaded guest."""
    load = [0.0] * guests
    owner = {}
    by_cost = sorted(range(len(lines)), key=lambda i: -seconds.get(parse(lines[i])[1], DEFAULT_SECONDS))
    for i in by_cost:
        g = load.index(min(load))
        owner[i] = g
        load[g] += seconds.get(parse(lines[i])[1], DEFAULT_SECONDS)
    return owner


TOP_RESULT = re.compile(r"^(?:not ok|ok) \d+ (\S+) # .*?\(?(\d+)s\)?$")


def remember(seen_path, ktaps):
    seconds = read_seconds([seen_path])
    for path in ktaps:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = TOP_RESULT.match(line.rstrip("\n"))
                    if m:
                        seconds[m.group(1)] = float(m.group(2))
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
    lines = [line.rstrip("\n") for line in sys.stdin if line.strip()]
    every = [line for line in lines if "every-guest" in parse(line)[0]]
    shared = [line for line in lines if line not in every]
    guests = max(1, min(wanted, len(shared)))
    owner = assign(shared, guests, seconds)
    for g in range(guests):
        os.makedirs(f"{outdir}/guest{g + 1}", exist_ok=True)
        mine = [line for i, line in enumerate(shared) if owner[i] == g] + every
        with open(f"{outdir}/guest{g + 1}/tests.list", "w") as f:
            f.write("".join(line + "\n" for line in mine))
    print(guests)


if __name__ == "__main__":
    main(sys.argv[1:])
