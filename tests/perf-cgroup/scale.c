// SPDX-License-Identifier: GPL-2.0
/*
 * Scale: 10,000 cgroups (PCG_SCALE_CGROUPS overrides) attached to one event
 * per cpu with one ATTACH, read back with one READ_CGROUPS after a size
 * negotiation: every id present once, the one cgroup that ran a busy task
 * holds what cpu.stat says, every other one holds zero. Then half of them
 * are detached in one call and the other half must remain. Timings are
 * printed (diagnostics, not asserted).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"

struct scale {
	char root[PCG_PATH_MAX];
	int nr;
	uint64_t *ids;		/* ids[i] = id of root/s<i> */
};

static void scale_path(const struct scale *s, int i, char *out)
{
	snprintf(out, PCG_PATH_MAX, "%.400s/s%d", s->root, i);
}

static int scale_nr(void)
{
	const char *env = getenv("PCG_SCALE_CGROUPS");

	return env ? atoi(env) : 10000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double secs_since(uint64_t t0)
{
	return (pcg_now_ns() - t0) / 1e9;
}

FIXTURE(scale) {
	struct scale s;
	struct pcg_events ev;
};

FIXTURE_SETUP(scale)
{
	char path[PCG_PATH_MAX];
	uint64_t t0;
	int i;

	PCG_REQUIRE_ATTACH();
	self->ev.nr = 0;
	self->s.nr = scale_nr();
	ASSERT_LT(1, self->s.nr);
	self->s.ids = calloc(self->s.nr, sizeof(uint64_t));
	ASSERT_NE(NULL, self->s.ids);
	ASSERT_EQ(0, pcg_cg_create_test_root(self->s.root, "scale"));
	t0 = pcg_now_ns();
	for (i = 0; i < self->s.nr; i++) {
		scale_path(&self->s, i, path);
		ASSERT_EQ(0, mkdir(path, 0755));
		self->s.ids[i] = pcg_cg_id(path);
		ASSERT_NE(0, self->s.ids[i]);
	}
	TH_LOG("mkdir + name_to_handle_at of %d cgroups: %.2f s",
	       self->s.nr, secs_since(t0));
}

FIXTURE_TEARDOWN(scale)
{
	uint64_t t0 = pcg_now_ns();

	pcg_close_events(&self->ev);
	EXPECT_EQ(0, pcg_cg_destroy_tree(self->s.root));
	TH_LOG("rmdir of %d cgroups: %.2f s", self->s.nr, secs_since(t0));
	free(self->s.ids);
}

/*
 * One READ_CGROUPS on fd: check the size negotiation, then that the records
 * are exactly want[0..nr) (in any order), and return the value of id busy.
 */
static int check_vector(struct __test_metadata *_metadata, int fd,
			const uint64_t *want, int nr, uint64_t busy,
			uint64_t *busy_value)
{
	const size_t need = 24 + (size_t)nr * 16;
	uint64_t small[4] = { sizeof(small), 0, 0, 0 }, *buf, *got;
	uint64_t *sorted;
	int i, ret;

	ret = ioctl(fd, PERF_EVENT_IOC_READ_CGROUPS, small);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(need, small[0]);

	buf = calloc(1, need);
	got = calloc(nr, sizeof(*got));
	sorted = malloc(nr * sizeof(*sorted));
	if (!buf || !got || !sorted)
		return -ENOMEM;
	buf[0] = need;
	ret = ioctl(fd, PERF_EVENT_IOC_READ_CGROUPS, buf);
	EXPECT_EQ(need - 16, ret);
	EXPECT_EQ(nr, buf[2]);
	*busy_value = 0;
	for (i = 0; i < nr && i < (int)buf[2]; i++) {
		got[i] = buf[3 + 2 * i];
		if (got[i] == busy)
			*busy_value = buf[4 + 2 * i];
		else if (buf[4 + 2 * i])
			ret = -EBADMSG;	/* an idle cgroup counted */
	}
	memcpy(sorted, want, nr * sizeof(*sorted));
	qsort(sorted, nr, sizeof(*sorted), cmp_u64);
	qsort(got, nr, sizeof(*got), cmp_u64);
	if (memcmp(sorted, got, nr * sizeof(*got)))
		ret = -EPROTO;
	free(sorted);
	free(got);
	free(buf);
	return ret;
}

TEST_F_TIMEOUT(scale, many_cgroups_one_vector_read, 600)
{
	struct scale *s = &self->s;
	char busy[PCG_PATH_MAX];
	uint64_t t0, v, sum = 0, id_busy;
	int64_t used;
	int cpu, half = s->nr / 2, busy_i = s->nr - 1;

	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 0, 0));
	t0 = pcg_now_ns();
	ASSERT_EQ(0, pcg_attach_all(&self->ev, s->ids, s->nr));
	TH_LOG("ATTACH of %d ids on %d cpus: %.3f s", s->nr, self->ev.nr,
	       secs_since(t0));

	scale_path(s, busy_i, busy);
	id_busy = s->ids[busy_i];
	used = usage_ns(busy);
	ASSERT_WORKER(pcg_spawn_busy(busy, BUSY_NS / 4, -1, NULL));
	used = usage_ns(busy) - used;

	for (cpu = 0; cpu < self->ev.nr; cpu++) {
		t0 = pcg_now_ns();
		ASSERT_LE(0, check_vector(_metadata, self->ev.fd[cpu], s->ids,
					  s->nr, id_busy, &v));
		TH_LOG("cpu %d: READ_CGROUPS of %d records: %.3f s", cpu,
		       s->nr, secs_since(t0));
		sum += v;
	}
	TH_LOG("busy cgroup: node %lu, cpu.stat %ld", sum, used);
	EXPECT_TRUE(pcg_within_pct(sum, used, 5));

	/* detach the first half in one call: exactly the second half stays */
	t0 = pcg_now_ns();
	ASSERT_EQ(0, pcg_detach_all(&self->ev, s->ids, half));
	TH_LOG("DETACH of %d ids: %.3f s", half, secs_since(t0));
	for (cpu = 0; cpu < self->ev.nr; cpu++)
		ASSERT_LE(0, check_vector(_metadata, self->ev.fd[cpu],
					  s->ids + half, s->nr - half,
					  id_busy, &v));
}

TEST_HARNESS_MAIN
