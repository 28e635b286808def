#!/usr/bin/env python3
# Guest test (TAP): cgroup-exporter's HTTP serving, by the conventions of
# Prometheus' exporters and against clients that abuse it, each outcome
# measured from the outside (the clients' sockets, the exporter's
# /proc/PID/stat and /proc/PID/fd):
#
#  - GET and HEAD of the metrics: the same headers (Content-Length within
#    64 bytes: values move between the two renderings), HEAD without a body;
#    404 on another path, 405 (with Allow) for POST;
#  - two --web.listen-address flags: both addresses answer; a malformed one
#    is a usage error (exit 2), one that cannot be listened on exits 1;
#  - 64 clients sending a request one byte every 0.3 s and 60 idle
#    connections, all held open by the exporter: a scrape answers 200 within
#    2 s; the exporter closes every one of them 10 s (its request deadline,
#    cgroup-exporter(1)) after it connected, give or take a second,
#    however steadily it trickles;
#  - 40 connections from one address: the exporter keeps 16 (its limit per
#    client address) and closes the others at once;
#  - out of file descriptors (RLIMIT_NOFILE lowered with prlimit to what it
#    holds plus 8, 100 clients connecting): at most 0.3 s of CPU in 3 s
#    (a loop retrying accept() spends the whole 3 s; waiting, it spends
#    a few milliseconds: 0.3 s is ten times that and a tenth of the loop,
#    for a loaded host), and a scrape answers again once the clients leave.
#
# The abusive clients connect from other loopback addresses (127.0.x.y, all
# local on Linux) than the scrapes (127.0.0.1), as different hosts would.
# TOOLS_BIN selects the binaries (default build/bin).
import http.client
import os
import resource
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from tooltest import BIN, Process, bail, check, free_port, loopback_up, note, passed, results, run_test

EXPORTER = [os.path.join(BIN, "cgroup-exporter"), "--backend", "events",
            "-e", "cpu-clock", "-r", "^/$"]
DEADLINE = 10           # cgroup-exporter(1): a request in and its answer out
PER_ADDRESS = 16        # cgroup-exporter(1): connections per client address
SCRAPE_LIMIT = 2.0      # seconds a scrape may take under abuse
EMFILE_CPU_LIMIT = 0.3  # seconds of CPU in EMFILE_SECONDS (see above)
EMFILE_SECONDS = 3.0

tmp = tempfile.mkdtemp()


def start_exporter(*addresses):
    """cgroup-exporter on ADDRESSES, waited for until it listens."""
    exp = Process(EXPORTER + ["--web.listen-address=" + a for a in addresses],
                  os.path.join(tmp, "exporter-%d.err" % len(results)))
    if not exp.wait_listening(10):
        note(exp.stderr())
        bail("the exporter did not listen on %s" % (addresses,))
    return exp


def request(host, port, method="GET", path="/metrics", body=None, timeout=10):
    """(status, headers, body, seconds) of one request, or (error, ...)."""
    start = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body)
        r = conn.getresponse()
        data = r.read()
        return r.status, dict(r.getheaders()), data, time.monotonic() - start
    except OSError as e:
        return repr(e), {}, b"", time.monotonic() - start
    finally:
        conn.close()


def connect_from(source, port):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_by_peer(s):
    """Has the exporter closed @s (end of stream or reset)?"""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        return s.recv(4096) == b""
    except OSError:
        return True


def check_methods():
    port = free_port()
    exp = start_exporter("127.0.0.1:%d" % port)
    get = request("127.0.0.1", port)
    head = request("127.0.0.1", port, "HEAD")
    post = request("127.0.0.1", port, "POST", body=b"x=1")
    other = request("127.0.0.1", port, path="/nope")
    stop = exp.stop(15)
    # HEAD renders the metrics again: a counter or a process_* value may
    # have gained a digit since the GET, so its length is near GET's
    volatile = ("Date", "Content-Length")
    same = {k: v for k, v in head[1].items() if k not in volatile} == \
        {k: v for k, v in get[1].items() if k not in volatile}
    head_len = int(head[1].get("Content-Length") or -1)
    check("GET /metrics %s with %d bytes; HEAD %s, the same headers (%s), "
          "Content-Length %s, %d bytes of body"
          % (get[0], len(get[2]), head[0], same, head[1].get("Content-Length"),
             len(head[2])),
          get[0] == 200 and b"perf_cgroup_event_seconds_total{" in get[2]
          and head[0] == 200 and same and head[2] == b""
          and abs(head_len - len(get[2])) <= 64)
    check("POST answers %s (Allow: %s), /nope %s"
          % (post[0], post[1].get("Allow"), other[0]),
          post[0] == 405 and post[1].get("Allow") == "GET, HEAD" and other[0] == 404)
    check("SIGTERM: exit %s" % stop, stop == 0)


def check_listen_addresses():
    port = free_port()
    exp = start_exporter("127.0.0.1:%d" % port, "127.0.0.2:%d" % port)
    first = request("127.0.0.1", port)[0]
    second = request("127.0.0.2", port)[0]
    exp.stop(15)
    check("two --web.listen-address: 127.0.0.1:%d answers %s, 127.0.0.2:%d %s"
          % (port, first, port, second), first == 200 and second == 200)
    bad = subprocess.run(EXPORTER + ["--web.listen-address=127.0.0.1:%d" % port,
                                     "--web.listen-address=localhost"],
                         stderr=subprocess.PIPE, text=True, timeout=30)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    busy = subprocess.run(EXPORTER + ["--web.listen-address=127.0.0.1:%d" % port,
                                      "--web.listen-address=127.0.0.1:%d"
                                      % taken.getsockname()[1]],
                          stderr=subprocess.PIPE, text=True, timeout=30)
    taken.close()
    note(bad.stderr + busy.stderr)
    check("a second address without a port exits %d, one in use exits %d"
          % (bad.returncode, busy.returncode),
          bad.returncode == 2 and busy.returncode == 1 and "in use" in busy.stderr)


class Abusers(threading.Thread):
    """Slow clients that send a request one byte every 0.3 s, idle clients
    that send nothing; when the exporter closed each, in seconds after its
    connect()."""

    def __init__(self, port, slow, idle):
        super().__init__(daemon=True)
        self.socks = []
        for i in range(slow + idle):
            # PER_ADDRESS at most from each address: all of them held
            source = "127.0.%d.%d" % (1 if i < slow else 2, 1 + i % 4)
            self.socks.append((connect_from(source, port), time.monotonic(), i < slow))
        self.closed_after = {}
        self.stopping = False
        self.trickle = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000

    def open_count(self):
        return len(self.socks) - len(self.closed_after)

    def run(self):
        sent = 0
        while not self.stopping and self.open_count():
            time.sleep(0.3)
            for i, (s, start, slow) in enumerate(self.socks):
                if i in self.closed_after:
                    continue
                if closed_by_peer(s):
                    self.closed_after[i] = time.monotonic() - start
                    continue
                if slow:
                    try:
                        s.send(self.trickle[sent:sent + 1])
                    except OSError:
                        self.closed_after[i] = time.monotonic() - start
            sent += 1

    def close(self):
        self.stopping = True
        self.join()
        for s, _, _ in self.socks:
            s.close()


def check_slow_and_idle_clients():
    port = free_port()
    exp = start_exporter("127.0.0.1:%d" % port)
    abusers = Abusers(port, 64, 60)
    abusers.start()
    time.sleep(1.5)
    held = abusers.open_count()
    status, _, body, took = request("127.0.0.1", port)
    check("64 slow and 60 idle clients (%d of them held open): a scrape answers %s "
          "in %.3f s (limit %.0f s)" % (held, status, took, SCRAPE_LIMIT),
          held == 124 and status == 200 and took < SCRAPE_LIMIT
          and b"perf_cgroup_event_seconds_total{" in body)
    abusers.join(DEADLINE + 5)
    abusers.close()
    times = sorted(abusers.closed_after.values())
    exp.stop(15)
    if times:
        note("closed after %.2f .. %.2f s" % (times[0], times[-1]))
    check("the exporter closed %d of 124 slow and idle clients, %.1f to %.1f s after "
          "they connected (deadline %d s)"
          % (len(times), times[0] if times else -1, times[-1] if times else -1, DEADLINE),
          len(times) == 124 and DEADLINE - 1 <= times[0] and times[-1] <= DEADLINE + 1.5)


def check_per_address_limit():
    port = free_port()
    exp = start_exporter("127.0.0.1:%d" % port)
    socks = [connect_from("127.0.3.1", port) for _ in range(40)]
    time.sleep(1)
    held = sum(not closed_by_peer(s) for s in socks)
    status = request("127.0.0.1", port)[0]
    for s in socks:
        s.close()
    exp.stop(15)
    check("40 connections from one address: the exporter holds %d (limit %d), "
          "a scrape from another answers %s" % (held, PER_ADDRESS, status),
          held == PER_ADDRESS and status == 200)


def check_out_of_descriptors():
    port = free_port()
    exp = start_exporter("127.0.0.1:%d" % port)
    limit = exp.open_fds() + 8
    resource.prlimit(exp.proc.pid, resource.RLIMIT_NOFILE, (limit, limit))
    socks = [connect_from("127.0.4.%d" % (1 + i % 8), port) for i in range(100)]
    time.sleep(0.5)
    before, fds = exp.cpu_seconds(), exp.open_fds()
    time.sleep(EMFILE_SECONDS)
    cpu = exp.cpu_seconds() - before
    for s in socks:
        s.close()
    status, _, _, took = request("127.0.0.1", port)
    stop = exp.stop(15)
    check("out of descriptors (%d open, limit %d, 100 clients): %.2f s of CPU in "
          "%.0f s (limit %.1f)" % (fds, limit, cpu, EMFILE_SECONDS, EMFILE_CPU_LIMIT),
          fds == limit and cpu <= EMFILE_CPU_LIMIT)
    check("once the clients left, a scrape answers %s in %.3f s; SIGTERM: exit %s"
          % (status, took, stop), status == 200 and took < SCRAPE_LIMIT and stop == 0)


def main():
    loopback_up()
    print("TAP version 13")
    print("1..10", flush=True)
    check_methods()
    check_listen_addresses()
    check_slow_and_idle_clients()
    check_per_address_limit()
    check_out_of_descriptors()
    return 0 if passed(10) else 1


if __name__ == "__main__":
    run_test(main, lambda: shutil.rmtree(tmp, ignore_errors=True))
