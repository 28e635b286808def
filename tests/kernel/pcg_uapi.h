/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The multi-cgroup perf event ioctls. The patched uapi header
 * defines them; these fallbacks let the tests build against older headers
 * (on an unpatched kernel the ioctls fail with -ENOTTY and the tests skip).
 */
#ifndef PCG_UAPI_H
#define PCG_UAPI_H

#include <linux/perf_event.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#ifndef PERF_EVENT_IOC_ATTACH_CGROUP
#define PERF_EVENT_IOC_ATTACH_CGROUP	_IOW('$', 12, __u64 *)
#endif
#ifndef PERF_EVENT_IOC_READ_CGROUP
#define PERF_EVENT_IOC_READ_CGROUP	_IOWR('$', 13, __u64 *)
#endif
#ifndef PERF_EVENT_IOC_DETACH_CGROUP
#define PERF_EVENT_IOC_DETACH_CGROUP	_IOW('$', 14, __u64 *)
#endif
#ifndef PERF_EVENT_IOC_READ_CGROUPS
#define PERF_EVENT_IOC_READ_CGROUPS	_IOWR('$', 15, __u64 *)
#endif
#ifndef PERF_EVENT_IOC_ATTACH_CGROUPS
#define PERF_EVENT_IOC_ATTACH_CGROUPS	_IOW('$', 16, __u64 *)
#endif
#ifndef PERF_CGROUP_ATTACH_MAX_NR
#define PERF_CGROUP_ATTACH_MAX_NR	(1U << 20)
#endif
#ifndef PERF_READ_CGROUPS_DETACH_REMOVED
#define PERF_READ_CGROUPS_DETACH_REMOVED	(1ULL << 0)
#endif

#ifndef PERF_ATTACH_CGROUPS_DESCENDANTS
#define PERF_ATTACH_CGROUPS_DESCENDANTS	(1ULL << 0)
#endif

#endif /* PCG_UAPI_H */
