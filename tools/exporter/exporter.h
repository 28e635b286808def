/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup-exporter: perf event counts per cgroup for Prometheus (text
 * exposition format 0.0.4), served over HTTP or written to a file for
 * node_exporter's textfile collector.  `cgroup-exporter --help` and
 * cgroup-exporter(1) describe the options and the metrics.  Its parts:
 *
 *   main.c        the options, and the order of a run: count, listen, drop
 *                 privileges, serve
 *   metrics.c     the exposition text of one reading
 *   collector.c   which cgroups and families it exports
 *   kubelet.c     a pod's labels from the kubelet's cgroup names
 *   http.c        the HTTP server (libmicrohttpd) and its limits
 *   listen.c      the listening sockets of --web.listen-address
 *   textfile.c    --textfile: the file rewritten atomically every interval
 *   privileges.c  what the exporter keeps of root once its counters are open
 *   process.c     process_*: the exporter's own cpu, memory and descriptors
 *   webconfig.c   --web.config.file: TLS, basic authentication, headers
 */
#ifndef TOOLS_EXPORTER_H
#define TOOLS_EXPORTER_H

#include <pthread.h>
#include <stddef.h>

#include "cgtool.h"
#include "collector.h"

#define PROG "cgroup-exporter"
/*
 * The port: the Prometheus wiki's "Default port allocations" fill 9100-9999,
 * and OpenTelemetry's Prometheus exporter takes 9464; 10464 is in neither
 * list nor in /etc/services.  Loopback unless told: see cgroup-exporter(1).
 */
#define DEFAULT_PORT "10464"
#define MAX_LISTENERS 8			/* --web.listen-address flags */

struct options {
	struct cgtool tool;
	const char *listen[MAX_LISTENERS];	/* [host]:port */
	int nr_listen;
	int listen_default;		/* no --web.listen-address: loopback */
	const char *path;		/* the metrics path */
	const char *textfile;		/* textfile mode: write here every interval */
	double textfile_interval;
	long textfile_writes;		/* stop after this many; 0: run until stopped */
	struct collector collector;	/* what is exported (collector.h) */
	const char *web_config;		/* --web.config.file */
};

/* metrics.c: the exposition text of every counted cgroup; NULL (and a
 * message) on failure.  Also keeps the session in step with the tree. */
char *render_metrics(struct cgcount *s, const struct options *o, size_t *len);
double now_seconds(void);

/* listen.c */
/* "[::1]:9464", "127.0.0.1:9464", ":9464" -> host, port; -1 if malformed */
int split_address(const char *address, char *host, size_t host_len, const char **port);
/* A listening socket on @address, or -1 after a message; @optional: -2
 * without a message when the address does not exist here (no IPv6) */
int listen_on(const char *address, int optional);

/* http.c */
struct server;
/* The listeners and the server's state; NULL after a message */
struct server *server_open(struct cgcount *s, const struct options *o);
/* Serve until SIGINT or SIGTERM: 0, or 1 after a message */
int server_run(struct server *srv);
void server_close(struct server *srv);

/* textfile.c: write the metrics every interval; the exit status */
int write_textfiles(struct cgcount *s, const struct options *o);

/* process.c: client_golang's process_* metrics of the exporter itself, as
 * exposition text in @buf (2 KB hold them); 0, or -1 if they did not fit */
int process_metrics(char *buf, size_t len);

/* privileges.c: keep only what @s needs from now on (cgroup-exporter(1),
 * PRIVILEGES); 0, or -1 after a message */
int drop_privileges(struct cgcount *s);

/* webconfig.c: --web.config.file, exporter-toolkit's web configuration */
#define WEB_MAX_HEADERS 5		/* the headers a file may add */
#define BCRYPT_HASH_LEN 60		/* "$2b$10$" and 53 characters */
#define AUTH_CACHE_SIZE 16		/* verified users and passwords kept */
#define AUTH_CACHE_KEY_LEN 32		/* SHA-256 */

enum client_auth {			/* its client_auth_type */
	CLIENT_CERT_NONE,
	CLIENT_CERT_REQUEST,
	CLIENT_CERT_REQUIRE_ANY,
	CLIENT_CERT_VERIFY_IF_GIVEN,
	CLIENT_CERT_REQUIRE_AND_VERIFY,
};

struct web_user {
	char *name;
	char *hash;			/* bcrypt */
};

struct webconfig {
	char *cert, *key;		/* PEM; NULL: plain HTTP */
	char *client_ca;		/* PEM; NULL: none */
	enum client_auth client_auth;
	char tls_priorities[96];	/* gnutls' priority string: the TLS versions */
	struct {
		const char *name;
		char *value;
	} headers[WEB_MAX_HEADERS];	/* added to every answer */
	int nr_headers;
	struct web_user *users;		/* basic authentication: none, no users */
	size_t nr_users;
	/* webconfig_authorized()'s state */
	pthread_mutex_t auth_lock;
	struct crypt_data *crypt_data;
	unsigned char cache_secret[32];
	unsigned char cache[AUTH_CACHE_SIZE][AUTH_CACHE_KEY_LEN];
	int nr_cached, next_cached;
};

/* The file's configuration, its files read; NULL after a message */
struct webconfig *webconfig_load(const char *file);
void webconfig_free(struct webconfig *wc);
/* 1 if @user's bcrypt hash takes @password, 0 otherwise */
int webconfig_authorized(struct webconfig *wc, const char *user, const char *password);
/* Ask a new TLS connection (its gnutls_session_t) for the client
 * certificate client_auth_type says; -1 without a session */
int webconfig_start_tls_session(const struct webconfig *wc, void *tls_session);

#endif /* TOOLS_EXPORTER_H */
