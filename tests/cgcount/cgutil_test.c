// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Tests of lib/cgutil: event strings against the encodings perf documents
 * (a fake sysfs PMU whose format files say where each term's bits go, and
 * the kernel's own software PMU), the cgroup2 mount point when it needs the
 * kernel's escaping, and the cgroup id against stat().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cgutil.h"

static int parse(const char *pmus, const char *str, struct perf_event_attr *attr)
{
	return cgutil_parse_event_at(pmus, str, strlen(str), attr);
}

static void put(const char *dir, const char *file, const char *content)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

FIXTURE(pmu) {
	char pmus[64];
};

/* A PMU "cpu" laid out as x86's: event 0-7, umask 8-15, inv 23, ldlat in config1. */
FIXTURE_SETUP(pmu)
{
	char cpu[128], sub[160];

	snprintf(self->pmus, sizeof(self->pmus), "/tmp/cgutil-pmus-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->pmus));
	snprintf(cpu, sizeof(cpu), "%s/cpu", self->pmus);
	ASSERT_EQ(0, mkdir(cpu, 0755));
	snprintf(sub, sizeof(sub), "%s/format", cpu);
	ASSERT_EQ(0, mkdir(sub, 0755));
	snprintf(sub, sizeof(sub), "%s/events", cpu);
	ASSERT_EQ(0, mkdir(sub, 0755));
	put(cpu, "type", "4\n");
	put(cpu, "format/event", "config:0-7\n");
	put(cpu, "format/umask", "config:8-15\n");
	put(cpu, "format/inv", "config:23\n");
	put(cpu, "format/ldlat", "config1:0-15\n");
	put(cpu, "events/cycles", "event=0x3c\n");
	put(cpu, "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
}

FIXTURE_TEARDOWN(pmu)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->pmus);
	if (system(cmd))
		TH_LOG("could not remove %s", self->pmus);
}

TEST_F(pmu, terms_go_where_format_says)
{
	struct perf_event_attr a;

	ASSERT_EQ(0, parse(self->pmus, "cpu/event=0x3c/", &a));
	EXPECT_EQ(4, a.type);
	EXPECT_EQ(0x3c, a.config);
	EXPECT_EQ(sizeof(a), a.size);
	EXPECT_EQ(0, (int)(a.exclude_kernel));
	ASSERT_EQ(0, parse(self->pmus, "cpu/event=0xc0,umask=0x1,inv/u", &a));
	EXPECT_EQ(0x8001c0, a.config);
	EXPECT_EQ(0, (int)(a.exclude_user));
	EXPECT_EQ(1, (int)(a.exclude_kernel));
	EXPECT_EQ(1, (int)(a.exclude_hv));
	ASSERT_EQ(0, parse(self->pmus, "cpu/config=0x1234,config1=5,config2=6/", &a));
	EXPECT_EQ(0x1234, a.config);
	EXPECT_EQ(5, a.config1);
	EXPECT_EQ(6, a.config2);
}

TEST_F(pmu, event_aliases_from_sysfs)
{
	struct perf_event_attr a;

	ASSERT_EQ(0, parse(self->pmus, "cpu/cycles/k", &a));
	EXPECT_EQ(0x3c, a.config);
	EXPECT_EQ(1, (int)(a.exclude_user));
	EXPECT_EQ(0, (int)(a.exclude_kernel));
	ASSERT_EQ(0, parse(self->pmus, "cpu/mem-loads/", &a));
	EXPECT_EQ(0x1cd, a.config);
	EXPECT_EQ(3, a.config1);
}

TEST_F(pmu, malformed_is_refused)
{
	struct perf_event_attr a;

	EXPECT_EQ(-ERANGE, parse(self->pmus, "cpu/event=0x1ff/", &a));
	EXPECT_EQ(-EINVAL, parse(self->pmus, "cpu/nosuch=1/", &a));
	EXPECT_EQ(-EINVAL, parse(self->pmus, "cpu/event=0x3c/x", &a));
	EXPECT_EQ(-EINVAL, parse(self->pmus, "cpu/event=zz/", &a));
	EXPECT_EQ(-EINVAL, parse(self->pmus, "cpu/../type/", &a));
	EXPECT_EQ(-ENOENT, parse(self->pmus, "nopmu/event=1/", &a));
	EXPECT_EQ(-ENOENT, parse(self->pmus, "no-such-event", &a));
}

/*
 * An event list is split as perf stat -e splits it: a comma inside a PMU's
 * /terms/ belongs to the event (cpu/event=0x3c,umask=0/ is one event), and
 * each piece parses to what the event alone parses to.
 */
TEST_F(pmu, event_list_split_as_perf_does)
{
	const char *list = "cpu/event=0x3c,umask=0/,cycles:u,cpu/event=0xc0,umask=0x1,inv/u,,x";
	static const size_t lens[] = { 23, 8, 30, 0, 1 };
	struct perf_event_attr a;
	const char *p = list;
	size_t i, len;

	for (i = 0; *p; i++, p += len + !!p[len]) {
		len = cgutil_event_len(p);
		ASSERT_GT(sizeof(lens) / sizeof(lens[0]), i);
		EXPECT_EQ(lens[i], len) TH_LOG("event %zu of %s", i, list);
	}
	EXPECT_EQ(sizeof(lens) / sizeof(lens[0]), i);
	EXPECT_EQ(0, cgutil_event_len(""));
	ASSERT_EQ(0, cgutil_parse_event_at(self->pmus, list, cgutil_event_len(list), &a));
	EXPECT_EQ(0x3c, a.config);
	p = list + 23 + 1 + 8 + 1;
	ASSERT_EQ(0, cgutil_parse_event_at(self->pmus, p, cgutil_event_len(p), &a));
	EXPECT_EQ(0x8001c0, a.config);
	EXPECT_EQ(1, (int)(a.exclude_kernel));
}

/*
 * perf's groups: "{a,b}" gives a and b, the first a leader, the last
 * closing it; events alone around it have no flag; a comma in a PMU's
 * /terms/ stays in its event inside a group too.
 */
TEST(event_groups_split_as_perf_does)
{
	static const char list[] = "cpu-clock,{cycles,cpu/event=0x3c,umask=0/u,instructions},"
				   "{task-clock},cs";
	static const struct {
		const char *name;
		unsigned int flags;
	} want[] = {
		{ "cpu-clock", 0 },
		{ "cycles", CGUTIL_EV_GROUPED | CGUTIL_EV_LEADER },
		{ "cpu/event=0x3c,umask=0/u", CGUTIL_EV_GROUPED },
		{ "instructions", CGUTIL_EV_GROUPED | CGUTIL_EV_LAST },
		{ "task-clock", CGUTIL_EV_GROUPED | CGUTIL_EV_LEADER | CGUTIL_EV_LAST },
		{ "cs", 0 },
	};
	static const char *const bad[] = {
		"{a,{b}}", "a}", "{a,b", "{a,b}:u", "{a}b", "a,{",
	};
	struct cgutil_event_iter it = { .pos = list };
	unsigned int flags;
	const char *ev;
	size_t i, len;
	int ret;

	for (i = 0; (ret = cgutil_event_next(&it, &ev, &len, &flags)) > 0; i++) {
		ASSERT_GT(sizeof(want) / sizeof(want[0]), i);
		EXPECT_EQ(strlen(want[i].name), len) TH_LOG("event %zu", i);
		EXPECT_EQ(0, strncmp(want[i].name, ev, len)) TH_LOG("event %zu: %.*s", i,
								      (int)len, ev);
		EXPECT_EQ(want[i].flags, flags) TH_LOG("event %zu", i);
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(sizeof(want) / sizeof(want[0]), i);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		it = (struct cgutil_event_iter){ .pos = bad[i] };
		while ((ret = cgutil_event_next(&it, &ev, &len, &flags)) > 0)
			;
		EXPECT_EQ(-EINVAL, ret) TH_LOG("%s", bad[i]);
	}
}

TEST(generic_names_and_modifiers)
{
	struct perf_event_attr a;

	ASSERT_EQ(0, cgutil_parse_event("cpu-clock", 9, &a));
	EXPECT_EQ(PERF_TYPE_SOFTWARE, a.type);
	EXPECT_EQ(PERF_COUNT_SW_CPU_CLOCK, a.config);
	/* not NUL-terminated: a list "cycles:u,cs" */
	ASSERT_EQ(0, cgutil_parse_event("cycles:u,cs", 8, &a));
	EXPECT_EQ(PERF_TYPE_HARDWARE, a.type);
	EXPECT_EQ(PERF_COUNT_HW_CPU_CYCLES, a.config);
	EXPECT_EQ(0, (int)(a.exclude_user));
	EXPECT_EQ(1, (int)(a.exclude_kernel));
	ASSERT_EQ(0, cgutil_parse_event("page-faults:k", 13, &a));
	EXPECT_EQ(1, (int)(a.exclude_user));
	EXPECT_EQ(0, (int)(a.exclude_kernel));
	ASSERT_EQ(0, cgutil_parse_event("r1a8:uk", 7, &a));
	EXPECT_EQ(PERF_TYPE_RAW, a.type);
	EXPECT_EQ(0x1a8, a.config);
	EXPECT_EQ(1, (int)(a.exclude_hv));
	EXPECT_EQ(0, (int)(a.exclude_user | a.exclude_kernel));
	EXPECT_EQ(-EINVAL, cgutil_parse_event("cpu-clock:q", 11, &a));
}

/* the kernel's own software PMU, from the real sysfs */
TEST(software_pmu_from_sysfs)
{
	struct perf_event_attr a;

	if (access("/sys/bus/event_source/devices/software/type", R_OK))
		SKIP(return, "no /sys/bus/event_source/devices/software");
	ASSERT_EQ(0, cgutil_parse_event("software/config=2/u", 19, &a));
	EXPECT_EQ(PERF_TYPE_SOFTWARE, a.type);
	EXPECT_EQ(PERF_COUNT_SW_PAGE_FAULTS, a.config);
	EXPECT_EQ(1, (int)(a.exclude_kernel));
}

/* libpfm4's names, encoded as perf_event_open wants them */
TEST(libpfm4_names)
{
	struct perf_event_attr a;

	ASSERT_EQ(0, cgutil_parse_event("perf::page-faults:u", 19, &a));
	EXPECT_EQ(PERF_TYPE_SOFTWARE, a.type);
	EXPECT_EQ(PERF_COUNT_SW_PAGE_FAULTS, a.config);
	EXPECT_EQ(0, (int)(a.exclude_user));
	EXPECT_EQ(1, (int)(a.exclude_kernel));
	EXPECT_EQ(sizeof(a), a.size);
	ASSERT_EQ(0, cgutil_parse_event("perf_raw::r3c", 13, &a));
	EXPECT_EQ(PERF_TYPE_RAW, a.type);
	EXPECT_EQ(0x3c, a.config);
}

/*
 * A cgroup2 mount point with a space, which /proc/self/mounts shows as
 * "\040": in a mount namespace of this test's own, with /sys/fs/cgroup gone.
 */
TEST(cgroup2_root_is_unescaped)
{
	char dir[] = "/tmp/cgutil root XXXXXX", root[256];

	if (unshare(CLONE_NEWNS))
		SKIP(return, "unshare(CLONE_NEWNS): %s", strerror(errno));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_NE(NULL, mkdtemp(dir));
	while (!umount2("/sys/fs/cgroup", MNT_DETACH))
		;
	ASSERT_EQ(0, mount("none", dir, "cgroup2", 0, NULL)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, cgutil_cgroup2_root(root, sizeof(root)));
	EXPECT_STREQ(dir, root);
	EXPECT_TRUE(cgutil_is_cgroup2(root));
	EXPECT_EQ(-ENAMETOOLONG, cgutil_cgroup2_root(root, 8));
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

/* the kernel's cpu lists, as /sys/devices/system/cpu/online prints them */
TEST(cpu_lists_as_the_kernel_prints_them)
{
	static const char *const bad[] = { "", "\n", "x", "1-", "-1", "3-1", "1,1", "2,0",
					   "0,", "0,,1", "0 1", "0\n1", "0-1\nx" };
	int *cpus = NULL, n, want[] = { 0, 1, 2, 3, 8, 10, 11 };
	size_t i;

	n = cgutil_parse_cpu_list("0-3,8,10-11\n", &cpus);
	ASSERT_EQ(7, n);
	for (i = 0; i < 7; i++)
		EXPECT_EQ(want[i], cpus[i]);
	free(cpus);
	ASSERT_EQ(1, cgutil_parse_cpu_list("5", &cpus));
	EXPECT_EQ(5, cpus[0]);
	free(cpus);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, cgutil_parse_cpu_list(bad[i], &cpus)) TH_LOG("bad[%zu]", i);
}

/* the online cpus are the ones sysconf() counts, ascending */
TEST(online_cpus_match_sysconf)
{
	int *cpus = NULL, n, i;

	n = cgutil_online_cpus(&cpus);
	ASSERT_EQ(sysconf(_SC_NPROCESSORS_ONLN), n);
	for (i = 1; i < n; i++)
		EXPECT_LT(cpus[i - 1], cpus[i]);
	free(cpus);
}

/* the file handle is the inode number where ino_t has 64 bits */
TEST(cgroup_id_is_the_handle)
{
	char root[256];
	uint64_t id;
	struct stat st;

	ASSERT_EQ(0, cgutil_cgroup2_root(root, sizeof(root)));
	ASSERT_EQ(0, cgutil_cgroup_id(root, &id));
	ASSERT_EQ(0, stat(root, &st));
	if (sizeof(st.st_ino) == 8)
		EXPECT_EQ((uint64_t)st.st_ino, id);
	EXPECT_EQ(-ENOENT, cgutil_cgroup_id("/sys/fs/cgroup/no/such/cgroup", &id));
}

/* by directory fd: the fd itself ("") and a name below it */
TEST(cgroup_id_at_a_directory_fd)
{
	char root[256], parent[300], *base;
	uint64_t id, at_id;
	int fd;

	ASSERT_EQ(0, cgutil_cgroup2_root(root, sizeof(root)));
	ASSERT_EQ(0, cgutil_cgroup_id(root, &id));
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, cgutil_cgroup_id_at(fd, "", &at_id));
	EXPECT_EQ(id, at_id);
	close(fd);
	snprintf(parent, sizeof(parent), "%s/..", root);
	base = strrchr(root, '/');
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, cgutil_cgroup_id_at(fd, base + 1, &at_id));
	EXPECT_EQ(id, at_id);
	EXPECT_EQ(-ENOENT, cgutil_cgroup_id_at(fd, "no-such-cgroup-here", &at_id));
	close(fd);
}

/* ---- the tree walk ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = -1;	/* the fd of d itself */

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;	/* "." and ".." */
}

/* What a walk met: every path in order, and its extremes */
struct seen {
	char **paths;
	unsigned int *depths;
	size_t n, cap;
	unsigned int max_depth;
	size_t max_path_len;
	int max_fds;
	bool count_fds;
	const char *prune;	/* a path whose descendants to skip */
	const char *stop;	/* a path at which to stop with -EIO */
};

static int record(const struct cgutil_walk_entry *e, void *ctx)
{
	struct seen *s = ctx;
	int fds;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->paths = realloc(s->paths, s->cap * sizeof(*s->paths));
		s->depths = realloc(s->depths, s->cap * sizeof(*s->depths));
		if (!s->paths || !s->depths)
			return -ENOMEM;
	}
	if (strlen(e->path) != e->path_len)
		return -EINVAL;
	s->paths[s->n] = strdup(e->path);
	s->depths[s->n++] = e->depth;
	if (e->depth > s->max_depth)
		s->max_depth = e->depth;
	if (e->path_len > s->max_path_len)
		s->max_path_len = e->path_len;
	if (s->count_fds) {
		fds = count_fds();
		if (fds > s->max_fds)
			s->max_fds = fds;
	}
	if (s->stop && !strcmp(e->path, s->stop))
		return -EIO;
	if (s->prune && !strcmp(e->path, s->prune))
		return CGUTIL_WALK_PRUNE;
	return 0;
}

static void seen_free(struct seen *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->depths);
}

static ssize_t seen_find(const struct seen *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->paths[i], path))
			return i;
	return -1;
}

/* Each path's parent was met before it, at one depth less */
static bool parents_first(const struct seen *s)
{
	char parent[8192], *slash;
	ssize_t at;
	size_t i;

	for (i = 1; i < s->n; i++) {
		if (strlen(s->paths[i]) >= sizeof(parent))
			continue;
		strcpy(parent, s->paths[i]);
		slash = strrchr(parent, '/');
		if (slash)
			*slash = '\0';
		else
			parent[0] = '\0';
		at = seen_find(s, parent);
		if (at < 0 || (size_t)at >= i || s->depths[at] + 1 != s->depths[i])
			return false;
	}
	return true;
}

/* mkdir @name in @dirfd and open it */
static int mkdir_open(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) && errno != EEXIST)
		return -1;
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * A chain of @depth directories @name below @dirfd; with @leaf, each level
 * has two leaves, "<leaf>1" made before the next level and "<leaf>2" after
 * it, so that whatever order the file system lists them in, a leaf is left
 * to open when the walk comes back up.
 */
static int make_chain(int dirfd, unsigned int depth, const char *name, const char *leaf)
{
	int fd = dup(dirfd), next;
	char leaf_name[64];
	unsigned int i;

	for (i = 0; i < depth && fd >= 0; i++) {
		snprintf(leaf_name, sizeof(leaf_name), "%s1", leaf ? leaf : "");
		if (leaf && mkdirat(fd, leaf_name, 0755))
			break;
		next = mkdir_open(fd, name);
		leaf_name[strlen(leaf_name) - 1] = '2';
		if (leaf && mkdirat(fd, leaf_name, 0755))
			break;
		close(fd);
		fd = next;
	}
	if (fd < 0)
		return -1;
	close(fd);
	return i == depth ? 0 : -1;
}

FIXTURE(tree) {
	char dir[64];
	int fd;
	int fds_before;
	struct seen seen;
	uint64_t skipped;
};

FIXTURE_SETUP(tree)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/cgutil-walk-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->fd = open(self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	memset(&self->seen, 0, sizeof(self->seen));
	self->skipped = ~0ULL;
	self->fds_before = count_fds();
}

FIXTURE_TEARDOWN(tree)
{
	char cmd[128];

	/* the walk leaves no fd open */
	EXPECT_EQ(self->fds_before, count_fds());
	seen_free(&self->seen);
	close(self->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* files, links and fifos are no cgroups; a link to a directory is not followed */
TEST_F(tree, directories_only_parents_first)
{
	static const char *const want[] = { "", "a", "a/b", "a/b/c", "d", "d/e" };
	size_t i;

	ASSERT_EQ(0, mkdirat(self->fd, "a", 0755));
	ASSERT_EQ(0, mkdirat(self->fd, "a/b", 0755));
	ASSERT_EQ(0, mkdirat(self->fd, "a/b/c", 0755));
	ASSERT_EQ(0, mkdirat(self->fd, "d", 0755));
	ASSERT_EQ(0, mkdirat(self->fd, "d/e", 0755));
	ASSERT_EQ(0, symlinkat("../a", self->fd, "d/link"));
	ASSERT_EQ(0, symlinkat("/", self->fd, "rootlink"));
	ASSERT_EQ(0, mkfifoat(self->fd, "d/fifo", 0600));
	close(openat(self->fd, "a/file", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));

	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->skipped);
	ASSERT_EQ(sizeof(want) / sizeof(want[0]), self->seen.n);
	for (i = 0; i < self->seen.n; i++)
		EXPECT_LE(0, seen_find(&self->seen, want[i])) TH_LOG("%s not met", want[i]);
	EXPECT_STREQ("", self->seen.paths[0]);
	EXPECT_EQ(0, self->seen.depths[0]);
	EXPECT_TRUE(parents_first(&self->seen));
}

/* 1,500 levels: no recursion, and a few fds, not one per level */
TEST_F(tree, deep_chain_few_fds)
{
	ASSERT_EQ(0, make_chain(self->fd, 1500, "d", NULL));
	self->seen.count_fds = true;
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->skipped);
	EXPECT_EQ(1501, self->seen.n);
	EXPECT_EQ(1500, self->seen.max_depth);
	EXPECT_EQ(1500 * 2 - 1, self->seen.max_path_len);
	EXPECT_TRUE(parents_first(&self->seen));
	EXPECT_GE(self->fds_before + 4, self->seen.max_fds);
}

/*
 * 300 levels, each with a leaf beside the next level: every level has a
 * child left to open when the walk comes back up, more levels than the walk
 * keeps fds for, so it opens the shallower ones again by name.
 */
TEST_F(tree, deep_and_wide_bounded_fds)
{
	ASSERT_EQ(0, make_chain(self->fd, 300, "n", "leaf"));
	self->seen.count_fds = true;
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->skipped);
	EXPECT_EQ(1 + 300 + 2 * 300, self->seen.n);
	EXPECT_EQ(300, self->seen.max_depth);
	EXPECT_TRUE(parents_first(&self->seen));
	EXPECT_GE(self->fds_before + 24, self->seen.max_fds);
	EXPECT_LE(0, seen_find(&self->seen, "leaf1"));
	EXPECT_LE(0, seen_find(&self->seen, "leaf2"));
}

/* a path longer than PATH_MAX, with a child: met whole, never cut */
TEST_F(tree, path_beyond_path_max)
{
	char name[256], *want;
	size_t len = 0;
	int fd = dup(self->fd), next, i;

	memset(name, 'x', 255);
	name[255] = '\0';
	want = malloc(20 * 256 + 8);
	ASSERT_NE(NULL, want);
	for (i = 0; i < 17; i++) {	/* 17 * 256 - 1 = 4,351 bytes */
		name[0] = 'a' + i;
		next = mkdir_open(fd, name);
		ASSERT_LE(0, next);
		close(fd);
		fd = next;
		len += sprintf(want + len, "%s%s", i ? "/" : "", name);
	}
	ASSERT_EQ(0, mkdirat(fd, "child", 0755));
	close(fd);
	strcpy(want + len, "/child");

	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->skipped);
	EXPECT_EQ(1 + 17 + 1, self->seen.n);
	EXPECT_EQ(strlen(want), self->seen.max_path_len);
	EXPECT_LT(4096, strlen(want));
	EXPECT_LE(0, seen_find(&self->seen, want));

	/* and opened by that path, one name at a time */
	fd = cgutil_open_dir_at(self->fd, want);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	next = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EXPECT_EQ(0, cgutil_walk(next, 1, record, &self->seen, NULL));
	EXPECT_STREQ("child", self->seen.paths[self->seen.n - 1]);
	close(next);
	close(fd);
	free(want);
}

/* paths of any form; a link anywhere in the path is not followed */
TEST_F(tree, open_dir_at_follows_no_link)
{
	struct stat want, got;
	int fd;

	ASSERT_EQ(0, mkdirat(self->fd, "a", 0755));
	ASSERT_EQ(0, mkdirat(self->fd, "a/b", 0755));
	ASSERT_EQ(0, symlinkat("a", self->fd, "link"));
	ASSERT_EQ(0, fstatat(self->fd, "a/b", &want, 0));
	fd = cgutil_open_dir_at(self->fd, "//a//b/");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &got));
	EXPECT_EQ(want.st_ino, got.st_ino);
	close(fd);
	fd = cgutil_open_dir_at(self->fd, "");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &got));
	ASSERT_EQ(0, fstat(self->fd, &want));
	EXPECT_EQ(want.st_ino, got.st_ino);
	close(fd);
	EXPECT_GT(0, cgutil_open_dir_at(self->fd, "link/b"));
	EXPECT_GT(0, cgutil_open_dir_at(self->fd, "link"));
	EXPECT_EQ(-ENOENT, cgutil_open_dir_at(self->fd, "a/none"));
}

TEST_F(tree, two_thousand_siblings)
{
	char name[32];
	int i;

	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "sibling-%d", i);
		ASSERT_EQ(0, mkdirat(self->fd, name, 0755));
	}
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->skipped);
	EXPECT_EQ(2001, self->seen.n);
	EXPECT_LE(0, seen_find(&self->seen, "sibling-1999"));
	EXPECT_LE(0, seen_find(&self->seen, "sibling-0"));
}

/* names are bytes: 0xff, terminal escapes, a newline, passed as they are */
TEST_F(tree, names_are_bytes)
{
	static const char *const names[] = { "\xff", "\x1b[2J\x1b[31mred", "new\nline",
					     " ", "%s%n" };
	char below[64];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ASSERT_EQ(0, mkdirat(self->fd, names[i], 0755));
	snprintf(below, sizeof(below), "%s/\xfe\xff", names[0]);
	ASSERT_EQ(0, mkdirat(self->fd, below, 0755));
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->skipped);
	EXPECT_EQ(1 + 5 + 1, self->seen.n);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		EXPECT_LE(0, seen_find(&self->seen, names[i]));
	EXPECT_LE(0, seen_find(&self->seen, below));
}

TEST_F(tree, prune_and_max_depth)
{
	ASSERT_EQ(0, make_chain(self->fd, 4, "p", NULL));
	ASSERT_EQ(0, make_chain(self->fd, 4, "q", NULL));
	self->seen.prune = "p/p";
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(1 + 2 + 4, self->seen.n);
	EXPECT_LE(0, seen_find(&self->seen, "p/p"));
	EXPECT_GT(0, seen_find(&self->seen, "p/p/p"));
	EXPECT_LE(0, seen_find(&self->seen, "q/q/q/q"));
	seen_free(&self->seen);
	memset(&self->seen, 0, sizeof(self->seen));

	ASSERT_EQ(0, cgutil_walk(self->fd, 2, record, &self->seen, NULL));
	EXPECT_EQ(1 + 2 + 2, self->seen.n);
	EXPECT_EQ(2, self->seen.max_depth);
	seen_free(&self->seen);
	memset(&self->seen, 0, sizeof(self->seen));

	/* the root pruned: the root alone */
	self->seen.prune = "";
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, record, &self->seen, NULL));
	EXPECT_EQ(1, self->seen.n);
}

/* the callback's error stops the walk there and is returned */
TEST_F(tree, callback_error_stops)
{
	ASSERT_EQ(0, make_chain(self->fd, 200, "e", "leaf"));
	self->seen.stop = "e/e/e";
	EXPECT_EQ(-EIO, cgutil_walk(self->fd, 0, record, &self->seen, &self->skipped));
	EXPECT_STREQ("e/e/e", self->seen.paths[self->seen.n - 1]);
}

TEST_F(tree, not_a_directory)
{
	int fd = openat(self->fd, "file", O_CREAT | O_RDWR | O_CLOEXEC, 0600);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTDIR, cgutil_walk(fd, 0, record, &self->seen, &self->skipped));
	EXPECT_EQ(0, self->seen.n);
	close(fd);
	EXPECT_EQ(-EBADF, cgutil_walk(fd, 0, record, &self->seen, &self->skipped));
}

/* Removes the first two siblings other than the one met (children "g" first) */
struct remover {
	int root_fd;
	bool done;
	char removed[2][16];
};

static int remove_siblings(const struct cgutil_walk_entry *e, void *ctx)
{
	struct remover *r = ctx;
	char name[16];
	int i, n = 0;

	if (e->depth != 1 || r->done)
		return 0;
	r->done = true;
	for (i = 0; i < 5 && n < 2; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		if (!strcmp(name, e->path))
			continue;
		snprintf(r->removed[n], sizeof(r->removed[n]), "%s", name);
		snprintf(name, sizeof(name), "c%d/g", i);
		if (unlinkat(r->root_fd, name, AT_REMOVEDIR) ||
		    unlinkat(r->root_fd, r->removed[n], AT_REMOVEDIR))
			return -errno;
		n++;
	}
	return 0;
}

static int remove_then_record(const struct cgutil_walk_entry *e, void *ctx)
{
	struct { struct remover r; struct seen s; } *both = ctx;
	int ret = remove_siblings(e, &both->r);

	return ret ? ret : record(e, &both->s);
}

/* children removed during the walk are counted as skipped; the walk goes on */
TEST_F(tree, vanished_children_are_skipped)
{
	struct { struct remover r; struct seen s; } both = { .r.root_fd = self->fd };
	char name[16];
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		ASSERT_EQ(0, mkdirat(self->fd, name, 0755));
		snprintf(name, sizeof(name), "c%d/g", i);
		ASSERT_EQ(0, mkdirat(self->fd, name, 0755));
	}
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, remove_then_record, &both, &self->skipped));
	EXPECT_EQ(2, self->skipped);
	EXPECT_EQ(1 + 3 * 2, both.s.n);
	EXPECT_GT(0, seen_find(&both.s, both.r.removed[0]));
	EXPECT_GT(0, seen_find(&both.s, both.r.removed[1]));
	seen_free(&both.s);
}

/*
 * A level the walk closed and opens again by name was renamed away and
 * another directory put in its place: the walk does not take the impostor
 * for it.  Each level but the last has two leaves: every leaf is met, or
 * skipped with its level when that cannot be opened again.
 */
struct swapper {
	struct seen s;
	int root_fd;
	bool done;
};

static int swap_level_2(const struct cgutil_walk_entry *e, void *ctx)
{
	struct swapper *w = ctx;

	if (!w->done && e->depth == 100) {
		w->done = true;
		if (renameat(w->root_fd, "n/n", w->root_fd, "moved") ||
		    mkdirat(w->root_fd, "n/n", 0755) || mkdirat(w->root_fd, "n/n/impostor", 0755))
			return -errno;
	}
	return record(e, &w->s);
}

TEST_F(tree, renamed_level_is_not_confused)
{
	struct swapper w = { .root_fd = self->fd };
	size_t i, leaves = 0;

	ASSERT_EQ(0, make_chain(self->fd, 100, "n", "leaf"));
	ASSERT_EQ(0, cgutil_walk(self->fd, 0, swap_level_2, &w, &self->skipped));
	EXPECT_TRUE(w.done);
	EXPECT_GT(0, seen_find(&w.s, "n/n/impostor"));
	EXPECT_GT(0, seen_find(&w.s, "moved"));
	for (i = 0; i < w.s.n; i++) {
		const char *base = strrchr(w.s.paths[i], '/');

		base = base ? base + 1 : w.s.paths[i];
		leaves += !strncmp(base, "leaf", 4);
	}
	EXPECT_EQ(2 * 100, leaves + self->skipped);
	/* the leaves of levels 2 to 83 left when the walk came back up */
	EXPECT_LE(1, self->skipped);
	seen_free(&w.s);
}

/* on cgroup2 each entry's id is its cgroup's: the inode (64-bit ino_t) */
static int check_id(const struct cgutil_walk_entry *e, void *ctx)
{
	int *checked = ctx;
	struct stat st;

	if (fstat(e->dirfd, &st))
		return -errno;
	if (e->id != (uint64_t)st.st_ino)
		return -EINVAL;
	(*checked)++;
	return 0;
}

TEST(walk_ids_are_cgroup_ids)
{
	char root[256];
	int fd, checked = 0;

	if (sizeof(ino_t) != 8)
		SKIP(return, "ino_t has %zu bytes", sizeof(ino_t));
	if (cgutil_cgroup2_root(root, sizeof(root)))
		SKIP(return, "no cgroup2 mounted");
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, cgutil_walk(fd, 2, check_id, &checked, NULL));
	EXPECT_LE(1, checked);
	close(fd);
}

TEST_HARNESS_MAIN
