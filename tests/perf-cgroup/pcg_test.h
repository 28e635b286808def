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

/* Skip (exit 4) on a kernel without the ioctls, before creating anything. */
#define PCG_REQUIRE_ATTACH() do { \
	if (!pcg_kernel_has_attach()) \
		SKIP(return, "kernel lacks PERF_EVENT_IOC_ATTACH_CGROUP"); \
} while (0)

/* Assert that a run of a worker finished with exit status 0. */
#define ASSERT_WORKER(pid) do { \
	pid_t __pid = (pid); \
	ASSERT_LT(0, __pid); \
	ASSERT_EQ(0, pcg_wait(__pid)); \
} while (0)

static inline int64_t usage_ns(const char *cg)
{
	int64_t us = pcg_cg_usage_usec(cg);

	return us < 0 ? us : us * 1000;
}

#endif /* PCG_TEST_H */
