// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of the test kernel's configuration: cgroup v2 with the cpu and
 * memory controllers, a cpu-wide cpu-clock event, a cgroup event, an fentry
 * BPF program, BTF, and name_to_handle_at() on cgroups.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgtest.h"
#include "harness.h"
#include "fentry_count.skel.h"

#define CGROOT "/sys/fs/cgroup"
#define SMOKE_CG CGROOT "/smoke-test"

static int open_cpu_clock(pid_t pid, int cpu, unsigned long flags)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};

	return syscall(SYS_perf_event_open, &attr, pid, cpu, -1, flags);
}

static __u64 read_count(int fd)
{
	__u64 value = 0;

	if (read(fd, &value, sizeof(value)) != sizeof(value))
		return 0;
	return value;
}

TEST(cgroup2_has_cpu_and_memory_controllers)
{
	struct statfs fs;
	char buf[512];

	ASSERT_EQ(0, statfs(CGROOT, &fs));
	ASSERT_EQ((unsigned long)CGROUP2_SUPER_MAGIC, (unsigned long)fs.f_type);
	ASSERT_LT(0, cgtest_read(CGROOT "/cgroup.controllers", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "cpu"));
	EXPECT_NE(NULL, strstr(buf, "memory"));

	ASSERT_EQ(0, cgtest_destroy_tree(SMOKE_CG));
	ASSERT_EQ(0, cgtest_mkdir(SMOKE_CG));
	ASSERT_LT(0, cgtest_read(SMOKE_CG "/cgroup.controllers", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "cpu"));
	EXPECT_NE(NULL, strstr(buf, "memory"));
	ASSERT_LT(0, cgtest_read(SMOKE_CG "/cpu.stat", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "usage_usec"));
	ASSERT_LT(0, cgtest_read(SMOKE_CG "/memory.stat", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "anon "));
	EXPECT_EQ(0, cgtest_rmdir(SMOKE_CG));
}

TEST(cgroup_id_from_name_to_handle_at)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} handle = { .fh.handle_bytes = sizeof(__u64) };
	struct stat st;
	int mount_id;

	ASSERT_EQ(0, name_to_handle_at(AT_FDCWD, CGROOT, &handle.fh, &mount_id, 0));
	ASSERT_EQ(sizeof(__u64), handle.fh.handle_bytes);
	ASSERT_EQ(0, stat(CGROOT, &st));
	/* On 64-bit kernels the cgroup id is the kernfs inode number. */
	EXPECT_EQ((__u64)st.st_ino, handle.id);
}

TEST(cpu_wide_cpu_clock_counts_time_on_its_cpu)
{
	__u64 before, after;
	int fd;

	ASSERT_EQ(0, cgtest_pin_self(0));
	fd = open_cpu_clock(-1, 0, 0);
	ASSERT_LE(0, fd) TH_LOG("cpu-wide cpu-clock: %s", strerror(errno));
	before = read_count(fd);
	cgtest_burn_ns(100 * NSEC_PER_MSEC);
	after = read_count(fd);
	/* cpu-clock counts wall time on the cpu: at least the 100 ms spun */
	EXPECT_LE(before + 100000000ULL, after);
	close(fd);
}

TEST(cgroup_event_counts_only_inside_its_cgroup)
{
	__u64 inside, outside;
	int cgfd, fd;

	ASSERT_EQ(0, cgtest_pin_self(0));
	ASSERT_EQ(0, cgtest_destroy_tree(SMOKE_CG));
	ASSERT_EQ(0, cgtest_mkdir(SMOKE_CG));
	cgfd = open(SMOKE_CG, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cgfd);
	fd = open_cpu_clock(cgfd, 0, PERF_FLAG_PID_CGROUP);
	ASSERT_LE(0, fd) TH_LOG("cgroup event: %s", strerror(errno));

	ASSERT_EQ(0, cgtest_move(SMOKE_CG, 0));
	cgtest_burn_ns(100 * NSEC_PER_MSEC);
	ASSERT_EQ(0, cgtest_move(CGROOT, 0));
	inside = read_count(fd);
	cgtest_burn_ns(100 * NSEC_PER_MSEC);
	outside = read_count(fd) - inside;

	EXPECT_LE(90000000ULL, inside);
	EXPECT_GT(10000000ULL, outside);
	close(fd);
	close(cgfd);
	EXPECT_EQ(0, cgtest_rmdir(SMOKE_CG));
}

TEST(fentry_program_loads_attaches_and_counts)
{
	struct fentry_count *skel;
	int i;

	skel = fentry_count__open();
	ASSERT_NE(NULL, skel);
	skel->bss->target_tgid = getpid();
	ASSERT_EQ(0, fentry_count__load(skel));
	ASSERT_EQ(0, fentry_count__attach(skel));
	for (i = 0; i < 5; i++)
		syscall(SYS_getpgid, 0);
	EXPECT_EQ(5ULL, skel->bss->calls);
	fentry_count__destroy(skel);
}

TEST(kernel_btf_describes_cgroups_and_rstat_hook)
{
	struct btf *btf = btf__load_vmlinux_btf();

	ASSERT_NE(NULL, btf);
	EXPECT_LT(0, btf__find_by_name_kind(btf, "cgroup", BTF_KIND_STRUCT));
	EXPECT_LT(0, btf__find_by_name_kind(btf, "bpf_rstat_flush", BTF_KIND_FUNC));
	EXPECT_LT(0, btf__find_by_name_kind(btf, "perf_event", BTF_KIND_STRUCT));
	btf__free(btf);
}

TEST_HARNESS_MAIN
