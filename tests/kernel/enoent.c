// SPDX-License-Identifier: GPL-2.0
/*
 * When a classic cgroup event (PERF_FLAG_PID_CGROUP) fails with ENOENT.
 * Needs no patch: upstream behaviour, the same on every architecture.
 *
 * perf_cgroup_connect() takes the cgroup's perf_event css with
 * css_tryget_online_from_dir(); a cgroup without one gives ENOENT.
 * perf_event is implicit on cgroup2 (implicit_on_dfl): it never shows in
 * cgroup.controllers or cgroup.subtree_control, and a cgroup gets its css
 * when its parent's subtree_ss_mask holds it. cgroup_init() adds the
 * controllers to the root without computing the root's subtree_ss_mask:
 * it stays 0 until cgroup_apply_control() of the root, at the first write
 * to the root's cgroup.subtree_control that changes it, or when perf_event
 * comes back from a cgroup v1 hierarchy. Until then every cgroup below
 * the root has no perf_event css: only the root's own event opens. A
 * parent's empty cgroup.subtree_control does not matter: a cgroup's
 * subtree_ss_mask always holds the implicit controllers.
 *
 * The guest's init writes the root's cgroup.subtree_control at boot, so
 * the boot-time case cannot be made again here (nothing takes perf_event
 * out of the root's mask once it is in); the same ENOENT is made with
 * perf_event on a cgroup v1 hierarchy, which takes every perf_event css
 * off cgroup2, root's included, until it is unmounted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcg_lib.h"
#include "harness.h"

/* perf_event goes back to cgroup2 after the v1 root's RCU-deferred release */
#define REBIND_TIMEOUT_MS	10000

FIXTURE(enoent) {
	char root[CGTEST_PATH_MAX];	/* the cgroup2 root */
	char top[CGTEST_PATH_MAX];	/* a child of the root */
	char mid[CGTEST_PATH_MAX];	/* below top, whose subtree_control is empty */
	char leaf[CGTEST_PATH_MAX];	/* below mid, whose subtree_control is empty */
	char v1[CGTEST_PATH_MAX];	/* the v1 mount while perf_event is there */
};

FIXTURE_SETUP(enoent)
{
	const char *root = cgtest_root();

	ASSERT_NE(NULL, root);
	snprintf(self->root, sizeof(self->root), "%s", root);
	ASSERT_EQ(0, cgtest_create_test_root(self->top, "enoent"));
	ASSERT_EQ(0, cgtest_create(self->mid, self->top, "mid"));
	ASSERT_EQ(0, cgtest_create(self->leaf, self->mid, "leaf"));
}

FIXTURE_TEARDOWN(enoent)
{
	if (self->v1[0])
		EXPECT_EQ(0, pcg_perf_event_v1_umount(self->v1));
	EXPECT_EQ(0, cgtest_destroy_tree(self->top));
}

/* 0 if a cpu-clock cgroup event opens on every cpu for @cg, else -errno */
static int open_cgroup_event(const char *cg)
{
	struct pcg_events ev;
	int ret = pcg_open_cgroup_events(&ev, cg, PERF_COUNT_SW_CPU_CLOCK, 0);

	if (!ret)
		pcg_close_events(&ev);
	return ret;
}

/* @cg's cgroup.subtree_control without its newline, or -errno */
static int subtree_control(const char *cg, char *buf, size_t size)
{
	int n = cgtest_read_file(cg, "cgroup.subtree_control", buf, size);

	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return n < 0 ? n : 0;
}

/*
 * The remedy: one write that changes the root's cgroup.subtree_control
 * since boot. The guest's init made it; where the root's list is empty
 * nobody may have, and enabling then disabling its first controller makes
 * one (an empty write, or one naming an enabled controller, changes nothing
 * and is not enough).
 */
static int root_subtree_control_written(const char *root)
{
	char ctl[256], on[sizeof(ctl) + 1], off[sizeof(ctl) + 1];
	int ret = subtree_control(root, ctl, sizeof(ctl));

	if (ret || ctl[0])
		return ret;
	ret = cgtest_read_file(root, "cgroup.controllers", ctl, sizeof(ctl));
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	ctl[strcspn(ctl, " \n")] = '\0';
	snprintf(on, sizeof(on), "+%s", ctl);
	snprintf(off, sizeof(off), "-%s", ctl);
	ret = cgtest_enable_controllers(root, on);
	return ret ? ret : cgtest_enable_controllers(root, off);
}

/* The root's own perf_event css exists from boot (init_css_set). */
TEST_F(enoent, root_opens)
{
	EXPECT_EQ(0, open_cgroup_event(self->root));
}

/* Once the root's cgroup.subtree_control was written, its children open. */
TEST_F(enoent, child_of_root_opens_after_root_write)
{
	char ctl[256];

	ASSERT_EQ(0, root_subtree_control_written(self->root));
	ASSERT_EQ(0, subtree_control(self->root, ctl, sizeof(ctl)));
	TH_LOG("root's cgroup.subtree_control: \"%s\"", ctl);
	EXPECT_EQ(0, open_cgroup_event(self->top));
}

/* A parent's empty cgroup.subtree_control does not matter. */
TEST_F(enoent, nested_below_empty_subtree_control_opens)
{
	char ctl[256];

	ASSERT_EQ(0, root_subtree_control_written(self->root));
	ASSERT_EQ(0, subtree_control(self->top, ctl, sizeof(ctl)));
	ASSERT_STREQ("", ctl);
	ASSERT_EQ(0, subtree_control(self->mid, ctl, sizeof(ctl)));
	ASSERT_STREQ("", ctl);
	EXPECT_EQ(0, open_cgroup_event(self->mid));
	EXPECT_EQ(0, open_cgroup_event(self->leaf));
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * The first result other than ENOENT of opening @cg's event, polled for
 * up to REBIND_TIMEOUT_MS while perf_event returns to cgroup2; *@waited_ms
 * says how long that took.
 */
static int open_after_rebind(const char *cg, long *waited_ms)
{
	struct timespec t0;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((ret = open_cgroup_event(cg)) == -ENOENT && ms_since(&t0) < REBIND_TIMEOUT_MS)
		usleep(10000);
	*waited_ms = ms_since(&t0);
	return ret;
}

/*
 * perf_event on a cgroup v1 hierarchy: no cgroup2 cgroup, not even the
 * root, has a perf_event css (ENOENT); after the unmount they have again.
 */
TEST_F(enoent, perf_event_on_v1_hierarchy_gives_enoent)
{
	long waited_ms;
	char v1[CGTEST_PATH_MAX];

	ASSERT_EQ(0, root_subtree_control_written(self->root));
	ASSERT_EQ(0, open_cgroup_event(self->leaf));
	ASSERT_EQ(0, pcg_perf_event_v1_mount(self->v1));
	EXPECT_EQ(-ENOENT, open_cgroup_event(self->root));
	EXPECT_EQ(-ENOENT, open_cgroup_event(self->top));
	EXPECT_EQ(-ENOENT, open_cgroup_event(self->leaf));

	snprintf(v1, sizeof(v1), "%s", self->v1);
	self->v1[0] = '\0';
	ASSERT_EQ(0, pcg_perf_event_v1_umount(v1));
	EXPECT_EQ(0, open_after_rebind(self->leaf, &waited_ms));
	TH_LOG("perf_event back on cgroup2 %ld ms after the unmount", waited_ms);
	EXPECT_EQ(0, open_cgroup_event(self->root));
	EXPECT_EQ(0, open_cgroup_event(self->top));
}

TEST_HARNESS_MAIN
