/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the memcg-stat tests: cgroups, workloads that charge memory
 * and then stay idle, and an independent memory.stat parser.
 */
#ifndef MCG_UTIL_H
#define MCG_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#define MCG_ROOT "/sys/fs/cgroup"

/* What a workload charges to its cgroup before going idle. */
struct mcg_work {
	long anon_kb;		/* private anonymous memory, touched */
	long shmem_kb;		/* memfd (shmem, counts as file too) */
	int files;		/* empty files created in dir (dentries, inodes) */
	const char *dir;
};

struct mcg_task {
	pid_t pid;
	int go_fd;		/* closing it lets the task exit */
};

int mcg_create(const char *path, int enable_memory_for_children);
/* Kill remaining tasks (cgroup.kill) and remove @path and its children. */
int mcg_destroy(const char *path);

/* Start a task in cgroup @cg, wait until it charged @w and went idle. */
int mcg_task_start(struct mcg_task *t, const char *cg, const struct mcg_work *w);
/* Let it exit and reap it. */
int mcg_task_stop(struct mcg_task *t);

/* memory.stat field @name of @cg, parsed here; -1 if absent. */
int64_t mcg_stat(const char *cg, const char *name);
/* A single-number file of @cg (memory.current); -1 on error. */
int64_t mcg_read_u64(const char *cg, const char *file);

/* Whether the running kernel's BTF has the bpf_mem_cgroup_* kfuncs. */
int mcg_kernel_has_kfuncs(void);
/*
 * Whether it must have them, so that their absence is a failure and not a
 * skip: our patched 6.12 (KERNEL_NAME=patched, the series backports them)
 * and every kernel from 7.0, where upstream has them.
 */
int mcg_kfuncs_required(void);

#endif
