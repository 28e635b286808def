// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug and a multi-cgroup perf event: taking a cpu offline removes
 * its cpu-wide events from the cpu (as for any cpu event); the nodes keep
 * what they counted up to then, can still be read, attached and detached,
 * and the cpu coming back online neither crashes nor resurrects counting.
 * A group keeps its layout and its members' counts flushed up to offline.
 * The kernel log is checked for splats by the runner.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"

#define HOT_CPU		1
#define BURN_NS		(400 * NSEC_PER_MSEC)

static int set_cpu_online(int cpu, int online)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, online ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE(hotplug) {
	char root[CGTEST_PATH_MAX], a[CGTEST_PATH_MAX], b[CGTEST_PATH_MAX];
	uint64_t ida, idb;
	struct pcg_events ev;
	int offlined;
};

FIXTURE_SETUP(hotplug)
{
	PCG_REQUIRE_ATTACH();
	if (pcg_nr_cpus() <= HOT_CPU)
		SKIP(return, "needs at least %d cpus", HOT_CPU + 1);
	if (access("/sys/devices/system/cpu/cpu1/online", W_OK))
		SKIP(return, "cpu%d cannot be taken offline", HOT_CPU);
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "hotplug"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	ASSERT_EQ(0, cgtest_create(self->b, self->root, "b"));
	self->ida = cgtest_id(self->a);
	self->idb = cgtest_id(self->b);
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK, 0, 0));
	ASSERT_LT(HOT_CPU, self->ev.nr);
	ASSERT_EQ(0, pcg_attach_all(&self->ev, &self->ida, 1));
}

FIXTURE_TEARDOWN(hotplug)
{
	if (self->offlined)
		EXPECT_EQ(0, set_cpu_online(HOT_CPU, 1));
	pcg_close_events(&self->ev);
	EXPECT_EQ(0, cgtest_destroy_tree(self->root));
}

/* The node's value on one cpu's event, or -errno. */
static int64_t value_on(struct pcg_events *ev, int cpu, uint64_t id)
{
	uint64_t out[1];
	int ret = pcg_read_cgroup(ev->fd[cpu], id, out, 1);

	return ret < 0 ? ret : (int64_t)out[0];
}

static int64_t event_value(struct pcg_events *ev, int cpu)
{
	uint64_t v;

	return read(ev->fd[cpu], &v, sizeof(v)) == sizeof(v) ? (int64_t)v : -errno;
}

/* Burn ns in cg on cpu (-1: anywhere); returns cpu.stat's usage delta. */
static int64_t burn_in(const char *cg, int cpu)
{
	int64_t u0 = usage_ns(cg);
	pid_t pid = cgtest_spawn_busy(cg, BURN_NS, cpu, NULL);

	if (pid < 0 || cgtest_wait(pid))
		return -1;
	return usage_ns(cg) - u0;
}

/* Counts up to the offline stay, exact, and stop growing. */
TEST_F(hotplug, offline_keeps_counts_up_to_offline)
{
	int64_t used, before, event_before, total = 0;
	int cpu;

	used = burn_in(self->a, HOT_CPU);
	before = value_on(&self->ev, HOT_CPU, self->ida);
	ASSERT_TRUE(cgtest_within_pct(before, used, 5));
	ASSERT_EQ(0, set_cpu_online(HOT_CPU, 0));
	self->offlined = 1;
	event_before = event_value(&self->ev, HOT_CPU);
	ASSERT_LE(before, event_before);

	used = burn_in(self->a, -1);
	EXPECT_EQ(before, value_on(&self->ev, HOT_CPU, self->ida));
	EXPECT_EQ(event_before, event_value(&self->ev, HOT_CPU));
	/* the other cpus counted the second burn */
	for (cpu = 0; cpu < self->ev.nr; cpu++)
		if (cpu != HOT_CPU)
			total += value_on(&self->ev, cpu, self->ida);
	TH_LOG("offline cpu%d node %ld; others %ld of %ld used", HOT_CPU,
	       before, total, used);
	EXPECT_TRUE(cgtest_within_pct(total, used, 5));
}

/* ATTACH, READ_CGROUPS and DETACH work on an offline cpu's event. */
TEST_F(hotplug, ioctls_work_while_offline)
{
	uint64_t *buf = NULL;
	size_t size = 0;

	ASSERT_EQ(0, set_cpu_online(HOT_CPU, 0));
	self->offlined = 1;
	ASSERT_EQ(0, pcg_attach(self->ev.fd[HOT_CPU], &self->idb, 1));
	EXPECT_EQ(0, value_on(&self->ev, HOT_CPU, self->idb));
	ASSERT_LT(0, pcg_read_cgroups(self->ev.fd[HOT_CPU], &buf, &size));
	EXPECT_EQ(2, buf[2]);	/* nr: a and b */
	free(buf);
	EXPECT_EQ(0, pcg_detach(self->ev.fd[HOT_CPU], &self->idb, 1));
	EXPECT_EQ(-ENOENT, value_on(&self->ev, HOT_CPU, self->idb));
}

/*
 * Back online, the cpu's events stay removed (as for every cpu event: tools
 * reopen them); the node neither counts nor breaks, and close is clean.
 */
TEST_F(hotplug, online_again_does_not_resurrect_counting)
{
	int64_t before;

	ASSERT_LT(0, burn_in(self->a, HOT_CPU));
	ASSERT_EQ(0, set_cpu_online(HOT_CPU, 0));
	self->offlined = 1;
	before = value_on(&self->ev, HOT_CPU, self->ida);
	ASSERT_EQ(0, set_cpu_online(HOT_CPU, 1));
	self->offlined = 0;
	ASSERT_LT(0, burn_in(self->a, HOT_CPU));
	EXPECT_EQ(before, value_on(&self->ev, HOT_CPU, self->ida));
}

/* The first value of a read(2) of fd: with PERF_FORMAT_GROUP the word after nr. */
static int64_t own_count(int fd, int group)
{
	uint64_t v[8];

	if (read(fd, v, sizeof(v)) < (ssize_t)(2 * sizeof(v[0])))
		return -errno;
	return (int64_t)v[group ? 1 : 0];
}

/*
 * A group (leader cpu-clock, sibling context-switches) on the hot cpu with
 * the root cgroup attached, enabled only after ATTACH: the root node equals
 * each member's own count. Taking the cpu offline must flush what the group
 * counted since the last cgroup-changing switch (the root cgroup's idle and
 * kthread time) before the members leave the group, and the node keeps both
 * members: READ_CGROUP still reports 2, each equal to its event's final
 * count.
 */
TEST_F(hotplug, group_offline_flushes_and_keeps_both_members)
{
	const uint64_t fmt = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	uint64_t root_id = cgtest_id(cgtest_root());
	uint64_t out[1 + 2 * 2], lead_id, sib_id;
	int64_t lead_total, sib_total;
	struct pcg_events lead, sib;
	int fd;

	ASSERT_NE(0, root_id);
	ASSERT_EQ(0, pcg_open_cpu_events(&lead, PERF_COUNT_SW_CPU_CLOCK, fmt, 1));
	ASSERT_EQ(0, pcg_open_sibling_events(&sib, &lead,
					     PERF_COUNT_SW_CONTEXT_SWITCHES,
					     PERF_FORMAT_ID));
	fd = lead.fd[HOT_CPU];
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ID, &lead_id));
	ASSERT_EQ(0, ioctl(sib.fd[HOT_CPU], PERF_EVENT_IOC_ID, &sib_id));
	ASSERT_EQ(0, pcg_attach_all(&lead, &root_id, 1));
	ASSERT_EQ(0, pcg_enable(&lead));
	ASSERT_LT(0, burn_in(self->a, HOT_CPU));
	ASSERT_EQ(sizeof(out), pcg_read_cgroup(fd, root_id, out, 5));
	ASSERT_EQ(2, out[0]);
	/* root tasks switch among themselves without a flush: leave it pending */
	usleep(200 * 1000);

	ASSERT_EQ(0, set_cpu_online(HOT_CPU, 0));
	self->offlined = 1;
	lead_total = own_count(fd, 1);
	sib_total = own_count(sib.fd[HOT_CPU], 0);
	ASSERT_EQ(sizeof(out), pcg_read_cgroup(fd, root_id, out, 5));
	TH_LOG("offline: nr %lu, cpu-clock node %lu own %ld, csw node %lu own %ld",
	       out[0], out[1], lead_total, out[3], sib_total);
	EXPECT_EQ(2, out[0]);
	EXPECT_EQ(lead_total, (int64_t)out[1]);
	EXPECT_EQ(lead_id, out[2]);
	EXPECT_EQ(sib_total, (int64_t)out[3]);
	EXPECT_EQ(sib_id, out[4]);
	pcg_close_events(&sib);
	pcg_close_events(&lead);
}

TEST_HARNESS_MAIN
