// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-exporter: perf event counts per cgroup for Prometheus (text
 * exposition format 0.0.4), served over HTTP or written once to a file for
 * node_exporter's textfile collector.  `cgroup-exporter --help` and
 * cgroup-exporter(1) describe the options and the metrics:
 *
 *   perf_cgroup_events_total{cgroup="/a/b",event="context-switches"}
 *   perf_cgroup_event_seconds_total{cgroup="/a/b",event="cpu-clock"}
 *   perf_cgroup_events_scaling_ratio{cgroup="/a/b",event="..."}
 *
 * Counts are raw (not scaled for multiplexing: a scaled estimate can fall
 * between two scrapes, which rate() would take for a counter reset); the
 * ratio gauge (running / enabled time) lets a query scale them.  Each
 * connection has its own thread with a read and write time-out, so an idle
 * client delays no scrape.  Uses libcgcount (lib/cgcount/cgcount.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cgtool.h"

#define PROG "cgroup-exporter"
#define DEFAULT_EVENTS "cpu-clock,context-switches"
#define MAX_CONNECTIONS 64
#define IO_TIMEOUT_SECONDS 10
#define MAX_LISTENERS 8

enum {
	OPT_LISTEN = CGTOOL_OPT_FIRST_PRIVATE,
	OPT_PATH,
	OPT_TEXTFILE,
	OPT_TEXTFILE_INTERVAL,
};

struct options {
	struct cgtool tool;
	const char *listen;		/* [host]:port */
	const char *path;		/* the metrics path */
	const char *textfile;		/* one-shot mode: write here and exit */
	double textfile_interval;
};

/* A growing text buffer for one response body. */
struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

/* What every connection thread needs. */
struct server {
	struct cgcount *s;
	const struct options *o;
	pthread_mutex_t lock;		/* the fields below, and one scrape at a time */
	pthread_mutex_t scrape_lock;
	pthread_cond_t idle;		/* nr_conns fell to 0 */
	int nr_conns;
	int conns[MAX_CONNECTIONS];	/* open connection fds, -1 when free */
};

struct conn_arg {
	struct server *srv;
	int slot;
};

static const char *usage_text =
	"usage: " PROG " [OPTION]...\n"
	"Count perf events per cgroup and serve them to Prometheus.\n"
	"\n"
	"      --web.listen-address=[HOST]:PORT\n"
	"                       where to listen (default :9464: every address,\n"
	"                       IPv6 and IPv4; [::1]:9464 or 127.0.0.1:9464: loopback)\n"
	"      --web.telemetry-path=PATH\n"
	"                       the path of the metrics (default /metrics)\n"
	"      --textfile=FILE  count for --textfile.interval seconds, write the\n"
	"                       metrics to FILE (atomically; - for stdout) and exit:\n"
	"                       for node_exporter's textfile collector\n"
	"      --textfile.interval=SECONDS\n"
	"                       how long --textfile counts (default 1)\n"
	CGTOOL_USAGE_OPTIONS(DEFAULT_EVENTS)
	"\n"
	"Metrics: perf_cgroup_events_total{cgroup,event} (raw counts),\n"
	"perf_cgroup_event_seconds_total{cgroup,event} (cpu-clock, task-clock),\n"
	"perf_cgroup_events_scaling_ratio{cgroup,event} (running / enabled time),\n"
	"perf_cgroup_exporter_build_info{version,backend}, perf_cgroup_exporter_cgroups,\n"
	"perf_cgroup_exporter_scrape_duration_seconds.  See cgroup-exporter(1).\n";

/* "[::1]:9464", "127.0.0.1:9464", ":9464", "localhost:9464" -> host, port */
static int split_address(const char *address, char *host, size_t host_len,
			 const char **port)
{
	const char *colon;
	size_t len;

	if (address[0] == '[') {
		colon = strstr(address, "]:");
		if (!colon)
			return -1;
		len = colon - address - 1;
		address++;
		*port = colon + 2;
	} else {
		colon = strrchr(address, ':');
		if (!colon || memchr(address, ':', colon - address))
			return -1;	/* an IPv6 address needs brackets */
		len = colon - address;
		*port = colon + 1;
	}
	if (len >= host_len || !**port)
		return -1;
	memcpy(host, address, len);
	host[len] = '\0';
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		CGTOOL_LONG_OPTIONS,
		{ "web.listen-address", required_argument, NULL, OPT_LISTEN },
		{ "web.telemetry-path", required_argument, NULL, OPT_PATH },
		{ "textfile", required_argument, NULL, OPT_TEXTFILE },
		{ "textfile.interval", required_argument, NULL, OPT_TEXTFILE_INTERVAL },
		{ NULL, 0, NULL, 0 },
	};
	const char *port;
	char host[256];
	int c, r;

	*o = (struct options){ .listen = ":9464", .path = "/metrics", .textfile_interval = 1 };
	cgtool_init(&o->tool, PROG, DEFAULT_EVENTS);
	while ((c = getopt_long(argc, argv, "e:r:h", longopts, NULL)) != -1) {
		r = cgtool_parse_option(&o->tool, c, optarg);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r)
			continue;
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case CGTOOL_OPT_VERSION:
			exit(cli_version(PROG));
		case OPT_LISTEN:
			if (split_address(optarg, host, sizeof(host), &port))
				return cli_usage_error(PROG, "--web.listen-address: expected [HOST]:PORT, [IPV6]:PORT or :PORT, not '%s'",
						       optarg);
			o->listen = optarg;
			break;
		case OPT_PATH:
			if (optarg[0] != '/')
				return cli_usage_error(PROG, "--web.telemetry-path must start with /");
			o->path = optarg;
			break;
		case OPT_TEXTFILE:
			o->textfile = optarg;
			break;
		case OPT_TEXTFILE_INTERVAL:
			if (cgtool_parse_seconds(optarg, 0, &o->textfile_interval))
				return cli_usage_error(PROG, "--textfile.interval: not a number of seconds: '%s'",
						       optarg);
			break;
		default:
			return cli_usage_hint(PROG);
		}
	}
	if (optind < argc)
		return cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
	if (cgtool_check_options(&o->tool))
		return CLI_EXIT_USAGE;
	return 0;
}

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char *grown;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0,
			      fmt, ap);
		va_end(ap);
		if (n < 0 || t->failed) {
			t->failed = 1;
			return;
		}
		if (t->buf && t->len + n < t->cap) {
			t->len += n;
			return;
		}
		grown = realloc(t->buf, 2 * (t->len + n + 1024));
		if (!grown) {
			t->failed = 1;
			return;
		}
		t->buf = grown;
		t->cap = 2 * (t->len + n + 1024);
	}
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

/* The cgroup label is the printable path (cgtool_printable_path(): always
 * valid UTF-8, as Prometheus requires of a label value). */
static void add_labels(struct text *t, const char *cgroup, const char *event)
{
	char *printable = cgtool_printable_path(cgroup);

	if (!printable) {
		t->failed = 1;
		return;
	}
	text_add(t, "{cgroup=\"");
	add_label_value(t, printable);
	free(printable);
	text_add(t, "\",event=\"");
	add_label_value(t, event);
	text_add(t, "\"}");
}

static double scaling_ratio(const struct cgcount_value *v)
{
	return v->enabled ? (double)v->running / v->enabled : 1;
}

enum family { EVENTS_TOTAL, EVENT_SECONDS_TOTAL, SCALING_RATIO };

static const struct {
	const char *name, *type, *help;
} families[] = {
	[EVENTS_TOTAL] = { "perf_cgroup_events_total", "counter",
		"Perf events counted while tasks of the cgroup or its descendants ran "
		"(raw count, not scaled for multiplexing)." },
	[EVENT_SECONDS_TOTAL] = { "perf_cgroup_event_seconds_total", "counter",
		"Time events (cpu-clock, task-clock) counted while tasks of the cgroup "
		"or its descendants ran, in seconds (not scaled for multiplexing)." },
	[SCALING_RATIO] = { "perf_cgroup_events_scaling_ratio", "gauge",
		"Time the event was counting over the time it was enabled: 1 unless the "
		"PMU multiplexed it; divide a count's rate by it to estimate the full count." },
};

/* Is event @e part of family @f? */
static int in_family(struct cgcount *s, enum family f, int e)
{
	int is_time = cgtool_is_time_event(cgcount_event_name(s, e));

	return f == SCALING_RATIO || (f == EVENT_SECONDS_TOTAL) == is_time;
}

static void add_family(struct text *t, struct cgcount *s, enum family f,
		       const struct cgcount_reading *r, size_t nr)
{
	int e, any = 0;
	size_t i;

	for (e = 0; e < cgcount_nr_events(s); e++)
		any |= in_family(s, f, e);
	if (!any)
		return;
	text_add(t, "# HELP %s %s\n# TYPE %s %s\n", families[f].name, families[f].help,
		 families[f].name, families[f].type);
	for (i = 0; i < nr; i++) {
		for (e = 0; e < cgcount_nr_events(s); e++) {
			const struct cgcount_value *v = &r[i].values[e];

			if (!in_family(s, f, e))
				continue;
			text_add(t, "%s", families[f].name);
			add_labels(t, r[i].path, cgcount_event_name(s, e));
			if (f == EVENTS_TOTAL)
				text_add(t, " %llu\n", (unsigned long long)v->value);
			else if (f == EVENT_SECONDS_TOTAL)
				text_add(t, " %.9f\n", v->value / 1e9);
			else
				text_add(t, " %.6f\n", scaling_ratio(v));
		}
	}
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add_exporter_metrics(struct text *t, struct cgcount *s, size_t nr, double secs)
{
	text_add(t, "# HELP perf_cgroup_exporter_build_info The exporter's version and "
		 "counting backend.\n# TYPE perf_cgroup_exporter_build_info gauge\n"
		 "perf_cgroup_exporter_build_info{backend=\"%s\",version=\"%s\"} 1\n",
		 cgcount_backend_name(cgcount_backend(s)), CLI_VERSION);
	text_add(t, "# HELP perf_cgroup_exporter_cgroups Cgroups counted.\n"
		 "# TYPE perf_cgroup_exporter_cgroups gauge\n"
		 "perf_cgroup_exporter_cgroups %zu\n", nr);
	text_add(t, "# HELP perf_cgroup_exporter_scrape_duration_seconds Time this scrape "
		 "took to read and format the counts.\n"
		 "# TYPE perf_cgroup_exporter_scrape_duration_seconds gauge\n"
		 "perf_cgroup_exporter_scrape_duration_seconds %.6f\n", now_seconds() - secs);
}

/* The metrics text; NULL (and a message) on failure. */
static char *render_metrics(struct cgcount *s, const struct cgtool *tool, size_t *len)
{
	double start = now_seconds();
	struct text t = { 0 };
	struct cgcount_reading *r;
	size_t nr;

	if (cgcount_read_all(s, &r, &nr))
		return NULL;	/* libcgcount said why */
	add_family(&t, s, EVENTS_TOTAL, r, nr);
	add_family(&t, s, EVENT_SECONDS_TOTAL, r, nr);
	add_family(&t, s, SCALING_RATIO, r, nr);
	add_exporter_metrics(&t, s, nr, start);
	/* the next scrape sees the cgroups created since, not the removed ones */
	cgtool_sync_cgroups(s, tool, r, nr);
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

static void respond_text(int fd, const char *status, const char *body)
{
	respond(fd, status, "text/plain; charset=utf-8", body, strlen(body));
}

/* Read the request head (up to the blank line): its method and path. */
static int read_request(int fd, char *method, char *path)
{
	char buf[8192];
	size_t used = 0;
	ssize_t n;

	while (used + 1 < sizeof(buf)) {
		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)	/* closed, or idle past the time-out */
			return -1;
		used += n;
		buf[used] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			break;
	}
	return sscanf(buf, "%15s %1023s", method, path) == 2 ? 0 : -1;
}

static int is_path(const char *request, const char *path)
{
	size_t len = strlen(path);

	return !strncmp(request, path, len) && (request[len] == '\0' || request[len] == '?');
}

static void serve_metrics(int fd, struct server *srv)
{
	char *body;
	size_t len;

	pthread_mutex_lock(&srv->scrape_lock);
	body = render_metrics(srv->s, &srv->o->tool, &len);
	pthread_mutex_unlock(&srv->scrape_lock);
	if (!body) {
		respond_text(fd, "500 Internal Server Error", "reading the counts failed\n");
		return;
	}
	respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
	free(body);
}

static void serve_one(int fd, struct server *srv)
{
	char method[16], path[1024], page[1400];

	if (read_request(fd, method, path)) {
		respond_text(fd, "400 Bad Request", "bad request\n");
		return;
	}
	if (strcmp(method, "GET")) {
		respond_text(fd, "405 Method Not Allowed", "GET only\n");
		return;
	}
	if (is_path(path, srv->o->path)) {
		serve_metrics(fd, srv);
	} else if (is_path(path, "/")) {
		snprintf(page, sizeof(page), "<html><head><title>cgroup-exporter</title></head>"
			 "<body><h1>cgroup-exporter</h1><p><a href=\"%s\">Metrics</a></p>"
			 "</body></html>\n", srv->o->path);
		respond(fd, "200 OK", "text/html; charset=utf-8", page, strlen(page));
	} else {
		respond_text(fd, "404 Not Found", "not found: the metrics are at the telemetry path\n");
	}
}

static void *connection_thread(void *p)
{
	struct conn_arg *arg = p;
	struct server *srv = arg->srv;
	int slot = arg->slot, fd;

	free(arg);
	pthread_mutex_lock(&srv->lock);
	fd = srv->conns[slot];
	pthread_mutex_unlock(&srv->lock);
	serve_one(fd, srv);

	/* the last thing this thread touches: drain_connections() then returns */
	pthread_mutex_lock(&srv->lock);
	close(fd);
	srv->conns[slot] = -1;
	if (--srv->nr_conns == 0)
		pthread_cond_signal(&srv->idle);
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = IO_TIMEOUT_SECONDS };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Hand @fd to a thread of its own; 503 when too many are open. */
static void start_connection(struct server *srv, int fd)
{
	struct conn_arg *arg = malloc(sizeof(*arg));
	pthread_attr_t attr;
	pthread_t thread;
	int slot;

	set_timeouts(fd);
	pthread_mutex_lock(&srv->lock);
	for (slot = 0; slot < MAX_CONNECTIONS && srv->conns[slot] >= 0; slot++)
		;
	if (!arg || slot == MAX_CONNECTIONS) {
		pthread_mutex_unlock(&srv->lock);
		respond_text(fd, "503 Service Unavailable", "too many connections\n");
		close(fd);
		free(arg);
		return;
	}
	srv->conns[slot] = fd;
	srv->nr_conns++;
	pthread_mutex_unlock(&srv->lock);

	*arg = (struct conn_arg){ .srv = srv, .slot = slot };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thread, &attr, connection_thread, arg)) {
		pthread_mutex_lock(&srv->lock);
		srv->conns[slot] = -1;
		srv->nr_conns--;
		pthread_mutex_unlock(&srv->lock);
		respond_text(fd, "503 Service Unavailable", "cannot start a thread\n");
		close(fd);
		free(arg);
	}
	pthread_attr_destroy(&attr);
}

/* Stop the connections still open (idle clients) and wait for their threads. */
static void drain_connections(struct server *srv)
{
	int i;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < MAX_CONNECTIONS; i++)
		if (srv->conns[i] >= 0)
			shutdown(srv->conns[i], SHUT_RDWR);
	while (srv->nr_conns)
		pthread_cond_wait(&srv->idle, &srv->lock);
	pthread_mutex_unlock(&srv->lock);
}

static int bind_listener(const struct addrinfo *ai)
{
	int one = 1, zero = 0, fd;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "[::]:port" takes IPv4 clients too */
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * Listen on --web.listen-address.  An empty host means every address: one
 * IPv6 socket that takes IPv4 too, or IPv4 alone on a kernel without IPv6.
 */
static int listen_on(const char *address)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*res, *ai;
	char host[256];
	const char *port;
	int fd = -EADDRNOTAVAIL, err;

	if (split_address(address, host, sizeof(host), &port)) {
		fprintf(stderr, PROG ": --web.listen-address: expected [HOST]:PORT, "
			"[IPV6]:PORT or :PORT, not '%s'\n", address);
		return -1;
	}
	hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (err == EAI_ADDRFAMILY || err == EAI_FAMILY || (!err && !host[0] &&
	    (fd = bind_listener(res)) == -EAFNOSUPPORT)) {
		if (!err)
			freeaddrinfo(res);
		hints.ai_family = AF_INET;
		err = getaddrinfo(NULL, port, &hints, &res);
		fd = -EADDRNOTAVAIL;
	}
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", address, gai_strerror(err));
		return -1;
	}
	for (ai = res; fd < 0 && ai; ai = ai->ai_next)
		fd = bind_listener(ai);
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, PROG ": cannot listen on %s: %s\n", address, strerror(-fd));
		return -1;
	}
	return fd;
}

/* Accept until SIGINT/SIGTERM: they are blocked except inside ppoll(). */
static int accept_loop(struct server *srv, int lfd, const sigset_t *unblocked)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd;

	while (!cgtool_stop) {
		if (ppoll(&pfd, 1, NULL, unblocked) < 0) {
			if (errno == EINTR)
				continue;
			perror(PROG ": poll");
			return 1;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == EAGAIN)
				continue;
			perror(PROG ": accept");
			return 1;
		}
		start_connection(srv, fd);
	}
	return 0;
}

static int serve(struct cgcount *s, const struct options *o)
{
	struct server srv = { .s = s, .o = o };
	sigset_t stop_signals, unblocked;
	int lfd, ret, i;

	lfd = listen_on(o->listen);
	if (lfd < 0)
		return 1;
	for (i = 0; i < MAX_CONNECTIONS; i++)
		srv.conns[i] = -1;
	pthread_mutex_init(&srv.lock, NULL);
	pthread_mutex_init(&srv.scrape_lock, NULL);
	pthread_cond_init(&srv.idle, NULL);
	/* the connection threads inherit the mask: the signals reach ppoll() */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, &unblocked);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);

	fprintf(stderr, PROG ": %s backend, listening on %s, metrics at %s\n",
		cgcount_backend_name(cgcount_backend(s)), o->listen, o->path);
	ret = accept_loop(&srv, lfd, &unblocked);
	close(lfd);
	drain_connections(&srv);
	pthread_cond_destroy(&srv.idle);
	pthread_mutex_destroy(&srv.scrape_lock);
	pthread_mutex_destroy(&srv.lock);
	return ret;
}

static void sleep_seconds(double secs)
{
	struct timespec ts = { .tv_sec = (time_t)secs,
			       .tv_nsec = (long)((secs - (time_t)secs) * 1e9) };

	while (!cgtool_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* node_exporter reads *.prom files: write a temporary file, then rename it. */
/*
 * Write @len bytes to @path whole or not at all, and never through a link:
 * the text file's directory is often shared (node_exporter's textfile
 * directory), and we run as root. The bytes go to a new file of a random
 * name beside @path, created O_EXCL|O_NOFOLLOW (a planted file or link
 * makes us pick another name), which is then renamed over @path (rename
 * replaces a link at @path, it does not follow it). 0 or -errno.
 */
static int write_file_atomically(const char *path, const char *body, size_t len)
{
	char *dir_copy = strdup(path), *base_copy = strdup(path), tmp[NAME_MAX + 1];
	int dfd = -1, fd = -1, err = -ENOMEM, tries;
	const char *base;
	unsigned int r;

	if (!dir_copy || !base_copy)
		goto out;
	base = basename(base_copy);
	dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = dfd < 0 ? -errno : -EEXIST;
	for (tries = 0; dfd >= 0 && err == -EEXIST && tries < 16; tries++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (unsigned int)getpid() * 2654435761u + tries;
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%08x.tmp", base, r) >= sizeof(tmp)) {
			err = -ENAMETOOLONG;
			break;
		}
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		err = fd < 0 ? -errno : 0;
	}
	if (err)
		goto out;
	if (write_all(fd, body, len) || fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
out:
	if (dfd >= 0)
		close(dfd);
	free(dir_copy);
	free(base_copy);
	return err;
}

static int write_textfile(struct cgcount *s, const struct options *o)
{
	size_t len;
	char *body;
	int err;

	sleep_seconds(o->textfile_interval);
	body = render_metrics(s, &o->tool, &len);
	if (!body)
		return 1;
	if (!strcmp(o->textfile, "-")) {
		err = fwrite(body, 1, len, stdout) != len || fflush(stdout);
		free(body);
		return err ? 1 : 0;
	}
	err = write_file_atomically(o->textfile, body, len);
	if (err)
		fprintf(stderr, PROG ": cannot write %s: %s\n", o->textfile, strerror(-err));
	free(body);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct cgcount *s;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	s = cgtool_open(&o.tool);
	if (!s)
		return cgtool_open_failure_status();
	cgtool_handle_signals();
	ret = o.textfile ? write_textfile(s, &o) : serve(s, &o);
	cgcount_close(s);
	return ret;
}
