// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgrstat_open(): the session's events from a perf stat -e style list,
 * split and parsed by lib/cgutil, handed to cgrstat_open_counters() to open
 * on every cpu.  Apart from the loader, which perf's rstat backend
 * compiles as is: perf parses its events itself.
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
	struct cgrstat_counter counters[CGRSTAT_MAX_EVENTS];
	struct perf_event_attr attrs[CGRSTAT_MAX_EVENTS];
	char names[CGRSTAT_MAX_EVENTS][CGRSTAT_NAME_LEN];
	int nr;
};

/* The event of @len bytes at @str, the session's p->nr'th. */
static int parse_one(struct parsed_events *p, const char *str, size_t len)
{
	struct perf_event_attr *attr = &p->attrs[p->nr];
	int ret = cgutil_parse_event(str, len, attr);
	char known[512];

	if (ret == -ENOENT) {
		cgutil_event_names(known, sizeof(known));
		return fail(EINVAL, "unknown event '%.*s' (perf's names: %s; or a PMU's "
			    "pmu/term=value/, a raw rNNN, a libpfm4 name)", (int)len, str, known);
	}
	if (ret)
		return fail(EINVAL, "event '%.*s': %s (a modifier is :u, :k or :h)", (int)len, str,
			    ret == -ERANGE ? "a value is wider than its field" : "malformed");
	snprintf(p->names[p->nr], sizeof(p->names[p->nr]), "%.*s", (int)len, str);
	p->counters[p->nr] = (struct cgrstat_counter){ .name = p->names[p->nr], .attr = attr };
	p->nr++;
	return 0;
}

static int parse_events(struct parsed_events *p, const char *list)
{
	size_t len;
	int ret = 0;

	if (!list || !*list)
		return fail(EINVAL, "no events given (example: cpu-clock,context-switches)");
	for (; !ret && *list; list += len + !!list[len]) {
		len = cgutil_event_len(list);
		if (p->nr == CGRSTAT_MAX_EVENTS)
			return fail(E2BIG, "more than %d events: the rstat backend's BPF program "
				    "counts at most %d in one session", CGRSTAT_MAX_EVENTS,
				    CGRSTAT_MAX_EVENTS);
		ret = parse_one(p, list, len);
	}
	return ret;
}

struct cgrstat *cgrstat_open(const char *events, const struct cgrstat_opts *opts)
{
	struct parsed_events *p = calloc(1, sizeof(*p));
	struct cgrstat *s = NULL;
	int ret;

	if (!p) {
		cgrstat__print(CGRSTAT_WARN, "libcgrstat: out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	ret = parse_events(p, events);
	if (!ret) {
		libbpf_set_print(silent_print);
		s = cgrstat_open_counters(p->counters, p->nr, opts);
		ret = s ? 0 : -errno;
	}
	free(p);
	if (ret)
		errno = -ret;
	return s;
}
