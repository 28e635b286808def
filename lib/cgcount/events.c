// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgcount: event names, perf_event_open, error messages. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cgcount_int.h"
#include "cgutil.h"

static int default_print(enum cgcount_print_level level, const char *fmt, va_list ap)
{
	if (level == CGCOUNT_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static cgcount_print_fn_t print_fn = default_print;
static __thread int probing;

cgcount_print_fn_t cgcount_set_print(cgcount_print_fn_t fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_SEQ_CST);
}

void cgc_print(enum cgcount_print_level level, const char *fmt, ...)
{
	cgcount_print_fn_t fn = __atomic_load_n(&print_fn, __ATOMIC_SEQ_CST);
	int saved = errno;
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
	errno = saved;
}

void cgc_probing(int on)
{
	probing += on ? 1 : -1;
}

enum cgcount_print_level cgc_warn_level(void)
{
	return probing ? CGCOUNT_DEBUG : CGCOUNT_WARN;
}

int cgc_err(int err, const char *fmt, ...)
{
	char msg[CGC_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgc_print(cgc_warn_level(), "libcgcount: %s\n", msg);
	errno = err;
	return -err;
}

int cgc_perf_open_err(int err, const char *what)
{
	return cgc_err(err, "%s: %s%s", what, cgutil_perf_open_advice(err),
		       err == EMFILE || err == ENFILE ?
		       " or use the shared or rstat backend, which need no fd per cgroup" : "");
}

static int bad_event(int err, const char *name, size_t len)
{
	char known[512];

	if (err != ENOENT)
		return cgc_err(EINVAL, "event '%.*s': %s (a modifier is :u, :k or :h; a PMU's "
			       "terms are listed in /sys/bus/event_source/devices/PMU/format)",
			       (int)len, name, err == ERANGE ? "a value is wider than its field" :
			       "malformed");
	cgutil_event_names(known, sizeof(known));
	return cgc_err(EINVAL, "unknown event '%.*s': give one of %s, a PMU event as perf "
		       "takes it (cpu/event=0x3c/), a raw rNNNN, or a libpfm4 name "
		       "(showevtinfo lists them)", (int)len, name, known);
}

static int add_event(struct cgcount *s, const char *str, size_t len, unsigned int flags)
{
	struct cgc_event *ev = &s->events[s->nr_events];
	int ret;

	if (s->nr_events == CGC_MAX_EVENTS)
		return cgc_err(E2BIG, "more than %d events: open a second session",
			       CGC_MAX_EVENTS);
	ret = cgutil_parse_event(str, len, &ev->attr);
	if (ret)
		return bad_event(-ret, str, len);
	ev->name = strndup(str, len);
	if (!ev->name)
		return cgc_err(ENOMEM, "out of memory");
	ev->nr_members = 1;
	ev->leader = s->nr_events;
	if ((flags & CGUTIL_EV_GROUPED) && !(flags & CGUTIL_EV_LEADER)) {
		ev->leader = s->events[s->nr_events - 1].leader;
		s->events[ev->leader].nr_members++;
	}
	s->nr_events++;
	return 0;
}

int cgc_parse_events(struct cgcount *s, const char *list)
{
	struct cgutil_event_iter it = { .pos = list ? list : "" };
	unsigned int flags;
	const char *ev;
	size_t len;
	int ret;

	s->nr_events = 0;
	while ((ret = cgutil_event_next(&it, &ev, &len, &flags)) > 0) {
		ret = add_event(s, ev, len, flags);
		if (ret)
			return ret;
	}
	if (ret)
		return cgc_err(EINVAL, "event list '%s': malformed group near '%.20s' (a group is "
			       "{event,event,...}, not nested, without modifiers after the '}')",
			       list, it.pos);
	if (!s->nr_events)
		return cgc_err(EINVAL, "no event given (e.g. \"cpu-clock,context-switches\")");
	return 0;
}

int cgc_is_group_leader(const struct cgcount *s, int e)
{
	return s->events[e].leader == e && s->events[e].nr_members > 1;
}

int cgc_event_open_err(const struct cgcount *s, int e, int err)
{
	int leader = s->events[e].leader, n = s->events[leader].nr_members, k;
	char what[CGC_MSG_LEN / 2];
	size_t used = 0;

	if (n == 1)
		return cgc_perf_open_err(err, s->events[e].name);
	for (k = 0; k < n && used < sizeof(what); k++)
		used += snprintf(what + used, sizeof(what) - used, "%s%s", k ? "," : "{",
				 s->events[leader + k].name);
	if (used < sizeof(what))
		snprintf(what + used, sizeof(what) - used, "} (a group is on the PMU all at "
			 "once: %d events, more than its counters?)", n);
	return cgc_perf_open_err(err, what);
}

void cgc_free_events(struct cgcount *s)
{
	int i;

	for (i = 0; i < s->nr_events; i++)
		free(s->events[i].name);
	s->nr_events = 0;
}

int cgc_perf_open(const struct cgc_event *ev, int pid, int cpu, unsigned long flags)
{
	struct perf_event_attr attr = ev->attr;

	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return cgutil_perf_open(&attr, pid, cpu, -1, flags);
}

int cgc_perf_open_grouped(const struct cgc_event *ev, int pid, int cpu, int group_fd,
			  unsigned long flags)
{
	struct perf_event_attr attr = ev->attr;

	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	/*
	 * The leader starts disabled and is enabled with the whole group: a
	 * member added to a running software group of another software PMU
	 * would not be scheduled in until the group is.
	 */
	attr.disabled = group_fd < 0;
	return cgutil_perf_open(&attr, pid, cpu, group_fd, flags);
}

int cgc_kernel_has_shared(void)
{
	static const struct cgc_event clock = {
		.name = "cpu-clock",
		.attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(struct perf_event_attr),
			  .config = PERF_COUNT_SW_CPU_CLOCK },
	};
	uint64_t buf[1] = { 0 };
	int fd = cgc_perf_open(&clock, -1, sched_getcpu() < 0 ? 0 : sched_getcpu(), 0);
	int ret;

	if (fd < 0)
		return fd;
	/* nr == 0: EINVAL from a kernel with the ioctl, ENOTTY without */
	ret = ioctl(fd, PERF_EVENT_IOC_ATTACH_CGROUP, buf) < 0 && errno == EINVAL;
	close(fd);
	return ret;
}
