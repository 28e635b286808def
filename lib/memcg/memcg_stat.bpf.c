// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_stat: a sleepable cgroup_iter program that reads selected memcg
 * statistics through the bpf_mem_cgroup_* kfuncs and stores them as
 * binary records, one per visited cgroup, in the mmap-able map "recs".
 *
 * User space fills term_kind[]/term_idx[] before loading (the indexes come
 * from the running kernel's BTF enums), resets nr_recs, and triggers a walk
 * with read(iter_fd). The first visited cgroup is flushed, which makes
 * its whole subtree exact, as reading memory.stat does.
 *
 * memcg_stat_one reads a single cgroup by id through BPF_PROG_RUN.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "memcg_stat_abi.h"
#include "memcg_kfuncs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern struct cgroup *bpf_cgroup_from_id(__u64 cgid) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;

/* Set by user space before load. */
const volatile __u32 nr_terms;
const volatile __u32 term_kind[MEMCG_STAT_MAX_TERMS];
const volatile __s32 term_idx[MEMCG_STAT_MAX_TERMS];
const volatile __u32 flush = 1;

/* Reset by user space before each walk. */
__u32 nr_recs;
__u32 overflow;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct memcg_stat_rec);
	__uint(max_entries, 1);		/* resized by user space */
} recs SEC(".maps");

static __u64 read_term(struct mem_cgroup *memcg, __u32 kind, __s32 idx)
{
	switch (kind) {
	case MEMCG_TERM_PAGE_STATE:
		return bpf_mem_cgroup_page_state(memcg, idx);
	case MEMCG_TERM_VM_EVENT:
		return bpf_mem_cgroup_vm_events(memcg, idx);
	case MEMCG_TERM_MEMORY_EVENT:
		return bpf_mem_cgroup_memory_events(memcg, idx);
	case MEMCG_TERM_USAGE:
		return bpf_mem_cgroup_usage(memcg);
	}
	return (__u64)-1;
}

/* Fill record @slot for @cgrp (a trusted pointer); 0 or -1 if full. */
static __always_inline int fill_record(struct cgroup *cgrp, __u64 id,
				       __u32 slot, int do_flush)
{
	struct memcg_stat_rec *rec;
	struct mem_cgroup *memcg;
	__u32 i;

	rec = bpf_map_lookup_elem(&recs, &slot);
	if (!rec) {
		overflow = 1;
		return -1;
	}
	nr_recs = slot + 1;
	rec->cgroup_id = id;
	rec->nr_terms = nr_terms;
	rec->flags = 0;

	memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (!memcg) {
		rec->flags = MEMCG_REC_NO_MEMCG;
		return 0;
	}
	if (do_flush)
		bpf_mem_cgroup_flush_stats(memcg);

	for (i = 0; i < MEMCG_STAT_MAX_TERMS && i < nr_terms; i++)
		rec->val[i] = read_term(memcg, term_kind[i], term_idx[i]);

	bpf_put_mem_cgroup(memcg);
	return 0;
}

/* Walks: one record per visited cgroup; the first one (the top of a
 * pre-order walk) is flushed, which flushes its whole subtree.
 */
SEC("iter.s/cgroup")
int memcg_stat(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	__u32 slot = nr_recs;

	if (!cgrp)
		return 0;
	return fill_record(cgrp, cgrp->kn->id, slot, flush && slot == 0) ? 1 : 0;
}

/* One cgroup by id, run with BPF_PROG_RUN: no iterator fd to create and
 * release per read. Writes record 0.
 */
SEC("syscall")
int memcg_stat_one(struct memcg_stat_run_args *args)
{
	struct cgroup *cgrp = bpf_cgroup_from_id(args->cgroup_id);
	int ret;

	nr_recs = 0;
	if (!cgrp)
		return -2;	/* -ENOENT */
	ret = fill_record(cgrp, args->cgroup_id, 0, flush);
	bpf_cgroup_release(cgrp);
	return ret;
}
