/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rstat kfuncs on every kernel from 6.1 on, for BPF programs that keep
 * per-cgroup per-cpu state and let rstat sum it up the hierarchy
 * (lib/cgrstat/cgrstat.bpf.c, examples/rstat-vmscan/vmscan.bpf.c).
 * Include it after vmlinux.h and <bpf/bpf_helpers.h>.
 *
 * The loader sets the two flags from the running kernel's BTF and version
 * before load, so that the verifier drops the branches this kernel cannot
 * take (6.1-6.3 refuse bpf_ksym_exists() on a kfunc):
 *   have_css_rstat      6.16+: css_rstat_updated/flush, else cgroup_rstat_*
 *   kfunc_args_trusted  7.0+: every kfunc takes trusted arguments only, and
 *                       a cgroup reached through task->cgroups is an RCU
 *                       pointer: take a reference first
 */
#ifndef RSTAT_KFUNCS_BPF_H
#define RSTAT_KFUNCS_BPF_H

/* 6.1 .. 6.15 */
extern void cgroup_rstat_updated(struct cgroup *cgrp, int cpu) __ksym __weak;
extern void cgroup_rstat_flush(struct cgroup *cgrp) __ksym __weak;
/* 6.16+ */
extern void css_rstat_updated(struct cgroup_subsys_state *css, int cpu) __ksym __weak;
extern void css_rstat_flush(struct cgroup_subsys_state *css) __ksym __weak;
/* 6.4+ with an RCU argument; used on 7.0+ only */
extern struct cgroup *bpf_cgroup_acquire(struct cgroup *cgrp) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;

const volatile bool have_css_rstat;
const volatile bool kfunc_args_trusted;

static __always_inline void rstat_updated(struct cgroup *cgrp, int cpu)
{
	if (have_css_rstat)
		css_rstat_updated(&cgrp->self, cpu);
	else
		cgroup_rstat_updated(cgrp, cpu);
}

/* Tell rstat that @cgrp changed on @cpu (the current cpu, preemption off). */
static __always_inline void mark_updated(struct cgroup *cgrp, int cpu)
{
	struct cgroup *ref;

	if (!kfunc_args_trusted) {
		rstat_updated(cgrp, cpu);
		return;
	}
	ref = bpf_cgroup_acquire(cgrp);
	if (!ref)
		return;	/* dying: its release flush runs without us */
	rstat_updated(ref, cpu);
	bpf_cgroup_release(ref);
}

/* Flush @cgrp's subtree (sleepable context, e.g. a cgroup iterator). */
static __always_inline void flush_subtree(struct cgroup *cgrp)
{
	if (have_css_rstat)
		css_rstat_flush(&cgrp->self);
	else
		cgroup_rstat_flush(cgrp);
}

#endif
