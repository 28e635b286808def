#!/usr/bin/env python3
"""Tables and plots from one bench/ run.

    bench/report.py [--no-plots] DIR

Reads DIR/results.csv (bench/guest.sh) and DIR/meta.txt, rewrites
DIR/results.csv with the run's machine, kernel and commit on every row,
and writes DIR/summary.md and DIR/*.png (gnuplot; not with --no-plots). Overheads are paired:
each repetition's backend time over the same repetition's no-counting time
(the backends run interleaved), then the median over repetitions.
"""
import csv
import os
import statistics
import subprocess
import sys
from collections import defaultdict

BACKENDS = ["none", "percg", "bperf", "shared", "rstat"]
LABEL = {
    "none": "no counting",
    "percg": "per-cgroup events (perf stat --for-each-cgroup)",
    "bperf": "bperf (perf stat --bpf-counters --for-each-cgroup)",
    "shared": "shared event (ATTACH_CGROUP ioctls)",
    "rstat": "BPF rstat (cgrstat)",
}
# gnuplot-nox itself: /usr/bin/gnuplot is an alternatives link that the
# guest (host /usr, not /etc) cannot follow
GNUPLOT = "/usr/bin/gnuplot-nox" if os.path.exists("/usr/bin/gnuplot-nox") else "gnuplot"
META_COLUMNS = ["run", "machine", "kernel", "commit"]


def read_meta(d):
    meta = {}
    with open(os.path.join(d, "meta.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    return meta


def read_rows(d, meta):
    path = os.path.join(d, "results.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    run = os.path.basename(os.path.normpath(d))
    extra = {"run": run, "machine": meta.get("machine", "?"),
             "kernel": meta.get("kernel", "?"), "commit": meta.get("commit", "?")}
    if rows and "run" not in rows[0]:
        fields = META_COLUMNS + list(rows[0].keys())
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for r in rows:
                w.writerow({**extra, **r})
    return rows


def num(v):
    try:
        return float(v)
    except ValueError:
        return float("nan")


class Results:
    def __init__(self, rows):
        # (group, backend, G, E, depth, metric) -> {rep: value}
        self.v = defaultdict(dict)
        for r in rows:
            key = (r["group"], r["backend"], int(r["G"]), int(r["E"]), int(r["depth"]), r["metric"])
            self.v[key][int(r["rep"])] = num(r["value"])

    def configs(self):
        return sorted({(k[2], k[3], k[4]) for k in self.v if k[0] == "session"})

    def median(self, group, backend, cfg, metric):
        vals = [x for x in self.v.get((group, backend) + cfg + (metric,), {}).values() if x == x]
        return statistics.median(vals) if vals else None

    def spread(self, backend, cfg, metric):
        """(max - min) / median of the repetitions, in percent."""
        vals = [x for x in self.v.get(("session", backend) + cfg + (metric,), {}).values() if x == x]
        if len(vals) < 2 or statistics.median(vals) <= 0:
            return None
        return 100 * (max(vals) - min(vals)) / statistics.median(vals)

    def overhead(self, backend, cfg, metric):
        """Median over repetitions of (backend / none - 1), in percent."""
        mine = self.v.get(("session", backend) + cfg + (metric,), {})
        base = self.v.get(("session", "none") + cfg + (metric,), {})
        ratios = [mine[r] / base[r] - 1 for r in mine if r in base and base[r] > 0 and mine[r] == mine[r]]
        return 100 * statistics.median(ratios) if ratios else None


def fmt(x, digits=1):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


# the programs' own usec/op (guest clock) and the host-timed spans (with
# the programs' start-up)
PIPE, RING = "pipe_us_per_op", "ring_us_per_msg"
HPIPE, HRING = "pipe_host_us_per_op", "ring_host_us_per_msg"


def session_table(res, cfg):
    out = ["| backend | pipe us/op | pipe overhead | (host clock) | ring us/msg | ring overhead | (host clock) | "
           "session setup ms | teardown ms | fds | perf_event objects | slab kB | BPF map kB | cpu-clock error |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in BACKENDS:
        m = lambda metric: res.median("session", b, cfg, metric)
        if m(PIPE) is None:
            continue
        ov = lambda metric: "" if b == "none" else fmt(res.overhead(b, cfg, metric)) + " %"
        err = m("cpu_clock_err_pct")
        out.append(f"| {b} | {fmt(m(PIPE))} | {ov(PIPE)} | {ov(HPIPE)} | "
                   f"{fmt(m(RING))} | {ov(RING)} | {ov(HRING)} | {fmt(m('setup_ms'))} | "
                   f"{fmt(m('teardown_ms'))} | {fmt(m('fds'), 0)} | {fmt(m('perf_events'), 0)} | "
                   f"{fmt(m('slab_kb'), 0)} | {fmt(m('bpf_map_kb'), 0)} | {'' if err is None else fmt(err, 2) + ' %'} |")
    return out


def cost_table(res, cfg):
    out = ["| backend | open+attach us | read all us | read one us | close us | fds | slab kB | percpu kB | BPF map kB |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in ["percg", "bperf", "shared", "rstat"]:
        m = lambda metric: res.median("cost", b, cfg, metric)
        if m("read_all_us") is None:
            continue
        read_all = m("read_all_us")
        # bperf's is a difference of two perf runs' cpu times: below zero it is noise
        read_all = "noise (< 0)" if read_all is not None and read_all < 0 else fmt(read_all)
        out.append(f"| {b} | {fmt(m('setup_us'))} | {read_all} | {fmt(m('read_one_us'))} | "
                   f"{fmt(m('teardown_us'))} | {fmt(m('fds'), 0)} | {fmt(m('slab_kb'), 0)} | "
                   f"{fmt(m('percpu_kb'), 0)} | {fmt(m('bpf_map_kb'), 0)} |")
    return out


def memcg_table(res):
    keys = sorted({(k[2], k[1]) for k in res.v if k[0] == "memcg"})
    if not keys:
        return []
    out = ["| cgroups | mode | us per read | real s | user s | sys s |",
           "| ---: | --- | ---: | ---: | ---: | ---: |"]
    for g, mode in keys:
        m = lambda metric: res.median("memcg", mode, (g, 0, 0), metric)
        out.append(f"| {g} | {mode} | {fmt(m('us_per_read'), 2)} | {fmt(m('real_s'), 3)} | "
                   f"{fmt(m('user_s'), 3)} | {fmt(m('sys_s'), 3)} |")
    return out


def verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "**missed**")


def targets(res):
    cfg = (1000, 2, 1)
    if cfg not in res.configs():
        return ["(no G=1000, E=2, depth 1 configuration in this run)"]
    out = []
    for metric, name in [(PIPE, "pipe"), (RING, "ring"), (HPIPE, "pipe, host clock"),
                         (HRING, "ring, host clock")]:
        sh, pc, bp = (res.overhead(b, cfg, metric) for b in ("shared", "percg", "bperf"))
        ok = None if None in (sh, pc, bp) else (sh <= max(pc, 0) / 4 and sh < bp)
        noise = res.spread("none", cfg, metric)
        v = verdict(ok)
        if ok is not None and noise is not None and max(abs(sh), abs(pc)) < noise:
            v = f"inconclusive ({v.strip('*')} by the numbers, but no counting alone varies by {fmt(noise)} %)"
        out.append(f"- {name}: shared overhead {fmt(sh)} % vs per-cgroup {fmt(pc)} % (target <= 1/4: "
                   f"{fmt(None if pc is None else pc / 4)} %) and bperf {fmt(bp)} %; no counting's "
                   f"spread over the repetitions {fmt(noise)} %: {v}")
    fds = res.median("cost", "shared", cfg, "fds")
    fds_pc = res.median("cost", "percg", cfg, "fds")
    cpus = 2
    out.append(f"- fds opened: shared {fmt(fds, 0)} (E x C = {2 * cpus}), per-cgroup {fmt(fds_pc, 0)}: "
               f"{verdict(None if fds is None else fds <= 2 * cpus)}")
    s_sh, s_pc = res.median("cost", "shared", cfg, "setup_us"), res.median("cost", "percg", cfg, "setup_us")
    out.append(f"- setup (open + attach, in-process): shared {fmt(s_sh)} us vs per-cgroup {fmt(s_pc)} us: "
               f"{verdict(None if None in (s_sh, s_pc) else s_sh * 10 < s_pc)}")
    ss_sh, ss_pc = res.median("session", "shared", cfg, "setup_ms"), res.median("session", "percg", cfg, "setup_ms")
    out.append(f"  (whole tool start-up to workload start: shared {fmt(ss_sh)} ms, perf stat per-cgroup {fmt(ss_pc)} ms)")
    for metric, name in [(PIPE, "pipe"), (RING, "ring")]:
        d1 = res.median("session", "rstat", (1000, 2, 1), metric)
        d8 = res.median("session", "rstat", (1000, 2, 8), metric)
        o1 = res.overhead("rstat", (1000, 2, 1), metric)
        o8 = res.overhead("rstat", (1000, 2, 8), metric)
        growth = None if None in (d1, d8) else 100 * (d8 / d1 - 1)
        noise = max((x for x in (res.spread("rstat", (1000, 2, 1), metric),
                                 res.spread("rstat", (1000, 2, 8), metric)) if x is not None), default=None)
        v = verdict(None if growth is None else growth <= 10)
        if growth is not None and noise is not None and abs(growth) < noise:
            v = f"inconclusive ({v.strip('*')} by the numbers, but rstat alone varies by {fmt(noise)} % between repetitions)"
        out.append(f"- rstat depth 1 -> 8 ({name}): {fmt(d1)} -> {fmt(d8)} us ({fmt(growth)} %; overhead over "
                   f"none {fmt(o1)} % -> {fmt(o8)} %): {v}")
    return out


def write_data(d, name, header, lines):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("# " + header + "\n")
        for line in lines:
            f.write(" ".join(str(x) for x in line) + "\n")
    return path


def plot(d, res, title, png, xlabel, logx, series, ylabel):
    """series: list of (label, [(x, y)]); writes DIR/png via gnuplot."""
    series = [(lab, pts) for lab, pts in series if pts]
    if not series:
        return None
    files = [write_data(d, f".plot-{png}-{i}.dat", lab, pts) for i, (lab, pts) in enumerate(series)]
    script = [
        "set terminal pngcairo size 900,560 font 'sans,10'",
        f"set output '{os.path.join(d, png)}'",
        f"set title '{title}' noenhanced",
        f"set xlabel '{xlabel}'", f"set ylabel '{ylabel}' noenhanced",
        "set key outside right top noenhanced", "set grid",
    ]
    if logx:
        script.append("set logscale x")
    plots = [f"'{f}' using 1:2 with linespoints lw 2 title '{lab}'" for f, (lab, _) in zip(files, series)]
    script.append("plot " + ", ".join(plots))
    try:
        subprocess.run([GNUPLOT], input="\n".join(script) + "\n", text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report: gnuplot failed: {e}", file=sys.stderr)
        return None
    finally:
        for f in files:
            os.unlink(f)
    return png


def plots(d, res):
    made = []
    cfgs = res.configs()
    if not cfgs:
        return made
    # the G axis at E = 2 and the smallest depth; the depth axis at E = 2 and
    # the G of the deepest configuration
    e2 = [c for c in cfgs if c[1] == 2] or cfgs
    g_axis = sorted(c for c in e2 if c[2] == min(x[2] for x in e2))
    deepest = max(e2, key=lambda c: (c[2], c[0]))
    d_axis = sorted((c for c in e2 if c[0] == deepest[0]), key=lambda c: c[2])
    for metric, name in [(PIPE, "pipe ping-pong"), (RING, "16-task ring")]:
        for axis, xi, xlabel, logx, tag in [
                (g_axis, 0, f"cgroups G (E = 2, depth {g_axis[0][2]})", True, "G"),
                (d_axis, 2, f"depth of the G = {deepest[0]} leaves (E = 2)", False, "depth")]:
            series = [(b, [(c[xi], res.overhead(b, c, metric)) for c in axis
                           if res.overhead(b, c, metric) is not None]) for b in BACKENDS[1:]]
            made.append(plot(d, res, f"{name}: overhead over no counting vs {tag}",
                             f"overhead-{metric.split('_')[0]}-vs-{tag}.png", xlabel, logx, series,
                             "overhead over no counting (%)"))
    if g_axis:
        series = [(b, [(c[0], res.median("cost", b, c, "setup_us") / 1000) for c in g_axis
                       if res.median("cost", b, c, "setup_us") is not None]) for b in ("percg", "shared", "rstat")]
        made.append(plot(d, res, "open + attach time vs G", "setup-vs-G.png", "cgroups G (E = 2)", True,
                         series, "ms"))
        series = [(b, [(c[0], res.median("cost", b, c, "read_all_us")) for c in g_axis
                       if res.median("cost", b, c, "read_all_us") is not None]) for b in ("percg", "bperf", "shared", "rstat")]
        made.append(plot(d, res, "reading every cgroup vs G", "read-all-vs-G.png", "cgroups G (E = 2)", True,
                         series, "us per read of all G"))
    return [m for m in made if m]


def guest_clock_note(clocksource):
    if clocksource == "tsc":
        return "clocksource tsc, the host's TSC frequency handed to the guest: real time"
    return (f"clocksource {clocksource}: refined-jiffies ticks in 4 ms and drifts and jumps "
            "against real time under host load")


def main():
    args = sys.argv[1:]
    with_plots = "--no-plots" not in args
    args = [a for a in args if a != "--no-plots"]
    if len(args) != 1:
        sys.exit(__doc__)
    d = args[0]
    meta = read_meta(d)
    res = Results(read_rows(d, meta))
    lines = [f"# bench results: {os.path.basename(os.path.normpath(d))}", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += ["", "Software events in a QEMU TCG guest on a shared 2-core host: absolute times are "
              "those of an emulated CPU (a context switch costs hundreds of microseconds), and PMU "
              "reprogramming at cgroup switch, the cost that hardware events add, is absent. "
              "Medians of the repetitions; overheads are paired per repetition against no counting "
              "(backends interleaved). us/op are the programs' own, by the guest clock ("
              + guest_clock_note(meta.get("clocksource", "unknown")) + "); the (host clock) "
              "columns time the same parts with the host's clock (bench/host-clock.sh), start-up of "
              "the programs included. Setup and teardown use the host clock, the in-process costs "
              "the guest clock.", ""]
    lines += ["## Targets (G = 1000, E = 2)", ""] + targets(res) + [""]
    for cfg in res.configs():
        lines += [f"## G = {cfg[0]}, E = {cfg[1]}, depth {cfg[2]}", "", "Workload under each backend:", ""]
        lines += session_table(res, cfg) + [""]
        ct = cost_table(res, cfg)
        if len(ct) > 2:
            lines += ["In-process cost (cgbench cost):", ""] + ct + [""]
    mt = memcg_table(res)
    if mt:
        lines += ["## memory.stat text vs the BPF reader (memcg_stat_bench)", ""] + mt + [""]
    pngs = plots(d, res) if with_plots else []
    if pngs:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in pngs] + [""]
    lines += ["Columns: pipe = `perf bench sched pipe -G` between the first and last cgroup (usecs/op "
              "as it prints it); ring = 16 tasks over the G cgroups passing 2 tokens (cgbench ring), "
              "wall time per message; session setup = from the "
              "counting tool's start to the workload's start (process start, open, attach; none = "
              "fork/exec only); fds, perf_event objects (its fds on "
              "anon_inode:[perf_event]), slab, BPF map memory: held by the counting process when the "
              "workload starts (slab: /proc/meminfo delta, noisy); cpu-clock error: mean |count / "
              "cpu.stat usage - 1| over the busy cgroups. In-process cost: cgbench's own timing of "
              "the same kernel objects (percg opens what perf stat --for-each-cgroup opens).", ""]
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[:40]))


if __name__ == "__main__":
    main()
