#!/usr/bin/env python3
# Guest test (TAP) on a Debian 12 host with systemd as init (the image of
# scripts/systemd-host-image.sh, booted by scripts/vm-run.sh --root
# debian12): the project's packages as an operator installs them, the
# exporter as its unit runs it, and Debian's Prometheus scraping it.
#
#  - apt installs make deb's cgroup-exporter and cgcount-tools offline:
#    every library they depend on is in the image (a Debian 12 host's);
#  - kernel.perf_event_paranoid = 2 in /etc/sysctl.d (Debian's 3 lets no
#    process without CAP_SYS_ADMIN open a perf event: allow_perfmon());
#  - systemctl enable --now cgroup-exporter starts the packaged unit, with
#    /etc/default/cgroup-exporter's ARGS on its command line;
#  - its sandbox holds: a dynamic user (not root, in systemd's range
#    61184-65519), the bounding set exactly CAP_PERFMON, CAP_BPF and
#    CAP_DAC_READ_SEARCH, no capability outside it, no new privileges, a
#    seccomp filter;
#  - a busy unit started with systemd-run, restarted twice (each restart
#    makes its cgroup anew at the same path);
#  - the packaged cgrstat counts the busy unit over BPF rstat with Debian's
#    libbpf (libbpf1, which the packages link): its cpu-clock lies within
#    5 % of cpu.stat's usage over the command it ran while counting and
#    over its whole run;
#  - then Prometheus (Debian's
#    package and unit, scraping the exporter every second): the busy unit,
#    and system.slice as the exporter's default (--collector.leaves-only)
#    exports it, the sum of its leaves' series, each counted within 5 % of
#    its cpu.stat usage_usec over the same interval;
#  - one series per cgroup path after the restarts (count by (cgroup)),
#    and no sample Prometheus dropped as a duplicate.
#
# The truth is cpu.stat, sampled every 0.2 s and interpolated at the times
# the exporter read the first and last samples rate() used: between the
# start of one scrape and the end of the other (Recorder.between() of
# tests/tools/exporter-prometheus.py, whose extrapolation() is also what
# rate() is held to). cpu.stat and perf's cgroup time put the scheduler's
# work in a context switch on either side of it: a unit whose tasks block
# often (Prometheus, Go threads waking every few ms) read 9 % below its
# cpu.stat under TCG, which system.slice's sum dilutes below 5 %; a spinning
# unit switches only at its ticks.
import importlib.util
import os
import shlex
import subprocess
import sys
import time

TOOLS_TESTS = os.path.join(os.path.dirname(__file__), "..", "tools")
sys.path.insert(0, TOOLS_TESTS)     # exporter-prometheus.py's tooltest.py
spec = importlib.util.spec_from_file_location(
    "exporter_prometheus", os.path.join(TOOLS_TESTS, "exporter-prometheus.py"))
ep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ep)
check, note, promql, within = ep.check, ep.note, ep.promql, ep.within
WINDOW = ep.WINDOW
CGROOT = "/sys/fs/cgroup"
# make deb's packages (tests/systemd-host/systemd-host.mk)
DEBS = "build/systemd-host/deb"
BUSY = "busy-loop.service"
# the cgroups held to cpu.stat: those that run during the window
BUSY_PATH = "/system.slice/" + BUSY
MEASURED = ["/system.slice", BUSY_PATH]
# systemd's dynamic users (DynamicUser=yes)
DYNAMIC_UIDS = range(61184, 65520)
# CAP_DAC_READ_SEARCH (2), CAP_PERFMON (38), CAP_BPF (39)
UNIT_CAPS = (1 << 2) | (1 << 38) | (1 << 39)
PLAN = 11


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        note("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def usage_usec(path):
    with open(os.path.join(CGROOT, path.lstrip("/"), "cpu.stat")) as f:
        for line in f:
            key, value = line.split()
            if key == "usage_usec":
                return int(value)
    raise RuntimeError("no usage_usec in %s" % path)


class CpuStat(ep.Recorder):
    """cpu.stat usage_usec of MEASURED every 0.2 s, read back through
    Recorder's at() and between() (either source: cpu.stat)."""

    def __init__(self):
        super(ep.Recorder, self).__init__(daemon=True)
        self.samples = []
        self.stop = ep.threading.Event()

    def run(self):
        while not self.stop.is_set():
            now = time.time()
            self.samples.append((now, {cg: (usage_usec(cg),) * 2 for cg in MEASURED}))
            self.stop.wait(0.2)


def install():
    debs = sorted(os.path.join(DEBS, f) for f in os.listdir(DEBS)
                  if f.startswith(("cgroup-exporter_", "cgcount-tools_")) and f.endswith(".deb"))
    r = run("apt-get", "install", "-y", "-q", *[os.path.abspath(d) for d in debs])
    installed = run("dpkg-query", "-W", "-f", "${Status}\n", "cgroup-exporter", "cgcount-tools")
    ok = len(debs) == 2 and r.returncode == 0 and \
        installed.stdout.split("\n")[:2] == ["install ok installed"] * 2
    check("apt-get install offline: %s" % " ".join(os.path.basename(d) for d in debs), ok)
    if not ok:
        raise SystemExit("Bail out! the packages did not install")


def main_pid(unit):
    return int(run("systemctl", "show", "-p", "MainPID", "--value", unit).stdout.strip() or 0)


def allow_perfmon():
    """Debian's kernels deny every perf_event_open() without CAP_SYS_ADMIN
    at their default kernel.perf_event_paranoid, 3 (a Debian patch); at 2,
    the kernel's own default, CAP_PERFMON opens CPU-wide events: what the
    operator sets, as README's deploy section says."""
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        note("kernel.perf_event_paranoid: %s at boot" % f.read().strip())
    with open("/etc/sysctl.d/60-cgroup-exporter.conf", "w") as f:
        f.write("kernel.perf_event_paranoid = 2\n")
    run("sysctl", "-q", "--system")


def start_exporter():
    r = run("systemctl", "enable", "--now", "cgroup-exporter.service")
    active = run("systemctl", "is-active", "cgroup-exporter.service").stdout.strip()
    check("systemctl enable --now cgroup-exporter: %s" % active,
          r.returncode == 0 and active == "active")
    ep.wait_for("http://127.0.0.1:10464/metrics", 60)
    pid = main_pid("cgroup-exporter.service")
    with open("/proc/%d/cmdline" % pid) as f:
        argv = f.read().split("\0")[:-1]
    args = subprocess.run(["bash", "-c", ". /etc/default/cgroup-exporter; echo \"$ARGS\""],
                          capture_output=True, text=True).stdout.strip()
    check("the service runs /usr/bin/cgroup-exporter with /etc/default's ARGS: %s" % argv[1:],
          argv == ["/usr/bin/cgroup-exporter"] + shlex.split(args))
    return pid


def check_sandbox(pid):
    status = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            status[key] = value.split()
    uids = [int(u) for u in status["Uid"]]
    caps = {k: int(status[k][0], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    note("exporter pid %d: Uid %s, %s, NoNewPrivs %s, Seccomp %s" % (
        pid, " ".join(status["Uid"]), ", ".join("%s %x" % kv for kv in caps.items()),
        status["NoNewPrivs"][0], status["Seccomp"][0]))
    check("a dynamic user: uids %s, none root, in systemd's range" % uids,
          all(u in DYNAMIC_UIDS for u in uids))
    check("capabilities: bounding set %x (CAP_PERFMON, CAP_BPF, CAP_DAC_READ_SEARCH), "
          "none held outside it" % caps["CapBnd"],
          caps["CapBnd"] == UNIT_CAPS and
          all(caps[k] & ~UNIT_CAPS == 0 for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")))
    check("no new privileges, a seccomp filter",
          status["NoNewPrivs"][0] == "1" and status["Seccomp"][0] == "2")


def start_busy():
    """A unit that spins, restarted twice: three cgroups in turn at one path."""
    r = run("systemd-run", "--unit=" + BUSY, "--property=Restart=no",
            "/bin/sh", "-c", "while :; do :; done")
    ids = []
    for restart in range(3):
        if restart:
            run("systemctl", "restart", BUSY)
        ids.append(os.stat(os.path.join(CGROOT, "system.slice", BUSY)).st_ino)
        time.sleep(1.5)
    active = run("systemctl", "is-active", BUSY).stdout.strip()
    check("systemd-run %s, restarted twice: %s, cgroup ids %s" % (BUSY, active, ids),
          r.returncode == 0 and active == "active" and len(set(ids)) == 3)


def check_rstat():
    """The packaged cgrstat (cgcount-tools), its BPF programs loaded by
    Debian's libbpf, counts the busy unit: cpu-clock between cpu.stat's
    usage_usec over the command it runs while counting (3 s) and over its
    whole run (BPF's load and the report included)."""
    libbpf = run("dpkg-query", "-W", "-f", "${Version}", "libbpf1").stdout
    ldd = [line.split() for line in run("ldd", "/usr/bin/cgrstat").stdout.splitlines()]
    linked = [f[2] for f in ldd if f[:2] == ["libbpf.so.1", "=>"]]
    stat = os.path.join(CGROOT, BUSY_PATH.lstrip("/"), "cpu.stat")
    outer = [usage_usec(BUSY_PATH)]
    r = run("/usr/bin/cgrstat", "-e", "cpu-clock", "-r", BUSY_PATH.lstrip("/"), "--", "/bin/sh",
            "-c", "grep ^usage_usec %s; sleep 3; grep ^usage_usec %s" % (stat, stat))
    outer.append(usage_usec(BUSY_PATH))
    inner = [int(line.split()[1]) for line in r.stdout.splitlines()
             if line.startswith("usage_usec ")]
    report = r.stdout.partition("cgroup %s\n" % BUSY_PATH)[2].splitlines()
    counted = [int(line.split()[1]) / 1000 for line in report if line.startswith("cpu-clock ")]
    note("cgrstat: %s\nldd: libbpf.so.1 => %s (libbpf1 %s)" % (
        r.stdout.replace("\n", " ").strip(), linked, libbpf))
    ok = r.returncode == 0 and len(inner) == 2 and counted and linked and libbpf
    if ok:
        what = "cpu-clock %.0f us, cpu.stat %d to %d us" % (
            counted[0], inner[1] - inner[0], outer[1] - outer[0])
        ok = within(counted[0], inner[1] - inner[0], outer[1] - outer[0])
    else:
        what = "exit %d" % r.returncode
    check("cgrstat (libbpf1 %s, %s) counts %s over BPF rstat: %s" % (
        libbpf, " ".join(linked) or "no libbpf.so.1", BUSY, what), ok)


def start_prometheus():
    with open("/etc/prometheus/prometheus.yml", "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: cgroups\n    static_configs:\n"
                "      - targets: ['localhost:10464']\n")
    # --no-block: it starts (30 s of TCG) while the exporter and the busy unit do
    run("systemctl", "enable", "--now", "--no-block", "prometheus.service")


def window_filled(samples, leaves):
    """Every series of LEAVES spans the window, at most 1.6 s between samples,
    all at the same times (one target: one timestamp per scrape)."""
    times = [[float(v[0]) for v in samples.get(cg, {}).get("values", [])] for cg in leaves]
    return leaves and all(t == times[0] for t in times) and len(times[0]) >= 2 and \
        times[0][-1] - times[0][0] >= WINDOW - 1.6 and \
        max(b - a for a, b in zip(times[0], times[0][1:])) <= 1.6


def system_slice_leaves(samples):
    return sorted(cg for cg in samples if cg.startswith("/system.slice/"))


def check_rate(rec, cg, values, rate, took, at):
    """rate() RATE and the increase over VALUES ([time, value]) of cgroup
    CG against its cpu.stat between the same scrapes."""
    t_first, t_last = float(values[0][0]), float(values[-1][0])
    increase = float(values[-1][1]) - float(values[0][1])
    low, high = rec.between(t_first, took[t_first], t_last, took[t_last], cg, 1)
    factor = ep.extrapolation(values, at)
    note("%s: %d samples over %.2f s, scrapes of %.3f and %.3f s; increase %.4f s, "
         "cpu.stat %.4f to %.4f s; rate() %.4f cpus, cpu.stat's as rate() %.4f to %.4f"
         % (cg, len(values), t_last - t_first, took[t_first], took[t_last], increase,
            low, high, rate, low * factor, high * factor))
    return "rate() %.4f cpus within 5 %% of cpu.stat's %.4f to %.4f, the increase %.4f s " \
        "of %.4f to %.4f" % (rate, low * factor, high * factor, increase, low, high), \
        low > 0.02 * (t_last - t_first) and within(increase, low, high) and \
        within(rate, low * factor, high * factor)


def check_rates(rec):
    """The busy unit's series, and system.slice as the exporter's default
    (--collector.leaves-only) exports it: the sum of its leaves' series."""
    selector = 'perf_cgroup_event_seconds_total{event="cpu-clock"}'
    for _ in range(60):
        at = time.time() - 0.5
        samples = promql("%s[%ds]" % (selector, WINDOW), at)
        leaves = system_slice_leaves(samples)
        if BUSY_PATH in leaves and window_filled(samples, leaves):
            break
        time.sleep(1)
    else:
        note("the samples never filled a %d s window: %s" % (WINDOW, samples))
        note(ep.http_get("http://127.0.0.1:9090/api/v1/targets"))
    rates = promql("rate(%s[%ds])" % (selector, WINDOW), at)
    total = promql('sum(rate(perf_cgroup_event_seconds_total{event="cpu-clock",'
                   'cgroup=~"/system[.]slice/.+"}[%ds]))' % WINDOW, at)
    took = {float(t): float(v) for t, v in
            promql("scrape_duration_seconds[%ds]" % WINDOW, at)[None]["values"]}
    if BUSY_PATH not in rates or BUSY_PATH not in samples or None not in total:
        check("Prometheus has the rates of %s and system.slice's leaves" % BUSY, False)
        check("system.slice", False)
        return
    what, ok = check_rate(rec, BUSY_PATH, samples[BUSY_PATH]["values"],
                          float(rates[BUSY_PATH]["value"][1]), took, at)
    check("%s: %s" % (BUSY_PATH, what), ok)
    summed = [[v[0], sum(float(samples[cg]["values"][i][1]) for cg in leaves)]
              for i, v in enumerate(samples[BUSY_PATH]["values"])]
    what, ok = check_rate(rec, "/system.slice", summed, float(total[None]["value"][1]), took, at)
    check("/system.slice, the sum of its %d leaves: %s" % (len(leaves), what), ok)


def check_one_series_per_cgroup():
    at = time.time()
    counts = promql('count by (cgroup) (perf_cgroup_event_seconds_total{event="cpu-clock"})', at)
    many = {cg: r["value"][1] for cg, r in counts.items() if r["value"][1] != "1"}
    dropped = promql("prometheus_target_scrapes_sample_duplicate_timestamp_total", at)
    dup = sum(float(r["value"][1]) for r in dropped.values())
    note("%d cgroup paths, %s; %g samples dropped as duplicates" % (
        len(counts), "%s with several series" % many if many else "each one series", dup))
    check("one series per cgroup path after %s's restarts (count by (cgroup)), "
          "no duplicate sample dropped" % BUSY,
          counts and not many and "/system.slice/" + BUSY in counts and dup == 0)


def main():
    print("TAP version 13\n1..%d" % PLAN, flush=True)
    start = time.monotonic()
    install()
    start_prometheus()
    allow_perfmon()
    check_sandbox(start_exporter())
    start_busy()
    note("installed, the exporter and %s running after %.1f s" % (BUSY, time.monotonic() - start))
    check_rstat()
    ep.wait_for("http://127.0.0.1:9090/-/ready", 180)
    note("Prometheus ready after %.1f s" % (time.monotonic() - start))
    rec = CpuStat()
    rec.start()
    # a window of samples after the last restart (a counter reset) and with cpu.stat's
    time.sleep(WINDOW + 2)
    check_rates(rec)
    note("rates read after %.1f s" % (time.monotonic() - start))
    rec.stop.set()
    check_one_series_per_cgroup()
    return 0 if ep.passed(PLAN) else 1


if __name__ == "__main__":
    sys.exit(main())
