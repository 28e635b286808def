// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgutil: where cgroup2 is mounted, and a cgroup's id. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cgutil.h"

static int copy_path(char *root, size_t len, const char *dir)
{
	if ((size_t)snprintf(root, len, "%s", dir) >= len)
		return -ENAMETOOLONG;
	return 0;
}

bool cgutil_is_cgroup2(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC;
}

int cgutil_cgroup2_root(char *root, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	int ret = -ENOENT;

	if (!f)
		return cgutil_is_cgroup2(CGUTIL_DEFAULT_ROOT) ?
		       copy_path(root, len, CGUTIL_DEFAULT_ROOT) : -ENOENT;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			ret = copy_path(root, len, m->mnt_dir);
			break;
		}
	}
	endmntent(f);
	return ret;
}

int cgutil_cgroup_id(const char *path, uint64_t *id)
{
	return cgutil_cgroup_id_at(AT_FDCWD, path, id);
}

int cgutil_cgroup_id_at(int dirfd, const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(dirfd, path, &h.fh, &mount_id, path[0] ? 0 : AT_EMPTY_PATH))
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EINVAL;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}
