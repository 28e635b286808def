// SPDX-License-Identifier: GPL-2.0
/*
 * Every bad input of the multi-cgroup perf event ioctls fails with its
 * documented errno and leaves the existing nodes and counts as they were.
 *
 * The fixture attaches cgroup a to a cpu-clock event on every cpu and lets a
 * task burn cpu in a, then exits it: a's count is frozen, so each test can
 * check after its bad call that a's count is still exactly the same, that no
 * other node appeared, and that b was not attached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"

FIXTURE(bad) {
	char root[CGTEST_PATH_MAX];
	char a[CGTEST_PATH_MAX], b[CGTEST_PATH_MAX];
	uint64_t ida, idb, dead_id;
	uint64_t va[PCG_MAX_CPUS];
	struct pcg_events ev;
	int fd;		/* ev.fd[0] */
};

static int read_one(int fd, uint64_t id, uint64_t *v)
{
	int ret = pcg_read_cgroup(fd, id, v, 1);

	return ret < 0 ? ret : 0;
}

FIXTURE_SETUP(bad)
{
	char dead[CGTEST_PATH_MAX];
	pid_t pid;
	int cpu;

	PCG_REQUIRE_ATTACH();
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "bad"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	ASSERT_EQ(0, cgtest_create(self->b, self->root, "b"));
	ASSERT_EQ(0, cgtest_create(dead, self->root, "dead"));
	self->ida = cgtest_id(self->a);
	self->idb = cgtest_id(self->b);
	self->dead_id = cgtest_id(dead);
	ASSERT_NE(0, self->dead_id);
	ASSERT_EQ(0, cgtest_rmdir(dead));

	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 0, 0));
	self->fd = self->ev.fd[0];
	ASSERT_EQ(0, pcg_attach_all(&self->ev, &self->ida, 1));
	/* pinned to cpu 0, so ev.fd[0] (the one the tests poke) counts */
	pid = cgtest_spawn_busy(self->a, BUSY_NS / 5, 0, NULL);
	ASSERT_WORKER(pid);
	for (cpu = 0; cpu < self->ev.nr; cpu++)
		ASSERT_EQ(0, read_one(self->ev.fd[cpu], self->ida,
				      &self->va[cpu]));
	ASSERT_LE(BUSY_NS / 5, self->va[0]);
}

FIXTURE_TEARDOWN(bad)
{
	pcg_close_events(&self->ev);
	EXPECT_EQ(0, cgtest_destroy_tree(self->root));
}

/* a's count unchanged on every cpu, a the only node, b not attached. */
#define ASSERT_UNCHANGED() do { \
	uint64_t __v, __buf[3 + 2 * 2]; \
	int __cpu; \
	for (__cpu = 0; __cpu < self->ev.nr; __cpu++) { \
		int __fd = self->ev.fd[__cpu]; \
		ASSERT_EQ(0, read_one(__fd, self->ida, &__v)); \
		ASSERT_EQ(self->va[__cpu], __v); \
		ASSERT_EQ(-ENOENT, read_one(__fd, self->idb, &__v)); \
		memset(__buf, 0, sizeof(__buf)); \
		__buf[0] = sizeof(__buf); \
		ASSERT_EQ(8 + 16, ioctl(__fd, PERF_EVENT_IOC_READ_CGROUPS, __buf)); \
		ASSERT_EQ(1, __buf[2]); \
		ASSERT_EQ(self->ida, __buf[3]); \
		ASSERT_EQ(self->va[__cpu], __buf[4]); \
	} \
} while (0)

/* ioctl returning -errno */
static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret = ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

/* A page whose successor is unmapped: buffers that run off its end. */
static uint64_t *page_end(int words)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p + pg, pg))
		return NULL;
	return (uint64_t *)(p + pg) - words;
}

TEST_F(bad, attach_nr_zero)
{
	uint64_t buf[2] = { 0, self->idb };

	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_ATTACH_CGROUP, buf));
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_nr_too_large)
{
	uint64_t buf[2] = { PERF_CGROUP_ATTACH_MAX_NR + 1ULL, self->idb };

	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_ATTACH_CGROUP, buf));
	buf[0] = ~0ULL;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_ATTACH_CGROUP, buf));
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_bad_pointer)
{
	uint64_t *end = page_end(2);

	ASSERT_NE(NULL, end);
	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_ATTACH_CGROUP,
				  (void *)8));
	/* nr readable, ids run into the unmapped page: b must not stick */
	end[0] = 3;
	end[1] = self->idb;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_ATTACH_CGROUP, end));
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_unknown_ids)
{
	char file[CGTEST_PATH_MAX + 16];
	uint64_t ids[2] = { self->idb, self->dead_id };

	/* a removed cgroup, a made-up id, a cgroup file's (non-dir) id */
	EXPECT_EQ(-ENOENT, pcg_attach(self->fd, &self->dead_id, 1));
	ids[1] = ~0ULL - 1;
	EXPECT_EQ(-ENOENT, pcg_attach(self->fd, &ids[1], 1));
	snprintf(file, sizeof(file), "%s/cgroup.procs", self->a);
	ids[1] = cgtest_id(file);
	ASSERT_NE(0, ids[1]);
	EXPECT_EQ(-ENOENT, pcg_attach(self->fd, &ids[1], 1));
	/* one bad id among good ones: nothing of the call is attached */
	ids[1] = self->dead_id;
	EXPECT_EQ(-ENOENT, pcg_attach(self->fd, ids, 2));
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_sampling_event)
{
	struct perf_event_attr attr;
	int fd;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, 0, 0);
	attr.sample_period = 100000;
	fd = pcg_perf_open(&attr, -1, 0, -1, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pcg_attach(fd, &self->idb, 1));
	close(fd);
	attr.sample_period = 0;
	attr.freq = 1;
	attr.sample_freq = 100;
	fd = pcg_perf_open(&attr, -1, 0, -1, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pcg_attach(fd, &self->idb, 1));
	close(fd);
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_per_task_event)
{
	struct perf_event_attr attr;
	int fd;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, 0, 0);
	fd = pcg_perf_open(&attr, 0, -1, -1, 0);	/* this task, any cpu */
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pcg_attach(fd, &self->idb, 1));
	close(fd);
	fd = pcg_perf_open(&attr, 0, 0, -1, 0);		/* this task on cpu 0 */
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pcg_attach(fd, &self->idb, 1));
	close(fd);
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_cgroup_event)
{
	struct pcg_events cg;

	ASSERT_EQ(0, pcg_open_cgroup_events(&cg, self->a,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	EXPECT_EQ(-EINVAL, pcg_attach(cg.fd[0], &self->idb, 1));
	pcg_close_events(&cg);
	ASSERT_UNCHANGED();
}

/* ATTACH goes to a group's leader; on a sibling it is refused. */
TEST_F(bad, attach_group_sibling)
{
	struct pcg_events lead, sib;
	struct pcg_reading r;

	ASSERT_EQ(0, pcg_open_cpu_events(&lead, PERF_COUNT_SW_CPU_CLOCK, 0, 0));
	ASSERT_EQ(0, pcg_open_sibling_events(&sib, &lead,
					     PERF_COUNT_SW_CONTEXT_SWITCHES,
					     0));
	EXPECT_EQ(-EINVAL, pcg_attach(sib.fd[0], &self->idb, 1));
	EXPECT_EQ(-ENOENT, pcg_read_cgroup_sum(&lead, self->idb, 0, &r));
	pcg_close_events(&sib);
	pcg_close_events(&lead);
	ASSERT_UNCHANGED();
}

/*
 * Every member must count: a sampling sibling under a counting leader is
 * refused like a sampling leader, and nothing is attached.
 */
TEST_F(bad, attach_group_with_sampling_sibling)
{
	struct perf_event_attr attr;
	uint64_t out[3];
	int lead, sib;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, PERF_FORMAT_GROUP, 1);
	lead = pcg_perf_open(&attr, -1, 0, -1, 0);
	ASSERT_LE(0, lead);
	pcg_attr_init(&attr, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0);
	attr.sample_period = 1000;
	sib = pcg_perf_open(&attr, -1, 0, lead, 0);
	ASSERT_LE(0, sib);
	EXPECT_EQ(-EINVAL, pcg_attach(lead, &self->idb, 1));
	EXPECT_EQ(-ENOENT, pcg_read_cgroup(lead, self->idb, out, 3));
	close(sib);
	close(lead);
	ASSERT_UNCHANGED();
}

TEST_F(bad, attach_format_lost)
{
	struct perf_event_attr attr;
	int fd;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, PERF_FORMAT_LOST, 0);
	fd = pcg_perf_open(&attr, -1, 0, -1, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pcg_attach(fd, &self->idb, 1));
	close(fd);
	ASSERT_UNCHANGED();
}

TEST_F(bad, detach_not_attached)
{
	uint64_t ids[2] = { self->ida, self->idb };

	EXPECT_EQ(-ENOENT, pcg_detach(self->fd, &self->idb, 1));
	EXPECT_EQ(-ENOENT, pcg_detach(self->fd, &self->dead_id, 1));
	/* a is attached, b is not: a must stay */
	EXPECT_EQ(-ENOENT, pcg_detach(self->fd, ids, 2));
	ASSERT_UNCHANGED();
}

TEST_F(bad, detach_bad_sizes_and_pointers)
{
	uint64_t buf[2] = { 0, self->ida }, *end = page_end(2);

	ASSERT_NE(NULL, end);
	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_DETACH_CGROUP, buf));
	buf[0] = PERF_CGROUP_ATTACH_MAX_NR + 1ULL;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_DETACH_CGROUP, buf));
	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_DETACH_CGROUP,
				  (void *)8));
	end[0] = 2;
	end[1] = self->ida;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_DETACH_CGROUP, end));
	ASSERT_UNCHANGED();
}

TEST_F(bad, read_not_attached)
{
	uint64_t v;

	EXPECT_EQ(-ENOENT, read_one(self->fd, self->idb, &v));
	EXPECT_EQ(-ENOENT, read_one(self->fd, self->dead_id, &v));
	ASSERT_UNCHANGED();
}

TEST_F(bad, read_buffer_sizes)
{
	uint64_t buf[3] = { 8, self->ida, 0 }, *end;

	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUP, buf));
	buf[0] = 16;	/* header only: no room for the value */
	EXPECT_EQ(-ENOSPC, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUP, buf));
	EXPECT_EQ(24, buf[0]);
	EXPECT_EQ(8, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUP, buf));
	EXPECT_EQ(self->va[0], buf[2]);

	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUP,
				  (void *)8));
	/* the header is readable, the output is not */
	end = page_end(2);
	ASSERT_NE(NULL, end);
	end[0] = 24;
	end[1] = self->ida;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUP, end));
	ASSERT_UNCHANGED();
}

TEST_F(bad, read_cgroups_flags_and_sizes)
{
	uint64_t buf[5] = { sizeof(buf), 2, 0, 0, 0 };

	/* bit 0 is PERF_READ_CGROUPS_DETACH_REMOVED; no other flag exists */
	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUPS, buf));
	buf[1] = 1ULL << 63;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUPS, buf));
	buf[1] = 0;
	buf[0] = 24;	/* room for nr_records, not for the record */
	EXPECT_EQ(-ENOSPC, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUPS, buf));
	EXPECT_EQ(40, buf[0]);
	EXPECT_EQ(24, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUPS, buf));
	EXPECT_EQ(1, buf[2]);
	EXPECT_EQ(self->ida, buf[3]);
	EXPECT_EQ(self->va[0], buf[4]);
	EXPECT_EQ(-EFAULT, xioctl(self->fd, PERF_EVENT_IOC_READ_CGROUPS,
				  (void *)8));
	ASSERT_UNCHANGED();
}

/* An unpatched-style misuse: nodes survive a read() and ENABLE/DISABLE. */
TEST_F(bad, plain_read_and_toggle_keep_nodes)
{
	uint64_t total;

	ASSERT_EQ(0, pcg_disable(&self->ev));
	ASSERT_EQ(0, pcg_enable(&self->ev));
	ASSERT_EQ(0, pcg_read_sum(&self->ev, &total));
	ASSERT_LE(self->va[0], total);
	ASSERT_UNCHANGED();
}

TEST_HARNESS_MAIN
