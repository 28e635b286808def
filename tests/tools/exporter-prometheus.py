#!/usr/bin/env python3
# Guest test (TAP): a real Prometheus server (Debian's prometheus) scrapes
# cgroup-exporter every second, and a PromQL rate() query over its HTTP API
# gives each cgroup's cpu time rate, held against the kernel's own count:
#
#  - busy (a spinning loop) and duty (a loop that spins and sleeps): the
#    rate() of perf_cgroup_event_seconds_total{event="cpu-clock"} agrees
#    within 5 % with what rate() makes of the kernel's classic cgroup
#    cpu-clock events (perf_event_open(PERF_FLAG_PID_CGROUP), opened by
#    this test) over the same samples, and so does the counter's own
#    increase between the first and last sample; idle (a sleeper): both
#    below 0.01 cpu; cpu.stat usage_usec is noted beside them;
#  - promtool check metrics finds nothing to say about a scrape;
#  - the scaling ratio of software events is 1;
#  - three clients that connect and send nothing delay a scrape by less than
#    a second (a single-threaded server would wait for them forever).
#
# The truth: the classic cgroup events, sampled every 0.2 s and
# interpolated at the times the exporter read the first and last samples
# rate() used.  Prometheus stamps a sample with the time its scrape
# started; the exporter reads the counts during the scrape, within
# scrape_duration_seconds of the stamp (hundreds of milliseconds in a
# loaded guest, varying): the events are taken at both ends of each scrape,
# a range the counter's increase must fall in.  rate() then extrapolates
# that increase to its window's ends (Prometheus' extrapolatedRate(): by up
# to 1.1 sample intervals at each end, else by half of one); the same
# extrapolation of the events' range is what rate() must read.  The query
# waits until the samples fill its window (no missed scrape).
#
# Not cpu.stat: it draws the line between two tasks at another place of a
# context switch.  The scheduler's work in a switch from __schedule()'s
# clock update on (dequeuing a task that blocks or exits, picking the next)
# is the next task's in cpu.stat and the previous task's cgroup's in perf's
# cgroup time, which every backend and the classic events share.  On the
# debug kernel (lockdep, KASAN) that work is long, and duty blocks and
# forks about 20 times a second: over 15 s duty read 2.774 s, the classic
# events 2.739-2.842, cpu.stat 2.597-2.700; busy, the task that runs next,
# 2.820 s, the events 2.765-2.910, cpu.stat 3.007-3.137.
# TOOLS_BIN selects the binaries (default build/bin).
import ctypes
import json
import os
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import tooltest
from tooltest import BIN, CGROOT, check, loopback_up, note, passed, procs, run_test

NAME = "prom-%d" % os.getpid()
EXPORTER_PORT = int(os.environ.get("EXPORTER_PORT", "9466"))
PROM_PORT = int(os.environ.get("PROM_PORT", "9090"))
# Seconds of samples rate() looks at.  A scrape reads the counts a little
# after its timestamp, by a delay that varies in the guest; over 8 s that
# moved one rate by 5.5 % (1 run in 4), over 16 s it moves it half as much.
WINDOW = 16
TOLERANCE = 0.05
CGROUPS = {
    "busy": "while :; do :; done",
    "duty": "while :; do for i in $(seq 3000); do :; done; sleep 0.05; done",
    "idle": "exec sleep 1000",
}

def http_get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(url, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            return http_get(url, timeout=5)
        except OSError:
            time.sleep(0.2)
    raise SystemExit("Bail out! no answer from %s in %d s" % (url, seconds))


def usage_usec(cg):
    return tooltest.usage_usec(os.path.join(NAME, cg))


# perf_event_open(2): its number, a cpu-clock perf_event_attr
# (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, enabled, counting), the
# flag that makes pid a cgroup's fd
SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}[os.uname().machine]
CPU_CLOCK_ATTR = struct.pack("<IIQ", 1, 128, 0).ljust(128, b"\0")
PERF_FLAG_PID_CGROUP = 1 << 2


class CgroupClock:
    """The kernel's classic cgroup cpu-clock of cgroup CG: one event per
    cpu, summed, in microseconds."""

    def __init__(self, cg):
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(CPU_CLOCK_ATTR, len(CPU_CLOCK_ATTR))
        cgfd = os.open(os.path.join(CGROOT, NAME, cg), os.O_RDONLY | os.O_DIRECTORY)
        self.fds = []
        for cpu in range(os.cpu_count()):
            fd = libc.syscall(SYS_PERF_EVENT_OPEN, attr, cgfd, cpu, -1, PERF_FLAG_PID_CGROUP)
            if fd < 0:
                raise OSError(ctypes.get_errno(), "perf_event_open(cgroup %s)" % cg)
            self.fds.append(fd)
        os.close(cgfd)

    def usec(self):
        return sum(struct.unpack("<Q", os.read(fd, 8))[0] for fd in self.fds) / 1e3


class Recorder(threading.Thread):
    """Each cgroup's classic cgroup cpu-clock and cpu.stat usage_usec every
    0.2 s, with wall-clock times."""

    def __init__(self):
        super().__init__(daemon=True)
        self.clocks = {cg: CgroupClock(cg) for cg in CGROUPS}
        self.samples = []    # (time.time(), {cgroup: (events usec, cpu.stat usec)})
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.time(), {cg: (self.clocks[cg].usec(), usage_usec(cg))
                                               for cg in CGROUPS}))
            self.stop.wait(0.2)

    def at(self, t, cg, source):
        """Seconds of @cg at time @t by @source (0: the classic events,
        1: cpu.stat), interpolated between two samples (waiting for the
        sample after @t if it is not taken yet)."""
        while self.samples[-1][0] < t and not self.stop.is_set():
            time.sleep(0.1)
        for (t0, u0), (t1, u1) in zip(self.samples, self.samples[1:]):
            if t0 <= t <= t1:
                a, b = u0[cg][source], u1[cg][source]
                return (a + (b - a) * (t - t0) / (t1 - t0)) / 1e6
        raise RuntimeError("no sample around %.3f" % t)

    def between(self, t_first, d_first, t_last, d_last, cg, source):
        """Seconds of @cg by @source between reads in [t_first, t_first +
        d_first] and [t_last, t_last + d_last]: at least from the end of the
        first to the start of the last, at most from the start of the first
        to the end of the last."""
        return (self.at(t_last, cg, source) - self.at(t_first + d_first, cg, source),
                self.at(t_last + d_last, cg, source) - self.at(t_first, cg, source))


def start_cgroups():
    for cg, script in CGROUPS.items():
        path = os.path.join(CGROOT, NAME, cg)
        os.makedirs(path)
        procs.append(subprocess.Popen(
            ["bash", "-c", "echo $$ > %s/cgroup.procs; %s" % (path, script)]))


def promql(query, at):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (
        PROM_PORT, urllib.parse.urlencode({"query": query, "time": "%.3f" % at}))
    reply = json.loads(http_get(url))
    if reply.get("status") != "success":
        raise RuntimeError("query %s: %s" % (query, reply))
    return {r["metric"].get("cgroup"): r for r in reply["data"]["result"]}


SELECTOR = 'perf_cgroup_event_seconds_total{event="cpu-clock"}'


def window_filled(samples):
    """Samples of every cgroup span the window, at most 1.6 s apart: then
    rate() extrapolates to the window's ends at the samples' own slope."""
    for cg in CGROUPS:
        values = samples.get("/%s/%s" % (NAME, cg), {}).get("values", [])
        times = [float(v[0]) for v in values]
        if len(times) < 2 or times[-1] - times[0] < WINDOW - 1.6 or \
                max(b - a for a, b in zip(times, times[1:])) > 1.6:
            return False
    return True


def extrapolation(values, at):
    """What rate() over VALUES ([time, value] of one series) evaluated at AT
    multiplies the increase between the first and last sample by
    (Prometheus' extrapolatedRate() for a counter)."""
    t_first, t_last = float(values[0][0]), float(values[-1][0])
    first, increase = float(values[0][1]), float(values[-1][1]) - float(values[0][1])
    sampled = t_last - t_first
    average = sampled / (len(values) - 1)
    to_start, to_end = t_first - (at - WINDOW), at - t_last
    if increase > 0 and first >= 0:
        to_start = min(to_start, sampled * first / increase)
    interval = sampled
    for gap in (to_start, to_end):
        interval += gap if gap < 1.1 * average else average / 2
    return interval / sampled / WINDOW


def within(value, low, high):
    return low * (1 - TOLERANCE) <= value <= high * (1 + TOLERANCE)


def check_rates(rec):
    for _ in range(60):
        at = time.time() - 0.5
        samples = promql("%s[%ds]" % (SELECTOR, WINDOW), at)
        if window_filled(samples):
            break
        time.sleep(1)
    else:
        note("the samples never filled a %d s window: %s" % (WINDOW, samples))
    rates = promql("rate(%s[%ds])" % (SELECTOR, WINDOW), at)
    took = {float(t): float(v) for t, v in
            promql("scrape_duration_seconds[%ds]" % WINDOW, at)[None]["values"]}
    for cg in CGROUPS:
        label = "/%s/%s" % (NAME, cg)
        if label not in rates or label not in samples:
            check("%s: Prometheus has its rate" % cg, False)
            continue
        rate = float(rates[label]["value"][1])
        values = samples[label]["values"]
        t_first, t_last = float(values[0][0]), float(values[-1][0])
        d_first, d_last = took[t_first], took[t_last]
        increase = float(values[-1][1]) - float(values[0][1])
        low, high = rec.between(t_first, d_first, t_last, d_last, cg, 0)
        stat_low, stat_high = rec.between(t_first, d_first, t_last, d_last, cg, 1)
        factor = extrapolation(values, at)
        note("%s: %d samples over %.2f s, scrapes of %.3f and %.3f s; increase %.4f s, "
             "classic events %.4f to %.4f s, cpu.stat %.4f to %.4f s; rate() %.4f cpus, "
             "the events' as rate() %.4f to %.4f"
             % (cg, len(values), t_last - t_first, d_first, d_last, increase, low, high,
                stat_low, stat_high, rate, low * factor, high * factor))
        if cg == "idle":
            check("idle: rate() %.4f and the classic events' %.4f both below 0.01 cpu"
                  % (rate, high * factor), rate < 0.01 and high * factor < 0.01)
        else:
            check("%s: rate() %.4f cpus within 5 %% of the classic events' %.4f to %.4f "
                  "as rate() reads them, the increase %.4f s of %.4f to %.4f"
                  % (cg, rate, low * factor, high * factor, increase, low, high),
                  low > 0.05 * (t_last - t_first) and within(increase, low, high) and
                  within(rate, low * factor, high * factor))


def timed_scrape(url):
    t = time.monotonic()
    body = http_get(url)
    return time.monotonic() - t, body


def check_idle_clients(url):
    alone, _ = timed_scrape(url)
    idle = [socket.create_connection(("127.0.0.1", EXPORTER_PORT)) for _ in range(3)]
    try:
        time.sleep(0.2)
        try:
            beside, body = timed_scrape(url)
        except OSError as e:
            beside, body = float("inf"), str(e)
    finally:
        for s in idle:
            s.close()
    check("a scrape beside 3 idle connections took %.3f s, alone %.3f s: "
          "less than 1 s more" % (beside, alone),
          beside - alone < 1.0 and "perf_cgroup_events_total" in body)


def check_exposition(url):
    body = http_get(url)
    lint = subprocess.run(["promtool", "check", "metrics"], input=body, text=True,
                          capture_output=True)
    note((lint.stdout + lint.stderr).strip() or "promtool: no findings")
    check("promtool check metrics: exit 0, no findings",
          lint.returncode == 0 and not (lint.stdout + lint.stderr).strip())
    ratios = [line for line in body.splitlines()
              if line.startswith("perf_cgroup_events_scaling_ratio{")]
    check("scaling ratio of the software events is 1 (%d series)" % len(ratios),
          ratios and all(line.endswith(" 1.000000") for line in ratios))


def main():
    loopback_up()
    print("TAP version 13\n1..7", flush=True)
    tmp = tempfile.mkdtemp(prefix="prom-test.")
    start_cgroups()
    exporter = subprocess.Popen(
        [os.path.join(BIN, "cgroup-exporter"),
         "--web.listen-address=127.0.0.1:%d" % EXPORTER_PORT,
         "-e", "cpu-clock,context-switches", "-r", "^/%s(/.*)?$" % NAME])
    procs.append(exporter)
    url = "http://127.0.0.1:%d/metrics" % EXPORTER_PORT
    wait_for(url, 60)
    check_exposition(url)
    check_idle_clients(url)

    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: cgroup\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % EXPORTER_PORT)
    rec = Recorder()
    rec.start()
    prom = subprocess.Popen(
        ["prometheus", "--config.file=" + config, "--storage.tsdb.path=" + tmp + "/data",
         "--web.listen-address=127.0.0.1:%d" % PROM_PORT, "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
    procs.append(prom)
    wait_for("http://127.0.0.1:%d/-/ready" % PROM_PORT, 180)
    # enough scrapes for a full window of samples
    time.sleep(WINDOW + 3)
    check_rates(rec)
    rec.stop.set()

    exporter.send_signal(signal.SIGTERM)
    check("the exporter exits 0 on SIGTERM", exporter.wait(timeout=30) == 0)
    return 0 if passed(7) else 1


def cleanup():
    top = os.path.join(CGROOT, NAME)
    # the loops' children too, so that no load outlives the test
    try:
        with open(os.path.join(top, "cgroup.kill"), "w") as f:
            f.write("1")
        for _ in range(50):
            if all(not open(os.path.join(top, cg, "cgroup.procs")).read()
                   for cg in CGROUPS):
                break
            time.sleep(0.1)
    except OSError:
        pass
    for cg in CGROUPS:
        try:
            os.rmdir(os.path.join(top, cg))
        except OSError:
            pass
    try:
        os.rmdir(top)
    except OSError:
        pass


if __name__ == "__main__":
    run_test(main, cleanup)
