// SPDX-License-Identifier: GPL-2.0
/*
 * Widens the window of a task move for tests/kernel/move_window.c: when the
 * armed mover thread has notified CGROUP_TASK_MIGRATING (the return of
 * blocking_notifier_call_chain_robust(), before the move commits), it waits
 * until the moved task has been switched out and in again and has run for
 * HOLD_NS since, so that the move commits while the moved task runs, after
 * another task of its old cgroup ran on its cpu inside the move.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define HOLD_NS		(50 * 1000ULL)
#define MAX_SPINS	(1U << 23)

/* set by the test */
int mover_tid;
int moved_tid;
int armed;		/* the mover's next MIGRATING waits; cleared then */

/* the moved task's switches, from sched_switch */
__u64 switched_in;
__u64 last_in_ns;
__u64 last_out_ns;

/* moves that waited, and those in which the task came back and ran */
__u64 waits;
__u64 caught;

SEC("tp_btf/sched_switch")
int BPF_PROG(move_window_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	if (prev->pid == moved_tid)
		last_out_ns = now;
	if (next->pid == moved_tid) {
		last_in_ns = now;
		__sync_fetch_and_add(&switched_in, 1);
	}
	return 0;
}

/* 1 (stop) once the task came in since @ctx's count and ran HOLD_NS since */
static long came_back_and_ran(__u64 i, void *ctx)
{
	__u64 start = *(__u64 *)ctx;
	__u64 in = *(volatile __u64 *)&last_in_ns;
	__u64 out = *(volatile __u64 *)&last_out_ns;

	if (*(volatile __u64 *)&switched_in == start || out >= in)
		return 0;
	return bpf_ktime_get_ns() - in >= HOLD_NS;
}

SEC("fexit/blocking_notifier_call_chain_robust")
int BPF_PROG(move_window_migrating, struct blocking_notifier_head *nh,
	     unsigned long val_up, unsigned long val_down, void *v, int ret)
{
	__u64 start;

	if ((__u32)bpf_get_current_pid_tgid() != mover_tid || !armed)
		return 0;
	armed = 0;
	start = switched_in;
	__sync_fetch_and_add(&waits, 1);
	bpf_loop(MAX_SPINS, came_back_and_ran, &start, 0);
	if (came_back_and_ran(0, &start))
		__sync_fetch_and_add(&caught, 1);
	return 0;
}
