#!/usr/bin/env python3
# Guest test (TAP): cgroup-exporter's --web.config.file, the web
# configuration file of the Prometheus exporters (exporter-toolkit's
# format), and its gzip answers, each outcome seen by independent clients:
# Python's ssl (OpenSSL; the exporter's TLS is gnutls), bcrypt hashes made
# by python3-bcrypt (the exporter checks them with libxcrypt), Python's
# gzip, promtool (Prometheus' own exposition parser and exporter-toolkit's
# web configuration).
#
# A CA, a server certificate for 127.0.0.1 and 127.0.0.2 and a client
# certificate are made with openssl at the start, with a second CA's client
# certificate.  One exporter serves TLS on two --web.listen-address, asks
# for verified client certificates (RequireAndVerifyClientCert) and basic
# authentication (two users), and adds X-Frame-Options:
#
#  - a scrape with the client certificate and a user's password answers 200
#    on both addresses, the server's certificate verified against the CA
#    for each address, and a second scrape goes over the same connection
#    (kept alive: one handshake); the same client trusting only the other
#    CA refuses the server;
#  - refused: a client without a certificate, a client whose certificate
#    the other CA signed, a plain HTTP request to the TLS port;
#  - basic authentication: no credentials, a wrong password, an unknown
#    user answer 401 with WWW-Authenticate: Basic; each answer carries
#    X-Frame-Options;
#  - Accept-Encoding: gzip gets Content-Encoding: gzip and Vary:
#    Accept-Encoding, a body that gunzips to the same series as an identity
#    scrape, which promtool check metrics finds nothing to say about;
#    gzip;q=0 gets the identity.
#
# A file that is not YAML, an unknown key, a key of exporter-toolkit's this
# exporter refuses (rate_limit), a password instead of a bcrypt hash and a
# certificate without its key each make the exporter exit 1 before it
# listens, with a message naming the file and what is wrong; exporter-toolkit
# (promtool check web-config) refuses each of them too, and takes the file
# of the exporter above.
# TOOLS_BIN selects the binaries (default build/bin).
import base64
import gzip
import http.client
import os
import shutil
import ssl
import subprocess
import tempfile

import bcrypt

from tooltest import BIN, Process, bail, check, free_port, loopback_up, note, passed, results, run_test

EXPORTER = [os.path.join(BIN, "cgroup-exporter"), "--backend", "events",
            "-e", "cpu-clock", "-r", "^/$"]
USERS = {"alice": "correct horse", "bob": "battery staple"}
BCRYPT_COST = 4         # bcrypt's least: the guest runs under TCG

tmp = tempfile.mkdtemp(prefix="exporter-web.")


def path(name):
    return os.path.join(tmp, name)


def openssl(*args):
    run = subprocess.run(["openssl"] + list(args), capture_output=True, text=True, timeout=60)
    if run.returncode:
        note(run.stderr)
        bail("openssl %s failed" % args[0])


def make_certificates():
    """ca.pem signs server.pem (127.0.0.1 and 127.0.0.2) and client.pem;
    other-ca.pem signs other-client.pem."""
    write("server.ext", "subjectAltName=IP:127.0.0.1,IP:127.0.0.2\n")
    # the guest has the host's /usr, not its /etc/ssl/openssl.cnf
    os.environ["OPENSSL_CONF"] = write("openssl.cnf", "[req]\ndistinguished_name = dn\n[dn]\n")
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-days", "2", "-subj", "/CN=" + ca, "-keyout", path(ca + ".key"),
                "-out", path(ca + ".pem"))
    for name, ca, ext in (("server", "ca", ["-extfile", path("server.ext")]),
                          ("client", "ca", []), ("other-client", "other-ca", [])):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=" + name, "-keyout", path(name + ".key"),
                "-out", path(name + ".csr"))
        openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path(ca + ".pem"),
                "-CAkey", path(ca + ".key"), "-CAcreateserial", "-days", "2",
                "-out", path(name + ".pem"), *ext)


def write(name, text):
    with open(path(name), "w") as f:
        f.write(text)
    return path(name)


def web_config():
    users = "".join("    %s: %s\n" % (user, bcrypt.hashpw(password.encode(),
                                                          bcrypt.gensalt(BCRYPT_COST)).decode())
                    for user, password in USERS.items())
    # relative file names: relative to the file's directory
    return write("web.yml",
                 "tls_server_config:\n"
                 "  cert_file: server.pem\n"
                 "  key_file: server.key\n"
                 "  client_auth_type: RequireAndVerifyClientCert\n"
                 "  client_ca_file: ca.pem\n"
                 "  min_version: TLS12\n"
                 "http_server_config:\n"
                 "  headers:\n"
                 "    X-Frame-Options: deny\n"
                 "basic_auth_users:\n" + users)


def start_exporter(args):
    """The exporter with ARGS, waited for until it listens."""
    exp = Process(EXPORTER + args, path("exporter-%d.err" % len(results)))
    if not exp.wait_listening(60):
        note(exp.stderr())
        bail("the exporter did not listen (%s)" % " ".join(args))
    note(exp.stderr().strip())
    return exp


def tls_context(ca="ca", client="client"):
    ctx = ssl.create_default_context(cafile=path(ca + ".pem"))
    if client:
        ctx.load_cert_chain(path(client + ".pem"), path(client + ".key"))
    return ctx


def basic(user, password):
    return {"Authorization": "Basic " +
            base64.b64encode(("%s:%s" % (user, password)).encode()).decode()}


def request(host, port, headers=None, ctx=None, method="GET"):
    """(status, headers, body) of one request, over TLS with @ctx, or
    (the error, {}, b"")."""
    conn = (http.client.HTTPSConnection(host, port, context=ctx, timeout=20) if ctx else
            http.client.HTTPConnection(host, port, timeout=20))
    try:
        conn.request(method, "/metrics", headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    except (OSError, http.client.HTTPException) as e:
        return repr(e), {}, b""
    finally:
        conn.close()


def kept_alive(port, headers, ctx):
    """Two scrapes on one connection: their statuses, and whether the
    second went over the first's socket (one TLS handshake)."""
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
    statuses, sockets = [], []
    try:
        for _ in range(2):
            conn.request("GET", "/metrics", headers=headers)
            r = conn.getresponse()
            r.read()
            statuses.append(r.status)
            sockets.append(conn.sock.getsockname() if conn.sock else None)
    except (OSError, http.client.HTTPException) as e:
        statuses.append(repr(e))
    finally:
        conn.close()
    return statuses, len(sockets) == 2 and sockets[0] is not None and sockets[0] == sockets[1]


def series(body):
    """The series of an exposition (name and labels), without values."""
    return sorted(line.rsplit(" ", 1)[0] for line in body.decode().splitlines()
                  if line and not line.startswith("#"))


def check_tls(port, good):
    for host in ("127.0.0.1", "127.0.0.2"):
        status, _, body = request(host, port, good, tls_context())
        check("TLS with the client certificate and alice's password on %s:%d: %s, "
              "the server verified against the CA" % (host, port, status),
              status == 200 and b"perf_cgroup_event_seconds_total{" in body)
    statuses, same = kept_alive(port, good, tls_context())
    check("two scrapes on one connection: %s, the connection kept (one handshake): %s"
          % (statuses, same), statuses == [200, 200] and same)
    status = request("127.0.0.1", port, good, tls_context("other-ca"))[0]
    check("a client trusting another CA refuses the server: %s" % status,
          isinstance(status, str) and "CERTIFICATE_VERIFY_FAILED" in status)
    refused = {
        "no client certificate": request("127.0.0.1", port, good, tls_context(client=None)),
        "another CA's client certificate": request("127.0.0.1", port, good,
                                                   tls_context(client="other-client")),
        "plain HTTP": request("127.0.0.1", port, good),
    }
    for what, (status, _, body) in refused.items():
        check("refused: %s (%s)" % (what, status), status != 200 and b"perf_cgroup" not in body)


def check_basic_auth(port):
    ctx = tls_context()
    answers = {
        "no credentials": request("127.0.0.1", port, None, ctx),
        "alice with bob's password": request("127.0.0.1", port, basic("alice", USERS["bob"]), ctx),
        "an unknown user": request("127.0.0.1", port, basic("mallory", USERS["alice"]), ctx),
        "bob": request("127.0.0.1", port, basic("bob", USERS["bob"]), ctx),
    }
    for what, (status, headers, body) in answers.items():
        want = 200 if what == "bob" else 401
        check("basic authentication, %s: %s (want %d), WWW-Authenticate %s, "
              "X-Frame-Options %s" % (what, status, want, headers.get("WWW-Authenticate"),
                                      headers.get("X-Frame-Options")),
              status == want and headers.get("X-Frame-Options") == "deny" and
              (headers.get("WWW-Authenticate") == "Basic") == (want == 401) and
              (b"perf_cgroup_event_seconds_total{" in body) == (want == 200))


def check_gzip(port, good):
    ctx = tls_context()
    plain = request("127.0.0.1", port, dict(good, **{"Accept-Encoding": "identity"}), ctx)
    packed = request("127.0.0.1", port, dict(good, **{"Accept-Encoding": "gzip"}), ctx)
    refused = request("127.0.0.1", port,
                      dict(good, **{"Accept-Encoding": "gzip;q=0, identity"}), ctx)
    try:
        unpacked = gzip.decompress(packed[2])
    except (OSError, EOFError) as e:
        unpacked = repr(e).encode()
    check("Accept-Encoding: gzip: %s, Content-Encoding %s, Vary %s, %d bytes that gunzip to "
          "%d (identity: %d), the same %d series"
          % (packed[0], packed[1].get("Content-Encoding"), packed[1].get("Vary"),
             len(packed[2]), len(unpacked), len(plain[2]), len(series(plain[2]))),
          packed[0] == 200 and plain[0] == 200 and
          packed[1].get("Content-Encoding") == "gzip" and
          packed[1].get("Vary") == "Accept-Encoding" and
          series(unpacked) == series(plain[2]) and len(series(plain[2])) > 3 and
          "Content-Encoding" not in plain[1])
    lint = subprocess.run(["promtool", "check", "metrics"], input=unpacked,
                          capture_output=True, timeout=60)
    note((lint.stdout + lint.stderr).decode().strip() or "promtool: no findings")
    check("promtool check metrics on the gunzipped body: exit %d, no findings" % lint.returncode,
          lint.returncode == 0 and not (lint.stdout + lint.stderr).strip())
    check("gzip;q=0: %s, Content-Encoding %s" % (refused[0], refused[1].get("Content-Encoding")),
          refused[0] == 200 and "Content-Encoding" not in refused[1] and
          refused[2].startswith(b"# HELP"))


BAD_CONFIGS = [
    # (what, the file, what the message must say)
    ("not YAML", "tls_server_config:\n  cert_file: [server.pem\n", "not YAML"),
    ("an unknown key", "tls_server_config:\n  cert_fil: server.pem\n  key_file: server.key\n",
     "unknown key 'cert_fil' in tls_server_config"),
    ("a refused key", "rate_limit:\n  interval: 1s\n  burst: 10\n",
     "'rate_limit' is not supported"),
    ("a password for a hash", "basic_auth_users:\n  alice: secret\n",
     "alice: not a bcrypt hash"),
    ("a certificate without key", "tls_server_config:\n  cert_file: server.pem\n",
     "missing key_file"),
]


def check_bad_configs(good_config):
    """Each refused, as exporter-toolkit (promtool check web-config, one
    run for every file) accepts the good file and refuses them."""
    port = free_port()
    configs = [write("bad-%d.yml" % i, text) for i, (_, text, _) in enumerate(BAD_CONFIGS)]
    promtool = subprocess.run(["promtool", "check", "web-config", good_config] + configs,
                              capture_output=True, text=True, timeout=60)
    # "FILE SUCCESS" or "FILE FAILED: why", on stdout or stderr
    verdict = dict(line.split(":")[0].split(" ", 1) for line in
                   (promtool.stdout + promtool.stderr).splitlines() if line.startswith(tmp))
    verdicts = [verdict.get(config) for config in [good_config] + configs]
    check("exporter-toolkit (promtool check web-config) takes the test's file and none of the "
          "%d others: %s" % (len(configs), ", ".join(map(str, verdicts))),
          verdicts == ["SUCCESS"] + ["FAILED"] * len(configs))
    for config, (what, _, message) in zip(configs, BAD_CONFIGS):
        run = subprocess.run(EXPORTER + ["--web.listen-address=127.0.0.1:%d" % port,
                                         "--web.config.file=" + config],
                             capture_output=True, text=True, timeout=60)
        note(run.stderr.strip())
        check("%s: exit %d, '%s' named with the file" % (what, run.returncode, message),
              run.returncode == 1 and message in run.stderr and config in run.stderr and
              "listening" not in run.stderr)


def main():
    loopback_up()
    print("TAP version 13")
    # check_tls, check_basic_auth, check_gzip, SIGTERM, check_bad_configs
    print("1..%d" % (7 + 4 + 3 + 1 + len(BAD_CONFIGS) + 1), flush=True)
    make_certificates()
    port = free_port()
    config = web_config()
    exp = start_exporter(["--web.listen-address=127.0.0.1:%d" % port,
                          "--web.listen-address=127.0.0.2:%d" % port,
                          "--web.config.file=" + config])
    good = basic("alice", USERS["alice"])
    check_tls(port, good)
    check_basic_auth(port)
    check_gzip(port, good)
    status = exp.stop()
    if status != 0:
        note(exp.stderr())
    check("SIGTERM: exit %s" % status, status == 0)
    check_bad_configs(config)
    return 0 if passed() else 1


if __name__ == "__main__":
    run_test(main, lambda: shutil.rmtree(tmp, ignore_errors=True))
