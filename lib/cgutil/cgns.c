// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgutil: whether a cgroup2 directory lies inside the caller's cgroup
 * namespace, and entering another cgroup namespace.
 *
 * The kernel finds a cgroup by id (cgroup_get_from_id(): the shared
 * backend's ioctls, bpf_cgroup_from_id(), a cgroup_iter made from an id)
 * only inside the caller's cgroup namespace; by an open directory it finds
 * any.  A container with a cgroup namespace of its own that mounts the
 * host's cgroup2 tree (a DaemonSet's hostPath) sees that mount's root
 * above its namespace's root: /proc/self/mountinfo shows the root of such
 * a mount as "/.." or "/../..." (cgroup_show_path(), relative to the
 * namespace's root).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgutil.h"

/* The root field of mount @mnt_id in /proc/self/mountinfo starts with "/.." */
static int mount_root_above_ns(FILE *f, uint64_t mnt_id)
{
	char *line = NULL, *root;
	unsigned long long id;
	size_t cap = 0;
	int ret = -ENOENT, pos;

	while (getline(&line, &cap, f) > 0) {
		pos = 0;
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ..." */
		if (sscanf(line, "%llu %*u %*s %n", &id, &pos) != 1 || !pos || id != mnt_id)
			continue;
		root = line + pos;
		ret = !strncmp(root, "/..", 3) && (root[3] == '/' || root[3] == ' ');
		break;
	}
	free(line);
	return ret;
}

int cgutil_cgroup_in_ns(const char *path)
{
	struct statx stx;
	FILE *f;
	int above;

	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	above = mount_root_above_ns(f, stx.stx_mnt_id);
	fclose(f);
	return above < 0 ? above : !above;
}

int cgutil_enter_cgroup_ns(const char *ns_file)
{
	int fd = open(ns_file, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWCGROUP))
		ret = -errno;
	close(fd);
	return ret;
}
