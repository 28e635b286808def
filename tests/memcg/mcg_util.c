// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "cgtest.h"
#include "mcg_util.h"

int mcg_create(const char *path, int enable_memory_for_children)
{
	int ret = cgtest_mkdir(path);

	if (ret || !enable_memory_for_children)
		return ret;
	return cgtest_enable_controllers(path, "+memory");
}

int mcg_destroy(const char *path)
{
	return cgtest_destroy_tree(path);
}

static int charge(const struct mcg_work *w)
{
	char name[512];
	char *p;
	long i;
	int fd;

	if (w->anon_kb) {
		p = mmap(NULL, w->anon_kb << 10, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		/*
		 * One fault per 4 KiB page, which the tests count on: Debian's
		 * kernels have THP "always" and faulted 4 MiB in with 529
		 * faults instead of 1024.
		 */
		madvise(p, w->anon_kb << 10, MADV_NOHUGEPAGE);
		for (i = 0; i < w->anon_kb << 10; i += 4096)
			p[i] = 1;
	}
	if (w->shmem_kb) {
		fd = memfd_create("mcg", 0);
		if (fd < 0 || ftruncate(fd, w->shmem_kb << 10))
			return -1;
		p = mmap(NULL, w->shmem_kb << 10, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return -1;
		for (i = 0; i < w->shmem_kb << 10; i += 4096)
			p[i] = 1;
	}
	for (i = 0; i < w->files; i++) {
		snprintf(name, sizeof(name), "%s/f-%d-%ld", w->dir, getpid(), i);
		fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return 0;
}

static void task_main(const char *cg, const struct mcg_work *w, int ready,
		      int go)
{
	char c = 0;

	if (cgtest_move(cg, 0) || charge(w))
		_exit(1);
	if (write(ready, &c, 1) != 1)
		_exit(1);
	/* idle until the test closes the pipe */
	while (read(go, &c, 1) > 0)
		;
	_exit(0);
}

int mcg_task_start(struct mcg_task *t, const char *cg, const struct mcg_work *w)
{
	int ready[2], go[2];
	char c;

	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		return -errno;
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (!t->pid) {
		/* no other task's go pipe may stay open in this one */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != ready[1] && fd != go[0])
				close(fd);
		task_main(cg, w, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	t->go_fd = go[1];
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		mcg_task_stop(t);
		return -EIO;
	}
	close(ready[0]);
	return 0;
}

int mcg_task_stop(struct mcg_task *t)
{
	int status;

	close(t->go_fd);
	if (waitpid(t->pid, &status, 0) != t->pid)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

int64_t mcg_stat(const char *cg, const char *name)
{
	int64_t v = cgtest_stat_field(cg, "memory.stat", name);

	return v < 0 ? -1 : v;
}

int64_t mcg_read_u64(const char *cg, const char *file)
{
	int64_t v = cgtest_read_u64(cg, file);

	return v < 0 ? -1 : v;
}

int mcg_kernel_has_kfuncs(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int has = btf && btf__find_by_name_kind(btf, "bpf_mem_cgroup_page_state",
						BTF_KIND_FUNC) > 0;

	btf__free(btf);
	return has;
}

int mcg_kfuncs_required(void)
{
	const char *name = getenv("KERNEL_NAME");
	struct utsname u;
	int major = 0;

	if (name && !strcmp(name, "patched"))
		return 1;
	return !uname(&u) && sscanf(u.release, "%d", &major) == 1 && major >= 7;
}
