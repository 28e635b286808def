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
#include <sys/syscall.h>
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

int cgc_err(int err, const char *fmt, ...)
{
	char msg[CGC_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgc_print(probing ? CGCOUNT_DEBUG : CGCOUNT_WARN, "libcgcount: %s\n", msg);
	errno = err;
	return -err;
}

int cgc_perf_open_err(int err, const char *what)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return cgc_err(err, "%s: permission denied: run as root (or with CAP_PERFMON) "
			       "or lower kernel.perf_event_paranoid (sysctl -w "
			       "kernel.perf_event_paranoid=-1)", what);
	case ENOENT:
	case EOPNOTSUPP:
		return cgc_err(err, "%s: not supported by this kernel or CPU (hardware events "
			       "need a PMU; cgroup events need CONFIG_CGROUP_PERF): %s",
			       what, strerror(err));
	case EMFILE:
	case ENFILE:
		return cgc_err(err, "%s: out of file descriptors: raise the limit (ulimit -n) "
			       "or use the shared or rstat backend, which need no fd per "
			       "cgroup", what);
	default:
		return cgc_err(err, "%s: %s", what, strerror(err));
	}
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

static int add_event(struct cgcount *s, const char *str, size_t len)
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
	s->nr_events++;
	return 0;
}

/* The end of the event at @p: a comma outside a PMU's /terms/, or the end. */
static const char *event_end(const char *p)
{
	int in_terms = 0;

	for (; *p && (in_terms || *p != ','); p++)
		in_terms ^= *p == '/';
	return p;
}

int cgc_parse_events(struct cgcount *s, const char *list)
{
	const char *p = list, *end;
	int ret = 0;

	s->nr_events = 0;
	while (!ret && p && *p) {
		end = event_end(p);
		ret = add_event(s, p, end - p);
		p = *end ? end + 1 : end;
	}
	if (!ret && !s->nr_events)
		return cgc_err(EINVAL, "no event given (e.g. \"cpu-clock,context-switches\")");
	return ret;
}

void cgc_free_events(struct cgcount *s)
{
	int i;

	for (i = 0; i < s->nr_events; i++)
		free(s->events[i].name);
	s->nr_events = 0;
}

static int perf_open_attr(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
			  unsigned long flags)
{
	int fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			 flags | PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cgc_perf_open(const struct cgc_event *ev, int pid, int cpu, unsigned long flags)
{
	struct perf_event_attr attr = ev->attr;

	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return perf_open_attr(&attr, pid, cpu, -1, flags);
}

int cgc_perf_open_grouped(const struct cgc_event *ev, int cpu, int group_fd)
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
	return perf_open_attr(&attr, -1, cpu, group_fd, 0);
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
