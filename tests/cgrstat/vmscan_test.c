// SPDX-License-Identifier: GPL-2.0
/*
 * The workflow of the upstream selftest cgroup_hierarchical_stats with
 * examples/rstat-vmscan/vmscan.bpf.c: per-cgroup memcg reclaim latency collected at the
 * reclaim tracepoints, flushed by rstat, read through cgroup_iter files
 * pinned in bpffs, one per cgroup.
 *
 * Hierarchy test -> child1, child2 -> two leaves each, memory controller on.
 * A process in each leaf allocates anonymous memory and asks its own
 * cgroup to reclaim through memory.reclaim.  If a zram swap device can be
 * set up, the reclaim must succeed; without swap the kernel still runs
 * (and times) the reclaim but finds nothing to reclaim (EAGAIN).
 * Checks: every leaf > 0, parent == sum of its children, root >= test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgutil.h"
#include "harness.h"
#include "vmscan.skel.h"

#define N_CGROUPS 7
static const char *const cg_names[N_CGROUPS] = {
	"", "child1", "child2", "child1/leaf1", "child1/leaf2", "child2/leaf3", "child2/leaf4",
};

static char cg_root[4096], test_dir[4200], pin_dir[256];

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A zram swap device makes anonymous memory reclaimable. */
static bool setup_swap(void)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[256];
	int lines = 0;

	while (f && fgets(line, sizeof(line), f))
		lines++;
	if (f)
		fclose(f);
	if (lines > 1)
		return true;
	if (access("/sys/block/zram0/disksize", W_OK))
		return false;
	if (write_file("/sys/block/zram0/disksize", "128M") && errno != EBUSY)
		return false;
	return system("mkswap /dev/zram0 >/dev/null 2>&1 && swapon /dev/zram0 2>/dev/null") == 0;
}

/* In a child in leaf @name: touch 16 MiB, reclaim 8 MiB of our own cgroup. */
static int reclaim_in_leaf(const char *name)
{
	char path[4400];
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		size_t size = 16 << 20;
		char *buf;
		int ret;

		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", test_dir, name);
		if (write_file(path, "0"))
			_exit(100);
		buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			_exit(101);
		memset(buf, 1, size);
		snprintf(path, sizeof(path), "%s/%s/memory.reclaim", test_dir, name);
		ret = write_file(path, "8M");
		_exit(ret == 0 ? 0 : ret == -EAGAIN ? 1 : 102);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static int read_pinned(const char *name, unsigned long long *delay)
{
	char path[512], buf[256];
	unsigned long long id;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pin_dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	return sscanf(buf, "cg_id: %llu, total_vmscan_delay: %llu", &id, delay) == 2 ? 0 : -EINVAL;
}

static int pin_iter(struct vmscan *skel, const char *cg_dir, const char *pin_name)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct bpf_link *link;
	char path[512];
	int fd, ret;

	fd = open(cg_dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	info.cgroup.cgroup_fd = fd;
	info.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	link = bpf_program__attach_iter(skel->progs.dump_vmscan, &opts);
	close(fd);
	if (!link)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", pin_dir, pin_name);
	ret = bpf_link__pin(link, path);
	bpf_link__destroy(link);
	return ret;
}

static void pin_name_of(int i, char *out, size_t len)
{
	const char *slash = strrchr(cg_names[i], '/');

	snprintf(out, len, "%s", i == 0 ? "test" : slash ? slash + 1 : cg_names[i]);
}

/*
 * The example's kernel flags (examples/rstat-vmscan/vmscan.bpf.c), set before
 * load as libcgrstat sets its own: css_rstat_* from 6.16 (the running
 * kernel's BTF tells), trusted kfunc arguments from 7.0 (its version tells).
 */
static void set_kernel_flags(struct vmscan *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct utsname u;
	int major = 0;

	if (btf) {
		skel->rodata->have_css_rstat =
			btf__find_by_name_kind(btf, "css_rstat_updated", BTF_KIND_FUNC) >= 0;
		btf__free(btf);
	}
	if (!uname(&u) && sscanf(u.release, "%d.", &major) == 1)
		skel->rodata->kfunc_args_trusted = major >= 7;
}

TEST(vmscan_hierarchical_stats)
{
	unsigned long long delay[N_CGROUPS], root_delay;
	char path[4400], name[64];
	struct vmscan *skel;
	bool swap;
	int i, ret;

	ASSERT_EQ(0, cgutil_cgroup2_root(cg_root, sizeof(cg_root)));
	snprintf(test_dir, sizeof(test_dir), "%s/vmscan-test-%d", cg_root, getpid());
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/vmscan-test-%d", getpid());
	swap = setup_swap();
	TH_LOG("swap on zram: %s", swap ? "yes" : "no (reclaim finds nothing: EAGAIN)");

	skel = vmscan__open();
	ASSERT_NE(NULL, skel);
	set_kernel_flags(skel);
	bpf_program__set_autoattach(skel->progs.dump_vmscan, false);
	ret = vmscan__load(skel);
	if (ret && getenv("CGRSTAT_SKIP_UNSUPPORTED")) {
		vmscan__destroy(skel);
		SKIP(return, "this kernel cannot load the programs (%d)", ret);
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, vmscan__attach(skel));

	/* hierarchy with the memory controller enabled down to the leaves */
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg_root);
	write_file(path, "+memory");
	for (i = 0; i < N_CGROUPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", test_dir, cg_names[i]);
		ASSERT_EQ(0, mkdir(path, 0755)) TH_LOG("mkdir %s: %s", path, strerror(errno));
		if (i < 3) {
			strcat(path, "/cgroup.subtree_control");
			ASSERT_EQ(0, write_file(path, "+memory"));
		}
	}
	ASSERT_EQ(0, mkdir(pin_dir, 0755));
	for (i = 0; i < N_CGROUPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", test_dir, cg_names[i]);
		pin_name_of(i, name, sizeof(name));
		ASSERT_EQ(0, pin_iter(skel, path, name));
	}
	ASSERT_EQ(0, pin_iter(skel, cg_root, "root"));

	for (i = 3; i < N_CGROUPS; i++) {
		ret = reclaim_in_leaf(cg_names[i]);
		TH_LOG("%s: memory.reclaim %s", cg_names[i], ret == 0 ? "reclaimed 8M" :
		       ret == 1 ? "EAGAIN" : "failed");
		EXPECT_TRUE(ret == 0 || (!swap && ret == 1)) TH_LOG("reclaim_in_leaf: %d", ret);
	}

	for (i = 0; i < N_CGROUPS; i++) {
		pin_name_of(i, name, sizeof(name));
		ASSERT_EQ(0, read_pinned(name, &delay[i]));
		TH_LOG("%-8s total_vmscan_delay %llu ns", name, delay[i]);
	}
	ASSERT_EQ(0, read_pinned("root", &root_delay));
	for (i = 3; i < N_CGROUPS; i++)
		EXPECT_LT(0ULL, delay[i]) TH_LOG("leaf %d", i);
	EXPECT_EQ(delay[1], delay[3] + delay[4]);
	EXPECT_EQ(delay[2], delay[5] + delay[6]);
	EXPECT_EQ(delay[0], delay[1] + delay[2]);
	EXPECT_LE(delay[0], root_delay);

	for (i = 0; i < N_CGROUPS; i++) {
		pin_name_of(i, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", pin_dir, name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/root", pin_dir);
	unlink(path);
	rmdir(pin_dir);
	for (i = N_CGROUPS - 1; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", test_dir, cg_names[i]);
		rmdir(path);
	}
	vmscan__destroy(skel);
}

TEST_HARNESS_MAIN
