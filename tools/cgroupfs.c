// SPDX-License-Identifier: GPL-2.0
/*
 * --path.cgroupfs=DIR (cgroupfs.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroupfs.h"
#include "cgutil.h"
#include "cli.h"

/* 1: in our namespace; 0: not; -1 after a message */
static int in_ns(const char *prog, const char *dir)
{
	int ret = cgutil_cgroup_in_ns(dir);

	if (ret >= 0)
		return ret;
	fprintf(stderr, "%s: --" CGROUPFS_OPTION "=%s: cannot find its mount in "
		"/proc/self/mountinfo: %s\n", prog, dir, strerror(-ret));
	return -1;
}

int cgroupfs_prepare(const char *prog, const char *dir, int *by_id)
{
	int ret;

	errno = 0;
	if (!cgutil_is_cgroup2(dir))
		return cli_usage_error(prog, "--" CGROUPFS_OPTION "=%s: not a cgroup2 mount "
				       "(statfs: %s); mount one there, or the host's "
				       "/sys/fs/cgroup", dir,
				       errno ? strerror(errno) : "another file system");
	ret = in_ns(prog, dir);
	if (ret != 0) {
		*by_id = 1;
		return ret < 0;
	}
	ret = cgutil_enter_cgroup_ns(CGROUPFS_HOST_NS);
	if (!ret && (ret = in_ns(prog, dir)) < 0)
		return 1;
	if (ret == 1) {
		fprintf(stderr, "%s: %s lies outside this process's cgroup namespace: "
			"entered the host's (" CGROUPFS_HOST_NS ")\n", prog, dir);
		*by_id = 1;
		return 0;
	}
	fprintf(stderr, "%s: %s lies outside this process's cgroup namespace, where the "
		"kernel finds no cgroup by id, and the host's could not be entered (setns "
		CGROUPFS_HOST_NS ": %s; it needs the host's PID namespace, CAP_SYS_ADMIN and CAP_SYS_PTRACE)\n",
		prog, dir, ret < 0 ? strerror(-ret) : "another container's namespace");
	*by_id = 0;
	return 0;
}
