#!/usr/bin/env python3
"""Count the results of `make check` from the runners' KTAP output.

    scripts/ktap-summary.py [--failure MESSAGE]... FILE...

Each FILE is the output of scripts/run-tests.sh (in a guest, or --host):
a top-level KTAP plan and one "ok/not ok N name" line per test program, each
preceded by the program's own output indented by two spaces. A program that
reports its own test cases (kselftest harness, TAP) counts once per case; one
that reports none counts once by its top-level line. A top-level failure that
its cases do not explain (exit status, time-out, kernel splat) adds one
failure. Missing top-level results (the guest died) are failures too.

Each --failure adds one failure with that message (the runner's own
verdicts: a guest that hung or died, a kernel splat outside any test).

Prints the failures, then "N passed, N failed, N skipped"; exits 1 when
anything failed or no test ran.
"""
import re
import sys

RESULT = re.compile(r"^(not ok|ok)\s+\d+\s*-?\s*([^#]*?)\s*(#.*)?$")
PLAN = re.compile(r"^1\.\.(\d+)")


def classify(match):
    status, directive = match.group(1), (match.group(3) or "")
    if re.match(r"#\s*(SKIP|skip)", directive):
        return "skipped"
    if status == "ok" or re.match(r"#\s*(TODO|XFAIL)", directive):
        return "passed"
    return "failed"


def count_file(path, totals, failures):
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    planned, seen, block = None, 0, []
    for line in lines:
        if line.startswith("  "):
            block.append(line[2:])
            continue
        plan = PLAN.match(line)
        if plan and planned is None:
            planned = int(plan.group(1))
            continue
        top = RESULT.match(line)
        if not top:
            continue
        seen += 1
        count_program(top, block, totals, failures)
        block = []
    if planned is None:
        failures.append(f"{path}: no test plan: the runner did not start")
        totals["failed"] += 1
    elif seen < planned:
        failures.append(f"{path}: {planned - seen} of {planned} tests never reported (runner died)")
        totals["failed"] += planned - seen


def count_program(top, block, totals, failures):
    name = top.group(2)
    cases = {"passed": 0, "failed": 0, "skipped": 0}
    for line in block:
        m = RESULT.match(line)
        if m:
            kind = classify(m)
            cases[kind] += 1
            if kind == "failed":
                failures.append(f"{name}: {line}")
    outcome = classify(top)
    if sum(cases.values()) == 0:
        totals[outcome] += 1
        if outcome == "failed":
            failures.append(f"{name}: {top.group(0)}")
        return
    for kind, n in cases.items():
        totals[kind] += n
    if outcome == "failed" and cases["failed"] == 0:
        totals["failed"] += 1
        failures.append(f"{name}: {top.group(0)}")


def main(args):
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    failures, paths = [], []
    while args:
        if args[0] == "--failure" and len(args) > 1:
            failures.append(args[1])
            totals["failed"] += 1
            args = args[2:]
        else:
            paths.append(args[0])
            args = args[1:]
    for path in paths:
        try:
            count_file(path, totals, failures)
        except OSError as err:
            failures.append(f"{path}: {err.strerror}")
            totals["failed"] += 1
    for failure in failures:
        print(f"FAILED: {failure}")
    if totals["passed"] + totals["failed"] == 0:
        print("FAILED: no test ran")
        totals["failed"] += 1
    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
