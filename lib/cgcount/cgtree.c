// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgcount: the cgroup v2 tree: mount point, paths, ids, regex walks. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgcount_int.h"
#include "cgutil.h"

int cgc_find_root(char *root, size_t len)
{
	int ret = cgutil_cgroup2_root(root, len);

	if (ret == -ENOENT)
		return cgc_err(ENOENT, "no cgroup2 file system mounted: mount -t cgroup2 none "
			       "/sys/fs/cgroup, or pass cgcount_opts.cgroup_root");
	if (ret)
		return cgc_err(-ret, "the cgroup2 mount point: %s", strerror(-ret));
	return 0;
}

/* "a/b", "/a/b" (relative) or "<root>/a/b" -> "/a/b"; "" and "/" -> "/" */
static int normalize(const struct cgcount *s, const char *path, char *rel, size_t len)
{
	size_t rlen = strlen(s->root);
	const char *p = path;

	if (!strncmp(path, s->root, rlen) && (path[rlen] == '/' || !path[rlen]))
		p = path + rlen;
	while (*p == '/')
		p++;
	if ((size_t)snprintf(rel, len, "/%s", p) >= len)
		return cgc_err(ENAMETOOLONG, "cgroup path too long: %s", path);
	while (strlen(rel) > 1 && rel[strlen(rel) - 1] == '/')
		rel[strlen(rel) - 1] = '\0';
	return 0;
}

static int abs_path(const struct cgcount *s, const char *rel, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s%s", s->root, strcmp(rel, "/") ? rel : "") >= len)
		return cgc_err(ENAMETOOLONG, "cgroup path too long: %s", rel);
	return 0;
}

int cgc_resolve_path(const struct cgcount *s, const char *path, char *rel, size_t len,
		     uint64_t *id)
{
	char full[CGC_PATH_MAX];
	struct stat st;
	int ret;

	if (!path)
		return cgc_err(EINVAL, "no cgroup path given");
	ret = normalize(s, path, rel, len);
	if (!ret)
		ret = abs_path(s, rel, full, sizeof(full));
	if (ret)
		return ret;
	if (stat(full, &st) || !S_ISDIR(st.st_mode))
		return cgc_err(ENOENT, "cgroup '%s' not found: no directory %s (give a path "
			       "relative to the cgroup2 mount %s, or an absolute one)",
			       path, full, s->root);
	ret = cgutil_cgroup_id(full, id);
	if (ret)
		return cgc_err(-ret, "the cgroup id of %s: %s", full, strerror(-ret));
	return 0;
}

int cgc_open_cgroup_dir(const struct cgcount *s, const char *rel)
{
	char full[CGC_PATH_MAX];
	int fd, ret = abs_path(s, rel, full, sizeof(full));

	if (ret)
		return ret;
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cgc_err(errno, "cannot open cgroup %s: %s", full, strerror(errno));
	return fd;
}

/*
 * Depth-first walk below the directory @rel (whose absolute path is @full),
 * calling @fn for each cgroup (including @rel).  A positive return from
 * @fn stops the walk successfully.
 */
static int walk(struct cgcount *s, const char *rel, const char *full,
		int (*fn)(struct cgcount *, const char *, uint64_t, void *), void *arg)
{
	char crel[CGC_PATH_MAX], cfull[CGC_PATH_MAX];
	struct dirent *de;
	uint64_t id;
	DIR *d;
	int ret;

	if (cgutil_cgroup_id(full, &id))
		return 0;	/* removed meanwhile */
	ret = fn(s, rel, id, arg);
	if (ret)
		return ret;
	d = opendir(full);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(crel, sizeof(crel), "%s%s%s", rel, strcmp(rel, "/") ? "/" : "",
			 de->d_name);
		snprintf(cfull, sizeof(cfull), "%s/%s", full, de->d_name);
		ret = walk(s, crel, cfull, fn, arg);
	}
	closedir(d);
	return ret;
}

struct id_search {
	uint64_t id;
	char *rel;
	size_t len;
};

static int match_id(struct cgcount *s, const char *rel, uint64_t id, void *arg)
{
	struct id_search *q = arg;

	(void)s;
	if (id != q->id)
		return 0;
	snprintf(q->rel, q->len, "%s", rel);
	return 1;
}

int cgc_id_to_path(const struct cgcount *s, uint64_t id, char *rel, size_t len)
{
	struct id_search q = { .id = id, .rel = rel, .len = len };

	if (walk((struct cgcount *)s, "/", s->root, match_id, &q) == 1)
		return 0;
	return cgc_err(ENOENT, "cgroup id %llu not found under %s (no live cgroup has it)",
		       (unsigned long long)id, s->root);
}

struct regex_walk {
	regex_t re;
	cgc_walk_fn fn;
	void *arg;
};

static int match_regex(struct cgcount *s, const char *rel, uint64_t id, void *arg)
{
	struct regex_walk *w = arg;

	if (regexec(&w->re, rel, 0, NULL, 0))
		return 0;
	return w->fn(s, rel, id, w->arg);
}

int cgc_walk_below(struct cgcount *s, const char *rel, uint64_t id, cgc_walk_fn fn,
		   void *arg)
{
	char full[CGC_PATH_MAX];
	uint64_t now;
	int ret = abs_path(s, rel, full, sizeof(full));

	if (ret)
		return ret;
	/* removed, or another cgroup by that name */
	if (id && (cgutil_cgroup_id(full, &now) || now != id))
		return 0;
	ret = walk(s, rel, full, fn, arg);
	return ret < 0 ? ret : 0;
}

int cgc_walk_regex(struct cgcount *s, const char *regex, cgc_walk_fn fn, void *arg)
{
	struct regex_walk w = { .fn = fn, .arg = arg };
	char msg[128];
	int ret;

	if (!regex)
		return cgc_err(EINVAL, "no regex given");
	ret = regcomp(&w.re, regex, REG_EXTENDED | REG_NOSUB);
	if (ret) {
		regerror(ret, &w.re, msg, sizeof(msg));
		return cgc_err(EINVAL, "bad regex '%s': %s", regex, msg);
	}
	ret = walk(s, "/", s->root, match_regex, &w);
	regfree(&w.re);
	return ret < 0 ? ret : 0;
}
