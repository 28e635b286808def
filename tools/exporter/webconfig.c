// SPDX-License-Identifier: GPL-2.0
/*
 * --web.config.file: the web configuration file of the Prometheus exporters
 * (exporter-toolkit's format, YAML): TLS, basic authentication, extra
 * response headers.  Read once at the start, before the exporter drops its
 * privileges: the certificates, keys and hashes are kept in memory.  As
 * exporter-toolkit parses it (strictly), a key it does not know is an error,
 * and so is a duplicate key; the keys it knows that this exporter does not
 * implement are refused by name (cgroup-exporter(1), WEB CONFIGURATION).
 *
 * Basic authentication checks bcrypt hashes with libxcrypt's crypt_rn().
 * bcrypt is slow by design (a cost of 10 takes about 70 ms): a user and
 * password once verified are remembered (AUTH_CACHE_SIZE pairs, as a
 * SHA-256 of a random key, the user and the password, never the password
 * itself), so that Prometheus' scrapes pay it once, and verifications run
 * one at a time: a client sending wrong passwords keeps one core busy at
 * most.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "exporter.h"

#define MAX_PEM_BYTES (1 << 20)		/* a certificate, key or CA file */

/* The file being read, for messages */
struct parse {
	const char *file;
	yaml_document_t doc;
};

/* tls_server_config as written: every field a string, NULL when absent */
struct tls_fields {
	char *cert, *key, *client_ca;
	char *cert_file, *key_file, *client_ca_file;
	char *client_auth_type, *min_version, *max_version;
};

struct field {
	const char *key;
	size_t offset;		/* of the char * in struct tls_fields */
};

#define TLS_FIELD(name) { #name, offsetof(struct tls_fields, name) }
static const struct field tls_fields[] = {
	TLS_FIELD(cert), TLS_FIELD(key), TLS_FIELD(client_ca),
	TLS_FIELD(cert_file), TLS_FIELD(key_file), TLS_FIELD(client_ca_file),
	TLS_FIELD(client_auth_type), TLS_FIELD(min_version), TLS_FIELD(max_version),
};

/* exporter-toolkit's keys this exporter does not implement, by section */
static const char *const unsupported_keys[] = {
	"rate_limit", "tls_server_config.cipher_suites",
	"tls_server_config.curve_preferences", "tls_server_config.prefer_server_cipher_suites",
	"tls_server_config.client_allowed_sans",
};

/* exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType) */
static const struct {
	const char *name;
	enum client_auth auth;
} client_auth_types[] = {
	{ "NoClientCert", CLIENT_CERT_NONE },
	{ "RequestClientCert", CLIENT_CERT_REQUEST },
	{ "RequireAnyClientCert", CLIENT_CERT_REQUIRE_ANY },
	{ "RequireClientCert", CLIENT_CERT_REQUIRE_ANY },	/* its old name */
	{ "VerifyClientCertIfGiven", CLIENT_CERT_VERIFY_IF_GIVEN },
	{ "RequireAndVerifyClientCert", CLIENT_CERT_REQUIRE_AND_VERIFY },
};

/* The headers exporter-toolkit lets a file add, and their allowed values
 * (NULL: any) */
static const struct {
	const char *name;
	const char *values[3];
} extra_headers[WEB_MAX_HEADERS] = {
	{ "Strict-Transport-Security", { NULL } },
	{ "X-Content-Type-Options", { "nosniff", NULL } },
	{ "X-Frame-Options", { "deny", "sameorigin", NULL } },
	{ "X-XSS-Protection", { NULL } },
	{ "Content-Security-Policy", { NULL } },
};

static const struct {
	const char *name;	/* min_version, max_version */
	const char *gnutls;	/* its priority string word */
} tls_versions[] = {
	{ "TLS10", "VERS-TLS1.0" }, { "TLS11", "VERS-TLS1.1" },
	{ "TLS12", "VERS-TLS1.2" }, { "TLS13", "VERS-TLS1.3" },
};

static int fail_at(const struct parse *p, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A message about @node (NULL: the file as a whole); always -1 */
static int fail_at(const struct parse *p, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;

	if (node)
		fprintf(stderr, PROG ": %s:%zu: ", p->file, node->start_mark.line + 1);
	else
		fprintf(stderr, PROG ": %s: ", p->file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static const char *scalar(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

/* A plain empty, ~ or null scalar: YAML's null */
static int is_null(const yaml_node_t *node)
{
	return node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*scalar(node) || !strcmp(scalar(node), "~") || !strcmp(scalar(node), "null"));
}

typedef int (*pair_fn)(struct parse *p, const char *section, const char *key,
		       yaml_node_t *key_node, yaml_node_t *value, void *arg);

static int is_unsupported(const char *section, const char *key)
{
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "%s%s%s", section, *section ? "." : "", key);
	for (i = 0; i < sizeof(unsupported_keys) / sizeof(*unsupported_keys); i++)
		if (!strcmp(path, unsupported_keys[i]))
			return 1;
	return 0;
}

/* Call @fn on each key of the mapping @map (a null: none) of @section,
 * whose keys must be scalars and each given once */
static int each_pair(struct parse *p, yaml_node_t *map, const char *section, pair_fn fn,
		     void *arg)
{
	yaml_node_pair_t *pair, *other;

	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return fail_at(p, map, "%s: expected a mapping of keys to values",
			       *section ? section : "the file");
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(&p->doc, pair->key);
		yaml_node_t *value = yaml_document_get_node(&p->doc, pair->value);

		if (key->type != YAML_SCALAR_NODE)
			return fail_at(p, key, "%s: a key that is not a string",
				       *section ? section : "the file");
		for (other = map->data.mapping.pairs.start; other < pair; other++)
			if (!strcmp(scalar(yaml_document_get_node(&p->doc, other->key)),
				    scalar(key)))
				return fail_at(p, key, "key '%s' given twice%s%s", scalar(key),
					       *section ? " in " : "", section);
		if (is_unsupported(section, scalar(key)))
			return fail_at(p, key, "'%s'%s%s is not supported by " PROG, scalar(key),
				       *section ? " in " : "", section);
		if (fn(p, section, scalar(key), key, value, arg))
			return -1;
	}
	return 0;
}

static int unknown_key(struct parse *p, const char *section, const char *key,
		       const yaml_node_t *node)
{
	return fail_at(p, node, "unknown key '%s'%s%s", key, *section ? " in " : "", section);
}

/* A string value: a scalar, "" for a null */
static int string_value(struct parse *p, const char *key, yaml_node_t *value, char **out)
{
	if (value->type != YAML_SCALAR_NODE)
		return fail_at(p, value, "%s: expected a string", key);
	*out = strdup(is_null(value) ? "" : scalar(value));
	if (!*out)
		return fail_at(p, value, "%s", strerror(ENOMEM));
	return 0;
}

static int tls_pair(struct parse *p, const char *section, const char *key, yaml_node_t *key_node,
		    yaml_node_t *value, void *arg)
{
	size_t i;

	for (i = 0; i < sizeof(tls_fields) / sizeof(*tls_fields); i++)
		if (!strcmp(key, tls_fields[i].key))
			return string_value(p, key, value,
					    (char **)((char *)arg + tls_fields[i].offset));
	return unknown_key(p, section, key, key_node);
}

static int header_pair(struct parse *p, const char *section, const char *key,
		       yaml_node_t *key_node, yaml_node_t *value, void *arg)
{
	struct webconfig *wc = arg;
	char *v;
	int i, j;

	for (i = 0; i < WEB_MAX_HEADERS && strcmp(key, extra_headers[i].name); i++)
		;
	if (i == WEB_MAX_HEADERS)
		return fail_at(p, key_node, "HTTP header '%s' cannot be configured "
			       "(only Strict-Transport-Security, X-Content-Type-Options, "
			       "X-Frame-Options, X-XSS-Protection, Content-Security-Policy)", key);
	(void)section;
	if (string_value(p, key, value, &v))
		return -1;
	for (j = 0; extra_headers[i].values[j] && strcmp(v, extra_headers[i].values[j]); j++)
		;
	if (*v && extra_headers[i].values[0] && !extra_headers[i].values[j]) {
		free(v);
		return fail_at(p, value, "%s: '%s' is not one of its values (%s%s%s)", key,
			       scalar(value), extra_headers[i].values[0],
			       extra_headers[i].values[1] ? ", " : "",
			       extra_headers[i].values[1] ? extra_headers[i].values[1] : "");
	}
	if (!*v || strpbrk(v, "\r\n")) {	/* blank: unset; no header may end early */
		int blank = !*v;

		free(v);
		return blank ? 0 : fail_at(p, value, "%s: a line break in a header value", key);
	}
	wc->headers[wc->nr_headers].name = extra_headers[i].name;
	wc->headers[wc->nr_headers++].value = v;
	return 0;
}

static int http_pair(struct parse *p, const char *section, const char *key,
		     yaml_node_t *key_node, yaml_node_t *value, void *arg)
{
	/* HTTP/1.1 is served either way: http2 is accepted, and says nothing */
	if (!strcmp(key, "http2")) {
		if (value->type == YAML_SCALAR_NODE &&
		    (!strcmp(scalar(value), "true") || !strcmp(scalar(value), "false")))
			return 0;
		return fail_at(p, value, "http2: expected true or false");
	}
	if (!strcmp(key, "headers"))
		return each_pair(p, value, "http_server_config.headers", header_pair, arg);
	return unknown_key(p, section, key, key_node);
}

/* bcrypt's "$2b$10$" and 53 characters of its base64; -1 if not one */
static int bcrypt_cost(const char *hash)
{
	static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost;

	if (strncmp(hash, "$2a$", 4) && strncmp(hash, "$2b$", 4) && strncmp(hash, "$2y$", 4))
		return -1;
	if (hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9' || hash[6] != '$')
		return -1;
	cost = (hash[4] - '0') * 10 + hash[5] - '0';
	if (cost < 4 || cost > 31 || strlen(hash) != BCRYPT_HASH_LEN ||
	    strspn(hash + 7, alphabet) != BCRYPT_HASH_LEN - 7)
		return -1;
	return cost;
}

static int user_pair(struct parse *p, const char *section, const char *key,
		     yaml_node_t *key_node, yaml_node_t *value, void *arg)
{
	struct webconfig *wc = arg;
	struct web_user *users, *u;

	(void)section;
	(void)key_node;
	users = realloc(wc->users, (wc->nr_users + 1) * sizeof(*users));
	if (!users)
		return fail_at(p, value, "%s", strerror(ENOMEM));
	wc->users = users;
	u = &users[wc->nr_users];
	*u = (struct web_user){ NULL, NULL };
	if (string_value(p, key, value, &u->hash))
		return -1;
	u->name = strdup(key);
	wc->nr_users++;
	if (!u->name)
		return fail_at(p, value, "%s", strerror(ENOMEM));
	if (bcrypt_cost(u->hash) < 0)
		return fail_at(p, value, "basic_auth_users: %s: not a bcrypt hash ($2a$, $2b$ or "
			       "$2y$, a cost of 04 to 31, 53 more characters)", key);
	return 0;
}

struct top {
	struct webconfig *wc;
	struct tls_fields *tls;
};

static int top_pair(struct parse *p, const char *section, const char *key, yaml_node_t *key_node,
		    yaml_node_t *value, void *arg)
{
	struct top *t = arg;

	if (!strcmp(key, "tls_server_config"))
		return each_pair(p, value, key, tls_pair, t->tls);
	if (!strcmp(key, "http_server_config"))
		return each_pair(p, value, key, http_pair, t->wc);
	if (!strcmp(key, "basic_auth_users"))
		return each_pair(p, value, key, user_pair, t->wc);
	return unknown_key(p, section, key, key_node);
}

static int parse_yaml(struct parse *p, struct webconfig *wc, struct tls_fields *tls)
{
	yaml_parser_t parser;
	struct top t = { wc, tls };
	yaml_node_t *root;
	FILE *f;
	int ret;

	f = fopen(p->file, "re");
	if (!f) {
		fprintf(stderr, PROG ": --web.config.file: %s: %s\n", p->file, strerror(errno));
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &p->doc)) {
		fprintf(stderr, PROG ": %s:%zu:%zu: not YAML: %s%s%s\n", p->file,
			parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "a parse error",
			parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	yaml_parser_delete(&parser);
	fclose(f);
	root = yaml_document_get_root_node(&p->doc);
	ret = root ? each_pair(p, root, "", top_pair, &t) : 0;	/* an empty file: nothing */
	yaml_document_delete(&p->doc);
	return ret;
}

/* The whole of @path (relative to the configuration file's directory) as a
 * string; NULL after a message */
static char *read_pem(const struct parse *p, const char *key, const char *path)
{
	char *dir_copy = strdup(p->file), *full = NULL, *data = NULL;
	struct stat st;
	ssize_t n = 0;
	int fd = -1;

	if (!dir_copy || asprintf(&full, "%s/%s", dirname(dir_copy), path) < 0)
		full = NULL;
	free(dir_copy);
	if (!full) {
		fail_at(p, NULL, "%s", strerror(ENOMEM));
		return NULL;
	}
	fd = open(path[0] == '/' ? path : full, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_PEM_BYTES ||
	    !(data = calloc(1, st.st_size + 1)) || (n = read(fd, data, st.st_size)) != st.st_size) {
		fail_at(p, NULL, "%s: %s: %s", key, path[0] == '/' ? path : full,
			fd < 0 || n < 0 ? strerror(errno) :
			!S_ISREG(st.st_mode) ? "not a file" :
			st.st_size > MAX_PEM_BYTES ? "larger than 1 MiB" :
			!data ? strerror(ENOMEM) : "read short");
		free(data);
		data = NULL;
	}
	if (fd >= 0)
		close(fd);
	free(full);
	return data;
}

/* One PEM of the configuration, inline (@text) or from a file; NULL and no
 * message when neither is given */
static int pem_field(const struct parse *p, const char *name, const char *text,
		     const char *file_key, const char *file, char **out)
{
	*out = NULL;
	if (text && *text && file && *file)
		return fail_at(p, NULL, "tls_server_config: %s and %s: give one of them", name,
			       file_key);
	if (file && *file)
		*out = read_pem(p, file_key, file);
	else if (text && *text)
		*out = strdup(text);
	else
		return 0;
	return *out ? 0 : -1;
}

static int tls_version(const struct parse *p, const char *key, const char *name, int def)
{
	int i;

	if (!name || !*name)
		return def;
	for (i = 0; i < (int)(sizeof(tls_versions) / sizeof(*tls_versions)); i++)
		if (!strcmp(name, tls_versions[i].name))
			return i;
	return fail_at(p, NULL, "tls_server_config: %s: '%s' is not TLS10, TLS11, TLS12 or TLS13",
		       key, name);
}

static int client_auth(const struct parse *p, const char *name, enum client_auth *auth)
{
	size_t i;

	*auth = CLIENT_CERT_NONE;
	if (!name || !*name)
		return 0;
	for (i = 0; i < sizeof(client_auth_types) / sizeof(*client_auth_types); i++)
		if (!strcmp(name, client_auth_types[i].name)) {
			*auth = client_auth_types[i].auth;
			return 0;
		}
	return fail_at(p, NULL, "tls_server_config: client_auth_type: '%s' is not NoClientCert, "
		       "RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or "
		       "RequireAndVerifyClientCert", name);
}

/* gnutls takes the certificate, key, client CAs and versions as given,
 * here rather than when the server starts, after the privileges' drop */
static int check_with_gnutls(const struct parse *p, const struct webconfig *wc)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = { (unsigned char *)wc->cert, strlen(wc->cert) },
		       key = { (unsigned char *)wc->key, strlen(wc->key) },
		       ca = { (unsigned char *)wc->client_ca, wc->client_ca ? strlen(wc->client_ca) : 0 };
	gnutls_priority_t prio;
	const char *where;
	int r;

	if (gnutls_certificate_allocate_credentials(&cred))
		return fail_at(p, NULL, "%s", strerror(ENOMEM));
	r = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
	if (r < 0)
		fail_at(p, NULL, "tls_server_config: the certificate and key: %s", gnutls_strerror(r));
	if (r >= 0 && wc->client_ca) {
		r = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (r <= 0)
			fail_at(p, NULL, "tls_server_config: the client CA: %s",
				r ? gnutls_strerror(r) : "no certificate in it");
		r = r <= 0 ? -1 : 0;
	}
	gnutls_certificate_free_credentials(cred);
	if (r < 0)
		return -1;
	r = gnutls_priority_init(&prio, wc->tls_priorities, &where);
	if (r < 0)
		return fail_at(p, NULL, "tls_server_config: the TLS versions (%s): %s",
			       wc->tls_priorities, gnutls_strerror(r));
	gnutls_priority_deinit(prio);
	return 0;
}

/* exporter-toolkit's rules: TLS when a certificate, key, client CA or
 * client_auth_type is given, and then both a certificate and a key; client
 * CAs only with a client_auth_type that asks for certificates */
static int setup_tls(const struct parse *p, struct webconfig *wc, const struct tls_fields *t)
{
	int min, max;

	if (pem_field(p, "cert", t->cert, "cert_file", t->cert_file, &wc->cert) ||
	    pem_field(p, "key", t->key, "key_file", t->key_file, &wc->key) ||
	    pem_field(p, "client_ca", t->client_ca, "client_ca_file", t->client_ca_file,
		      &wc->client_ca) ||
	    client_auth(p, t->client_auth_type, &wc->client_auth))
		return -1;
	if (!wc->cert && !wc->key && !wc->client_ca && !(t->client_auth_type && *t->client_auth_type))
		return 0;
	if (!wc->cert || !wc->key)
		return fail_at(p, NULL, "tls_server_config: missing %s",
			       wc->cert ? "key_file (or key)" : "cert_file (or cert)");
	if (wc->client_ca && wc->client_auth == CLIENT_CERT_NONE)
		return fail_at(p, NULL, "tls_server_config: a client CA without a client_auth_type "
			       "that asks for client certificates");
	if (!wc->client_ca && (wc->client_auth == CLIENT_CERT_VERIFY_IF_GIVEN ||
			       wc->client_auth == CLIENT_CERT_REQUIRE_AND_VERIFY))
		return fail_at(p, NULL, "tls_server_config: client_auth_type %s needs "
			       "client_ca_file (or client_ca)", t->client_auth_type);
	min = tls_version(p, "min_version", t->min_version, 2);
	max = tls_version(p, "max_version", t->max_version, 3);
	if (min < 0 || max < 0)
		return -1;
	if (min > max)
		return fail_at(p, NULL, "tls_server_config: min_version %s is above max_version %s",
			       tls_versions[min].name, tls_versions[max].name);
	snprintf(wc->tls_priorities, sizeof(wc->tls_priorities), "NORMAL:-VERS-ALL");
	for (; min <= max; min++)
		snprintf(wc->tls_priorities + strlen(wc->tls_priorities),
			 sizeof(wc->tls_priorities) - strlen(wc->tls_priorities), ":+%s",
			 tls_versions[min].gnutls);
	return check_with_gnutls(p, wc);
}

/* A string that may hold a key: zeroed before it is freed */
static void free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

static void free_tls_fields(struct tls_fields *t)
{
	size_t i;

	for (i = 0; i < sizeof(tls_fields) / sizeof(*tls_fields); i++)
		free_secret(*(char **)((char *)t + tls_fields[i].offset));
}

struct webconfig *webconfig_load(const char *file)
{
	struct parse p = { .file = file };
	struct tls_fields tls = { NULL };
	struct webconfig *wc = calloc(1, sizeof(*wc));
	int ret;

	if (!wc) {
		perror(PROG);
		return NULL;
	}
	pthread_mutex_init(&wc->auth_lock, NULL);
	ret = parse_yaml(&p, wc, &tls);
	if (!ret)
		ret = setup_tls(&p, wc, &tls);
	free_tls_fields(&tls);
	if (!ret && wc->nr_users && getrandom(wc->cache_secret, sizeof(wc->cache_secret), 0) !=
	    sizeof(wc->cache_secret))
		ret = fail_at(&p, NULL, "getrandom: %s", strerror(errno));
	if (!ret && wc->nr_users && !(wc->crypt_data = calloc(1, sizeof(*wc->crypt_data))))
		ret = fail_at(&p, NULL, "%s", strerror(ENOMEM));
	if (ret) {
		webconfig_free(wc);
		return NULL;
	}
	return wc;
}

void webconfig_free(struct webconfig *wc)
{
	size_t i;

	if (!wc)
		return;
	free_secret(wc->cert);
	free_secret(wc->key);
	free_secret(wc->client_ca);
	for (i = 0; i < (size_t)wc->nr_headers; i++)
		free(wc->headers[i].value);
	for (i = 0; i < wc->nr_users; i++) {
		free(wc->users[i].name);
		free_secret(wc->users[i].hash);
	}
	free(wc->users);
	free(wc->crypt_data);
	pthread_mutex_destroy(&wc->auth_lock);
	explicit_bzero(wc, sizeof(*wc));
	free(wc);
}

/* Equal strings of @len bytes, in a time that does not depend on where
 * they differ */
static int same_bytes(const void *a, const void *b, size_t len)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char diff = 0;
	size_t i;

	for (i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/* What the cache keeps of a verified user and password */
static int cache_key(const struct webconfig *wc, const char *user, const char *password,
		     unsigned char key[AUTH_CACHE_KEY_LEN])
{
	size_t ulen = strlen(user) + 1, plen = strlen(password);
	unsigned char *buf = malloc(sizeof(wc->cache_secret) + ulen + plen);
	int r;

	if (!buf)
		return -1;
	memcpy(buf, wc->cache_secret, sizeof(wc->cache_secret));
	memcpy(buf + sizeof(wc->cache_secret), user, ulen);
	memcpy(buf + sizeof(wc->cache_secret) + ulen, password, plen);
	r = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, sizeof(wc->cache_secret) + ulen + plen, key);
	explicit_bzero(buf, sizeof(wc->cache_secret) + ulen + plen);
	free(buf);
	return r ? -1 : 0;
}

static int cached(const struct webconfig *wc, const unsigned char key[AUTH_CACHE_KEY_LEN])
{
	int i, found = 0;

	for (i = 0; i < wc->nr_cached; i++)
		found |= same_bytes(wc->cache[i], key, AUTH_CACHE_KEY_LEN);
	return found;
}

/* Does @password match @hash (bcrypt, checked at load)? */
static int bcrypt_matches(struct webconfig *wc, const char *password, const char *hash)
{
	const char *out;
	int ok;

	memset(wc->crypt_data, 0, sizeof(*wc->crypt_data));
	out = crypt_rn(password, hash, wc->crypt_data, sizeof(*wc->crypt_data));
	ok = out && strlen(out) == BCRYPT_HASH_LEN && same_bytes(out, hash, BCRYPT_HASH_LEN);
	explicit_bzero(wc->crypt_data, sizeof(*wc->crypt_data));
	return ok;
}

int webconfig_authorized(struct webconfig *wc, const char *user, const char *password)
{
	unsigned char key[AUTH_CACHE_KEY_LEN];
	const struct web_user *u = NULL;
	int have_key, ok;
	size_t i;

	for (i = 0; i < wc->nr_users && !u; i++)
		if (!strcmp(wc->users[i].name, user))
			u = &wc->users[i];
	have_key = u && !cache_key(wc, user, password, key);
	pthread_mutex_lock(&wc->auth_lock);
	ok = have_key && cached(wc, key);
	/* an unknown user costs a bcrypt too: its time does not tell who exists */
	if (!ok) {
		ok = bcrypt_matches(wc, password, u ? u->hash : wc->users[0].hash) && u;
		if (ok && have_key) {
			memcpy(wc->cache[wc->next_cached], key, AUTH_CACHE_KEY_LEN);
			wc->next_cached = (wc->next_cached + 1) % AUTH_CACHE_SIZE;
			if (wc->nr_cached < AUTH_CACHE_SIZE)
				wc->nr_cached++;
		}
	}
	pthread_mutex_unlock(&wc->auth_lock);
	explicit_bzero(key, sizeof(key));
	return ok;
}

/* gnutls' check of a client certificate, once received: it must verify
 * against the client CAs (the credentials' trust list, and its dates); no
 * certificate at all is refused here only when one is required */
static int verify_client_cert(gnutls_session_t session, int required)
{
	unsigned int status = 0, nr_certs = 0;

	if (!gnutls_certificate_get_peers(session, &nr_certs) || !nr_certs)
		return required ? GNUTLS_E_NO_CERTIFICATE_FOUND : 0;
	if (gnutls_certificate_verify_peers2(session, &status) || status)
		return GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
	return 0;
}

static int verify_given_client_cert(gnutls_session_t session)
{
	return verify_client_cert(session, 0);
}

static int verify_required_client_cert(gnutls_session_t session)
{
	return verify_client_cert(session, 1);
}

int webconfig_start_tls_session(const struct webconfig *wc, void *tls_session)
{
	gnutls_session_t session = tls_session;
	static const gnutls_certificate_request_t request[] = {
		[CLIENT_CERT_NONE] = GNUTLS_CERT_IGNORE,
		[CLIENT_CERT_REQUEST] = GNUTLS_CERT_REQUEST,
		[CLIENT_CERT_REQUIRE_ANY] = GNUTLS_CERT_REQUIRE,
		[CLIENT_CERT_VERIFY_IF_GIVEN] = GNUTLS_CERT_REQUEST,
		[CLIENT_CERT_REQUIRE_AND_VERIFY] = GNUTLS_CERT_REQUIRE,
	};

	if (!session)
		return -1;
	gnutls_certificate_server_set_request(session, request[wc->client_auth]);
	/* the handshake fails when the check does */
	if (wc->client_auth == CLIENT_CERT_VERIFY_IF_GIVEN)
		gnutls_session_set_verify_function(session, verify_given_client_cert);
	if (wc->client_auth == CLIENT_CERT_REQUIRE_AND_VERIFY)
		gnutls_session_set_verify_function(session, verify_required_client_cert);
	return 0;
}
