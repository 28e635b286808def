#!/usr/bin/env python3
# prof.py SYSTEM.MAP BASE.txt RUN.txt SWITCHES [N [WHAT]]: the guest kernel's
# instructions (or WHAT: pmuregs.c's accesses) by function, RUN minus BASE,
# per cgroup switch, the N largest and the total (tbcount.c's "vaddr insns
# executions" lines; user space is one line, [user]).
import bisect
import collections
import sys

syms = []
for line in open(sys.argv[1]):
    a, t, n = line.split()[:3]
    if t in 'tTwW':
        syms.append((int(a, 16), n))
syms.sort()
addrs = [a for a, _ in syms]


def load(path):
    c = collections.Counter()
    for line in open(path):
        va, n, k = line.split()
        va, w = int(va, 16), int(n) * int(k)
        if va < 0xffff800000000000:
            c['[user]'] += w
            continue
        i = bisect.bisect_right(addrs, va) - 1
        c[syms[i][1] if i >= 0 else '?'] += w
    return c


base, run = load(sys.argv[2]), load(sys.argv[3])
sw = float(sys.argv[4])
top = int(sys.argv[5]) if len(sys.argv) > 5 else 40
what = sys.argv[6] if len(sys.argv) > 6 else 'instructions'
d = {k: (run[k] - base[k]) / sw for k in set(base) | set(run)}
print('%9s %9s  %s' % ('diff', 'run', 'function (%s per cgroup switch)' % what))
print('%9.1f %9.1f  %s' % (sum(d.values()), sum(run.values()) / sw, '[total]'))
for k, v in sorted(d.items(), key=lambda x: -abs(x[1]))[:top]:
    print('%9.1f %9.1f  %s' % (v, run[k] / sw, k))
