/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgfile.h: the file and cgroup-tree helpers the C tests share (header
 * only, as harness.h: each test program is its own build).
 *
 *   cgfile_read(path, buf, size)  at most size - 1 bytes, NUL-terminated:
 *                                 the length, or -errno
 *   cgfile_write(path, text)      the text in one write(2), as cgroup
 *                                 files want it: 0, or -errno (-EIO short)
 *   cgfile_rmdir(path)            rmdir(2), waiting out EBUSY (a killed
 *                                 task not yet gone) up to 5 s: 0 when the
 *                                 cgroup is gone, or -errno
 *   cgfile_destroy_tree(path)     kill the tasks of the cgroup and its
 *                                 descendants (cgroup.kill), then remove
 *                                 them, children first: 0 or the first -errno
 */
#ifndef TESTS_CGFILE_H
#define TESTS_CGFILE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline int cgfile_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return (int)n;
}

static inline int cgfile_write(const char *path, const char *text)
{
	ssize_t len = (ssize_t)strlen(text), n;
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != len)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

static inline int cgfile_rmdir(const char *path)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

static inline int cgfile_remove_subtree(const char *path)
{
	char child[4096];
	struct dirent *de;
	DIR *d = opendir(path);
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >=
		    (int)sizeof(child))
			ret = -ENAMETOOLONG;
		else
			ret = cgfile_remove_subtree(child);
	}
	closedir(d);
	return ret ? ret : cgfile_rmdir(path);
}

static inline int cgfile_destroy_tree(const char *path)
{
	char kill[4096];

	if (!path || !path[0])
		return 0;
	snprintf(kill, sizeof(kill), "%s/cgroup.kill", path);
	cgfile_write(kill, "1");	/* ENOENT when already gone, or before 5.14 */
	return cgfile_remove_subtree(path);
}

#endif
