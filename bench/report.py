#!/usr/bin/env python3
"""Tables and plots from one bench/ run.

    bench/report.py [--no-plots] DIR [--also DIR2]...

Reads DIR/results.csv (bench/guest.sh) and DIR/meta.txt, rewrites
DIR/results.csv with the run's machine, kernel and commit on every row,
and writes DIR/summary.md and DIR/*.png (gnuplot; not with --no-plots). Overheads are paired:
each repetition's backend time over the same repetition's no-counting time
(the backends run interleaved), then the median over repetitions.
--also DIR2: DIR2's rows count as further repetitions of DIR's (another
boot of the same run, to show how far two runs lie apart); DIR2 is read,
not rewritten.
"""
import csv
import os
import statistics
import subprocess
import sys
from collections import defaultdict

BACKENDS = ["none", "floor", "floor-read", "events", "bperf", "shared", "rstat"]
COUNTING = ["events", "bperf", "shared", "rstat"]
LABEL = {
    "none": "no counting",
    "floor": "floor: the events counted cpu-wide, no cgroup work",
    "floor-read": "floor + each counter read once per cgroup switch (BPF)",
    "events": "per-cgroup events (perf stat --for-each-cgroup)",
    "bperf": "bperf (perf stat --bpf-counters --for-each-cgroup)",
    "shared": "shared event (ATTACH_CGROUP ioctls)",
    "rstat": "BPF rstat (cgrstat)",
}
# gnuplot-nox itself: /usr/bin/gnuplot is an alternatives link that the
# guest (host /usr, not /etc) cannot follow
GNUPLOT = "/usr/bin/gnuplot-nox" if os.path.exists("/usr/bin/gnuplot-nox") else "gnuplot"
META_COLUMNS = ["run", "machine", "kernel", "commit"]
# The model of what hardware events add (x86): pmu->add reprograms a
# counter (its value and its event select: 2 WRMSR), pmu->del stops it (1
# WRMSR) and reads it (1 RDPMC), pmu->read reads it (1 RDPMC). Cycles per
# WRMSR and per RDPMC, low and high, as measured by the perfctr driver's
# init-time tests (64 back-to-back executions each) and posted to
# linux-kernel (bench/README.md cites the three posts): WRMSR to a counter
# or event select 69-321 cycles (AMD K8, Pentium M), RDPMC
# 14-46 cycles. The Pentium 4 (796-875 and 147) is left out of the range.
WRMSR_CYCLES = (69, 321)
RDPMC_CYCLES = (14, 46)
# arm64 (bench/guest.sh's PMU_REG_COST): the PMUv3 driver's functions whose
# calls the PMU pass counts, each with the PMU register writes it makes
ARM_REG_FUNCS = ["enable_event", "disable_event", "write_counter", "read_counter", "start", "stop"]


def read_meta(d):
    meta = {}
    with open(os.path.join(d, "meta.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    return meta


def read_rows(d, meta, rewrite=True):
    path = os.path.join(d, "results.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rewrite:
        return rows
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
    def __init__(self, rows, exact):
        # (group, backend, G, E, depth, metric) -> {rep: value}
        self.v = defaultdict(dict)
        self.exact = exact
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

    def switches(self, cfg, metric):
        """Cgroup switches per pipe op or ring message (counted once per
        configuration); None below 0.1: the workload switches no cgroup
        (G = 1 has every task in one cgroup; what is counted is the rest of
        the system), so there is no per-switch figure."""
        name = "pipe_cgroup_switches_per_op" if metric.startswith("pipe") else "ring_cgroup_switches_per_msg"
        sw = self.median("switches", "none", cfg, name)
        return sw if sw and sw >= 0.1 else None

    def per_switch_reps(self, backend, cfg, metric, base="none"):
        """(backend - base) per cgroup switch in each repetition, in ns
        (instructions in an exact guest), paired by repetition."""
        mine = self.v.get(("session", backend) + cfg + (metric,), {})
        other = self.v.get(("session", base) + cfg + (metric,), {})
        sw = self.switches(cfg, metric)
        return [1000 * (mine[r] - other[r]) / sw for r in sorted(mine)
                if sw and r in other and mine[r] == mine[r] and other[r] == other[r]]

    def per_switch(self, backend, cfg, metric, base="none"):
        """Median over repetitions of per_switch_reps."""
        diffs = self.per_switch_reps(backend, cfg, metric, base)
        return statistics.median(diffs) if diffs else None

    def pmu(self, backend, cfg, op):
        """pmu->op calls per cgroup switch (ftrace, pinned ping-pong)."""
        per_op = self.median("pmu", backend, cfg, f"{op}_per_op")
        sw = self.switches(cfg, PIPE)
        return None if per_op is None or not sw else per_op / sw

    def pmu_metric(self, backend, cfg, metric):
        """A PMU pass row (per round trip) per cgroup switch."""
        per_op = self.median("pmu", backend, cfg, metric)
        sw = self.switches(cfg, PIPE)
        return None if per_op is None or not sw else per_op / sw

    def sysreg(self):
        """Whether the PMU pass counted the arm64 driver's register writes."""
        return any(k[0] == "pmu" and k[5] == "sysreg_writes_per_op" for k in self.v)

    def model_cycles(self, backend, cfg):
        """(low, high) modelled PMU cycles per cgroup switch on x86 (none on
        arm64, whose register writes are counted instead)."""
        add, dele, read = (self.pmu(backend, cfg, op) for op in ("add", "del", "read"))
        if None in (add, dele, read) or self.sysreg():
            return None
        return tuple((2 * add + dele) * w + (dele + read) * r for w, r in zip(WRMSR_CYCLES, RDPMC_CYCLES))


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


def unit(res):
    return "instructions" if res.exact else "ns"


def pmu_last_column(res, b, cfg):
    """The workload table's last column: the x86 model, or arm64's counted
    PMU register writes / reads / ISBs per switch."""
    if b == "none":
        return ""
    if res.sysreg():
        vals = [res.pmu_metric(b, cfg, m) for m in ("sysreg_writes_per_op", "sysreg_reads_per_op", "isb_per_op")]
        return "" if vals[0] is None else " / ".join(fmt(x, 2) for x in vals)
    mc = res.model_cycles(b, cfg)
    return "" if mc is None else f"{fmt(mc[0])}-{fmt(mc[1])}"


def driver_table(res, cfg):
    """arm64: calls of the PMUv3 driver's register functions per cgroup switch."""
    out = ["| backend | " + " | ".join(f"armv8pmu_{f}" for f in ARM_REG_FUNCS) +
           " | PMU register writes | reads | ISB |",
           "| --- |" + " ---: |" * (len(ARM_REG_FUNCS) + 3)]
    for b in BACKENDS[1:]:
        vals = [res.pmu_metric(b, cfg, f"armv8pmu_{f}_per_op") for f in ARM_REG_FUNCS]
        vals += [res.pmu_metric(b, cfg, m) for m in ("sysreg_writes_per_op", "sysreg_reads_per_op", "isb_per_op")]
        if vals[-3] is None:
            continue
        out.append(f"| {b} | " + " | ".join(fmt(x, 2) for x in vals) + " |")
    return out


def workload_table(res, cfg):
    u = unit(res)
    sw_pipe, sw_ring = res.switches(cfg, PIPE), res.switches(cfg, RING)
    last = ("PMU register writes / reads / ISB per switch" if res.sysreg()
            else "modelled PMU cycles per switch")
    out = [f"Cgroup switches: {fmt(sw_pipe, 3)} per pipe round trip, {fmt(sw_ring, 3)} per ring message"
           + (" (\"-\": the workload switches no cgroup, so no per-switch figure)." if None in (sw_pipe, sw_ring)
              else "."), "",
           f"| backend | pipe ns/op | {u} per cgroup switch over none | over floor | over floor-read | "
           f"ring ns/msg | ring {u} per switch over none | pipe overhead | ring overhead | "
           f"pmu add / del / read per switch | {last} |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in BACKENDS:
        m = lambda metric: res.median("session", b, cfg, metric)
        if m(PIPE) is None:
            continue
        ps = lambda metric, base="none": "" if b in ("none", base) else fmt(res.per_switch(b, cfg, metric, base))
        ov = lambda metric: "" if b == "none" else fmt(res.overhead(b, cfg, metric)) + " %"
        ops = [res.pmu(b, cfg, op) for op in ("add", "del", "read")]
        ops_s = "" if b == "none" else " / ".join(fmt(x, 2) for x in ops)
        mc_s = pmu_last_column(res, b, cfg)
        out.append(f"| {b} | {fmt(1000 * m(PIPE))} | {ps(PIPE)} | {ps(PIPE, 'floor') if b != 'floor-read' else ''} | "
                   f"{'' if b in ('floor', 'floor-read') else ps(PIPE, 'floor-read')} | "
                   f"{fmt(None if m(RING) is None else 1000 * m(RING))} | {ps(RING)} | {ov(PIPE)} | {ov(RING)} | "
                   f"{ops_s} | {mc_s} |")
    return out


def session_table(res, cfg):
    clock = "M instructions" if res.exact else "ms"
    out = [f"| backend | session setup ({clock}) | teardown ({clock}) | fds | perf_event objects | slab kB | "
           "percpu kB | BPF map kB | cpu-clock error |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in BACKENDS:
        m = lambda metric: res.median("session", b, cfg, metric)
        if m(PIPE) is None:
            continue
        err = m("cpu_clock_err_pct")
        out.append(f"| {b} | {fmt(m('setup_ms'))} | {fmt(m('teardown_ms'))} | {fmt(m('fds'), 0)} | "
                   f"{fmt(m('perf_events'), 0)} | {fmt(m('slab_kb'), 0)} | {fmt(m('percpu_kb'), 0)} | "
                   f"{fmt(m('bpf_map_kb'), 0)} | {'' if err is None else fmt(err, 2) + ' %'} |")
    return out


def cost_table(res, cfg):
    u = "k instructions" if res.exact else "us"
    out = [f"| backend | open+attach ({u}) | read all ({u}) | read one ({u}) | close ({u}) | fds | slab kB | "
           "percpu kB | BPF map kB |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in COUNTING:
        m = lambda metric: res.median("cost", b, cfg, metric)
        if m("read_all_us") is None:
            continue
        read_all = m("read_all_us")
        # bperf's is a difference of two perf runs' cpu times: below zero it is noise
        read_all = "noise (< 0)" if read_all is not None and read_all < 0 else fmt(read_all)
        out.append(f"| {b} | {fmt(m('setup_us'))} | {read_all} | {fmt(m('read_one_us'), 2)} | "
                   f"{fmt(m('teardown_us'))} | {fmt(m('fds'), 0)} | {fmt(m('slab_kb'), 0)} | "
                   f"{fmt(m('percpu_kb'), 0)} | {fmt(m('bpf_map_kb'), 0)} |")
    return out


def churn_table(res, cfg):
    u = "k instructions" if res.exact else "us"
    out = [f"| backend | mkdir ({u}) | over none | rmdir ({u}) | over none |",
           "| --- | ---: | ---: | ---: | ---: |"]
    none = {m: res.median("churn", "none", cfg, m) for m in ("mkdir_us", "rmdir_us")}
    for b in ("none", "shared", "rstat"):
        m = {k: res.median("churn", b, cfg, k) for k in none}
        if m["mkdir_us"] is None:
            continue
        over = {k: None if none[k] is None else m[k] - none[k] for k in m}
        out.append(f"| {b} | {fmt(m['mkdir_us'], 1)} | {fmt(over['mkdir_us'], 1)} | "
                   f"{fmt(m['rmdir_us'], 1)} | {fmt(over['rmdir_us'], 1)} |")
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


def flat(res, backend, cfgs, metric=PIPE):
    """(values, spread %): the backend's per-switch overhead over the
    configurations, and (max - min) / min."""
    vals = [res.per_switch(backend, c, metric) for c in cfgs]
    if not cfgs or None in vals or min(vals) <= 0:
        return vals, None
    return vals, 100 * (max(vals) - min(vals)) / min(vals)


def targets(res):
    """The targets at E = 2, judged on the pipe's overhead per cgroup switch."""
    u = unit(res)
    cfgs = res.configs()
    e2 = [c for c in cfgs if c[1] == 2]
    if not e2:
        return ["(no E = 2 configuration in this run)"]
    big = max(c[0] for c in e2)
    g_ref = 1000 if any(c[0] == 1000 for c in e2) else big
    deep = max(c[2] for c in e2)
    at = sorted({c for c in e2 if c[0] == g_ref and c[2] in (1, deep)})
    out = []
    o = lambda b, c: res.per_switch(b, c, PIPE)
    for c in at:
        sh, rs, ev, bp = (o(b, c) for b in ("shared", "rstat", "events", "bperf"))
        where = f"G = {c[0]}, depth {c[2]}"
        out.append(f"- {where}: shared {fmt(sh)} vs rstat {fmt(rs)} {u} per switch, shared <= 1/2 of rstat: "
                   f"{verdict(None if None in (sh, rs) else sh <= rs / 2)}")
        out.append(f"- {where}: shared {fmt(sh)} vs events {fmt(ev)}, shared <= 1/4 of events: "
                   f"{verdict(None if None in (sh, ev) else sh <= ev / 4)}")
        if c[2] == deep and deep > 1:
            out.append(f"- {where}: rstat {fmt(rs)} vs bperf {fmt(bp)}, rstat <= 1/2 of bperf: "
                       f"{verdict(None if None in (rs, bp) else rs <= bp / 2)}")
    depth_axis = sorted((c for c in e2 if c[0] == g_ref), key=lambda c: c[2])
    # G = 1: both pipe ends in one cgroup, no cgroup switch to divide by
    g_axis = sorted((c for c in e2 if c[2] == 1 and c[0] > 1), key=lambda c: c[0])
    for b in ("shared", "rstat"):
        for axis, name in [(depth_axis, f"depth {depth_axis[0][2] if depth_axis else '?'} to "
                                        f"{depth_axis[-1][2] if depth_axis else '?'} at G = {g_ref}"),
                           (g_axis, f"G = {g_axis[0][0] if g_axis else '?'} to "
                                    f"{g_axis[-1][0] if g_axis else '?'} at depth 1")]:
            if len(axis) < 2:
                continue
            vals, sp = flat(res, b, axis)
            out.append(f"- {b} flat within 10 % from {name}: {' -> '.join(fmt(v) for v in vals)} {u} per "
                       f"switch, spread {fmt(sp)} %: {verdict(None if sp is None else sp <= 10)}")
    return out


def repeat_spread(res):
    """How far the repetitions of one configuration lie apart, per backend."""
    worst = {}
    for cfg in res.configs():
        for b in BACKENDS:
            sp = res.spread(b, cfg, PIPE)
            if sp is not None:
                worst[b] = max(worst.get(b, 0), sp)
    if not worst:
        return []
    out = ["Largest spread of the pipe's ns/op between repetitions of one configuration: " +
           ", ".join(f"{b} {fmt(worst[b], 2)} %" for b in BACKENDS if b in worst) + ".", ""]
    # the same for what the targets read: instructions per switch over none
    u = unit(res)
    out += [f"The pipe's {u} per cgroup switch over none in each repetition (max - min):", "",
            "| G, E, depth | " + " | ".join(BACKENDS[1:]) + " |",
            "| --- |" + " ---: |" * (len(BACKENDS) - 1)]
    for cfg in res.configs():
        cells = []
        for b in BACKENDS[1:]:
            v = res.per_switch_reps(b, cfg, PIPE)
            cells.append(" / ".join(fmt(x) for x in v) + (f" ({fmt(max(v) - min(v))})" if len(v) > 1 else ""))
        out.append(f"| {cfg[0]}, {cfg[1]}, {cfg[2]} | " + " | ".join(cells) + " |")
    return out + [""]


def write_data(d, name, header, lines):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("# " + header + "\n")
        for line in lines:
            f.write(" ".join(str(x) for x in line) + "\n")
    return path


def plot(d, title, png, xlabel, logx, series, ylabel):
    """series: list of (label, [(x, y)], style); writes DIR/png via gnuplot.
    style "floor" draws a dashed grey line (the floor of every plot)."""
    series = [(lab, pts, st) for lab, pts, st in series if pts]
    if not series:
        return None
    files = [write_data(d, f".plot-{png}-{i}.dat", lab, pts) for i, (lab, pts, _) in enumerate(series)]
    script = [
        "set terminal pngcairo size 900,560 font 'sans,10'",
        f"set output '{os.path.join(d, png)}'",
        f"set title '{title}' noenhanced",
        f"set xlabel '{xlabel}'", f"set ylabel '{ylabel}' noenhanced",
        "set key outside right top noenhanced", "set grid",
    ]
    if logx:
        script.append("set logscale x")
    styles = {"floor": "with lines dt 2 lw 2 lc rgb '#606060'",
              "floor-read": "with lines dt 3 lw 2 lc rgb '#000000'"}
    plots = [f"'{f}' using 1:2 {styles.get(st, 'with linespoints lw 2')} title '{lab}'"
             for f, (lab, _, st) in zip(files, series)]
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


def axes(res):
    """The G axis (E = 2, smallest depth), the depth axis (E = 2, G = 1000 or
    the largest G with several depths) and the E axis (G and depth of the
    depth axis' first point)."""
    cfgs = res.configs()
    e2 = [c for c in cfgs if c[1] == 2] or cfgs
    g_axis = sorted(c for c in e2 if c[2] == min(x[2] for x in e2))
    gs = sorted({c[0] for c in e2}, key=lambda g: (g != 1000, -g))
    g_d = next((g for g in gs if len({c[2] for c in e2 if c[0] == g}) > 1), gs[0])
    d_axis = sorted((c for c in e2 if c[0] == g_d), key=lambda c: c[2])
    d0 = d_axis[0][2]
    e_axis = sorted((c for c in cfgs if c[0] == g_d and c[2] == d0), key=lambda c: c[1])
    return g_axis, d_axis, e_axis


def plots(d, res):
    made = []
    if not res.configs():
        return made
    g_axis, d_axis, e_axis = axes(res)
    u = unit(res)
    for metric, name in [(PIPE, "pipe ping-pong"), (RING, "16-task ring")]:
        for axis, xi, xlabel, logx, tag in [
                (g_axis, 0, f"cgroups G (E = 2, depth {g_axis[0][2]})", True, "G"),
                (d_axis, 2, f"depth of the G = {d_axis[0][0]} leaves, every level counted (E = 2)", False, "depth"),
                (e_axis, 1, f"events E (G = {e_axis[0][0]}, depth {e_axis[0][2]})", False, "E")]:
            if len({c[xi] for c in axis}) < 2:
                continue
            series = [(b if b not in ("floor", "floor-read") else LABEL[b],
                       [(c[xi], res.per_switch(b, c, metric)) for c in axis
                        if res.per_switch(b, c, metric) is not None], b) for b in BACKENDS[1:]]
            made.append(plot(d, f"{name}: {u} per cgroup switch over no counting vs {tag}",
                             f"per-switch-{metric.split('_')[0]}-vs-{tag}.png", xlabel, logx, series,
                             f"{u} per cgroup switch over no counting"))
        if metric == PIPE and len(d_axis) > 1 and not res.sysreg():
            series = [(b, [(c[2], res.model_cycles(b, c)[1]) for c in d_axis
                           if res.model_cycles(b, c) is not None], b) for b in BACKENDS[1:]]
            made.append(plot(d, "model: PMU cycles per cgroup switch with hardware events (x86, high estimate)",
                             "pmu-model-vs-depth.png", f"depth (G = {d_axis[0][0]}, E = 2)", False, series,
                             "modelled cycles per cgroup switch"))
    if len({c[0] for c in g_axis}) > 1:
        ku = "k instructions" if res.exact else "us"
        series = [(b, [(c[0], res.median("cost", b, c, "setup_us")) for c in g_axis
                       if res.median("cost", b, c, "setup_us") is not None], b) for b in ("events", "shared", "rstat")]
        made.append(plot(d, "open + attach vs G", "setup-vs-G.png", "cgroups G (E = 2)", True,
                         series, ku))
        series = [(b, [(c[0], res.median("cost", b, c, "read_all_us")) for c in g_axis
                       if res.median("cost", b, c, "read_all_us") is not None], b) for b in COUNTING]
        made.append(plot(d, "reading every cgroup vs G", "read-all-vs-G.png", "cgroups G (E = 2)", True,
                         series, f"{ku} per read of all G"))
    return [m for m in made if m]


def pmu_note(meta, res):
    """What the PMU columns are: a model (x86, software events) or counted
    register accesses (arm64, hardware events)."""
    if res.sysreg():
        return ("Hardware events on QEMU's emulated PMUv3 (arm64 guest): the driver's work at each cgroup "
                "switch (drivers/perf/arm_pmuv3.c, arm_pmu.c) is in the instructions, exactly; what a PMU "
                "register access costs on silicon beyond its instruction (an MSR to a PMU register and the "
                "ISB after it serialize the pipeline) is not. The PMU register columns count those "
                "accesses: calls of the driver's register functions on cpu 0 during the pinned ping-pong "
                "(ftrace) times the MSRs, MRSs and ISBs one call executes (bench/guest.sh PMU_REG_COST).")
    return ("Software events in a QEMU TCG guest: a context switch costs what "
            "it costs on the emulated CPU, and the PMU reprogramming that hardware events add is absent "
            "from the measurements; the pmu add/del/read columns count the calls that would do it "
            "(ftrace) and the last column models their cost on x86 (a model, not a measurement: "
            f"{WRMSR_CYCLES[0]}-{WRMSR_CYCLES[1]} cycles per WRMSR, {RDPMC_CYCLES[0]}-{RDPMC_CYCLES[1]} "
            "per RDPMC; pmu->add = 2 WRMSR, pmu->del = 1 WRMSR + 1 RDPMC, pmu->read = 1 RDPMC).")


def clock_note(meta):
    if meta.get("clock", "").startswith("exact"):
        return ("Instruction-exact guest (QEMU -icount shift=0, one host thread): the guest clock counts "
                "the instructions the guest executes (1 ns = 1 instruction, all vcpus together, idle "
                "skipped), the same whatever the host load. ns and us below are therefore instructions "
                "and thousands of instructions.")
    cs = meta.get("clocksource", "unknown")
    if cs == "tsc":
        return "Wall clock: clocksource tsc, the host's TSC frequency handed to the guest."
    return (f"Wall clock: clocksource {cs}: refined-jiffies ticks in 4 ms and drifts and jumps "
            "against real time under host load.")


def main():
    args = sys.argv[1:]
    with_plots = "--no-plots" not in args
    args = [a for a in args if a != "--no-plots"]
    also = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--also"]
    args = [a for i, a in enumerate(args) if a != "--also" and (i == 0 or args[i - 1] != "--also")]
    if len(args) != 1:
        sys.exit(__doc__)
    d = args[0]
    meta = read_meta(d)
    rows = read_rows(d, meta)
    for other in also:
        # another boot's repetitions after this run's
        offset = 1 + max((int(r["rep"]) for r in rows), default=0)
        more = read_rows(other, read_meta(other), rewrite=False)
        rows += [{**r, "rep": str(int(r["rep"]) + offset)} for r in more]
        meta[f"also {os.path.basename(os.path.normpath(other))}"] = (
            f"its rows are repetitions {offset} and on ({read_meta(other).get('commit', '?')})")
    res = Results(rows, meta.get("clock", "").startswith("exact"))
    u = unit(res)
    lines = [f"# bench results: {os.path.basename(os.path.normpath(d))}", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += ["", clock_note(meta) + " " + pmu_note(meta, res), ""]
    lines += [f"## Targets (E = 2, the pipe's {u} per cgroup switch over no counting)", ""] + targets(res) + [""]
    lines += repeat_spread(res)
    for cfg in res.configs():
        lines += [f"## G = {cfg[0]}, E = {cfg[1]}, depth {cfg[2]}", "", "Workload under each backend:", ""]
        lines += workload_table(res, cfg) + [""]
        dt = driver_table(res, cfg)
        if len(dt) > 2:
            lines += ["PMUv3 driver calls per cgroup switch (ftrace, cpu 0) and the register accesses they "
                      "make:", ""] + dt + [""]
        lines += ["Session:", ""] + session_table(res, cfg) + [""]
        ct = cost_table(res, cfg)
        if len(ct) > 2:
            lines += ["In-process cost (cgbench cost):", ""] + ct + [""]
        cht = churn_table(res, cfg)
        if len(cht) > 2:
            lines += ["Creating and removing a cgroup below the counted subtree, counted with "
                      "all it holds (cgbench churn):", ""] + cht + [""]
    mt = memcg_table(res)
    if mt:
        lines += ["## memory.stat text vs the BPF reader (memcg_stat_bench)", ""] + mt + [""]
    pngs = plots(d, res) if with_plots else []
    if pngs:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in pngs] + [""]
    lines += ["Columns: pipe = `perf bench sched pipe -G` between the first and last leaf, both ends on "
              "cpu 0 (ns per round trip); ring = 16 tasks over the G leaves passing one token, all on cpu 0 "
              f"(cgbench ring), ns per message; {u} per cgroup switch = (backend - none) / the cgroup "
              "switches counted (perf stat -e cgroup-switches around the same workload), paired by "
              "repetition; over floor / floor-read: the same against those two backends instead of none; "
              "overhead = backend / none - 1; pmu add/del/read per switch: calls of the PMU callbacks on "
              "cpu 0 during the pinned ping-pong (ftrace) per cgroup switch; session setup = from the "
              "counting tool's start to the workload's start (process start, open, attach); fds, "
              "perf_event objects (its fds on anon_inode:[perf_event]), slab, BPF map memory: held by "
              "the counting process when the workload starts (slab and percpu: /proc/meminfo deltas); "
              "cpu-clock error: mean |count / cpu.stat usage - 1| over the busy leaves. In-process cost: "
              "cgbench's own timing of the same kernel objects (events opens what perf stat "
              "--for-each-cgroup opens), every level counted.", ""]
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[:40]))


if __name__ == "__main__":
    main()
