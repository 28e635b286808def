// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Tests of lib/cgutil: event strings against the encodings perf documents
 * (a fake sysfs PMU whose format files say where each term's bits go, and
 * the kernel's own software PMU), the cgroup2 mount point when it needs the
 * kernel's escaping, and the cgroup id against stat().
 */
#define _GNU_SOURCE
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

TEST_HARNESS_MAIN
