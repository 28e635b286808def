// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy of PERF_EVENT_IOC_ATTACH_CGROUP / READ_CGROUP: one cpu-wide event
 * per cpu counts for several cgroups; each node is compared with an
 * independent truth (cgroup cpu.stat, a classic per-cgroup event open over
 * the same interval, the workers' own rusage, the event's own total).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"

#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

FIXTURE(attach) {
	char root[CGTEST_PATH_MAX];
	char a[CGTEST_PATH_MAX], b[CGTEST_PATH_MAX];
	uint64_t ida, idb, idroot;
	struct cgtest_worker_stat *st;
	struct pcg_events ev, classic;
};

FIXTURE_SETUP(attach)
{
	PCG_REQUIRE_ATTACH();
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "attach"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	ASSERT_EQ(0, cgtest_create(self->b, self->root, "b"));
	self->idroot = cgtest_id(self->root);
	self->ida = cgtest_id(self->a);
	self->idb = cgtest_id(self->b);
	ASSERT_NE(0, self->ida);
	ASSERT_NE(0, self->idb);
	self->st = cgtest_stats_alloc(4);
	ASSERT_NE(NULL, self->st);
	self->ev.nr = self->classic.nr = 0;
}

FIXTURE_TEARDOWN(attach)
{
	pcg_close_events(&self->ev);
	pcg_close_events(&self->classic);
	cgtest_stats_free(self->st, 4);
	EXPECT_EQ(0, cgtest_destroy_tree(self->root));
}

/*
 * A busy task in a: the node's cpu-clock matches a's cpu.stat usage (5%) and
 * a classic cgroup event open over the same interval (2%); the node's
 * time_enabled/time_running are that same active time.
 */
TEST_F(attach, cpu_clock_matches_cpu_stat_and_cgroup_event)
{
	struct pcg_reading node;
	uint64_t classic;
	int64_t u0, u1;

	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 TIMES, 0));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, &self->ida, 1));
	ASSERT_EQ(0, pcg_open_cgroup_events(&self->classic, self->a,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	u0 = usage_ns(self->a);
	ASSERT_WORKER(cgtest_spawn_busy(self->a, BUSY_NS, -1, &self->st[0]));
	u1 = usage_ns(self->a);
	ASSERT_EQ(0, pcg_read_sum(&self->classic, &classic));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, self->ida, TIMES, &node));

	TH_LOG("node %lu ns (enabled %lu running %lu), classic %lu ns, cpu.stat %ld ns",
	       node.value, node.enabled, node.running, classic, u1 - u0);
	ASSERT_LE(BUSY_NS, node.value);
	EXPECT_TRUE(cgtest_within_pct(node.value, u1 - u0, 5));
	EXPECT_TRUE(cgtest_within_pct(node.value, classic, 2));
	/* software event: never multiplexed, enabled == running == active */
	EXPECT_LE(node.running, node.enabled);
	EXPECT_TRUE(cgtest_within_pct(node.enabled, node.value, 2));
	EXPECT_TRUE(cgtest_within_pct(node.running, node.value, 2));
}

/*
 * Hierarchy: root/p/{c1,c2} with a task in p itself; root, c1 and c2 are
 * attached, p (intermediate) is not. The root node counts everything below
 * it: root == own(p) + c1 + c2, and each part matches cpu.stat (5%). p's
 * own share is a difference of differences, compared with classic cgroup
 * events on p, c1 and c2 (p's counts its children too), which cut time at
 * the same switches as the node: cpu.stat charges a switch's own work to
 * the next task, which puts that difference 8% off under a loaded debug
 * kernel.
 */
TEST_F(attach, hierarchy_parent_is_own_plus_children)
{
	char p[CGTEST_PATH_MAX], c1[CGTEST_PATH_MAX], c2[CGTEST_PATH_MAX];
	const char *paths[3] = { p, c1, c2 };
	struct pcg_events classic[3] = { 0 };
	struct pcg_reading top, r1, r2;
	uint64_t ids[3], cl[3];
	int64_t u0[3], u1[3];
	pid_t pid[3];
	int i;

	ASSERT_EQ(0, cgtest_create(p, self->root, "p"));
	ASSERT_EQ(0, cgtest_create(c1, p, "c1"));
	ASSERT_EQ(0, cgtest_create(c2, p, "c2"));
	ids[0] = self->idroot;
	ids[1] = cgtest_id(c1);
	ids[2] = cgtest_id(c2);
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 0, 0));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, ids, 3));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pcg_open_cgroup_events(&classic[i], paths[i],
						    PERF_COUNT_SW_CPU_CLOCK, 0));
	for (i = 0; i < 3; i++)
		u0[i] = usage_ns(paths[i]);
	pid[0] = cgtest_spawn_busy(p, BUSY_NS / 2, -1, NULL);
	pid[1] = cgtest_spawn_busy(c1, BUSY_NS, -1, NULL);
	pid[2] = cgtest_spawn_busy(c2, BUSY_NS / 2, -1, NULL);
	for (i = 0; i < 3; i++)
		ASSERT_WORKER(pid[i]);
	for (i = 0; i < 3; i++)
		u1[i] = usage_ns(paths[i]);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pcg_read_sum(&classic[i], &cl[i]));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[0], 0, &top));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[1], 0, &r1));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[2], 0, &r2));
	for (i = 0; i < 3; i++)
		pcg_close_events(&classic[i]);

	TH_LOG("top %lu c1 %lu c2 %lu; cpu.stat p %ld c1 %ld c2 %ld; classic p %lu c1 %lu c2 %lu",
	       top.value, r1.value, r2.value, u1[0] - u0[0], u1[1] - u0[1],
	       u1[2] - u0[2], cl[0], cl[1], cl[2]);
	ASSERT_LE(r1.value + r2.value, top.value);
	EXPECT_TRUE(cgtest_within_pct(r1.value, u1[1] - u0[1], 5));
	EXPECT_TRUE(cgtest_within_pct(r2.value, u1[2] - u0[2], 5));
	EXPECT_TRUE(cgtest_within_pct(top.value, u1[0] - u0[0], 5));
	/* own(p): what the root counted beyond c1 and c2, against classic p's beyond theirs */
	EXPECT_TRUE(cgtest_within_pct(top.value - r1.value - r2.value,
				      cl[0] - cl[1] - cl[2], 5));
}

/*
 * Conservation: with the event enabled only after ATTACH, the cgroup v2
 * root's node (everything: every task and the idle time) equals the event's
 * own total, and the disjoint children a + b equal their parent, which has
 * no task of its own. Everything is frozen by DISABLE before reading, so the
 * sums must agree to rounding (0.1%).
 */
TEST_F(attach, conservation_total_equals_sum_of_nodes)
{
	struct pcg_reading rroot, rtest, ra, rb;
	uint64_t ids[4], total;
	int64_t ua, ub;
	pid_t pa, pb;

	ids[0] = cgtest_id(cgtest_root());
	ids[1] = self->idroot;
	ids[2] = self->ida;
	ids[3] = self->idb;
	ASSERT_NE(0, ids[0]);
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 0, 1));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, ids, 4));
	ASSERT_EQ(0, pcg_enable(&self->ev));
	pa = cgtest_spawn_busy(self->a, BUSY_NS / 2, -1, NULL);
	pb = cgtest_spawn_busy(self->b, BUSY_NS / 2, -1, NULL);
	ASSERT_WORKER(pa);
	ASSERT_WORKER(pb);
	usleep(100000);
	ASSERT_EQ(0, pcg_disable(&self->ev));
	ASSERT_EQ(0, pcg_read_sum(&self->ev, &total));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[0], 0, &rroot));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[1], 0, &rtest));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[2], 0, &ra));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, ids[3], 0, &rb));

	ua = usage_ns(self->a);
	ub = usage_ns(self->b);
	TH_LOG("total %lu root %lu test %lu a %lu b %lu rest %ld; cpu.stat a %ld b %ld",
	       total, rroot.value, rtest.value, ra.value, rb.value,
	       (int64_t)(rroot.value - rtest.value), ua, ub);
	/*
	 * The workers ran whole lives in a and b under the enabled event: each
	 * node is its cgroup's cpu.stat usage. Not the nominal burn time: the
	 * burn stops on the thread's own cputime, which can run a little ahead
	 * of cpu-clock.
	 */
	EXPECT_TRUE(cgtest_within_pct(ra.value, ua, 5));
	EXPECT_TRUE(cgtest_within_pct(rb.value, ub, 5));
	EXPECT_TRUE(cgtest_within_pct(rroot.value, total, 0.1));
	EXPECT_TRUE(cgtest_within_pct(rtest.value, ra.value + rb.value, 0.1));
	EXPECT_LE(rtest.value, rroot.value);
}

/*
 * context-switches: a and b ping-pong on one cpu; a's node matches a classic
 * cgroup event over the same interval and the switches a's task counted
 * itself (rusage), within 2% + a few for joining and exiting.
 */
TEST_F(attach, context_switches_match_cgroup_event_and_rusage)
{
	struct pcg_reading na, nb;
	uint64_t classic, own_a, own_b, ids[2] = { self->ida, self->idb };
	pid_t pids[2];

	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev,
					 PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, ids, 2));
	ASSERT_EQ(0, pcg_open_cgroup_events(&self->classic, self->a,
					    PERF_COUNT_SW_CONTEXT_SWITCHES, 0));
	ASSERT_EQ(0, cgtest_spawn_pingpong(self->a, self->b, PINGPONG_ITERS, 0,
					   self->st, pids));
	ASSERT_WORKER(pids[0]);
	ASSERT_WORKER(pids[1]);
	ASSERT_EQ(0, pcg_read_sum(&self->classic, &classic));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, self->ida, 0, &na));
	ASSERT_EQ(0, pcg_read_cgroup_sum(&self->ev, self->idb, 0, &nb));
	own_a = self->st[0].csw_end - self->st[0].csw_joined;
	own_b = self->st[1].csw_end - self->st[1].csw_joined;

	TH_LOG("a: node %lu classic %lu rusage %lu; b: node %lu rusage %lu",
	       na.value, classic, own_a, nb.value, own_b);
	ASSERT_LE(PINGPONG_ITERS, own_a);
	EXPECT_LE(own_a, na.value);
	EXPECT_GE(own_a + own_a / 50 + 5, na.value);
	EXPECT_LE(own_b, nb.value);
	EXPECT_GE(own_b + own_b / 50 + 5, nb.value);
	EXPECT_TRUE(cgtest_within_pct(na.value, classic, 2));
}

static int event_id(int fd, uint64_t *id)
{
	return ioctl(fd, PERF_EVENT_IOC_ID, id) ? -errno : 0;
}

/*
 * PERF_FORMAT_GROUP: ATTACH on a leader (cpu-clock) applies to its sibling
 * (context-switches); one READ_CGROUP returns both per-cgroup counts in the
 * group layout, each matching its own truth.
 */
TEST_F(attach, group_read_per_cgroup)
{
	const uint64_t fmt = PERF_FORMAT_GROUP | PERF_FORMAT_ID | TIMES;
	struct pcg_events sib;
	uint64_t out[3 + 2 * 2], sum[2] = { 0, 0 }, te = 0, tr = 0;
	uint64_t own_csw, lead_id, sib_id, total[7], sib_total = 0, classic;
	int64_t u0, u1;
	pid_t pids[2], busy;
	int cpu, ret;

	/*
	 * The leader starts disabled: a sibling added to a running cpu-wide
	 * software group is never scheduled in and counts nothing (stock 6.12
	 * behaviour, also without ATTACH), so build the group, then enable.
	 */
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 fmt, 1));
	ASSERT_EQ(0, pcg_open_sibling_events(&sib, &self->ev,
					     PERF_COUNT_SW_CONTEXT_SWITCHES,
					     fmt));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, &self->ida, 1));
	ASSERT_EQ(0, pcg_enable(&self->ev));
	ASSERT_EQ(0, pcg_open_cgroup_events(&self->classic, self->a,
					    PERF_COUNT_SW_CPU_CLOCK, 0));
	u0 = usage_ns(self->a);
	busy = cgtest_spawn_busy(self->a, BUSY_NS / 2, -1, &self->st[2]);
	ASSERT_EQ(0, cgtest_spawn_pingpong(self->a, self->b, PINGPONG_ITERS, 0,
					   self->st, pids));
	ASSERT_WORKER(busy);
	ASSERT_WORKER(pids[0]);
	ASSERT_WORKER(pids[1]);
	u1 = usage_ns(self->a);
	ASSERT_EQ(0, pcg_read_sum(&self->classic, &classic));

	for (cpu = 0; cpu < self->ev.nr; cpu++) {
		ASSERT_EQ(0, event_id(self->ev.fd[cpu], &lead_id));
		ASSERT_EQ(0, event_id(sib.fd[cpu], &sib_id));
		ret = pcg_read_cgroup(self->ev.fd[cpu], self->ida, out, 7);
		ASSERT_EQ(sizeof(out), ret);
		ASSERT_EQ(2, out[0]);
		ASSERT_EQ(lead_id, out[4]);
		ASSERT_EQ(sib_id, out[6]);
		ASSERT_LE(out[2], out[1]);
		/* the node never exceeds the member's own total */
		ASSERT_EQ(sizeof(total), read(self->ev.fd[cpu], total,
					      sizeof(total)));
		ASSERT_LE(out[5], total[5]);
		sib_total += total[5];
		te += out[1];
		tr += out[2];
		sum[0] += out[3];
		sum[1] += out[5];
		/* a sibling is not a leader: ATTACH and READ go to the leader */
		ASSERT_EQ(-EINVAL, pcg_attach(sib.fd[cpu], &self->idb, 1));
	}
	pcg_close_events(&sib);
	own_csw = self->st[0].csw_end - self->st[0].csw_joined +
		  self->st[2].csw_end - self->st[2].csw_joined;

	TH_LOG("group: cpu-clock %lu (classic %lu, cpu.stat %ld) enabled %lu running %lu, csw %lu (rusage %lu, event total %lu)",
	       sum[0], classic, u1 - u0, te, tr, sum[1], own_csw, sib_total);
	/*
	 * The ping-pong switches thousands of times: cpu.stat charges each
	 * switch's own work to the next task and perf to the previous one,
	 * which under emulation on a loaded host is 16% of a's time. The
	 * classic cgroup event cuts time near where the node does, both in
	 * perf_event_task_sched_out() but not at the same instruction, and
	 * the node's cpu-clock and its enabled time are two more readings.
	 * Where the guest's clock is the host's (x86 under TCG), a
	 * preemption of QEMU's thread between two such points goes to a in
	 * one count and to the next task in the other: over ~3,000
	 * switches, with other guests on the host's two cpus, the node read
	 * 1,381.9 ms against classic 1,481.3 ms and enabled 1,485.5 ms, and
	 * 737.4 against 716.5 ms in a CI run; alone, within 0.1%. 10% holds
	 * that and still fails a node charged b's half of the ping-pong
	 * (docs/development.md, "Comparing backends"); cpu.stat stays a
	 * sanity bound, the context switches a tight one.
	 */
	EXPECT_TRUE(cgtest_within_pct(sum[0], classic, 10));
	EXPECT_TRUE(cgtest_within_pct(sum[0], u1 - u0, 20));
	EXPECT_TRUE(cgtest_within_pct(te, sum[0], 10));
	EXPECT_LE(own_csw, sum[1]);
	EXPECT_GE(own_csw + own_csw / 50 + 10, sum[1]);
}

TEST_HARNESS_MAIN
