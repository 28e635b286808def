#!/usr/bin/env python3
# Guest test (TAP): a real Prometheus server (Debian's prometheus) scrapes
# cgroup-exporter every second, and a PromQL rate() query over its HTTP API
# gives each cgroup's cpu time rate, held against the kernel's own cpu.stat:
#
#  - busy (a spinning loop) and duty (a loop that spins and sleeps): the
#    rate of perf_cgroup_event_seconds_total{event="cpu-clock"} agrees with
#    the rate of cpu.stat usage_usec over the same samples within 5 %;
#    idle (a sleeper): both below 0.01 cpu;
#  - promtool check metrics finds nothing to say about a scrape;
#  - the scaling ratio of software events is 1;
#  - three clients that connect and send nothing delay a scrape by less than
#    a second (a single-threaded server would wait for them forever).
#
# cpu.stat is sampled every 0.2 s and interpolated at the timestamps of the
# first and last samples Prometheus used, so both rates cover one interval;
# the query waits until the samples fill its window (no missed scrape), as
# rate() scales by the part of the window they cover.
# TOOLS_BIN selects the binaries (default build/bin).
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

BIN = os.environ.get("TOOLS_BIN", "build/bin")
CGROOT = os.environ.get("CGROOT", "/sys/fs/cgroup")
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

results = []
procs = []


def check(what, cond):
    results.append((what, bool(cond)))
    print("%s %d %s" % ("ok" if cond else "not ok", len(results), what), flush=True)


def note(msg):
    for line in str(msg).splitlines():
        print("# " + line, flush=True)


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
    with open(os.path.join(CGROOT, NAME, cg, "cpu.stat")) as f:
        for line in f:
            key, value = line.split()
            if key == "usage_usec":
                return int(value)
    raise RuntimeError("no usage_usec")


class Recorder(threading.Thread):
    """cpu.stat usage_usec of each cgroup every 0.2 s, with wall-clock times."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples = []    # (time.time(), {cgroup: usec})
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.time(), {cg: usage_usec(cg) for cg in CGROUPS}))
            self.stop.wait(0.2)

    def at(self, t, cg):
        """usage_usec of @cg at time @t, interpolated between two samples."""
        for (t0, u0), (t1, u1) in zip(self.samples, self.samples[1:]):
            if t0 <= t <= t1:
                return u0[cg] + (u1[cg] - u0[cg]) * (t - t0) / (t1 - t0)
        raise RuntimeError("no cpu.stat sample around %.3f" % t)


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
    for cg in CGROUPS:
        label = "/%s/%s" % (NAME, cg)
        if label not in rates or label not in samples:
            check("%s: Prometheus has its rate" % cg, False)
            continue
        rate = float(rates[label]["value"][1])
        values = samples[label]["values"]
        t_first, t_last = float(values[0][0]), float(values[-1][0])
        ref = (rec.at(t_last, cg) - rec.at(t_first, cg)) / 1e6 / (t_last - t_first)
        note("%s: rate() %.4f cpus from %d samples over %.2f s; cpu.stat %.4f cpus"
             % (cg, rate, len(values), t_last - t_first, ref))
        if cg == "idle":
            check("idle: rate() %.4f and cpu.stat %.4f both below 0.01 cpu" % (rate, ref),
                  rate < 0.01 and ref < 0.01)
        else:
            check("%s: rate() %.4f cpus within 5 %% of cpu.stat's %.4f" % (cg, rate, ref),
                  ref > 0.05 and abs(rate - ref) <= TOLERANCE * ref)


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
    # the guest's init leaves loopback down
    ip = shutil.which("ip") or "/usr/sbin/ip"
    subprocess.run([ip, "link", "set", "lo", "up"], check=False)
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
    return 0 if all(ok for _, ok in results) and len(results) == 7 else 1


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
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
    status = 1
    try:
        status = main()
    finally:
        cleanup()
    sys.exit(status)
