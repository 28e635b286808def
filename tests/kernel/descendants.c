// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_EVENT_IOC_ATTACH_CGROUPS with PERF_ATTACH_CGROUPS_DESCENDANTS: one
 * call attaches a cgroup, its descendants and every cgroup created below it
 * later, each counting from its creation, checked against cpu.stat and the
 * sum of the children, also with the perf_event controller on a cgroup v1
 * hierarchy; DETACH of the root and closing the event stop it;
 * flags 0 is a plain ATTACH; bad input changes nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "harness.h"
#include "pcg_test.h"

#define SHORT_NS	(400 * NSEC_PER_MSEC)
#define NR_LATER	50

FIXTURE(tree) {
	char root[CGTEST_PATH_MAX];
	char a[CGTEST_PATH_MAX];
	uint64_t idroot, ida;
	struct pcg_events ev;
	char v1[CGTEST_PATH_MAX];	/* perf_event's v1 mount, if any */
};

/* 1 if the kernel knows PERF_EVENT_IOC_ATTACH_CGROUPS: unknown flags fail */
static int kernel_has_attach_cgroups(const struct pcg_events *ev)
{
	uint64_t buf[3] = { ~0ULL, 1, 1 };

	return ioctl(ev->fd[0], PERF_EVENT_IOC_ATTACH_CGROUPS, buf) < 0 &&
	       errno == EINVAL;
}

FIXTURE_SETUP(tree)
{
	PCG_REQUIRE_ATTACH();
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "tree"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	self->idroot = cgtest_id(self->root);
	self->ida = cgtest_id(self->a);
	ASSERT_NE(0, self->idroot);
	ASSERT_NE(0, self->ida);
	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 0, 0));
	PCG_REQUIRE(kernel_has_attach_cgroups(&self->ev), "PERF_EVENT_IOC_ATTACH_CGROUPS");
}

FIXTURE_TEARDOWN(tree)
{
	if (self->v1[0])
		EXPECT_EQ(0, pcg_perf_event_v1_umount(self->v1));
	pcg_close_events(&self->ev);
	EXPECT_EQ(0, cgtest_destroy_tree(self->root));
}

/* Attach @id with its descendants on every cpu's event. */
static int attach_tree(const struct pcg_events *ev, uint64_t id)
{
	return pcg_attach_flags_all(ev, PERF_ATTACH_CGROUPS_DESCENDANTS, &id, 1);
}

/* Create @name below @parent into @path; return its id (0 on error). */
static uint64_t make_cgroup(char *path, const char *parent, const char *name)
{
	return cgtest_create(path, parent, name) ? 0 : cgtest_id(path);
}

/*
 * A cgroup that existed and two created later, one nested: each counts what
 * ran in it (cpu.stat), a parent is exactly the sum of its children.
 */
static void check_later_descendants_count(struct __test_metadata *_metadata,
					  FIXTURE_DATA(tree) *self)
{
	char b[CGTEST_PATH_MAX], c[CGTEST_PATH_MAX];
	int64_t used_a, used_c, va, vb, vc, vroot;
	uint64_t idb, idc;

	ASSERT_EQ(0, attach_tree(&self->ev, self->idroot));
	EXPECT_EQ(0, node_value(&self->ev, self->ida));

	idb = make_cgroup(b, self->root, "b");
	ASSERT_NE(0, idb);
	idc = make_cgroup(c, b, "c");
	ASSERT_NE(0, idc);
	EXPECT_EQ(0, node_value(&self->ev, idb));
	EXPECT_EQ(0, node_value(&self->ev, idc));

	used_a = run_busy(self->a, SHORT_NS);
	used_c = run_busy(c, SHORT_NS);
	ASSERT_LE((int64_t)SHORT_NS, used_a);
	ASSERT_LE((int64_t)SHORT_NS, used_c);

	va = node_value(&self->ev, self->ida);
	vb = node_value(&self->ev, idb);
	vc = node_value(&self->ev, idc);
	vroot = node_value(&self->ev, self->idroot);
	TH_LOG("a %ld (cpu.stat %ld), c %ld (cpu.stat %ld), b %ld, root %ld",
	       va, used_a, vc, used_c, vb, vroot);
	EXPECT_TRUE(cgtest_within_pct(va, used_a, 5));
	EXPECT_TRUE(cgtest_within_pct(vc, used_c, 5));
	/* nothing ran in b or the root themselves */
	EXPECT_EQ(vc, vb);
	EXPECT_EQ(va + vb, vroot);
}

TEST_F(tree, existing_and_later_descendants_count)
{
	check_later_descendants_count(_metadata, self);
}

/*
 * The same with the perf_event controller on a cgroup v1 hierarchy: the
 * cgroup2 creations do not involve the controller, and still attach.
 */
TEST_F(tree, later_descendants_count_in_v1_v2_hybrid)
{
	ASSERT_EQ(0, pcg_perf_event_v1_mount(self->v1));
	check_later_descendants_count(_metadata, self);
}

/* Every one of many cgroups created later gets its own record. */
TEST_F(tree, every_later_cgroup_is_listed)
{
	char path[CGTEST_PATH_MAX], name[16];
	uint64_t *buf;
	size_t size;
	int i, cpu;

	ASSERT_EQ(0, attach_tree(&self->ev, self->idroot));
	for (i = 0; i < NR_LATER; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ASSERT_NE(0, make_cgroup(path, self->root, name));
	}
	for (cpu = 0; cpu < self->ev.nr; cpu++) {
		ASSERT_LT(0, pcg_read_cgroups(self->ev.fd[cpu], &buf, &size));
		EXPECT_EQ(2 + NR_LATER, buf[2]);
		free(buf);
	}
}

/* Only cgroups below a watched root are attached, not its siblings. */
TEST_F(tree, only_below_the_watched_root)
{
	char x[CGTEST_PATH_MAX], y[CGTEST_PATH_MAX];
	uint64_t idx, idy;

	ASSERT_EQ(0, attach_tree(&self->ev, self->ida));
	EXPECT_EQ(-ENOENT, node_value(&self->ev, self->idroot));
	idx = make_cgroup(x, self->a, "x");
	idy = make_cgroup(y, self->root, "y");
	ASSERT_NE(0, idx);
	ASSERT_NE(0, idy);
	EXPECT_EQ(0, node_value(&self->ev, idx));
	EXPECT_EQ(-ENOENT, node_value(&self->ev, idy));
}

/*
 * DETACH of the root stops attaching new cgroups; those attached already
 * stay.
 */
TEST_F(tree, detach_of_the_root_stops_it)
{
	char d[CGTEST_PATH_MAX];
	uint64_t idd;

	ASSERT_EQ(0, attach_tree(&self->ev, self->idroot));
	ASSERT_EQ(0, pcg_detach_all(&self->ev, &self->idroot, 1));
	idd = make_cgroup(d, self->root, "d");
	ASSERT_NE(0, idd);
	EXPECT_EQ(-ENOENT, node_value(&self->ev, idd));
	EXPECT_EQ(0, node_value(&self->ev, self->ida));
}

/*
 * A removed cgroup that was attached when created is read once more by a
 * vector read that detaches removed cgroups, with what ran in it.
 */
TEST_F(tree, removed_later_cgroup_read_once)
{
	char g[CGTEST_PATH_MAX];
	int64_t used, sum = 0;
	uint64_t idg, i, *buf;
	bool again = false;
	size_t size;
	int cpu;

	ASSERT_EQ(0, attach_tree(&self->ev, self->idroot));
	idg = make_cgroup(g, self->root, "g");
	ASSERT_NE(0, idg);
	used = run_busy(g, SHORT_NS);
	ASSERT_LE((int64_t)SHORT_NS, used);
	ASSERT_EQ(0, cgtest_rmdir(g));

	for (cpu = 0; cpu < self->ev.nr; cpu++) {
		ASSERT_LT(0, pcg_read_cgroups_flags(self->ev.fd[cpu],
				PERF_READ_CGROUPS_DETACH_REMOVED, &buf, &size));
		for (i = 0; i < buf[2]; i++) {
			if (buf[3 + 2 * i] == idg)
				sum += buf[4 + 2 * i];
		}
		free(buf);
		ASSERT_LT(0, pcg_read_cgroups(self->ev.fd[cpu], &buf, &size));
		for (i = 0; i < buf[2]; i++)
			again |= buf[3 + 2 * i] == idg;
		free(buf);
	}
	TH_LOG("g %ld, cpu.stat %ld", sum, used);
	EXPECT_TRUE(cgtest_within_pct(sum, used, 5));
	EXPECT_FALSE(again);
}

/* Bad flags, sizes and ids fail and attach nothing, now or later. */
TEST_F(tree, bad_input_changes_nothing)
{
	uint64_t bad = 1ULL << 62, ids[2] = { self->idroot, bad };
	int fd = self->ev.fd[0];
	char e[CGTEST_PATH_MAX];
	uint64_t ide;

	EXPECT_EQ(-EINVAL, pcg_attach_flags(fd, 2, &self->idroot, 1));
	EXPECT_EQ(-EINVAL, pcg_attach_flags(fd, PERF_ATTACH_CGROUPS_DESCENDANTS,
					    &self->idroot, 0));
	EXPECT_EQ(-ENOENT, pcg_attach_flags(fd, PERF_ATTACH_CGROUPS_DESCENDANTS,
					    ids, 2));
	EXPECT_EQ(-ENOENT, node_value(&self->ev, self->idroot));
	ide = make_cgroup(e, self->root, "e");
	ASSERT_NE(0, ide);
	EXPECT_EQ(-ENOENT, node_value(&self->ev, ide));
}

/* Flags 0 is PERF_EVENT_IOC_ATTACH_CGROUP: the ids alone. */
TEST_F(tree, no_flags_attaches_the_ids_alone)
{
	char f[CGTEST_PATH_MAX];
	uint64_t idf;

	ASSERT_EQ(0, pcg_attach_flags_all(&self->ev, 0, &self->idroot, 1));
	EXPECT_EQ(0, node_value(&self->ev, self->idroot));
	EXPECT_EQ(-ENOENT, node_value(&self->ev, self->ida));
	idf = make_cgroup(f, self->root, "f");
	ASSERT_NE(0, idf);
	EXPECT_EQ(-ENOENT, node_value(&self->ev, idf));
}

/*
 * Closing the events ends their watches: cgroups are still created, and
 * events opened afterwards see none of them.
 */
TEST_F(tree, closed_events_stop_watching)
{
	char h[CGTEST_PATH_MAX], k[CGTEST_PATH_MAX];
	uint64_t idh, idk;

	ASSERT_EQ(0, attach_tree(&self->ev, self->idroot));
	pcg_close_events(&self->ev);
	idh = make_cgroup(h, self->root, "h");
	ASSERT_NE(0, idh);

	ASSERT_EQ(0, pcg_open_cpu_events(&self->ev, PERF_COUNT_SW_CPU_CLOCK,
					 0, 0));
	ASSERT_EQ(0, pcg_attach_all(&self->ev, &self->ida, 1));
	idk = make_cgroup(k, self->a, "k");
	ASSERT_NE(0, idk);
	EXPECT_EQ(-ENOENT, node_value(&self->ev, idh));
	EXPECT_EQ(-ENOENT, node_value(&self->ev, idk));
}

TEST_HARNESS_MAIN
