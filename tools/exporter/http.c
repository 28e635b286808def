// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-exporter's HTTP server.  libmicrohttpd serves HTTP: one thread
 * polls every connection, so slow or idle clients delay no scrape.  Each
 * request has a deadline as a whole: REQUEST_DEADLINE_SECONDS from the
 * connection's opening or its previous answer to the end of the request,
 * and again to send the answer once the counts are read (libmicrohttpd's
 * own time-out, unused, restarts with every byte, and would run while the
 * counts are read).  One address holds at most MAX_CONNECTIONS_PER_ADDRESS
 * connections, all addresses MAX_CONNECTIONS.  The main thread accepts on
 * every listener and hands the connections over: libmicrohttpd's accept()
 * busy-waits when it runs out of descriptors with no connection open (the
 * counters hold most of them), accept_loop() rests instead.
 *
 * --web.config.file (webconfig.c) adds TLS (libmicrohttpd's own, gnutls),
 * basic authentication, checked before anything else of a request, and
 * headers to every answer.  The metrics go gzip-encoded to a client that
 * takes gzip, as Prometheus does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "exporter.h"

#define MAX_CONNECTIONS 256		/* open at once, all clients */
#define MAX_CONNECTIONS_PER_ADDRESS 16	/* open at once, one client address */
#define REQUEST_DEADLINE_SECONDS 10	/* a request in and its answer out */
#define DEADLINE_CHECK_MS 250		/* how late a deadline may be enforced */
#define ACCEPT_PAUSE_MS 100		/* out of descriptors: try accept() again after */

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
	struct webconfig *web;		/* NULL: no --web.config.file */
	struct MHD_Daemon *daemon;
	int listeners[MAX_LISTENERS];
	const char *listening[MAX_LISTENERS];	/* their addresses */
	int nr_listeners;
	char landing_page[1400];
	sigset_t unblocked;		/* the signal mask with SIGINT, SIGTERM */
	pthread_mutex_t scrape_lock;	/* one scrape at a time */
	pthread_mutex_t lock;		/* the fields below */
	struct deadline *first, *last;
	int accept_paused;		/* out of descriptors */
	int closed_fd;			/* an eventfd: a connection closed while paused */
};

/* Queue @body (freed by libmicrohttpd when @mode is MHD_RESPMEM_MUST_FREE),
 * gzip-encoded when @encoding says so. */
static enum MHD_Result respond_encoded(struct server *srv, struct MHD_Connection *conn,
				       unsigned int status, const char *type, char *body,
				       size_t len, enum MHD_ResponseMemoryMode mode,
				       const char *encoding)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;
	int i;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic");
	if (encoding) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
		if (*encoding)
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
	}
	for (i = 0; srv->web && i < srv->web->nr_headers; i++)
		MHD_add_response_header(r, srv->web->headers[i].name, srv->web->headers[i].value);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond(struct server *srv, struct MHD_Connection *conn,
			       unsigned int status, const char *type, char *body, size_t len,
			       enum MHD_ResponseMemoryMode mode)
{
	return respond_encoded(srv, conn, status, type, body, len, mode, NULL);
}

static enum MHD_Result respond_text(struct server *srv, struct MHD_Connection *conn,
				    unsigned int status, const char *body)
{
	return respond(srv, conn, status, "text/plain; charset=utf-8", (char *)body,
		       strlen(body), MHD_RESPMEM_PERSISTENT);
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

/* The q of one Accept-Encoding element's parameters (";q=0.5"): 1 without */
static double quality(const char *params, size_t len)
{
	const char *q;

	for (q = params; q && q < params + len; q = memchr(q, ';', params + len - q)) {
		q += strspn(q, "; \t");
		if ((q[0] == 'q' || q[0] == 'Q') && q[1] == '=')
			return strtod(q + 2, NULL);
	}
	return 1;
}

/* Does the client take gzip: gzip (or x-gzip) or *, with a q above 0
 * (RFC 9110, 12.5.3), gzip's own element before *'s? */
static int accepts_gzip(struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT_ENCODING);
	double gzip = -1, any = -1;
	const char *e, *end;
	size_t name, len;

	for (e = accept; e && *e; e = *end ? end + 1 : end) {
		e += strspn(e, " \t");
		end = e + strcspn(e, ",");
		len = end - e;
		name = strcspn(e, "; \t");
		name = name < len ? name : len;
		if ((name == 4 && !strncasecmp(e, "gzip", 4)) ||
		    (name == 6 && !strncasecmp(e, "x-gzip", 6)))
			gzip = quality(e + name, len - name);
		else if (name == 1 && *e == '*')
			any = quality(e + name, len - name);
	}
	return gzip >= 0 ? gzip > 0 : any > 0;
}

/* @body gzip-encoded (zlib's gzip wrapper), in a new buffer; NULL if memory
 * ran out */
static char *gzip_encode(const char *body, size_t len, size_t *gzip_len)
{
	z_stream z = { .next_in = (unsigned char *)body, .avail_in = len };
	char *out = NULL;
	size_t bound;

	/* 15 + 16: a 32 KiB window, and a gzip header and trailer */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	bound = deflateBound(&z, len);
	out = malloc(bound);
	z.next_out = (unsigned char *)out;
	z.avail_out = bound;
	if (out && deflate(&z, Z_FINISH) == Z_STREAM_END) {
		*gzip_len = z.total_out;
	} else {
		free(out);
		out = NULL;
	}
	deflateEnd(&z);
	return out;
}

/* The time the counts take to read (a large tree, a slow machine) is ours,
 * not the client's: the deadline stops meanwhile and restarts for sending. */
static enum MHD_Result serve_metrics(struct MHD_Connection *conn, struct server *srv)
{
	struct deadline *d = connection_deadline(conn);
	char *body, *gzipped = NULL;
	size_t len, gzip_len;

	if (d)
		set_deadline(srv, d, INFINITY);
	pthread_mutex_lock(&srv->scrape_lock);
	body = render_metrics(srv->s, srv->o, &len);
	pthread_mutex_unlock(&srv->scrape_lock);
	if (d)
		set_deadline(srv, d, now_seconds() + REQUEST_DEADLINE_SECONDS);
	if (!body)
		return respond_text(srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "reading the counts failed\n");
	if (accepts_gzip(conn))
		gzipped = gzip_encode(body, len, &gzip_len);
	if (gzipped) {
		free(body);
		body = gzipped;
		len = gzip_len;
	}
	return respond_encoded(srv, conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			       body, len, MHD_RESPMEM_MUST_FREE, gzipped ? "gzip" : "");
}

/* Basic authentication when the web configuration has users: a missing or
 * wrong user or password is refused */
static int authorized(struct server *srv, struct MHD_Connection *conn)
{
	char *user, *password = NULL;
	int ok;

	if (!srv->web || !srv->web->nr_users)
		return 1;
	user = MHD_basic_auth_get_username_password(conn, &password);
	ok = user && password && webconfig_authorized(srv->web, user, password);
	if (password)
		explicit_bzero(password, strlen(password));
	MHD_free(user);
	MHD_free(password);
	return ok;
}

/* libmicrohttpd's request handler: 401 without the user and password of
 * the web configuration (when it has users); GET and HEAD (its headers
 * without the body) of the metrics and of / (a link to them), 404
 * elsewhere, 405 for other methods.  libmicrohttpd calls it once the
 * request head is in, then for each piece of a body, then at the request's
 * end.  A GET or HEAD is answered at its end, the connection then kept for
 * the next request (answered earlier, libmicrohttpd would close it: a new
 * TLS handshake for every scrape); any other method at once, its body
 * never read, and the connection closed. */
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **request_context)
{
	static int head_seen;		/* a request's context: wait for its end */
	int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	struct server *srv = cls;

	(void)version;
	(void)upload_data;
	if (get && !*request_context) {
		*request_context = &head_seen;
		return MHD_YES;
	}
	if (get && *upload_data_size) {
		*upload_data_size = 0;	/* a body sent with a GET: ignored */
		return MHD_YES;
	}
	if (!authorized(srv, conn))
		return respond_text(srv, conn, MHD_HTTP_UNAUTHORIZED, "Unauthorized\n");
	if (!get)
		return respond_text(srv, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (!strcmp(url, srv->o->path))
		return serve_metrics(conn, srv);
	if (!strcmp(url, "/"))
		return respond(srv, conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			       srv->landing_page, strlen(srv->landing_page),
			       MHD_RESPMEM_PERSISTENT);
	return respond_text(srv, conn, MHD_HTTP_NOT_FOUND,
			    "not found: the metrics are at the telemetry path\n");
}

/* A TLS connection's session asks for the client certificate the web
 * configuration says, and verifies it, before its handshake: -1 (the
 * connection is refused) if it cannot */
static int start_tls_session(struct server *srv, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info;

	if (!srv->web || !srv->web->cert)
		return 0;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	return webconfig_start_tls_session(srv->web, info ? info->tls_session : NULL);
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
	if (!d || start_tls_session(srv, conn)) {
		free(d);
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
 * polling them all (epoll: the counters' descriptors may be many); TLS
 * with the web configuration's certificate. */
static struct MHD_Daemon *start_daemon(struct server *srv)
{
	const struct webconfig *web = srv->web;
	int tls = web && web->cert;
	struct MHD_OptionItem tls_options[] = {
		{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, tls ? web->cert : NULL },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? web->key : NULL },
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, tls ? (void *)web->tls_priorities : NULL },
		{ tls && web->client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
		  tls ? web->client_ca : NULL },
		{ MHD_OPTION_END, 0, NULL },
	};

	return MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_NO_LISTEN_SOCKET |
				MHD_USE_ITC | (tls ? MHD_USE_TLS : 0), 0, NULL, NULL,
				handle_request, srv,
				MHD_OPTION_ARRAY, tls_options,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)MAX_CONNECTIONS_PER_ADDRESS,
				MHD_OPTION_NOTIFY_CONNECTION, connection_event, srv,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, srv,
				MHD_OPTION_END);
}

/* The listeners of --web.listen-address; the default's [::1] may be
 * missing (a kernel without IPv6) */
static int open_listeners(struct server *srv)
{
	const struct options *o = srv->o;
	int i, fd;

	for (i = 0; i < o->nr_listen; i++) {
		fd = listen_on(o->listen[i], o->listen_default);
		if (fd == -2)
			continue;
		if (fd < 0)
			return -1;
		srv->listening[srv->nr_listeners] = o->listen[i];
		srv->listeners[srv->nr_listeners++] = fd;
	}
	if (srv->nr_listeners)
		return 0;
	fprintf(stderr, PROG ": no loopback address to listen on\n");
	return -1;
}

static const char *const client_cert_policy[] = {
	[CLIENT_CERT_NONE] = "none",
	[CLIENT_CERT_REQUEST] = "asked for",
	[CLIENT_CERT_REQUIRE_ANY] = "required",
	[CLIENT_CERT_VERIFY_IF_GIVEN] = "verified if given",
	[CLIENT_CERT_REQUIRE_AND_VERIFY] = "required and verified",
};

static void say_listening(const struct server *srv)
{
	int i;

	fprintf(stderr, PROG ": %s backend, listening on ",
		cgcount_backend_name(cgcount_backend(srv->s)));
	for (i = 0; i < srv->nr_listeners; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", srv->listening[i]);
	fprintf(stderr, ", metrics at %s", srv->o->path);
	if (srv->web && srv->web->cert)
		fprintf(stderr, ", TLS (client certificates: %s)",
			client_cert_policy[srv->web->client_auth]);
	if (srv->web && srv->web->nr_users)
		fprintf(stderr, ", basic authentication (%zu user%s)", srv->web->nr_users,
			srv->web->nr_users == 1 ? "" : "s");
	fputc('\n', stderr);
}

struct server *server_open(struct cgcount *s, const struct options *o)
{
	struct server *srv = calloc(1, sizeof(*srv));
	sigset_t stop_signals;

	if (!srv) {
		perror(PROG);
		return NULL;
	}
	srv->s = s;
	srv->o = o;
	srv->closed_fd = -1;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_mutex_init(&srv->scrape_lock, NULL);
	snprintf(srv->landing_page, sizeof(srv->landing_page),
		 "<html><head><title>cgroup-exporter</title></head><body><h1>cgroup-exporter"
		 "</h1><p><a href=\"%s\">Metrics</a></p></body></html>\n", o->path);
	/* libmicrohttpd's thread inherits the mask: the signals reach ppoll() */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, &srv->unblocked);
	sigdelset(&srv->unblocked, SIGINT);
	sigdelset(&srv->unblocked, SIGTERM);
	/* the files it names are read now, before the privileges' drop */
	if (o->web_config && !(srv->web = webconfig_load(o->web_config))) {
		server_close(srv);
		return NULL;
	}
	if (srv->web && srv->web->cert && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		fprintf(stderr, PROG ": %s: TLS asked, and libmicrohttpd was built without it\n",
			o->web_config);
		server_close(srv);
		return NULL;
	}
	srv->closed_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->closed_fd < 0)
		perror(PROG ": eventfd");
	if (srv->closed_fd < 0 || open_listeners(srv)) {
		server_close(srv);
		return NULL;
	}
	return srv;
}

int server_run(struct server *srv)
{
	int ret;

	srv->daemon = start_daemon(srv);
	if (!srv->daemon) {
		fprintf(stderr, PROG ": cannot start the HTTP server (libmicrohttpd)\n");
		return 1;
	}
	say_listening(srv);
	ret = accept_loop(srv, &srv->unblocked);
	MHD_stop_daemon(srv->daemon);
	srv->daemon = NULL;
	return ret;
}

void server_close(struct server *srv)
{
	int i;

	for (i = 0; i < srv->nr_listeners; i++)
		close(srv->listeners[i]);
	if (srv->closed_fd >= 0)
		close(srv->closed_fd);
	webconfig_free(srv->web);
	pthread_mutex_destroy(&srv->scrape_lock);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}
