// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgrstat_open(): the session's events from a perf stat -e style string,
 * parsed by lib/cgutil, handed to cgrstat_open_counters() to open on every
 * cpu.  Apart from cgrstat.c, which perf's rstat backend compiles as is:
 * perf parses its events itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

#include "cgrstat.h"
#include "cgrstat_int.h"
#include "cgutil.h"

/* libbpf's messages (the verifier's log) only with CGRSTAT_DEBUG=2 */
static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const char *debug = getenv("CGRSTAT_DEBUG");

	if (debug && (level == LIBBPF_WARN || atoi(debug) > 1))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

struct parsed_events {
	struct cgrstat_counter counters[CGRSTAT_MAX_EVENTS + 1];
	struct perf_event_attr attrs[CGRSTAT_MAX_EVENTS + 1];
	char names[CGRSTAT_MAX_EVENTS + 1][64];
	int nr;
};

/* One event of the list: -EINVAL with the reason in @err if it is not one. */
static int parse_one(struct parsed_events *p, const char *tok, char *err, size_t err_len)
{
	struct perf_event_attr *attr = &p->attrs[p->nr];
	char known[512];
	int ret = cgutil_parse_event(tok, strlen(tok), attr);

	if (ret == -ENOENT) {
		cgutil_event_names(known, sizeof(known));
		snprintf(err, err_len, "unknown event '%s' (perf's names: %s; or a PMU's "
			 "pmu/term=value/, a raw rNNN, a libpfm4 name)", tok, known);
	} else if (ret) {
		snprintf(err, err_len, "event '%s': %s (a modifier is :u, :k or :h)", tok,
			 ret == -ERANGE ? "a value is wider than its field" : "malformed");
	}
	if (ret)
		return -EINVAL;
	snprintf(p->names[p->nr], sizeof(p->names[p->nr]), "%s", tok);
	p->counters[p->nr] = (struct cgrstat_counter){
		.name = p->names[p->nr], .type = attr->type, .config = attr->config,
		.attr = attr,
	};
	p->nr++;
	return 0;
}

/* At most CGRSTAT_MAX_EVENTS + 1: cgrstat_open_counters() refuses more. */
static int parse_events(struct parsed_events *p, const char *list, char *err, size_t err_len)
{
	char *copy, *tok, *save = NULL;
	int ret = 0;

	if (!list || !*list) {
		snprintf(err, err_len, "no events given (example: cpu-clock,context-switches)");
		return -EINVAL;
	}
	copy = strdup(list);
	if (!copy) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !ret && p->nr <= CGRSTAT_MAX_EVENTS;
	     tok = strtok_r(NULL, ",", &save))
		ret = parse_one(p, tok, err, err_len);
	free(copy);
	return ret;
}

struct cgrstat *cgrstat_open(const char *events, const struct cgrstat_opts *opts)
{
	struct parsed_events *p = calloc(1, sizeof(*p));
	struct cgrstat *s = NULL;
	char msg[1024] = "";
	int ret;

	if (!p) {
		cgrstat__print(CGRSTAT_WARN, "libcgrstat: out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	ret = parse_events(p, events, msg, sizeof(msg));
	if (!ret) {
		libbpf_set_print(silent_print);
		s = cgrstat_open_counters(p->counters, p->nr, opts);
		ret = s ? 0 : -errno;
	} else {
		cgrstat__print(CGRSTAT_WARN, "libcgrstat: %s\n", msg);
	}
	free(p);
	if (ret)
		errno = -ret;
	return s;
}
