// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of per-cgroup counting (cgbench's floor-read backend): at every
 * cgroup switch, read each of the cpu's E counters once and do nothing with
 * the values. Any per-cgroup backend has to read the counters at a cgroup
 * switch (or keep them running per cgroup), so what this costs over plain
 * cpu-wide counting is the least a backend adds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_EVENTS 8

const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 1;

/* the cpu-wide counters: event i of cpu c at i * nr_cpus + c */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
} events SEC(".maps");

__u64 reads;

SEC("tp_btf/sched_switch")
int BPF_PROG(read_at_cgroup_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct bpf_perf_event_value now;
	__u32 cpu, i;

	if (prev->cgroups->dfl_cgrp == next->cgroups->dfl_cgrp)
		return 0;
	cpu = bpf_get_smp_processor_id();
	for (i = 0; i < MAX_EVENTS && i < nr_events; i++) {
		if (!bpf_perf_event_read_value(&events, i * nr_cpus + cpu, &now, sizeof(now)))
			__sync_fetch_and_add(&reads, 1);
	}
	return 0;
}
