// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup memcg reclaim latency, aggregated by rstat: the pattern of the
 * kernel's BPF selftest cgroup_hierarchical_stats.
 *
 * vmscan_start/vmscan_end time each memcg reclaim of the current task and
 * add it to its memcg cgroup's per-cpu reading, then mark (cgroup, cpu)
 * updated; vmscan_flush (fentry/bpf_rstat_flush) folds per-cpu readings
 * into per-cgroup totals and propagates them to parents, children first;
 * dump_vmscan (iter.s/cgroup, one pinned file per cgroup) flushes and prints
 * "cg_id: N, total_vmscan_delay: NS" for its cgroup.
 * The rstat kfuncs of every kernel from 6.1 on: lib/cgrstat/cgrstat_kfuncs.bpf.h.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cgrstat_kfuncs.bpf.h"	/* lib/cgrstat: the kfuncs on 6.1 .. 7.x */

char LICENSE[] SEC("license") = "GPL";

struct vmscan_percpu {
	__u64 prev;	/* state already folded by the flusher */
	__u64 state;	/* cumulative, written on this cpu only */
};

struct vmscan {
	__u64 pending;	/* passed up by children, not folded yet */
	__u64 state;	/* total: all cpus, all descendants */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} vmscan_start_time SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct vmscan_percpu);
} pcpu_cgroup_vmscan_elapsed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct vmscan);
} cgroup_vmscan_elapsed SEC(".maps");

/*
 * The cgroup whose memcg the task charges. On 7.0+ the kfuncs want a
 * trusted cgroup, and of css_set only dfl_cgrp is one (subsys[] is not
 * RCU-annotated): the task's cgroup on the default hierarchy, which is
 * its memcg's cgroup where the memory controller is enabled down to it,
 * as in the test.
 */
static __always_inline struct cgroup *task_memcg(struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);

	if (kfunc_args_trusted)
		return task->cgroups->dfl_cgrp;
	return task->cgroups->subsys[id]->cgroup;
}

static __always_inline __u64 cgroup_id(struct cgroup *cgrp)
{
	return cgrp->kn->id;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(vmscan_start, int order, gfp_t gfp_flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 *start;

	start = bpf_task_storage_get(&vmscan_start_time, task, 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (start)
		*start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(vmscan_end, unsigned long nr_reclaimed)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 end = bpf_ktime_get_ns(), elapsed, id, *start;
	struct vmscan_percpu *pcpu, init = {};
	struct cgroup *cgrp = task_memcg(task);

	start = bpf_task_storage_get(&vmscan_start_time, task, 0, 0);
	if (!cgrp || !start || !*start)
		return 0;
	elapsed = end - *start;
	*start = 0;
	id = cgroup_id(cgrp);
	pcpu = bpf_map_lookup_elem(&pcpu_cgroup_vmscan_elapsed, &id);
	if (pcpu) {
		pcpu->state += elapsed;
	} else {
		init.state = elapsed;
		if (bpf_map_update_elem(&pcpu_cgroup_vmscan_elapsed, &id, &init, BPF_NOEXIST))
			return 0;
	}
	mark_updated(cgrp, bpf_get_smp_processor_id());
	return 0;
}

SEC("fentry/bpf_rstat_flush")
int BPF_PROG(vmscan_flush, struct cgroup *cgrp, struct cgroup *parent, int cpu)
{
	struct vmscan_percpu *pcpu;
	struct vmscan *total, *up, init = {};
	__u64 id = cgroup_id(cgrp), parent_id, delta = 0;

	pcpu = bpf_map_lookup_percpu_elem(&pcpu_cgroup_vmscan_elapsed, &id, cpu);
	if (pcpu) {
		delta = pcpu->state - pcpu->prev;
		pcpu->prev = pcpu->state;
	}
	total = bpf_map_lookup_elem(&cgroup_vmscan_elapsed, &id);
	if (total) {
		delta += total->pending;
		total->pending = 0;
		total->state += delta;
	} else if (delta) {
		init.state = delta;
		bpf_map_update_elem(&cgroup_vmscan_elapsed, &id, &init, BPF_NOEXIST);
	}
	if (!parent || !delta)
		return 0;
	parent_id = cgroup_id(parent);
	up = bpf_map_lookup_elem(&cgroup_vmscan_elapsed, &parent_id);
	if (up) {
		up->pending += delta;
	} else {
		init.state = 0;
		init.pending = delta;
		bpf_map_update_elem(&cgroup_vmscan_elapsed, &parent_id, &init, BPF_NOEXIST);
	}
	return 0;
}

SEC("iter.s/cgroup")
int BPF_PROG(dump_vmscan, struct bpf_iter_meta *meta, struct cgroup *cgrp)
{
	struct seq_file *seq = meta->seq;
	struct vmscan *total;
	__u64 id;

	if (!cgrp)
		return 1;	/* epilogue */
	flush_subtree(cgrp);
	id = cgroup_id(cgrp);
	total = bpf_map_lookup_elem(&cgroup_vmscan_elapsed, &id);
	BPF_SEQ_PRINTF(seq, "cg_id: %llu, total_vmscan_delay: %llu\n", id,
		       total ? total->state : 0);
	return 1;	/* one cgroup per read */
}
