// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-exporter: perf event counts per cgroup in the Prometheus text
 * exposition format (version 0.0.4), served over HTTP.
 *
 *   cgroup-exporter [-p PORT] [-a ADDRESS] [-e EVENTS] [-b BACKEND] [-r REGEX]
 *
 * Counts EVENTS (default cpu-clock,context-switches) for every cgroup whose
 * path (relative to the cgroup2 root, e.g. "/a/b") matches REGEX (default:
 * all) and answers GET /metrics on ADDRESS:PORT (default 127.0.0.1:9464)
 * with one counter per event:
 *
 *   # HELP perf_cgroup_cpu_clock_total perf event cpu-clock counted ...
 *   # TYPE perf_cgroup_cpu_clock_total counter
 *   perf_cgroup_cpu_clock_total{cgroup="/a/b"} 123456789
 *
 * Counts are hierarchical (a cgroup includes its descendants) and start
 * when the exporter first sees the cgroup; every scrape picks up new
 * cgroups and drops removed ones.  One request at a time; SIGTERM or
 * SIGINT stop it cleanly.  Uses libcgcount (lib/cgcount/cgcount.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgcount.h"

struct options {
	const char *events;
	const char *regex;
	const char *address;
	int port;
	struct cgcount_opts lib;
};

/* A growing text buffer for one response body. */
struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-p PORT] [-a ADDRESS] [-e EVENTS] "
		"[-b auto|events|shared|rstat] [-r REGEX]\n", prog);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;

	*o = (struct options){ .events = "cpu-clock,context-switches", .regex = ".*",
			       .address = "127.0.0.1", .port = 9464,
			       .lib.sz = sizeof(o->lib) };
	while ((c = getopt(argc, argv, "p:a:e:b:r:h")) != -1) {
		switch (c) {
		case 'p':
			o->port = atoi(optarg);
			if (o->port <= 0 || o->port > 65535)
				return -1;
			break;
		case 'a':
			o->address = optarg;
			break;
		case 'e':
			o->events = optarg;
			break;
		case 'r':
			o->regex = optarg;
			break;
		case 'b':
			if (cgcount_parse_backend(optarg, &o->lib.backend))
				return -1;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->len + n < t->cap) {
			t->len += n;
			return;
		}
		t->cap = 2 * (t->len + n + 1024);
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf) {
			t->failed = 1;
			t->cap = t->len = 0;
			return;
		}
	}
}

/* perf event name -> metric name part: cpu-clock -> cpu_clock */
static void metric_name(const char *event, char *out, size_t len)
{
	size_t i;

	for (i = 0; event[i] && i + 1 < len; i++)
		out[i] = (event[i] >= 'a' && event[i] <= 'z') ||
			 (event[i] >= '0' && event[i] <= '9') ? event[i] : '_';
	out[i] = '\0';
}

/* A label value with \\, \" and \n escaped. */
static void add_label_value(struct text *t, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			text_add(t, "\\%c", *s);
		else if (*s == '\n')
			text_add(t, "\\n");
		else
			text_add(t, "%c", *s);
	}
}

static void add_event(struct text *t, struct cgcount *s, int e,
		      const struct cgcount_reading *r, size_t nr)
{
	const char *event = cgcount_event_name(s, e);
	char name[64];
	size_t i;

	metric_name(event, name, sizeof(name));
	text_add(t, "# HELP perf_cgroup_%s_total perf event %s counted while tasks of the "
		 "cgroup or its descendants ran (scaled for multiplexing)\n", name, event);
	text_add(t, "# TYPE perf_cgroup_%s_total counter\n", name);
	for (i = 0; i < nr; i++) {
		text_add(t, "perf_cgroup_%s_total{cgroup=\"", name);
		add_label_value(t, r[i].path);
		text_add(t, "\"} %.0f\n", cgcount_scaled(&r[i].values[e]));
	}
}

static void drop_removed(struct cgcount *s, const struct cgcount_reading *r, size_t nr)
{
	char full[8192];
	struct stat st;
	size_t i;

	for (i = 0; i < nr; i++) {
		snprintf(full, sizeof(full), "%s%s", cgcount_cgroup_root(s), r[i].path);
		if (stat(full, &st))
			cgcount_remove_id(s, r[i].cgroup_id);
	}
}

/* The /metrics body; NULL (and a message) on failure. */
static char *render_metrics(struct cgcount *s, const struct options *o, size_t *len)
{
	struct text t = { 0 };
	struct cgcount_reading *r;
	size_t nr;
	int e;

	if (cgcount_add_regex(s, o->regex) < 0 || cgcount_read_all(s, &r, &nr))
		return NULL;	/* libcgcount printed why */
	text_add(&t, "# HELP perf_cgroup_exporter_info the counting backend in use\n"
		 "# TYPE perf_cgroup_exporter_info gauge\n"
		 "perf_cgroup_exporter_info{backend=\"%s\"} 1\n",
		 cgcount_backend_name(cgcount_backend(s)));
	for (e = 0; e < cgcount_nr_events(s); e++)
		add_event(&t, s, e, r, nr);
	drop_removed(s, r, nr);
	cgcount_readings_free(r, nr);
	if (t.failed) {
		free(t.buf);
		return NULL;
	}
	*len = t.len;
	return t.buf;
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static void respond(int fd, const char *status, const char *type, const char *body,
		    size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type, len);

	if (!write_all(fd, head, n))
		write_all(fd, body, len);
}

/* Read the request head (up to the blank line); 0 if it is GET /metrics. */
static int read_request(int fd, char *method, char *path)
{
	char buf[4096];
	size_t used = 0;
	ssize_t n;

	while (used + 1 < sizeof(buf)) {
		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			return -1;
		used += n;
		buf[used] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			break;
	}
	if (sscanf(buf, "%15s %255s", method, path) != 2)
		return -1;
	return 0;
}

static void serve_one(int fd, struct cgcount *s, const struct options *o)
{
	char method[16], path[256], *body;
	size_t len;

	if (read_request(fd, method, path)) {
		respond(fd, "400 Bad Request", "text/plain", "bad request\n", 12);
		return;
	}
	if (strcmp(path, "/metrics") && strncmp(path, "/metrics?", 9)) {
		respond(fd, "404 Not Found", "text/plain", "try /metrics\n", 13);
		return;
	}
	if (strcmp(method, "GET")) {
		respond(fd, "405 Method Not Allowed", "text/plain", "GET only\n", 9);
		return;
	}
	body = render_metrics(s, o, &len);
	if (!body) {
		respond(fd, "500 Internal Server Error", "text/plain", "read failed\n", 12);
		return;
	}
	respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
	free(body);
}

static int listen_on(const struct options *o)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	int one = 1, fd;

	if (inet_pton(AF_INET, o->address, &sa.sin_addr) != 1) {
		fprintf(stderr, "cgroup-exporter: bad IPv4 address '%s'\n", o->address);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		fprintf(stderr, "cgroup-exporter: %s:%d: %s\n", o->address, o->port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int serve(struct cgcount *s, const struct options *o)
{
	int lfd = listen_on(o), fd;

	if (lfd < 0)
		return 1;
	fprintf(stderr, "cgroup-exporter: %s backend, http://%s:%d/metrics\n",
		cgcount_backend_name(cgcount_backend(s)), o->address, o->port);
	while (!stop) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("cgroup-exporter: accept");
			break;
		}
		serve_one(fd, s, o);
		close(fd);
	}
	close(lfd);
	return stop ? 0 : 1;
}

static void handle_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	struct options o;
	struct cgcount *s;
	int ret;

	if (parse_options(argc, argv, &o)) {
		usage(argv[0]);
		return 2;
	}
	s = cgcount_open(o.events, &o.lib);
	if (!s)
		return 1;	/* libcgcount printed why */
	if (cgcount_add_regex(s, o.regex) < 0) {
		cgcount_close(s);
		return 1;
	}
	handle_signals();
	ret = serve(s, &o);
	cgcount_close(s);
	return ret;
}
