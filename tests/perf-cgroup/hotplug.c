// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug and a multi-cgroup perf event: taking a cpu offline removes
 * its cpu-wide events from the cpu (as for any cpu event); the nodes keep
 * what they counted up to then, can still be read, attached and detached,
 * and the cpu coming back online neither crashes nor resurrects counting.
 * The kernel log is checked for splats by the runner.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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
	char root[PCG_PATH_MAX], a[PCG_PATH_MAX], b[PCG_PATH_MAX];
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
	ASSERT_EQ(0, pcg_cg_create_test_root(self->root, "hotplug"));
	ASSERT_EQ(0, pcg_cg_create(self->a, self->root, "a"));
	ASSERT_EQ(0, pcg_cg_create(self->b, self->root, "b"));
	self->ida = pcg_cg_id(self->a);
	self->idb = pcg_cg_id(self->b);
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK, 0, 0));
	ASSERT_LT(HOT_CPU, self->ev.nr);
	ASSERT_EQ(0, pcg_attach_all(&self->ev, &self->ida, 1));
}

FIXTURE_TEARDOWN(hotplug)
{
	if (self->offlined)
		EXPECT_EQ(0, set_cpu_online(HOT_CPU, 1));
	pcg_close_events(&self->ev);
	EXPECT_EQ(0, pcg_cg_destroy_tree(self->root));
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
	pid_t pid = pcg_spawn_busy(cg, BURN_NS, cpu, NULL);

	if (pid < 0 || pcg_wait(pid))
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
	ASSERT_TRUE(pcg_within_pct(before, used, 5));
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
	EXPECT_TRUE(pcg_within_pct(total, used, 5));
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

TEST_HARNESS_MAIN
