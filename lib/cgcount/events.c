// SPDX-License-Identifier: GPL-2.0
/* cgcount: event names, perf_event_open, error messages. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgcount_int.h"

static __thread char errmsg[CGCOUNT_ERR_LEN];

static const struct cgc_event known_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
};

#define NR_KNOWN (sizeof(known_events) / sizeof(known_events[0]))

const char *cgcount_errmsg(const struct cgcount *s)
{
	(void)s;
	return errmsg;
}

int cgc_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
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

static const struct cgc_event *find_event(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NR_KNOWN; i++) {
		if (strlen(known_events[i].name) == len &&
		    !strncmp(known_events[i].name, name, len))
			return &known_events[i];
	}
	return NULL;
}

static int unknown_event(const char *name, size_t len)
{
	char known[512] = "";
	size_t i;

	for (i = 0; i < NR_KNOWN; i++) {
		strncat(known, " ", sizeof(known) - strlen(known) - 1);
		strncat(known, known_events[i].name, sizeof(known) - strlen(known) - 1);
	}
	return cgc_err(EINVAL, "unknown event '%.*s'; known events:%s", (int)len, name, known);
}

int cgc_parse_events(struct cgcount *s, const char *list)
{
	const char *p = list, *end;
	const struct cgc_event *ev;
	size_t len;

	s->nr_events = 0;
	while (p && *p) {
		end = strchrnul(p, ',');
		len = end - p;
		ev = find_event(p, len);
		if (!ev)
			return unknown_event(p, len);
		if (s->nr_events == CGCOUNT_MAX_EVENTS)
			return cgc_err(E2BIG, "more than %d events: open a second session",
				       CGCOUNT_MAX_EVENTS);
		s->events[s->nr_events++] = *ev;
		p = *end ? end + 1 : end;
	}
	if (!s->nr_events)
		return cgc_err(EINVAL, "no event given (e.g. \"cpu-clock,context-switches\")");
	return 0;
}

int cgc_perf_open(const struct cgc_event *ev, int pid, int cpu, unsigned long flags)
{
	struct perf_event_attr attr = {
		.type = ev->type,
		.size = sizeof(attr),
		.config = ev->config,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	int fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, flags | PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cgc_kernel_has_shared(void)
{
	static const struct cgc_event clock = { "cpu-clock", PERF_TYPE_SOFTWARE,
						PERF_COUNT_SW_CPU_CLOCK };
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
