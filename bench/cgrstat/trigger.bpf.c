// SPDX-License-Identifier: GPL-2.0
/*
 * Which trigger is cheaper for the collector: the cgroup-switches software
 * event (a perf_event program on its overflow, as bperf does) or
 * tp_btf/sched_switch?  Both programs do the same work (read the cpu's
 * counters, add the delta to the current cgroup's per-cpu slot); the
 * tracepoint one first compares the cgroups itself.  Two more break the
 * collector's per-switch cost down: an empty program (what the hook and
 * kernel.bpf_stats_enabled's own timing cost) and one that only reads the
 * counters.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_EVENTS 2

const volatile __u32 nr_cpus = 1;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
} events SEC(".maps");

struct reading {
	__u64 v[MAX_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct reading);
} last SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct reading);
} slots SEC(".maps");

__u64 calls;

static __always_inline void charge(__u64 id)
{
	struct bpf_perf_event_value now;
	struct reading *prev, *slot, zero = {};
	__u32 k = 0, cpu = bpf_get_smp_processor_id(), i;

	prev = bpf_map_lookup_elem(&last, &k);
	slot = bpf_map_lookup_elem(&slots, &id);
	if (!slot) {
		bpf_map_update_elem(&slots, &id, &zero, BPF_NOEXIST);
		slot = bpf_map_lookup_elem(&slots, &id);
	}
	if (!prev || !slot)
		return;
	for (i = 0; i < MAX_EVENTS; i++) {
		if (bpf_perf_event_read_value(&events, i * nr_cpus + cpu, &now, sizeof(now)))
			continue;
		slot->v[i] += now.counter - prev->v[i];
		prev->v[i] = now.counter;
	}
	__sync_fetch_and_add(&calls, 1);
}

SEC("perf_event")
int on_cgroup_switch(void *ctx)
{
	charge(bpf_get_current_cgroup_id());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cgroup *out = prev->cgroups->dfl_cgrp;

	if (out == next->cgroups->dfl_cgrp)
		return 0;
	charge(out->kn->id);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(read_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct bpf_perf_event_value now;
	__u32 cpu, i;

	if (prev->cgroups->dfl_cgrp == next->cgroups->dfl_cgrp)
		return 0;
	cpu = bpf_get_smp_processor_id();
	for (i = 0; i < MAX_EVENTS; i++)
		bpf_perf_event_read_value(&events, i * nr_cpus + cpu, &now, sizeof(now));
	return 0;
}

/* the same reads without enabled/running (bpf_perf_event_read): what the
 * times cost (one clock read per event in perf_event_read_local) */
SEC("tp_btf/sched_switch")
int BPF_PROG(read_count_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu, i;

	if (prev->cgroups->dfl_cgrp == next->cgroups->dfl_cgrp)
		return 0;
	cpu = bpf_get_smp_processor_id();
	for (i = 0; i < MAX_EVENTS; i++)
		bpf_perf_event_read(&events, i * nr_cpus + cpu);
	return 0;
}
