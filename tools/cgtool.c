// SPDX-License-Identifier: GPL-2.0
/*
 * What cgtop and cgroup-exporter share (cgtool.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtool.h"

volatile sig_atomic_t cgtool_stop;

/* the messages' "PROG: " and the least severe level written */
static const char *log_prog;
static enum cgtool_log_level log_threshold = CGTOOL_LOG_INFO;

static const char *const log_level_names[] = {
	[CGTOOL_LOG_DEBUG] = "debug",
	[CGTOOL_LOG_INFO] = "info",
	[CGTOOL_LOG_WARN] = "warn",
	[CGTOOL_LOG_ERROR] = "error",
};

/* One message, whole: the exporter's threads write too */
static int log_va(enum cgtool_log_level level, const char *fmt, va_list ap)
{
	int n;

	if (level < log_threshold)
		return 0;
	flockfile(stderr);
	fprintf(stderr, "%s: ", log_prog);
	n = vfprintf(stderr, fmt, ap);
	funlockfile(stderr);
	return n;
}

void cgtool_log(enum cgtool_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(level, fmt, ap);
	va_end(ap);
}

void cgtool_init(struct cgtool *t, const char *prog, const char *default_events)
{
	*t = (struct cgtool){ .prog = prog, .events = default_events, .regex = ".*",
			      .opts = { .sz = sizeof(t->opts) } };
	log_prog = prog;
	log_threshold = CGTOOL_LOG_INFO;
}

static int parse_log_level(struct cgtool *t, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(log_level_names) / sizeof(log_level_names[0]); i++) {
		if (!strcmp(name, log_level_names[i])) {
			log_threshold = i;
			return 1;
		}
	}
	cli_usage_error(t->prog, "--log.level: debug, info, warn or error, not '%s'", name);
	return -1;
}

static int parse_backend(struct cgtool *t, const char *name)
{
	cgcount_print_fn_t print = cgcount_set_print(NULL);	/* our message instead */
	int err = cgcount_parse_backend(name, &t->opts.backend);

	cgcount_set_print(print);
	if (!err)
		return 1;
	cli_usage_error(t->prog, "unknown backend '%s' (auto, events, shared or rstat)", name);
	return -1;
}

static int parse_max_cgroups(struct cgtool *t, const char *arg)
{
	long n;

	if (cgtool_parse_long(arg, 1, UINT32_MAX, &n)) {
		cli_usage_error(t->prog, "--rstat.max-cgroups: not a number from 1 to %u: '%s'",
				UINT32_MAX, arg);
		return -1;
	}
	t->opts.max_cgroups = n;
	return 1;
}

int cgtool_parse_option(struct cgtool *t, int opt, const char *arg)
{
	switch (opt) {
	case 'e':
		t->events = arg;
		return 1;
	case 'r':
		t->regex = arg;
		t->regex_given = 1;
		return 1;
	case CGTOOL_OPT_SUBTREE:
		t->subtree = arg;
		return 1;
	case CGTOOL_OPT_BACKEND:
		return parse_backend(t, arg);
	case CGTOOL_OPT_RSTAT_MAX_CGROUPS:
		return parse_max_cgroups(t, arg);
	case CGTOOL_OPT_CGROUPFS:
		t->cgroupfs = arg;
		return 1;
	case CGTOOL_OPT_LOG_LEVEL:
		return parse_log_level(t, arg);
	}
	return 0;
}

int cgtool_check_options(const struct cgtool *t)
{
	if (!t->subtree || !t->regex_given)
		return 0;
	cli_usage_error(t->prog, "-r and --subtree choose the cgroups two ways: give one");
	return -1;
}

/* Start counting what the options name. */
static int add_cgroups(struct cgcount *s, const struct cgtool *t)
{
	return t->subtree ? cgcount_add_subtree(s, t->subtree) : cgcount_add_regex(s, t->regex);
}

int cgtool_parse_seconds(const char *arg, double min, double *seconds)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= min) || v > 1e6)
		return -1;
	*seconds = v;
	return 0;
}

int cgtool_parse_long(const char *arg, long min, long max, long *value)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return -1;
	*value = v;
	return 0;
}

/* set while a failure is expected and handled (the exporter has threads) */
static _Thread_local int quiet;

/* libcgcount's messages ("libcgcount: ..."), after the tool's name: its
 * warnings are the reasons of failed calls (cgcount.h), errors here */
static int print_with_prog(enum cgcount_print_level level, const char *fmt, va_list ap)
{
	static const enum cgtool_log_level ours[] = {
		[CGCOUNT_WARN] = CGTOOL_LOG_ERROR,
		[CGCOUNT_INFO] = CGTOOL_LOG_INFO,
		[CGCOUNT_DEBUG] = CGTOOL_LOG_DEBUG,
	};

	if (quiet || (unsigned int)level >= sizeof(ours) / sizeof(ours[0]))
		return 0;
	return log_va(ours[level], fmt, ap);
}

/* why cgtool_open() failed (cgcount_close() may change errno) */
static int open_errno;
/* why the backend is events when --path.cgroupfs turned auto into it */
static const char *cgroupfs_reason;

/*
 * --path.cgroupfs: the session's root, and a backend that reaches its
 * cgroups: only the events backend opens them by path (the shared
 * backend's ioctls and rstat's reads find them by id).  0, or -1 after a
 * message with open_errno set.
 */
static int use_cgroupfs(struct cgtool *t)
{
	enum cgcount_backend b = t->opts.backend;
	int by_id, status;

	if (!t->cgroupfs)
		return 0;
	status = cgroupfs_prepare(t->prog, t->cgroupfs, &by_id);
	if (status) {
		open_errno = status == CLI_EXIT_USAGE ? EINVAL : ENOENT;
		return -1;
	}
	t->opts.cgroup_root = t->cgroupfs;
	if (by_id || b == CGCOUNT_EVENTS)
		return 0;
	if (b == CGCOUNT_AUTO) {
		cgroupfs_reason = "auto: --path.cgroupfs, whose cgroups only the events "
				  "backend reaches, by path";
		t->opts.backend = CGCOUNT_EVENTS;
		return 0;
	}
	cgtool_log(CGTOOL_LOG_ERROR, "--backend=%s finds cgroups by id: run with the host's "
		   "PID namespace, CAP_SYS_ADMIN and CAP_SYS_PTRACE, or --backend=events\n",
		   cgcount_backend_name(b));
	open_errno = EPERM;
	return -1;
}

/* libcgcount says why a call failed, through its print callback */
struct cgcount *cgtool_open(struct cgtool *t)
{
	struct cgcount *s;

	if (use_cgroupfs(t))
		return NULL;
	cgcount_set_print(print_with_prog);
	s = cgcount_open(t->events, &t->opts);
	open_errno = s ? 0 : errno;
	if (s)
		cgtool_log(CGTOOL_LOG_INFO, "backend %s (%s)\n",
			   cgcount_backend_name(cgcount_backend(s)),
			   cgroupfs_reason ? cgroupfs_reason : cgcount_backend_reason(s));
	if (s && add_cgroups(s, t) < 0) {
		open_errno = errno;
		cgcount_close(s);
		s = NULL;
	}
	return s;
}

int cgtool_open_failure_status(void)
{
	return open_errno == EINVAL ? CLI_EXIT_USAGE : 1;
}

/* Is the cgroup read as @r gone: no cgroup at its path, or another one? */
static int cgroup_gone(struct cgcount *s, const struct cgcount_reading *r)
{
	uint64_t id;
	int ret;

	quiet = 1;	/* a removed cgroup is no error here */
	ret = cgcount_cgroup_id(s, r->path, &id);
	quiet = 0;
	return ret == -ENOENT || (!ret && id != r->cgroup_id);
}

int cgtool_sync_cgroups(struct cgcount *s, const struct cgtool *t,
			const struct cgcount_reading *last, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (cgroup_gone(s, &last[i]))
			cgcount_remove_id(s, last[i].cgroup_id);
	if (t->subtree)
		return 0;
	return cgcount_add_regex(s, t->regex) < 0 ? -1 : 0;
}

/* The length of a valid UTF-8 sequence at @s that is not a control, else 0 */
static size_t printable_utf8_len(const unsigned char *s)
{
	unsigned int cp, min;
	size_t len, i;

	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f, min = 0xa0;	/* below U+00A0: C1 controls */
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

char *cgtool_printable_path(const char *path)
{
	const unsigned char *p = (const unsigned char *)path;
	char *out = malloc(4 * strlen(path) + 1), *o = out;
	size_t len;

	if (!out)
		return NULL;
	while (*p) {
		len = printable_utf8_len(p);
		if (*p == '\\') {
			*o++ = '\\';
			*o++ = *p++;
		} else if (len) {
			memcpy(o, p, len);
			o += len;
			p += len;
		} else {
			o += sprintf(o, "\\x%02x", *p++);
		}
	}
	*o = '\0';
	return out;
}

int cgtool_is_time_event(const char *event)
{
	size_t len = strcspn(event, ":/");

	return (len == 9 && !strncmp(event, "cpu-clock", 9)) ||
	       (len == 10 && !strncmp(event, "task-clock", 10));
}

static void on_stop_signal(int sig)
{
	(void)sig;
	cgtool_stop = 1;
}

void cgtool_handle_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };	/* no SA_RESTART */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
