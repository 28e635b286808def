/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memcg statistics kfuncs of kernel/backport-6.12/0012, with the names and
 * signatures Linux 7.0 merged, declared here so that BPF programs build
 * against any vmlinux.h (one generated from a kernel without them too).
 */
#ifndef MEMCG_KFUNCS_BPF_H
#define MEMCG_KFUNCS_BPF_H

extern struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym;
extern struct mem_cgroup *bpf_get_root_mem_cgroup(void) __ksym;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym;
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym;
extern unsigned long bpf_mem_cgroup_vm_events(struct mem_cgroup *memcg,
					      enum vm_event_item event) __ksym;
extern unsigned long bpf_mem_cgroup_memory_events(struct mem_cgroup *memcg,
						  enum memcg_memory_event event) __ksym;
extern unsigned long bpf_mem_cgroup_usage(struct mem_cgroup *memcg) __ksym;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym;

#endif
