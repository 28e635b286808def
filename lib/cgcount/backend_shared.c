// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount shared backend: one counting CPU event per event and CPU, with
 * every counted cgroup attached (PERF_EVENT_IOC_ATTACH_CGROUP); see
 * Documentation/admin-guide/perf/cgroup-counting.rst of the patched tree.
 *
 * A group of the event list ({cycles,instructions}) is one CPU event group
 * per CPU (PERF_FORMAT_GROUP), the ioctls going to its leader: the kernel
 * schedules the group on the PMU all or nothing and gives every member of
 * a cgroup's record the same time_enabled and time_running.  When every
 * event is a software event and the list has no group, each CPU's events
 * are opened as one group all the same: at each cgroup switch the kernel
 * then updates the times and finds the cgroup's node once for all the
 * events instead of once per event.  Other events stay separate leaders (a
 * hardware group would be scheduled all or nothing), and so does
 * everything of that software group when the kernel refuses it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cgcount_int.h"

/* a record of READ_CGROUPS: { id, value, time_enabled, time_running } */
#define REC_WORDS 4
/* grouped: { id, nr, time_enabled, time_running, value x nr } */
#define GROUP_REC_WORDS(nr) (4 + (nr))

static int nr_fds(const struct cgcount *s)
{
	return s->nr_events * s->nr_cpus;
}

/* the first event of e's group: one group of all when shared_grouped */
static int leader_of(const struct cgcount *s, int e)
{
	return s->shared_grouped ? 0 : s->events[e].leader;
}

static int group_size(const struct cgcount *s, int leader)
{
	return s->shared_grouped ? s->nr_events : s->events[leader].nr_members;
}

/* the fds the ioctls go to: the groups' leaders and the events alone */
static int is_leader_fd(const struct cgcount *s, int i)
{
	return leader_of(s, i / s->nr_cpus) == i / s->nr_cpus;
}

static int grouped(const struct cgcount *s, int leader)
{
	return group_size(s, leader) > 1;
}

/* the words of a record of the fd @i leads */
static int rec_words(const struct cgcount *s, int i)
{
	int leader = i / s->nr_cpus;

	return grouped(s, leader) ? GROUP_REC_WORDS(group_size(s, leader)) : REC_WORDS;
}

static void close_fds(struct cgcount *s);

static void shared_close(struct cgcount *s)
{
	if (!s->shared_fds)
		return;
	close_fds(s);
	free(s->shared_fds);
	s->shared_fds = NULL;
	free(s->rc_buf);
	s->rc_buf = NULL;
	s->rc_size = 0;
}

static int not_supported(void)
{
	return cgc_err(EOPNOTSUPP, "shared backend not supported by this kernel: it lacks "
		       "PERF_EVENT_IOC_ATTACH_CGROUP (the kernel series in kernel/); use "
		       "the rstat, events or auto backend");
}

static void close_fds(struct cgcount *s)
{
	int i;

	for (i = 0; i < nr_fds(s); i++) {
		if (s->shared_fds[i] >= 0)
			close(s->shared_fds[i]);
		s->shared_fds[i] = -1;
	}
}

static int open_one(struct cgcount *s, int e, int c)
{
	int leader = leader_of(s, e);

	if (!grouped(s, leader))
		return cgc_perf_open(&s->events[e], -1, s->cpus[c], 0);
	return cgc_perf_open_grouped(&s->events[e], -1, s->cpus[c],
				     e == leader ? -1 : s->shared_fds[leader * s->nr_cpus + c], 0);
}

/* every event on every cpu, the groups' leaders enabled once their members are in */
static int open_events(struct cgcount *s)
{
	int i, fd;

	for (i = 0; i < nr_fds(s); i++) {
		fd = open_one(s, i / s->nr_cpus, i % s->nr_cpus);
		if (fd < 0)
			return fd;
		s->shared_fds[i] = fd;
	}
	for (i = 0; i < nr_fds(s); i++)
		if (is_leader_fd(s, i) && grouped(s, i / s->nr_cpus) &&
		    ioctl(s->shared_fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

/* software events only and no group given: one group of all (see above) */
static int groupable(const struct cgcount *s)
{
	int e;

	if (s->nr_events < 2)
		return 0;
	for (e = 0; e < s->nr_events; e++)
		if (s->events[e].attr.type != PERF_TYPE_SOFTWARE || s->events[e].leader != e)
			return 0;
	return 1;
}

/* the first event the kernel refused (the first fd not open), named */
static int open_fds_err(struct cgcount *s, int err)
{
	int i;

	for (i = 0; i < nr_fds(s) - 1 && s->shared_fds[i] >= 0; i++)
		;
	return cgc_event_open_err(s, i / s->nr_cpus, err);
}

static int open_fds(struct cgcount *s)
{
	int i, ret;

	s->shared_fds = malloc(nr_fds(s) * sizeof(int));
	if (!s->shared_fds)
		return cgc_err(ENOMEM, "out of memory");
	for (i = 0; i < nr_fds(s); i++)
		s->shared_fds[i] = -1;
	s->shared_grouped = groupable(s);
	if (s->shared_grouped) {
		ret = open_events(s);
		if (!ret) {
			cgc_print(CGCOUNT_DEBUG, "shared backend: the %d events of each cpu "
				  "open as one group\n", s->nr_events);
			return 0;
		}
		cgc_print(CGCOUNT_DEBUG, "shared backend: the events cannot be grouped (%s): "
			  "one leader per event\n", strerror(-ret));
		close_fds(s);
		s->shared_grouped = 0;
	}
	ret = open_events(s);
	return ret ? open_fds_err(s, -ret) : 0;
}

static int shared_open(struct cgcount *s)
{
	int ret = cgc_kernel_has_shared();

	if (ret < 0)
		return cgc_perf_open_err(-ret, "shared backend: cpu-clock event");
	ret = ret ? open_fds(s) : not_supported();
	if (ret)
		shared_close(s);
	return ret;
}

static int ids_ioctl(int fd, unsigned long req, uint64_t *buf)
{
	return ioctl(fd, req, buf) ? -errno : 0;
}

static uint64_t *ids_buf(struct cgc_cgroup **cgs, size_t n)
{
	uint64_t *buf = malloc((n + 1) * sizeof(*buf));
	size_t i;

	if (!buf)
		return NULL;
	buf[0] = n;
	for (i = 0; i < n; i++)
		buf[i + 1] = cgs[i]->id;
	return buf;
}

static int shared_add(struct cgcount *s, struct cgc_cgroup **cgs, size_t n)
{
	uint64_t *buf = ids_buf(cgs, n);
	int i, ret = 0;

	if (!buf)
		return cgc_err(ENOMEM, "out of memory");
	for (i = 0; i < nr_fds(s) && !ret; i++)
		if (is_leader_fd(s, i))
			ret = ids_ioctl(s->shared_fds[i], PERF_EVENT_IOC_ATTACH_CGROUP, buf);
	if (ret) {
		/* all or nothing: undo the events that did attach */
		for (i -= 2; i >= 0; i--)
			if (is_leader_fd(s, i))
				ids_ioctl(s->shared_fds[i], PERF_EVENT_IOC_DETACH_CGROUP, buf);
		/* a cgroup removed since the walk: the caller says what it does */
		if (ret == -ENOENT)
			cgc_print(CGCOUNT_DEBUG, "shared backend: attaching %zu cgroup(s) "
				  "(%s...): a cgroup was removed\n", n, cgs[0]->path);
		else
			ret = cgc_err(-ret, "attaching %zu cgroup(s) (%s...): %s", n,
				      cgs[0]->path, strerror(-ret));
	}
	free(buf);
	return ret;
}

static void shared_remove(struct cgcount *s, struct cgc_cgroup *cg)
{
	uint64_t buf[2] = { 1, cg->id };
	int i;

	for (i = 0; i < nr_fds(s); i++)
		if (is_leader_fd(s, i))
			ids_ioctl(s->shared_fds[i], PERF_EVENT_IOC_DETACH_CGROUP, buf);
}

/* the values of the record of fd @i ({ id, values... } without the id) into acc[] */
static void add_values(struct cgcount *s, struct cgc_cgroup *cg, int i, const uint64_t *val)
{
	int leader = i / s->nr_cpus, e;
	struct cgcount_value v;

	if (!grouped(s, leader)) {
		v = (struct cgcount_value){ val[0], val[1], val[2] };
		cgc_values_add(&cg->acc[leader], &v);
		return;
	}
	/* { nr, time_enabled, time_running, value x nr } */
	for (e = 0; e < group_size(s, leader) && e < (int)val[0]; e++) {
		v = (struct cgcount_value){ val[3 + e], val[1], val[2] };
		cgc_values_add(&cg->acc[leader + e], &v);
	}
}

static int shared_read_one(struct cgcount *s, struct cgc_cgroup *cg)
{
	uint64_t buf[2 + GROUP_REC_WORDS(CGC_MAX_EVENTS)];
	int i;

	for (i = 0; i < nr_fds(s); i++) {
		if (!is_leader_fd(s, i))
			continue;
		memset(buf, 0, sizeof(buf));
		buf[0] = (2 + rec_words(s, i) - 1) * sizeof(uint64_t);
		buf[1] = cg->id;
		if (ioctl(s->shared_fds[i], PERF_EVENT_IOC_READ_CGROUP, buf) < 0)
			return cgc_err(errno, "PERF_EVENT_IOC_READ_CGROUP of %s: %s", cg->path,
				       strerror(errno));
		add_values(s, cg, i, buf + 2);
	}
	return 0;
}

/*
 * READ_CGROUPS into the session's buffer, grown when the kernel says
 * (ENOSPC with the size it needs in buf[0]); kept for the next read.
 */
static int read_cgroups(struct cgcount *s, int i)
{
	size_t want = (3 + rec_words(s, i) * (s->nr_cgroups + 4)) * sizeof(uint64_t);
	int fd = s->shared_fds[i];
	uint64_t *n;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		if (s->rc_size < want) {
			n = realloc(s->rc_buf, want);
			if (!n)
				return cgc_err(ENOMEM, "out of memory");
			s->rc_buf = n;
			s->rc_size = want;
		}
		s->rc_buf[0] = s->rc_size;
		s->rc_buf[1] = 0;
		if (ioctl(fd, PERF_EVENT_IOC_READ_CGROUPS, s->rc_buf) >= 0)
			return 0;
		if (errno != ENOSPC || s->rc_buf[0] <= s->rc_size)
			return cgc_err(errno, "PERF_EVENT_IOC_READ_CGROUPS: %s", strerror(errno));
		want = s->rc_buf[0];
	}
	return cgc_err(ENOMEM, "PERF_EVENT_IOC_READ_CGROUPS: no buffer large enough");
}

/* the records READ_CGROUPS of fd @idx put in @buf */
static void add_records(struct cgcount *s, int idx, const uint64_t *buf)
{
	const uint64_t *rec = buf + 3;
	struct cgc_cgroup *cg;
	uint64_t i;

	for (i = 0; i < buf[2]; i++, rec += rec_words(s, idx)) {
		cg = cgc_find(s, rec[0]);
		if (cg)
			add_values(s, cg, idx, rec + 1);
	}
}

/*
 * The kernel attaches the cgroups created below @id from their creation on
 * (PERF_ATTACH_CGROUPS_DESCENDANTS); a kernel without it (ENOTTY) leaves
 * them to the reads.
 */
static int shared_watch(struct cgcount *s, uint64_t id)
{
	uint64_t buf[3] = { PERF_ATTACH_CGROUPS_DESCENDANTS, 1, id };
	int i, ret = 0;

	for (i = 0; i < nr_fds(s) && !ret; i++)
		if (is_leader_fd(s, i))
			ret = ids_ioctl(s->shared_fds[i], PERF_EVENT_IOC_ATTACH_CGROUPS, buf);
	if (ret == -ENOTTY) {
		cgc_print(CGCOUNT_DEBUG, "shared backend: no PERF_EVENT_IOC_ATTACH_CGROUPS: "
			  "cgroups created later count from the read that finds them\n");
		return 0;
	}
	if (ret)
		return cgc_err(-ret, "attaching cgroup %llu with its descendants: %s",
			       (unsigned long long)id, strerror(-ret));
	return 0;
}

/*
 * The kernel has no call that ends a watch alone: detaching @id ends it,
 * and the cgroups it attached stay attached.  Detach every cgroup attached
 * to the events that the session does not count: @id, what the watch
 * attached, nothing the session counts.  A root the session counts keeps
 * its counts, and so its watch.
 */
static void shared_unwatch(struct cgcount *s, uint64_t id)
{
	uint64_t *ids, *rec;
	size_t nr, k;
	int i;

	for (i = 0; i < nr_fds(s); i++) {
		if (!is_leader_fd(s, i) || read_cgroups(s, i))
			continue;
		nr = s->rc_buf[2];
		ids = malloc((nr + 1) * sizeof(*ids));
		if (!ids) {
			cgc_err(ENOMEM, "out of memory: cgroup %llu stays watched",
				(unsigned long long)id);
			return;
		}
		ids[0] = 0;
		for (rec = s->rc_buf + 3, k = 0; k < nr; k++, rec += rec_words(s, i))
			if (!cgc_find(s, rec[0]))
				ids[++ids[0]] = rec[0];
		if (ids[0])
			ids_ioctl(s->shared_fds[i], PERF_EVENT_IOC_DETACH_CGROUP, ids);
		free(ids);
	}
}

/*
 * A subtree's watch attaches every cgroup created below it; one removed
 * before a read's walk found it is never counted by the session, and its
 * node would hold the removed cgroup until the session closes: detach the
 * removed cgroups of the records of fd @i that the session does not count.
 */
static void detach_unknown_removed(struct cgcount *s, int i)
{
	uint64_t nr = s->rc_buf[2], *ids, *rec, k;

	if (!s->nr_subtrees || nr <= s->nr_cgroups)
		return;
	ids = malloc((nr + 1) * sizeof(*ids));
	if (!ids)
		return;
	ids[0] = 0;
	for (rec = s->rc_buf + 3, k = 0; k < nr; k++, rec += rec_words(s, i))
		if (!cgc_find(s, rec[0]) && cgc_cgroup_id_gone(s, rec[0]))
			ids[++ids[0]] = rec[0];
	if (ids[0])
		ids_ioctl(s->shared_fds[i], PERF_EVENT_IOC_DETACH_CGROUP, ids);
	free(ids);
}

static int shared_read_all(struct cgcount *s)
{
	int i, ret;

	for (i = 0; i < nr_fds(s); i++) {
		if (!is_leader_fd(s, i))
			continue;
		ret = read_cgroups(s, i);
		if (ret)
			return ret;
		add_records(s, i, s->rc_buf);
		detach_unknown_removed(s, i);
	}
	return 0;
}

const struct cgc_backend_ops cgc_shared_ops = {
	.id = CGCOUNT_SHARED,
	.open = shared_open,
	.watch = shared_watch,
	.unwatch = shared_unwatch,
	.close = shared_close,
	.add = shared_add,
	.remove = shared_remove,
	.read_one = shared_read_one,
	.read_all = shared_read_all,
};
