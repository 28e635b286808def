/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Layout shared by memcg_stat.bpf.c and the user-space reader: one record
 * per visited cgroup, written by the cgroup_iter program into an
 * mmap-able array map (no text, no copy through read()).
 */
#ifndef MEMCG_STAT_ABI_H
#define MEMCG_STAT_ABI_H

/* At most this many kfunc calls ("terms") per cgroup. */
#define MEMCG_STAT_MAX_TERMS 48

/* Which kfunc reads a term. */
enum memcg_stat_term_kind {
	MEMCG_TERM_PAGE_STATE = 1,	/* bpf_mem_cgroup_page_state(idx) */
	MEMCG_TERM_VM_EVENT = 2,	/* bpf_mem_cgroup_vm_events(idx) */
	MEMCG_TERM_MEMORY_EVENT = 3,	/* bpf_mem_cgroup_memory_events(idx) */
	MEMCG_TERM_USAGE = 4,		/* bpf_mem_cgroup_usage() */
};

/* memcg_stat_rec.flags */
#define MEMCG_REC_NO_MEMCG 0x1		/* memory controller not enabled here */

struct memcg_stat_rec {
	__u64 cgroup_id;
	__u32 flags;
	__u32 nr_terms;
	__u64 val[MEMCG_STAT_MAX_TERMS];
};

/* Context of the memcg_stat_one syscall program. */
struct memcg_stat_run_args {
	__u64 cgroup_id;
};

#endif
