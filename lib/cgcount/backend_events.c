// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount events backend: one cgroup event (PERF_FLAG_PID_CGROUP) per
 * event, cgroup and CPU.  libperf's evsel cannot pass PERF_FLAG_PID_CGROUP,
 * so the events are opened here; readings use libperf's perf_counts_values.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perf/evsel.h>

#include "cgcount_int.h"

static int events_open(struct cgcount *s)
{
	struct cgc_event probe = s->events[0];
	int root_fd = cgc_open_cgroup_dir(s, "/");
	int fd;

	if (root_fd < 0)
		return root_fd;
	/* one event on the root cgroup shows whether we may and can */
	fd = cgc_perf_open(&probe, root_fd, s->cpus[0], PERF_FLAG_PID_CGROUP);
	close(root_fd);
	if (fd < 0)
		return cgc_perf_open_err(-fd, "events backend: cgroup event");
	close(fd);
	return 0;
}

static void events_close(struct cgcount *s)
{
	(void)s;
}

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

static int open_one(struct cgcount *s, struct cgc_cgroup *cg)
{
	int n = s->nr_events * s->nr_cpus, i, dir_fd, ret = 0;

	cg->fds = malloc(n * sizeof(int));
	if (!cg->fds)
		return cgc_err(ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		cg->fds[i] = -1;
	dir_fd = cgc_open_cgroup_dir(s, cg->path);
	if (dir_fd < 0)
		return dir_fd;
	for (i = 0; i < n && !ret; i++) {
		cg->fds[i] = cgc_perf_open(&s->events[i / s->nr_cpus], dir_fd,
					   s->cpus[i % s->nr_cpus], PERF_FLAG_PID_CGROUP);
		if (cg->fds[i] < 0)
			ret = cgc_perf_open_err(-cg->fds[i], s->events[i / s->nr_cpus].name);
	}
	close(dir_fd);
	return ret;
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

static int events_read_one(struct cgcount *s, struct cgc_cgroup *cg)
{
	struct perf_counts_values c;
	struct cgcount_value v;
	int e, cpu;

	for (e = 0; e < s->nr_events; e++) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			memset(&c, 0, sizeof(c));
			errno = 0;
			if (read(cg->fds[e * s->nr_cpus + cpu], c.values, 3 * sizeof(uint64_t)) !=
			    3 * sizeof(uint64_t))
				return cgc_err(errno ? errno : EIO, "reading a cgroup event of %s: %s",
					       cg->path, strerror(errno ? errno : EIO));
			v = (struct cgcount_value){ c.val, c.ena, c.run };
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
