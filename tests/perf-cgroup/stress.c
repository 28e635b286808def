// SPDX-License-Identifier: GPL-2.0
/*
 * Stress of the multi-cgroup perf event ioctls: 4 threads open events on
 * random cpus (some as groups), ATTACH random sets of 100 cgroups, READ one,
 * READ all, DETACH and close, while 4 tasks hop between the cgroups and a
 * fifth thread removes and recreates them. Every call must succeed or fail
 * with an errno the race explains (-ENOENT for a cgroup removed under it);
 * the test runner fails on any kernel splat (lockdep, KASAN, WARN) by
 * itself. Afterwards one more event must still count a busy cgroup right.
 *
 * PCG_STRESS_SECONDS overrides the duration (default 20).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"

#define NR_CGROUPS	100
#define NR_THREADS	4
#define NR_HOPPERS	4

struct stress {
	char root[PCG_PATH_MAX];
	uint64_t ids[NR_CGROUPS];	/* current id of c<i>, 0 while absent */
	uint64_t deadline;
	int nr_cpus;
	/* outcome counters */
	uint64_t ops, enoent, rmdir_busy, recreated;
	/* first unexpected outcome */
	int bad_errno;
	char bad_what[64];
};

static void cg_path(const struct stress *s, int i, char *out)
{
	snprintf(out, PCG_PATH_MAX, "%.400s/c%d", s->root, i);
}

static void unexpected(struct stress *s, const char *what, int err)
{
	if (__atomic_exchange_n(&s->bad_errno, -err, __ATOMIC_SEQ_CST) == 0)
		snprintf(s->bad_what, sizeof(s->bad_what), "%s", what);
}

/* Count an outcome: ok (>= 0) or one of the allowed errnos. */
static void outcome(struct stress *s, const char *what, int ret, int allowed)
{
	__atomic_add_fetch(&s->ops, 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		return;
	if (ret == allowed) {
		__atomic_add_fetch(&s->enoent, 1, __ATOMIC_RELAXED);
		return;
	}
	unexpected(s, what, ret);
}

static int pick_ids(struct stress *s, unsigned int *seed, uint64_t *ids,
		    int max)
{
	int n = 1 + rand_r(seed) % max, i, k = 0;

	for (i = 0; i < n; i++) {
		uint64_t id = __atomic_load_n(&s->ids[rand_r(seed) % NR_CGROUPS],
					      __ATOMIC_RELAXED);

		if (id)
			ids[k++] = id;
	}
	return k;
}

/* Open one event (a group of two every other time) on a random cpu. */
static int open_event(struct stress *s, unsigned int *seed, int *sib)
{
	struct perf_event_attr attr;
	int cpu = rand_r(seed) % s->nr_cpus, fd;
	int group = rand_r(seed) & 1;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK,
		      group ? PERF_FORMAT_GROUP | PERF_FORMAT_ID : 0, group);
	*sib = -1;
	fd = pcg_perf_open(&attr, -1, cpu, -1, 0);
	if (fd < 0 || !group)
		return fd;
	/* siblings count only if added before the leader is enabled */
	attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr.disabled = 0;
	*sib = pcg_perf_open(&attr, -1, cpu, fd, 0);
	if (*sib < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		unexpected(s, "group open", -errno);
	return fd;
}

static void one_event_life(struct stress *s, unsigned int *seed)
{
	uint64_t ids[16], out[8], *buf;
	size_t size;
	int fd, sib, i, n;

	fd = open_event(s, seed, &sib);
	if (fd < 0) {
		unexpected(s, "perf_event_open", fd);
		return;
	}
	n = pick_ids(s, seed, ids, 16);
	if (n)
		outcome(s, "attach", pcg_attach(fd, ids, n), -ENOENT);
	for (i = 0; i < 8; i++) {
		n = pick_ids(s, seed, ids, 4);
		switch (rand_r(seed) % 4) {
		case 0:
			if (n)
				outcome(s, "attach", pcg_attach(fd, ids, n),
					-ENOENT);
			break;
		case 1:
			if (n)
				outcome(s, "detach", pcg_detach(fd, ids, n),
					-ENOENT);
			break;
		case 2:
			if (n)
				outcome(s, "read_cgroup",
					pcg_read_cgroup(fd, ids[0], out, 8),
					-ENOENT);
			break;
		default:
			n = pcg_read_cgroups(fd, &buf, &size);
			outcome(s, "read_cgroups", n, 1);
			if (n >= 0)
				free(buf);
		}
	}
	if (sib >= 0)
		close(sib);
	close(fd);
}

static void *event_thread(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = pcg_now_ns() ^ (uintptr_t)&seed;

	while (pcg_now_ns() < s->deadline)
		one_event_life(s, &seed);
	return NULL;
}

/* Remove a random cgroup (EBUSY while a hopper is in it) and recreate it. */
static void *churn_thread(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = pcg_now_ns();
	char path[PCG_PATH_MAX];

	while (pcg_now_ns() < s->deadline) {
		int i = rand_r(&seed) % NR_CGROUPS;

		cg_path(s, i, path);
		if (rmdir(path)) {
			if (errno != EBUSY)
				unexpected(s, "rmdir", -errno);
			__atomic_add_fetch(&s->rmdir_busy, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_store_n(&s->ids[i], 0, __ATOMIC_RELAXED);
		usleep(1000);
		if (mkdir(path, 0755)) {
			unexpected(s, "mkdir", -errno);
			break;
		}
		__atomic_store_n(&s->ids[i], pcg_cg_id(path), __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->recreated, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* A task hopping between the cgroups (until killed), busy or sleeping. */
static pid_t spawn_hopper(struct stress *s, int k)
{
	char path[PCG_PATH_MAX];
	unsigned int seed = k * 7919 + 1;
	pid_t pid = fork();

	if (pid)
		return pid;
	for (;;) {
		cg_path(s, rand_r(&seed) % NR_CGROUPS, path);
		pcg_cg_move(path, getpid());	/* ENOENT/ENODEV: removed */
		if (rand_r(&seed) & 1)
			pcg_burn_ns(200000);
		else
			usleep(200);
	}
}

FIXTURE(stress) {
	struct stress *s;
	pid_t hoppers[NR_HOPPERS];
};

FIXTURE_SETUP(stress)
{
	char path[PCG_PATH_MAX];
	int i;

	PCG_REQUIRE_ATTACH();
	self->s = mmap(NULL, sizeof(*self->s), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->s);
	ASSERT_EQ(0, pcg_cg_create_test_root(self->s->root, "stress"));
	for (i = 0; i < NR_CGROUPS; i++) {
		cg_path(self->s, i, path);
		ASSERT_EQ(0, mkdir(path, 0755));
		self->s->ids[i] = pcg_cg_id(path);
		ASSERT_NE(0, self->s->ids[i]);
	}
	self->s->nr_cpus = pcg_nr_cpus();
	for (i = 0; i < NR_HOPPERS; i++)
		self->hoppers[i] = 0;
}

FIXTURE_TEARDOWN(stress)
{
	int i;

	for (i = 0; i < NR_HOPPERS; i++) {
		if (self->hoppers[i] > 0) {
			kill(self->hoppers[i], SIGKILL);
			pcg_wait(self->hoppers[i]);
		}
	}
	EXPECT_EQ(0, pcg_cg_destroy_tree(self->s->root));
	munmap(self->s, sizeof(*self->s));
}

static uint64_t stress_seconds(void)
{
	const char *env = getenv("PCG_STRESS_SECONDS");

	return env ? strtoull(env, NULL, 10) : 20;
}

TEST_F_TIMEOUT(stress, attach_detach_read_close_vs_cgroup_churn, 180)
{
	struct stress *s = self->s;
	pthread_t th[NR_THREADS + 1];
	struct pcg_events ev;
	struct pcg_reading r;
	char a[PCG_PATH_MAX];
	uint64_t ida;
	int64_t used;
	int i;

	s->deadline = pcg_now_ns() + stress_seconds() * NSEC_PER_SEC;
	for (i = 0; i < NR_HOPPERS; i++) {
		self->hoppers[i] = spawn_hopper(s, i);
		ASSERT_LT(0, self->hoppers[i]);
	}
	for (i = 0; i < NR_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, event_thread, s));
	ASSERT_EQ(0, pthread_create(&th[i], NULL, churn_thread, s));
	for (i = 0; i <= NR_THREADS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	for (i = 0; i < NR_HOPPERS; i++) {
		kill(self->hoppers[i], SIGKILL);
		ASSERT_EQ(128 + SIGKILL, pcg_wait(self->hoppers[i]));
		self->hoppers[i] = 0;
	}

	TH_LOG("%lu ioctls (%lu ENOENT), %lu cgroups recreated, %lu rmdir EBUSY",
	       s->ops, s->enoent, s->recreated, s->rmdir_busy);
	if (s->bad_errno)
		TH_LOG("unexpected: %s: %s", s->bad_what, strerror(s->bad_errno));
	ASSERT_EQ(0, s->bad_errno);
	ASSERT_LT(1000, s->ops);
	ASSERT_LT(0, s->recreated);

	/* the machinery still counts right afterwards */
	ASSERT_EQ(0, pcg_cg_create(a, s->root, "after"));
	ida = pcg_cg_id(a);
	ASSERT_EQ(0, pcg_open_cpu_events(&ev, PERF_COUNT_SW_CPU_CLOCK, 0, 0));
	ASSERT_EQ(0, pcg_attach_all(&ev, &ida, 1));
	used = usage_ns(a);
	ASSERT_WORKER(pcg_spawn_busy(a, BUSY_NS / 2, -1, NULL));
	used = usage_ns(a) - used;
	ASSERT_EQ(0, pcg_read_cgroup_sum(&ev, ida, 0, &r));
	pcg_close_events(&ev);
	TH_LOG("after the stress: node %lu, cpu.stat %ld", r.value, used);
	EXPECT_TRUE(pcg_within_pct(r.value, used, 5));
}

TEST_HARNESS_MAIN
