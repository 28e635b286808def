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
 * ratio gauge (running / enabled time) lets a query scale them.
 *
 * libmicrohttpd serves HTTP: one thread polls every connection, so slow or
 * idle clients delay no scrape.  Each request has a deadline as a whole:
 * REQUEST_DEADLINE_SECONDS from the connection's opening or its previous
 * answer to the end of the request, and again to send the answer once the
 * counts are read (libmicrohttpd's own time-out, unused, restarts with
 * every byte, and would run while the counts are read).  One address holds at most MAX_CONNECTIONS_PER_ADDRESS connections, all
 * addresses MAX_CONNECTIONS.  The main thread accepts on every listener and
 * hands the connections over: libmicrohttpd's accept() busy-waits when it
 * runs out of descriptors with no connection open (the counters hold most
 * of them), accept_loop() rests instead.  Uses libcgcount
 * (lib/cgcount/cgcount.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cgtool.h"

#define PROG "cgroup-exporter"
#define DEFAULT_EVENTS "cpu-clock,context-switches"
#define DEFAULT_LISTEN ":9464"
#define MAX_LISTENERS 8			/* --web.listen-address flags */
#define MAX_CONNECTIONS 256		/* open at once, all clients */
#define MAX_CONNECTIONS_PER_ADDRESS 16	/* open at once, one client address */
#define REQUEST_DEADLINE_SECONDS 10	/* a request in and its answer out */
#define DEADLINE_CHECK_MS 250		/* how late a deadline may be enforced */
#define ACCEPT_PAUSE_MS 100		/* out of descriptors: try accept() again after */

enum {
	OPT_LISTEN = CGTOOL_OPT_FIRST_PRIVATE,
	OPT_PATH,
	OPT_TEXTFILE,
	OPT_TEXTFILE_INTERVAL,
};

struct options {
	struct cgtool tool;
	const char *listen[MAX_LISTENERS];	/* [host]:port */
	int nr_listen;
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

/* The deadline of an open connection's current request. */
struct deadline {
	int fd;
	int cut;			/* shut down */
	double at;			/* now_seconds() */
	struct deadline *prev, *next;
};

struct server {
	struct cgcount *s;
	const struct options *o;
	struct MHD_Daemon *daemon;
	int listeners[MAX_LISTENERS];
	int nr_listeners;
	char landing_page[1400];
	pthread_mutex_t scrape_lock;	/* one scrape at a time */
	pthread_mutex_t lock;		/* the fields below */
	struct deadline *first, *last;
	int accept_paused;		/* out of descriptors */
	int closed_fd;			/* an eventfd: a connection closed while paused */
};

static const char *usage_text =
	"usage: " PROG " [OPTION]...\n"
	"Count perf events per cgroup and serve them to Prometheus.\n"
	"\n"
	"      --web.listen-address=[HOST]:PORT\n"
	"                       where to listen (default :9464: every address,\n"
	"                       IPv6 and IPv4; [::1]:9464 or 127.0.0.1:9464: loopback);\n"
	"                       repeat it to listen on several (up to 8)\n"
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

	*o = (struct options){ .path = "/metrics", .textfile_interval = 1 };
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
			if (o->nr_listen == MAX_LISTENERS)
				return cli_usage_error(PROG, "--web.listen-address: at most %d",
						       MAX_LISTENERS);
			o->listen[o->nr_listen++] = optarg;
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
	if (!o->nr_listen)
		o->listen[o->nr_listen++] = DEFAULT_LISTEN;
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

/* Queue @body (freed by libmicrohttpd when @mode is MHD_RESPMEM_MUST_FREE). */
static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int status,
			       const char *type, char *body, size_t len,
			       enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned int status,
				    const char *body)
{
	return respond(conn, status, "text/plain; charset=utf-8", (char *)body, strlen(body),
		       MHD_RESPMEM_PERSISTENT);
}

/* Move the deadline of @d's connection to @at (now_seconds(), or INFINITY:
 * none). */
static void set_deadline(struct server *srv, struct deadline *d, double at)
{
	pthread_mutex_lock(&srv->lock);
	d->at = at;
	pthread_mutex_unlock(&srv->lock);
}

static struct deadline *connection_deadline(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* The time the counts take to read (a large tree, a slow machine) is ours,
 * not the client's: the deadline stops meanwhile and restarts for sending. */
static enum MHD_Result serve_metrics(struct MHD_Connection *conn, struct server *srv)
{
	struct deadline *d = connection_deadline(conn);
	char *body;
	size_t len;

	if (d)
		set_deadline(srv, d, INFINITY);
	pthread_mutex_lock(&srv->scrape_lock);
	body = render_metrics(srv->s, &srv->o->tool, &len);
	pthread_mutex_unlock(&srv->scrape_lock);
	if (d)
		set_deadline(srv, d, now_seconds() + REQUEST_DEADLINE_SECONDS);
	if (!body)
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "reading the counts failed\n");
	return respond(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len,
		       MHD_RESPMEM_MUST_FREE);
}

/* libmicrohttpd's request handler: GET and HEAD (its headers without the
 * body) of the metrics and of / (a link to them), 404 elsewhere, 405 for
 * other methods.  Called once the request head is in: no body is read. */
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **request_context)
{
	struct server *srv = cls;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)request_context;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (!strcmp(url, srv->o->path))
		return serve_metrics(conn, srv);
	if (!strcmp(url, "/"))
		return respond(conn, MHD_HTTP_OK, "text/html; charset=utf-8", srv->landing_page,
			       strlen(srv->landing_page), MHD_RESPMEM_PERSISTENT);
	return respond_text(conn, MHD_HTTP_NOT_FOUND,
			    "not found: the metrics are at the telemetry path\n");
}

/* libmicrohttpd opened or closed a connection: track its deadline.  CLOSED
 * comes before libmicrohttpd closes the socket, so cut_late_connections()
 * never shuts down a socket number that was reused. */
static void connection_event(void *cls, struct MHD_Connection *conn, void **socket_context,
			     enum MHD_ConnectionNotificationCode event)
{
	const union MHD_ConnectionInfo *info;
	struct server *srv = cls;
	struct deadline *d;

	if (event == MHD_CONNECTION_NOTIFY_CLOSED) {
		d = *socket_context;
		if (!d)
			return;
		pthread_mutex_lock(&srv->lock);
		*(d->next ? &d->next->prev : &srv->last) = d->prev;
		*(d->prev ? &d->prev->next : &srv->first) = d->next;
		if (srv->accept_paused && eventfd_write(srv->closed_fd, 1) == 0)
			srv->accept_paused = 0;
		pthread_mutex_unlock(&srv->lock);
		free(d);
		return;
	}
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	d = calloc(1, sizeof(*d));
	if (!d) {
		shutdown(info->connect_fd, SHUT_RDWR);
		return;
	}
	d->fd = info->connect_fd;
	d->at = now_seconds() + REQUEST_DEADLINE_SECONDS;
	pthread_mutex_lock(&srv->lock);
	d->prev = srv->last;
	*(srv->last ? &srv->last->next : &srv->first) = d;
	srv->last = d;
	pthread_mutex_unlock(&srv->lock);
	*socket_context = d;
}

/* A request was answered: the connection's next one has a new deadline. */
static void request_done(void *cls, struct MHD_Connection *conn, void **request_context,
			 enum MHD_RequestTerminationCode code)
{
	struct deadline *d = connection_deadline(conn);

	(void)request_context;
	(void)code;
	if (d)
		set_deadline(cls, d, now_seconds() + REQUEST_DEADLINE_SECONDS);
}

/* Shut down the connections past their deadline: libmicrohttpd sees the end
 * of the stream and closes them. */
static void cut_late_connections(struct server *srv)
{
	double now = now_seconds();
	struct deadline *d;

	pthread_mutex_lock(&srv->lock);
	for (d = srv->first; d; d = d->next) {
		if (!d->cut && now > d->at) {
			shutdown(d->fd, SHUT_RDWR);
			d->cut = 1;
		}
	}
	pthread_mutex_unlock(&srv->lock);
}

static int bind_listener(const struct addrinfo *ai)
{
	int one = 1, zero = 0, fd;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "[::]:port" takes IPv4 clients too */
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * Listen on one --web.listen-address.  An empty host means every address:
 * one IPv6 socket that takes IPv4 too, or IPv4 alone on a kernel without IPv6.
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

/* Accept one connection on @lfd and hand it to libmicrohttpd (which closes
 * it when a limit refuses it).  -errno when out of file descriptors or
 * memory, 0 otherwise, 1 on an unexpected error (said). */
static int accept_one(struct server *srv, int lfd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd >= 0) {
		MHD_add_connection(srv->daemon, fd, (struct sockaddr *)&peer, len);
		return 0;
	}
	if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
		return -errno;
	if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
		return 0;
	perror(PROG ": accept");
	return 1;
}

static void set_accept_paused(struct server *srv, int paused)
{
	eventfd_t ignored;

	pthread_mutex_lock(&srv->lock);
	srv->accept_paused = paused;
	pthread_mutex_unlock(&srv->lock);
	if (!paused)
		eventfd_read(srv->closed_fd, &ignored);
}

/*
 * Accept on every listener until SIGINT/SIGTERM (blocked except inside
 * ppoll()), and cut the connections past their deadline.  Out of file
 * descriptors, accept() would fail at once as long as a client waits: the
 * listeners then rest until a connection closes, or ACCEPT_PAUSE_MS (the
 * descriptors may be the counters'), instead of spinning.
 */
static int accept_loop(struct server *srv, const sigset_t *unblocked)
{
	struct pollfd pfds[MAX_LISTENERS + 1];
	const struct timespec tick = { .tv_nsec = DEADLINE_CHECK_MS * 1000000L },
			      pause = { .tv_nsec = ACCEPT_PAUSE_MS * 1000000L };
	int i, r, paused = 0;

	while (!cgtool_stop) {
		for (i = 0; i < srv->nr_listeners; i++)
			pfds[i] = (struct pollfd){ .fd = paused ? -1 : srv->listeners[i],
						   .events = POLLIN };
		pfds[i] = (struct pollfd){ .fd = paused ? srv->closed_fd : -1, .events = POLLIN };
		r = ppoll(pfds, srv->nr_listeners + 1, paused ? &pause : &tick, unblocked);
		if (r < 0 && errno != EINTR) {
			perror(PROG ": poll");
			return 1;
		}
		cut_late_connections(srv);
		if (paused)
			set_accept_paused(srv, 0);
		paused = 0;
		for (i = 0; r > 0 && i < srv->nr_listeners; i++) {
			if (!(pfds[i].revents & POLLIN))
				continue;
			r = accept_one(srv, pfds[i].fd);
			if (r > 0)
				return 1;
			paused |= r < 0;
			r = 1;
		}
		if (paused)
			set_accept_paused(srv, 1);
	}
	return 0;
}

/* libmicrohttpd serves the connections accept_loop() hands it: one thread
 * polling them all (epoll: the counters' descriptors may be many). */
static struct MHD_Daemon *start_daemon(struct server *srv)
{
	return MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_NO_LISTEN_SOCKET |
				MHD_USE_ITC, 0, NULL, NULL, handle_request, srv,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)MAX_CONNECTIONS_PER_ADDRESS,
				MHD_OPTION_NOTIFY_CONNECTION, connection_event, srv,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, srv,
				MHD_OPTION_END);
}

static int open_listeners(struct server *srv)
{
	int i, fd;

	for (i = 0; i < srv->o->nr_listen; i++) {
		fd = listen_on(srv->o->listen[i]);
		if (fd < 0)
			return -1;
		srv->listeners[srv->nr_listeners++] = fd;
	}
	return 0;
}

static void say_listening(const struct server *srv)
{
	int i;

	fprintf(stderr, PROG ": %s backend, listening on ",
		cgcount_backend_name(cgcount_backend(srv->s)));
	for (i = 0; i < srv->o->nr_listen; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", srv->o->listen[i]);
	fprintf(stderr, ", metrics at %s\n", srv->o->path);
}

static int serve(struct cgcount *s, const struct options *o)
{
	struct server srv = { .s = s, .o = o };
	sigset_t stop_signals, unblocked;
	int ret = 1, i;

	pthread_mutex_init(&srv.lock, NULL);
	pthread_mutex_init(&srv.scrape_lock, NULL);
	snprintf(srv.landing_page, sizeof(srv.landing_page),
		 "<html><head><title>cgroup-exporter</title></head><body><h1>cgroup-exporter"
		 "</h1><p><a href=\"%s\">Metrics</a></p></body></html>\n", o->path);
	/* libmicrohttpd's thread inherits the mask: the signals reach ppoll() */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, &unblocked);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);

	srv.closed_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv.closed_fd < 0)
		perror(PROG ": eventfd");
	else if (!open_listeners(&srv)) {
		srv.daemon = start_daemon(&srv);
		if (!srv.daemon)
			fprintf(stderr, PROG ": cannot start the HTTP server (libmicrohttpd)\n");
	}
	if (srv.daemon) {
		say_listening(&srv);
		ret = accept_loop(&srv, &unblocked);
		MHD_stop_daemon(srv.daemon);
	}
	for (i = 0; i < srv.nr_listeners; i++)
		close(srv.listeners[i]);
	if (srv.closed_fd >= 0)
		close(srv.closed_fd);
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
