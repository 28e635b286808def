// SPDX-License-Identifier: GPL-2.0
/*
 * A task moved to another cgroup while a task of its old cgroup runs on its
 * cpu inside the move: what the other task counted belongs to the old
 * cgroup. Two tasks of cgroup a ping-pong on cpu 1: t burns cpu, u takes
 * page faults. The test moves t from a to b and back, 30 times, from cpu
 * 0; a BPF program (move_window.bpf.c) holds each move to b after the cgroup
 * core's CGROUP_TASK_MIGRATING notification, before the commit, until t
 * was switched out, u ran, and t came back and ran for 50 us, so that the
 * move commits while t runs. Truths: per-task page-fault events of t and
 * u. b's page faults can only be t's (b <= t's), and every fault of u is
 * a's (a >= u's). A flush before the commit that charges the cgroup of the
 * task running at the next flush gives b u's faults of every held move.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"
#include "move_window.skel.h"

#define MOVES		30
#define FAULT_PAGES	8
#define TASK_CPU	1
#define MOVER_CPU	0
#define BURN_NS		(500 * 1000ULL)

/* shared with the ping-pong tasks */
struct pingpong {
	volatile int stop;
	volatile int parked;
};

/* One side of the ping-pong: wait for the token, work, pass it on. */
static void __attribute__((noreturn))
pingpong_task(struct pingpong *pp, int in, int out, int ready, bool faults)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = FAULT_PAGES * page;
	char *region = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char c = 'x';
	size_t i;

	if (region == MAP_FAILED || cgtest_pin_self(TASK_CPU))
		_exit(1);
	/* the first round's faults (its stack, pp) before counting */
	for (;;) {
		if (faults) {
			/* fresh pages: each first touch faults */
			if (mmap(region, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				 -1, 0) != region)
				_exit(1);
			for (i = 0; i < FAULT_PAGES; i++)
				region[i * page] = 1;
		} else {
			cgtest_burn_ns(BURN_NS);
		}
		if (ready >= 0) {
			if (pp->stop || write(ready, &c, 1) != 1)
				_exit(1);
			close(ready);
			ready = -1;
		} else if (write(out, &c, 1) != 1) {
			_exit(1);
		}
		if (read(in, &c, 1) != 1)
			_exit(1);
		if (pp->stop) {
			if (write(out, &c, 1) != 1)
				_exit(1);
			__sync_fetch_and_add(&pp->parked, 1);
			for (;;)
				pause();
		}
	}
}

FIXTURE(window) {
	char root[CGTEST_PATH_MAX];
	char a[CGTEST_PATH_MAX], b[CGTEST_PATH_MAX];
	struct pingpong *pp;
	pid_t t, u;
	int to_t[2], to_u[2];
	int t_fd, u_fd;
	struct pcg_events ev;
	struct move_window *skel;
};

FIXTURE_SETUP(window)
{
	int ready[2];
	char c;

	self->t = self->u = -1;
	self->t_fd = self->u_fd = -1;
	PCG_REQUIRE_ATTACH();
	ASSERT_LE(2, pcg_nr_cpus());
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "window"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	ASSERT_EQ(0, cgtest_create(self->b, self->root, "b"));
	self->pp = mmap(NULL, sizeof(*self->pp), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->pp);
	ASSERT_EQ(0, pipe(self->to_t));
	ASSERT_EQ(0, pipe(self->to_u));
	ASSERT_EQ(0, pipe(ready));
	self->t = fork();
	ASSERT_LE(0, self->t);
	if (!self->t)
		pingpong_task(self->pp, self->to_t[0], self->to_u[1], ready[1],
			      false);
	self->u = fork();
	ASSERT_LE(0, self->u);
	if (!self->u)
		pingpong_task(self->pp, self->to_u[0], self->to_t[1], ready[1],
			      true);
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	ASSERT_EQ(0, cgtest_move(self->a, self->t));
	ASSERT_EQ(0, cgtest_move(self->a, self->u));
	ASSERT_EQ(0, cgtest_pin_self(MOVER_CPU));

	self->skel = move_window__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->skel->bss->mover_tid = gettid();
	self->skel->bss->moved_tid = self->t;
	ASSERT_EQ(0, move_window__attach(self->skel));
}

FIXTURE_TEARDOWN(window)
{
	if (self->t > 0)
		kill(self->t, SIGKILL);
	if (self->u > 0)
		kill(self->u, SIGKILL);
	if (self->t > 0)
		waitpid(self->t, NULL, 0);
	if (self->u > 0)
		waitpid(self->u, NULL, 0);
	move_window__destroy(self->skel);
	if (self->t_fd >= 0)
		close(self->t_fd);
	if (self->u_fd >= 0)
		close(self->u_fd);
	pcg_close_events(&self->ev);
	EXPECT_EQ(0, cgtest_destroy_tree(self->root));
}

static int open_task_faults(pid_t pid)
{
	struct perf_event_attr attr;

	pcg_attr_init(&attr, PERF_COUNT_SW_PAGE_FAULTS, 0, 0);
	return pcg_perf_open(&attr, pid, -1, -1, 0);
}

static int64_t read_count(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? (int64_t)v : -errno;
}

/* Stop the ping-pong: both tasks park; 0, or -ETIMEDOUT after 10 s. */
static int park(struct pingpong *pp)
{
	int i;

	pp->stop = 1;
	for (i = 0; i < 10000 && pp->parked < 2; i++)
		usleep(1000);
	return pp->parked == 2 ? 0 : -ETIMEDOUT;
}

/*
 * Every move of t to b commits while t runs, after u ran inside the move:
 * b gets none of u's page faults, a all of them.
 */
TEST_F(window, other_task_counts_in_old_cgroup)
{
	uint64_t ids[2] = { cgtest_id(self->a), cgtest_id(self->b) };
	struct move_window__bss *bss = self->skel->bss;
	int64_t t_faults, u_faults, a, b;
	char c = 'x';
	int i;

	self->t_fd = open_task_faults(self->t);
	ASSERT_LE(0, self->t_fd);
	self->u_fd = open_task_faults(self->u);
	ASSERT_LE(0, self->u_fd);
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_PAGE_FAULTS,
					 0, 0));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, ids, 2));

	ASSERT_EQ(1, write(self->to_t[1], &c, 1));
	for (i = 0; i < MOVES; i++) {
		bss->armed = 1;
		ASSERT_EQ(0, cgtest_move(self->b, self->t));
		ASSERT_EQ(0, bss->armed) TH_LOG("move %d to b did not wait", i);
		ASSERT_EQ(0, cgtest_move(self->a, self->t));
	}
	ASSERT_EQ(0, park(self->pp));

	t_faults = read_count(self->t_fd);
	u_faults = read_count(self->u_fd);
	a = node_value(&self->ev, ids[0]);
	b = node_value(&self->ev, ids[1]);
	TH_LOG("%llu moves held, %llu with t back and running; page faults: a %lld, b %lld; t's %lld, u's %lld",
	       (unsigned long long)bss->waits, (unsigned long long)bss->caught,
	       (long long)a, (long long)b, (long long)t_faults,
	       (long long)u_faults);
	ASSERT_LE(0, t_faults);
	ASSERT_EQ(MOVES, bss->waits);
	/* the window must have been entered, or the test proves nothing */
	ASSERT_LE(MOVES / 2, bss->caught);
	/* u ran inside each of those moves */
	ASSERT_LE(bss->caught * FAULT_PAGES, u_faults);
	EXPECT_GE(t_faults, b) TH_LOG("b holds page faults t did not take");
	EXPECT_LE(u_faults, a) TH_LOG("a lacks page faults u took");
}

TEST_HARNESS_MAIN
