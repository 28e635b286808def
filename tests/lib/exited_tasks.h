/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the tests that measure a worker's whole life: waitpid() and
 * waitid() return at the child's exit_notify(), before its last context
 * switch, so the tail of its exit still runs (and is counted) in its cgroup.
 */
#ifndef TESTS_LIB_EXITED_TASKS_H
#define TESTS_LIB_EXITED_TASKS_H

#include <sched.h>

/*
 * Run once on every cpu we may use: a cpu that runs us has switched out,
 * for good, any task that had already exited there.
 */
static inline void settle_exited_tasks(void)
{
	cpu_set_t saved, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			sched_yield();
	}
	sched_setaffinity(0, sizeof(saved), &saved);
}

#endif
