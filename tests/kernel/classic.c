// SPDX-License-Identifier: GPL-2.0
/*
 * Classic per-cgroup perf events (PERF_FLAG_PID_CGROUP) against cgroup
 * cpu.stat and the workers' own rusage. Needs no patch: it checks the helper
 * library and the truths the multi-cgroup tests compare against.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "pcg_lib.h"
#include "harness.h"

#define BUSY_NS		(1000 * NSEC_PER_MSEC)
#define PINGPONG_ITERS	3000ULL

FIXTURE(classic) {
	char root[CGTEST_PATH_MAX];
	char a[CGTEST_PATH_MAX], b[CGTEST_PATH_MAX];
	struct cgtest_worker_stat *st;
};

FIXTURE_SETUP(classic)
{
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "classic"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	ASSERT_EQ(0, cgtest_create(self->b, self->root, "b"));
	self->st = cgtest_stats_alloc(2);
	ASSERT_NE(NULL, self->st);
}

FIXTURE_TEARDOWN(classic)
{
	cgtest_stats_free(self->st, 2);
	EXPECT_EQ(0, cgtest_destroy_tree(self->root));
}

/* cpu-clock of a cgroup event == cpu.stat usage of that cgroup (5%). */
TEST_F(classic, cpu_clock_matches_cpu_stat)
{
	struct pcg_events ev;
	int64_t u0, u1;
	uint64_t clock_ns;
	pid_t pid;

	ASSERT_EQ(0, pcg_open_cgroup_events(&ev, self->a,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	u0 = cgtest_usage_usec(self->a);
	ASSERT_LE(0, u0);
	pid = cgtest_spawn_busy(self->a, BUSY_NS, -1, &self->st[0]);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, cgtest_wait(pid));
	u1 = cgtest_usage_usec(self->a);
	ASSERT_EQ(0, pcg_read_sum(&ev, &clock_ns));
	pcg_close_events(&ev);

	TH_LOG("cpu-clock %lu ns, cpu.stat %ld us, worker %lu ns",
	       clock_ns, u1 - u0,
	       self->st[0].cpu_ns_end - self->st[0].cpu_ns_joined);
	EXPECT_LE(BUSY_NS, clock_ns);
	EXPECT_TRUE(cgtest_within_pct(clock_ns, (u1 - u0) * 1000.0, 5));
}

/* A parent's cgroup event counts its children: P == C1 + C2 (2%). */
TEST_F(classic, parent_counts_children)
{
	struct pcg_events ep, ea, eb;
	uint64_t vp, va, vb;
	pid_t p1, p2;

	ASSERT_EQ(0, pcg_open_cgroup_events(&ep, self->root,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	ASSERT_EQ(0, pcg_open_cgroup_events(&ea, self->a,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	ASSERT_EQ(0, pcg_open_cgroup_events(&eb, self->b,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	p1 = cgtest_spawn_busy(self->a, BUSY_NS, -1, NULL);
	p2 = cgtest_spawn_busy(self->b, BUSY_NS / 2, -1, NULL);
	ASSERT_LT(0, p1);
	ASSERT_LT(0, p2);
	ASSERT_EQ(0, cgtest_wait(p1));
	ASSERT_EQ(0, cgtest_wait(p2));
	ASSERT_EQ(0, pcg_read_sum(&ep, &vp));
	ASSERT_EQ(0, pcg_read_sum(&ea, &va));
	ASSERT_EQ(0, pcg_read_sum(&eb, &vb));
	pcg_close_events(&ep);
	pcg_close_events(&ea);
	pcg_close_events(&eb);

	TH_LOG("parent %lu, a %lu, b %lu", vp, va, vb);
	EXPECT_LE(BUSY_NS, va);
	EXPECT_LE(BUSY_NS / 2, vb);
	EXPECT_TRUE(cgtest_within_pct(vp, va + vb, 2));
}

/*
 * context-switches of a cgroup event == the switches its task did itself
 * (rusage nvcsw + nivcsw), within 2% + a few for joining and exiting.
 */
TEST_F(classic, context_switches_match_rusage)
{
	struct pcg_events ev;
	uint64_t csw, own;
	pid_t pids[2];

	ASSERT_EQ(0, pcg_open_cgroup_events(&ev, self->a,
					    PERF_COUNT_SW_CONTEXT_SWITCHES, 0));
	ASSERT_EQ(0, cgtest_spawn_pingpong(self->a, self->b, PINGPONG_ITERS, 0,
					   self->st, pids));
	ASSERT_EQ(0, cgtest_wait(pids[0]));
	ASSERT_EQ(0, cgtest_wait(pids[1]));
	ASSERT_EQ(0, pcg_read_sum(&ev, &csw));
	pcg_close_events(&ev);

	own = self->st[0].csw_end - self->st[0].csw_joined;
	TH_LOG("cgroup event %lu switches, worker rusage %lu", csw, own);
	EXPECT_LE(PINGPONG_ITERS, own);
	EXPECT_LE(own, csw);
	EXPECT_GE(own + own / 50 + 5, csw);
}

TEST_HARNESS_MAIN
