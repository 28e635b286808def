/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --path.cgroupfs=DIR, the same on every tool (node_exporter's --path.*):
 * the cgroup2 mount to count instead of the first one mounted, e.g. the
 * host's tree mounted into a container at /host/sys/fs/cgroup.
 */
#ifndef TOOLS_CGROUPFS_H
#define TOOLS_CGROUPFS_H

#define CGROUPFS_OPTION "path.cgroupfs"

/* Its --help lines (a literal) */
#define CGROUPFS_USAGE							\
	"      --path.cgroupfs=DIR\n"					\
	"                       the cgroup2 mount to count (default: the first\n" \
	"                       one mounted), e.g. the host's at\n"	\
	"                       /host/sys/fs/cgroup in a container\n"

/* The host's cgroup namespace, entered when DIR lies outside ours */
#define CGROUPFS_HOST_NS "/proc/1/ns/cgroup"

/*
 * Check DIR, once, before any thread is created.  DIR must be a cgroup2
 * directory.  When its root lies outside this process's cgroup namespace
 * (a container's own), the kernel finds none of its cgroups by id: enter
 * the host's namespace (CGROUPFS_HOST_NS: the host's PID namespace and
 * CAP_SYS_ADMIN), else say that only what opens cgroups by path works.
 * 0 with *by_id 1 (cgroups found by id) or 0 (by path only), or the exit
 * status after a message: 2 when DIR is not cgroup2, 1 otherwise.
 */
int cgroupfs_prepare(const char *prog, const char *dir, int *by_id);

#endif /* TOOLS_CGROUPFS_H */
