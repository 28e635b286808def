// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for kfunc_test.c: the bpf_mem_cgroup_* kfuncs with valid and
 * invalid indexes, and programs the verifier must reject.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "memcg_kfuncs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* enum values from the kernel's BTF, set by the test */
const volatile int anon_idx;		/* NR_ANON_MAPPED */
const volatile int untracked_state;	/* a node_stat_item memcgs skip */
const volatile int nr_memcg_stat;	/* MEMCG_NR_STAT */
const volatile int pgfault_idx;		/* PGFAULT */
const volatile int untracked_event;	/* a vm_event_item memcgs skip */
const volatile int nr_vm_events;	/* NR_VM_EVENT_ITEMS */
const volatile int nr_memory_events;	/* MEMCG_NR_MEMORY_EVENTS */
const volatile int oom_idx;		/* MEMCG_OOM */

enum {
	BAD_STATE_NEG, BAD_STATE_END, BAD_STATE_HUGE, BAD_STATE_UNTRACKED,
	BAD_EVENT_NEG, BAD_EVENT_END, BAD_EVENT_UNTRACKED,
	BAD_MEMEV_NEG, BAD_MEMEV_END,
	NR_BAD,
};

__u64 bad[NR_BAD];
__u64 anon, pgfault, usage, oom, root_anon, syscall_anon;
int visited;

/* The memcg of the iterated cgroup, a reference to put; NULL if none. */
static __always_inline struct mem_cgroup *iter_memcg(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;

	return cgrp ? bpf_get_mem_cgroup(&cgrp->self) : NULL;
}

SEC("iter.s/cgroup")
int bounds(struct bpf_iter__cgroup *ctx)
{
	struct mem_cgroup *memcg = iter_memcg(ctx);

	if (!memcg)
		return 0;
	visited++;
	bpf_mem_cgroup_flush_stats(memcg);
	bad[BAD_STATE_NEG] = bpf_mem_cgroup_page_state(memcg, -1);
	bad[BAD_STATE_END] = bpf_mem_cgroup_page_state(memcg, nr_memcg_stat);
	bad[BAD_STATE_HUGE] = bpf_mem_cgroup_page_state(memcg, 1 << 30);
	bad[BAD_STATE_UNTRACKED] = bpf_mem_cgroup_page_state(memcg, untracked_state);
	bad[BAD_EVENT_NEG] = bpf_mem_cgroup_vm_events(memcg, -1);
	bad[BAD_EVENT_END] = bpf_mem_cgroup_vm_events(memcg, nr_vm_events);
	bad[BAD_EVENT_UNTRACKED] = bpf_mem_cgroup_vm_events(memcg, untracked_event);
	bad[BAD_MEMEV_NEG] = bpf_mem_cgroup_memory_events(memcg, -1);
	bad[BAD_MEMEV_END] = bpf_mem_cgroup_memory_events(memcg, nr_memory_events);
	anon = bpf_mem_cgroup_page_state(memcg, anon_idx);
	pgfault = bpf_mem_cgroup_vm_events(memcg, pgfault_idx);
	usage = bpf_mem_cgroup_usage(memcg);
	oom = bpf_mem_cgroup_memory_events(memcg, oom_idx);
	bpf_put_mem_cgroup(memcg);

	/*
	 * The flush above folded this cgroup's counts into its parent's pending
	 * ones only: the root's total needs a flush of its own.
	 */
	memcg = bpf_get_root_mem_cgroup();
	if (memcg) {
		bpf_mem_cgroup_flush_stats(memcg);
		root_anon = bpf_mem_cgroup_page_state(memcg, anon_idx);
		bpf_put_mem_cgroup(memcg);
	}
	return 0;
}

/* Registered for every program type: a syscall program can use them. */
SEC("?syscall")
int from_syscall(void *ctx)
{
	struct mem_cgroup *memcg = bpf_get_root_mem_cgroup();

	if (!memcg)
		return 1;
	bpf_mem_cgroup_flush_stats(memcg);
	syscall_anon = bpf_mem_cgroup_page_state(memcg, anon_idx);
	bpf_put_mem_cgroup(memcg);
	return 0;
}

/* Must be rejected: flushing sleeps, iter/cgroup does not. */
SEC("?iter/cgroup")
int flush_not_sleepable(struct bpf_iter__cgroup *ctx)
{
	struct mem_cgroup *memcg = iter_memcg(ctx);

	if (!memcg)
		return 0;
	bpf_mem_cgroup_flush_stats(memcg);
	bpf_put_mem_cgroup(memcg);
	return 0;
}

/* Must be rejected: the reference is never put. */
SEC("?iter.s/cgroup")
int leaks_reference(struct bpf_iter__cgroup *ctx)
{
	struct mem_cgroup *memcg = iter_memcg(ctx);

	if (memcg)
		usage = bpf_mem_cgroup_usage(memcg);
	return 0;
}

/* Must be rejected: NULL is not a trusted memcg. */
SEC("?iter.s/cgroup")
int null_memcg(struct bpf_iter__cgroup *ctx)
{
	usage = bpf_mem_cgroup_usage((struct mem_cgroup *)0);
	return 0;
}
