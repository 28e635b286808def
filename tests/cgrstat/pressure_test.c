// SPDX-License-Identifier: GPL-2.0
/*
 * libcgcount's rstat backend when lib/cgrstat's maps are too small for the
 * cgroups (cgcount_opts.max_cgroups = 16): more cgroups than slots, and
 * cgroups that come and go with nobody reading.  Reads never fail; what
 * found no slot is reported by cgcount_errors() (unplaced) and counted in
 * its nearest ancestor with a slot, so that every cgroup with a slot still
 * holds all that ran below it: checked against classic per-cgroup
 * cpu-clock events on the same cgroups (the truth) and cpu.stat (a loose
 * bound: under TCG it reads 1-7 % off both perf counts).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pcg_lib.h"
#include "cgcount.h"

#define MAX_CGROUPS 16
#define PARENTS 2
#define LEAVES 12		/* per parent: 24 leaves for at most 16 slots */
#define BUSY_NS 40000000ULL
#define CHURN (5 * MAX_CGROUPS)
#define TRUTH_PCT 5		/* against the classic events */
#define CPUSTAT_PCT 10		/* against cpu.stat */

/* A task started directly inside cgroup @cg (clone3, CLONE_INTO_CGROUP:
 * no migration for perf's cgroup events to account) that burns @ns of cpu
 * and exits: its pid, or -errno. */
static pid_t spawn_busy_in(const char *cg, uint64_t ns)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long pid;

	if (fd < 0)
		return -errno;
	args.cgroup = fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		cgtest_burn_ns(ns);
		_exit(0);
	}
	close(fd);
	return pid < 0 ? -errno : pid;
}

static struct cgcount *open_pressed(void)
{
	CGCOUNT_OPTS(cgcount_opts, o, .backend = CGCOUNT_RSTAT, .max_cgroups = MAX_CGROUPS);

	return cgcount_open("cpu-clock", &o);
}

/* cpu-clock of cgroup @path in the readings @r[0 .. n), or -1 if absent */
static long long clock_of(const struct cgcount_reading *r, size_t n, const char *path)
{
	uint64_t id = cgtest_id(path);
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].cgroup_id == id)
			return r[i].values[0].value;
	return -1;
}

static long long usage_ns(const char *cg)
{
	return cgtest_usage_usec(cg) * 1000;
}

static uint64_t unplaced(struct cgcount *s)
{
	CGCOUNT_OPTS(cgcount_errors, e);

	return cgcount_errors(s, &e) ? ~0ULL : e.unplaced;
}

/*
 * 2 parents with 12 busy leaves each under a test root, for 16 slots (the
 * cgroups present at open hold some): the root and the parents, created
 * first, get slots, many leaves do not.  Reads while the leaves run and
 * after never fail; leaves without a slot read 0 and unplaced counts their
 * charges; each parent and the root read their classic event (which
 * counts everything below them), and at least their children's sum.  Then
 * the leaves go, and new leaves get slots and count their own time.
 */
TEST(map_pressure)
{
	char top[PATH_MAX], par[PARENTS][PATH_MAX], leaf[PARENTS][LEAVES][PATH_MAX];
	char fresh[3][PATH_MAX], name[32];
	struct pcg_events classic[1 + PARENTS];
	long long v, sum, children[1 + PARENTS], cls, zero_leaves = 0;
	pid_t pids[PARENTS * LEAVES + 3];
	struct cgcount_reading *r = NULL;
	uint64_t ref, unplaced_before;
	int i, j, running, reads = 0;
	struct cgcount *s;
	size_t n;

	s = open_pressed();
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, cgtest_create_test_root(top, "pressure"));
	ASSERT_EQ(0, pcg_open_cgroup_events(&classic[0], top, PERF_COUNT_SW_CPU_CLOCK, 0));
	for (i = 0; i < PARENTS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		ASSERT_EQ(0, cgtest_create(par[i], top, name));
		ASSERT_EQ(0, pcg_open_cgroup_events(&classic[1 + i], par[i],
						    PERF_COUNT_SW_CPU_CLOCK, 0));
	}
	for (i = 0; i < PARENTS; i++)
		for (j = 0; j < LEAVES; j++) {
			snprintf(name, sizeof(name), "l%d", j);
			ASSERT_EQ(0, cgtest_create(leaf[i][j], par[i], name));
		}
	ASSERT_LT(0, cgcount_add_subtree(s, top));
	for (i = 0; i < PARENTS; i++)
		for (j = 0; j < LEAVES; j++) {
			pids[i * LEAVES + j] = spawn_busy_in(leaf[i][j], BUSY_NS);
			ASSERT_LT(0, pids[i * LEAVES + j]);
		}
	/* read while they run: never a failure */
	do {
		ASSERT_EQ(0, cgcount_read_all(s, &r, &n));
		cgcount_readings_free(r, n);
		reads++;
		running = 0;
		for (i = 0; i < PARENTS * LEAVES; i++)
			if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == 0)
				running++;
			else
				pids[i] = 0;
		usleep(20000);
	} while (running);
	cgtest_settle_exited_tasks();
	ASSERT_EQ(0, cgcount_read_all(s, &r, &n));
	TH_LOG("%d reads while the leaves ran, unplaced %llu", reads,
	       (unsigned long long)unplaced(s));
	EXPECT_LT(0U, unplaced(s)) TH_LOG("every leaf found a slot: the test proves nothing");
	for (i = 0; i < PARENTS; i++) {
		children[1 + i] = 0;
		for (j = 0; j < LEAVES; j++) {
			v = clock_of(r, n, leaf[i][j]);
			EXPECT_LE(0, v) TH_LOG("%s not read", leaf[i][j]);
			if (v == 0)
				zero_leaves++;
			children[1 + i] += v;
		}
	}
	EXPECT_LT(0, zero_leaves) TH_LOG("no leaf without a slot");
	children[0] = 0;
	for (i = 0; i < PARENTS; i++)
		children[0] += clock_of(r, n, par[i]);
	for (i = 0; i < 1 + PARENTS; i++) {
		const char *cg = i ? par[i - 1] : top;

		v = clock_of(r, n, cg);
		ASSERT_EQ(0, pcg_read_sum(&classic[i], &ref));
		cls = ref;
		TH_LOG("%s: cpu-clock %lld ns, children %lld ns, classic %lld ns, cpu.stat %lld ns",
		       cg, v, children[i], cls, usage_ns(cg));
		EXPECT_LE(children[i], v) TH_LOG("%s holds less than its children", cg);
		/* Linux 6.16's classic cpu-clock events count 0 ns (bc4394e5e79c,
		 * tests/kernels.list): cpu.stat is the only truth there */
		if (cls)
			EXPECT_TRUE(cgtest_within_pct(v, cls, TRUTH_PCT)) TH_LOG("%s vs classic",
										 cg);
		EXPECT_TRUE(cgtest_within_pct(v, usage_ns(cg), CPUSTAT_PCT)) TH_LOG("%s vs cpu.stat",
										     cg);
		EXPECT_LE((long long)(PARENTS * LEAVES * BUSY_NS / (i ? PARENTS : 1) * 9 / 10), v);
	}
	cgcount_readings_free(r, n);

	/* the extra cgroups go; new ones get their slots */
	for (i = 0; i < PARENTS; i++)
		for (j = 0; j < LEAVES; j++)
			ASSERT_EQ(0, cgtest_rmdir(leaf[i][j]));
	ASSERT_EQ(0, cgtest_wait_released(top));
	ASSERT_EQ(0, cgcount_read_all(s, &r, &n));
	cgcount_readings_free(r, n);
	unplaced_before = unplaced(s);
	/* one after the other: three busy tasks on two cpus would switch
	 * between the new cgroups all along, and in a guest whose clock is
	 * the host's each switch can put a host preemption in either
	 * (docs/known-issues.md: Debian's 6.16 read one 16 % low so) */
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "new%d", i);
		ASSERT_EQ(0, cgtest_create(fresh[i], par[0], name));
		pids[i] = spawn_busy_in(fresh[i], BUSY_NS);
		ASSERT_LT(0, pids[i]);
		ASSERT_EQ(pids[i], waitpid(pids[i], NULL, 0));
	}
	cgtest_settle_exited_tasks();
	ASSERT_EQ(0, cgcount_read_all(s, &r, &n));
	for (i = 0, sum = 0; i < 3; i++) {
		v = clock_of(r, n, fresh[i]);
		TH_LOG("%s: cpu-clock %lld ns, cpu.stat %lld ns", fresh[i], v, usage_ns(fresh[i]));
		EXPECT_LE((long long)(BUSY_NS * 9 / 10), v) TH_LOG("%s found no slot", fresh[i]);
		EXPECT_TRUE(cgtest_within_pct(v, usage_ns(fresh[i]), CPUSTAT_PCT));
		sum += v;
	}
	EXPECT_LE(sum, clock_of(r, n, par[0]));
	EXPECT_EQ(unplaced_before, unplaced(s)) TH_LOG("the new cgroups' counts were unplaced");
	cgcount_readings_free(r, n);
	for (i = 0; i < 1 + PARENTS; i++)
		pcg_close_events(&classic[i]);
	cgcount_close(s);
	cgtest_destroy_tree(top);
}

/*
 * Five times as many cgroups as slots created, run in and removed with no
 * read in between: each removal frees its slot by itself once the kernel
 * has released the cgroup (each is waited for: no read happens then).  Then a read
 * works, nothing was unplaced, the root holds the removed cgroups' counts
 * (its classic event), and a new cgroup gets a slot: it counts its own
 * time.
 */
TEST(churn_without_reads)
{
	char top[PATH_MAX], cg[PATH_MAX];
	struct cgcount_value val, total;
	struct pcg_events classic;
	struct cgcount *s;
	uint64_t ref;
	pid_t pid;
	int i;

	s = open_pressed();
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, cgtest_create_test_root(top, "churn"));
	ASSERT_EQ(0, pcg_open_cgroup_events(&classic, top, PERF_COUNT_SW_CPU_CLOCK, 0));
	ASSERT_EQ(0, cgcount_add_path(s, top));
	for (i = 0; i < CHURN; i++) {
		ASSERT_EQ(0, cgtest_create(cg, top, "c"));
		pid = spawn_busy_in(cg, 1000000);
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, NULL, 0));
		cgtest_settle_exited_tasks();
		ASSERT_EQ(0, cgtest_rmdir(cg)) TH_LOG("cgroup %d", i);
		/* the kernel releases a removed cgroup later (RCU, a work
		 * item): its slot is free once it is released */
		ASSERT_EQ(0, cgtest_wait_released(top));
	}
	ASSERT_EQ(0, cgtest_create(cg, top, "last"));
	ASSERT_EQ(0, cgcount_add_path(s, cg));
	pid = spawn_busy_in(cg, BUSY_NS);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	cgtest_settle_exited_tasks();
	ASSERT_EQ(0, cgcount_read_path(s, top, &total, 1));
	ASSERT_EQ(0, cgcount_read_path(s, cg, &val, 1));
	TH_LOG("after %d cgroups: last %llu ns, cpu.stat %lld ns; all %llu ns, cpu.stat %lld ns; "
	       "unplaced %llu", CHURN, (unsigned long long)val.value, usage_ns(cg),
	       (unsigned long long)total.value, usage_ns(top), (unsigned long long)unplaced(s));
	EXPECT_LE(BUSY_NS * 9 / 10, val.value) TH_LOG("the new cgroup found no slot");
	EXPECT_TRUE(cgtest_within_pct(val.value, usage_ns(cg), CPUSTAT_PCT));
	EXPECT_EQ(0U, unplaced(s));
	/* the removed cgroups' final counts reached the root (cpu.stat reads
	 * more for such short tasks: lib/cgrstat/README.md) */
	ASSERT_EQ(0, pcg_read_sum(&classic, &ref));
	TH_LOG("all: classic %llu ns", (unsigned long long)ref);
	if (ref)
		EXPECT_TRUE(cgtest_within_pct(total.value, ref, TRUTH_PCT));
	pcg_close_events(&classic);
	cgcount_close(s);
	cgtest_destroy_tree(top);
}

TEST_HARNESS_MAIN
