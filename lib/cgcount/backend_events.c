// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount events backend: one cgroup event (PERF_FLAG_PID_CGROUP) per
 * event, cgroup and CPU; a group's events ({cycles,instructions}) are one
 * perf group per cgroup and CPU, read at once through their leader
 * (PERF_FORMAT_GROUP: one time_enabled and time_running for all).
 * A single event's read(2) gives { value, time_enabled, time_running }
 * (PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cgcount_int.h"

static void close_fds(struct cgcount *s, struct cgc_cgroup *cg)
{
	int i, n = s->nr_events * s->nr_cpus;

	if (!cg->fds)
		return;
	for (i = 0; i < n; i++)
		if (cg->fds[i] >= 0)
			close(cg->fds[i]);
	free(cg->fds);
	cg->fds = NULL;
}

/* event e on the i'th cpu of cgroup @dir_fd: alone, or in its group */
static int open_event(struct cgcount *s, struct cgc_cgroup *cg, int dir_fd, int e, int i)
{
	const struct cgc_event *ev = &s->events[e];
	int cpu = s->cpus[i];

	if (ev->leader == e && ev->nr_members == 1)
		return cgc_perf_open(ev, dir_fd, cpu, PERF_FLAG_PID_CGROUP);
	return cgc_perf_open_grouped(ev, dir_fd, cpu,
				     ev->leader == e ? -1 : cg->fds[ev->leader * s->nr_cpus + i],
				     PERF_FLAG_PID_CGROUP);
}

/* the groups' leaders start disabled: enable each with its members in */
static int enable_groups(struct cgcount *s, struct cgc_cgroup *cg)
{
	int e, i;

	for (e = 0; e < s->nr_events; e++) {
		for (i = 0; i < s->nr_cpus && cgc_is_group_leader(s, e); i++)
			if (ioctl(cg->fds[e * s->nr_cpus + i], PERF_EVENT_IOC_ENABLE, 0) < 0)
				return cgc_err(errno, "enabling the group of %s: %s",
					       s->events[e].name, strerror(errno));
	}
	return 0;
}

/* the cgroup was removed (perf_event_open: not online): the caller says what it does */
static int removed(const struct cgc_cgroup *cg)
{
	cgc_print(CGCOUNT_DEBUG, "events backend: cgroup %s was removed\n", cg->path);
	return -ENOENT;
}

static int open_one(struct cgcount *s, struct cgc_cgroup *cg)
{
	int n = s->nr_events * s->nr_cpus, i, dir_fd, ret = 0;

	cg->fds = malloc(n * sizeof(int));
	if (!cg->fds)
		return cgc_err(ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		cg->fds[i] = -1;
	dir_fd = cgc_open_cgroup_dir(s, cg->path, cg->id);
	if (dir_fd == -ENOENT)
		return removed(cg);
	if (dir_fd < 0)
		return dir_fd;
	for (i = 0; i < n && !ret; i++) {
		cg->fds[i] = open_event(s, cg, dir_fd, i / s->nr_cpus, i % s->nr_cpus);
		if (cg->fds[i] == -ENOENT)
			ret = removed(cg);
		else if (cg->fds[i] < 0)
			ret = cgc_event_open_err(s, i / s->nr_cpus, -cg->fds[i]);
	}
	close(dir_fd);
	return ret ? ret : enable_groups(s, cg);
}

/*
 * Every event and group on the root cgroup shows whether we may and can
 * (a group the PMU cannot hold is refused here, not at the first add).
 */
static int events_open(struct cgcount *s)
{
	struct cgc_cgroup *root = calloc(1, sizeof(*root));
	char slash[] = "/";
	int ret;

	if (!root)
		return cgc_err(ENOMEM, "out of memory");
	root->path = slash;
	ret = open_one(s, root);
	close_fds(s, root);
	free(root);
	return ret;
}

static void events_close(struct cgcount *s)
{
	(void)s;
}

static int events_add(struct cgcount *s, struct cgc_cgroup **cgs, size_t n)
{
	size_t i, j;
	int ret;

	for (i = 0; i < n; i++) {
		ret = open_one(s, cgs[i]);
		if (ret) {
			for (j = 0; j <= i; j++)
				close_fds(s, cgs[j]);
			return ret;
		}
	}
	return 0;
}

static void events_remove(struct cgcount *s, struct cgc_cgroup *cg)
{
	close_fds(s, cg);
}

static int read_err(struct cgc_cgroup *cg)
{
	int err = errno ? errno : EIO;

	return cgc_err(err, "reading a cgroup event of %s: %s", cg->path, strerror(err));
}

/* a group's leader on one cpu: { nr, time_enabled, time_running, value x nr } */
static int read_group(struct cgcount *s, struct cgc_cgroup *cg, int leader, int fd)
{
	uint64_t buf[3 + CGC_MAX_EVENTS];
	size_t want = (3 + s->events[leader].nr_members) * sizeof(uint64_t);
	struct cgcount_value v;
	int k;

	errno = 0;
	if (read(fd, buf, want) != (ssize_t)want)
		return read_err(cg);
	for (k = 0; k < s->events[leader].nr_members; k++) {
		v = (struct cgcount_value){ buf[3 + k], buf[1], buf[2] };
		cgc_values_add(&cg->acc[leader + k], &v);
	}
	return 0;
}

static int events_read_one(struct cgcount *s, struct cgc_cgroup *cg)
{
	struct cgcount_value v;
	uint64_t buf[3];
	int e, cpu, fd, ret;

	for (e = 0; e < s->nr_events; e++) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			fd = cg->fds[e * s->nr_cpus + cpu];
			if (s->events[e].leader != e)
				continue;	/* read with its leader */
			if (cgc_is_group_leader(s, e)) {
				ret = read_group(s, cg, e, fd);
				if (ret)
					return ret;
				continue;
			}
			errno = 0;
			if (read(fd, buf, sizeof(buf)) != sizeof(buf))
				return read_err(cg);
			v = (struct cgcount_value){ buf[0], buf[1], buf[2] };
			cgc_values_add(&cg->acc[e], &v);
		}
	}
	return 0;
}

static int events_read_all(struct cgcount *s)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < s->nr_cgroups && !ret; i++)
		ret = events_read_one(s, s->cgroups[i]);
	return ret;
}

const struct cgc_backend_ops cgc_events_ops = {
	.id = CGCOUNT_EVENTS,
	.open = events_open,
	.close = events_close,
	.add = events_add,
	.remove = events_remove,
	.read_one = events_read_one,
	.read_all = events_read_all,
};
