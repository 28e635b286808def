// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perf_event_open(2), and what to do when it fails: the one call of the
 * system call in the libraries (libcgcount's backends, libcgrstat's
 * counters; perf's copy of libcgrstat takes this file too).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "cgutil.h"

int cgutil_perf_open(const struct perf_event_attr *attr, int pid, int cpu, int group_fd,
		     unsigned long flags)
{
	struct perf_event_attr copy = *attr;
	long fd;

	copy.size = sizeof(copy);
	fd = syscall(SYS_perf_event_open, &copy, pid, cpu, group_fd,
		     flags | PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

const char *cgutil_perf_open_advice(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "permission denied: run as root (or with CAP_PERFMON) or lower "
		       "kernel.perf_event_paranoid (sysctl -w kernel.perf_event_paranoid=-1)";
	case ENOENT:
		return "not supported by this kernel or cpu (a hardware event needs a PMU); "
		       "a cgroup event: the cgroup has no perf_event state until a controller "
		       "was once enabled in the root's cgroup.subtree_control (echo +pids > "
		       "/sys/fs/cgroup/cgroup.subtree_control), or while perf_event is mounted "
		       "as a cgroup v1 hierarchy";
	case EOPNOTSUPP:
		return "not supported by this kernel or cpu (a hardware event needs a PMU, "
		       "a cgroup event CONFIG_CGROUP_PERF)";
	case EINVAL:
		return "the kernel refused its attributes (a term, a modifier or a PMU this "
		       "machine lacks?)";
	case EMFILE:
	case ENFILE:
		return "out of file descriptors: raise the limit (ulimit -n)";
	case ENODEV:
		return "no such cpu (offline?) or PMU";
	default:
		return strerror(err);
	}
}
