/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared fixture pieces of the multi-cgroup perf event tests. Include after
 * kselftest_harness.h.
 */
#ifndef PCG_TEST_H
#define PCG_TEST_H

#include "pcg_lib.h"

#define BUSY_NS		(1000 * NSEC_PER_MSEC)
#define PINGPONG_ITERS	3000ULL

/*
 * A kernel without @what (@have false): fail on our patched kernels
 * (pcg_kernel_patched()), skip (exit 4) on the others; before creating
 * anything.
 */
#define PCG_REQUIRE(have, what) do { \
	if (!(have)) { \
		ASSERT_FALSE(pcg_kernel_patched()) \
			TH_LOG("%s lacks %s: a patched kernel must have kernel/'s series", \
			       pcg_kernel_name(), what); \
		SKIP(return, "kernel lacks %s", what); \
	} \
} while (0)
#define PCG_REQUIRE_ATTACH() \
	PCG_REQUIRE(pcg_kernel_has_attach(), "PERF_EVENT_IOC_ATTACH_CGROUP")

/* Assert that a run of a worker finished with exit status 0. */
#define ASSERT_WORKER(pid) do { \
	pid_t __pid = (pid); \
	ASSERT_LT(0, __pid); \
	ASSERT_EQ(0, cgtest_wait(__pid)); \
} while (0)

static inline int64_t usage_ns(const char *cg)
{
	int64_t us = cgtest_usage_usec(cg);

	return us < 0 ? us : us * 1000;
}

/* The summed value of @id over the cpus, or -errno (-ENOENT: not attached) */
static inline int64_t node_value(struct pcg_events *ev, uint64_t id)
{
	struct pcg_reading r;
	int ret = pcg_read_cgroup_sum(ev, id, 0, &r);

	return ret < 0 ? ret : (int64_t)r.value;
}

/*
 * Run a busy worker in cg, pinned to cpu (-1: anywhere); return how much
 * cpu.stat says it used (ns).
 */
static inline int64_t run_busy_on(const char *cg, uint64_t ns, int cpu)
{
	int64_t u0 = usage_ns(cg);
	pid_t pid = cgtest_spawn_busy(cg, ns, cpu, NULL);

	if (pid < 0 || cgtest_wait(pid))
		return -1;
	return usage_ns(cg) - u0;
}

static inline int64_t run_busy(const char *cg, uint64_t ns)
{
	return run_busy_on(cg, ns, -1);
}

#endif /* PCG_TEST_H */
