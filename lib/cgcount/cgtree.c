// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount: the cgroup v2 tree: mount point, paths, ids, walks (lib/cgutil's
 * cgutil_walk()).  Paths have any length: stored allocated, opened a name at
 * a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * "a/b", "/a/b" (relative) or "<root>/a/b" -> "/a/b"; "" and "/" -> "/".
 * Allocated: a path has any length.
 */
char *cgc_normalize_path(const struct cgcount *s, const char *path)
{
	size_t rlen = strlen(s->root), len;
	const char *p = path;
	char *rel;

	if (!strncmp(path, s->root, rlen) && (path[rlen] == '/' || !path[rlen]))
		p = path + rlen;
	while (*p == '/')
		p++;
	len = strlen(p);
	while (len && p[len - 1] == '/')
		len--;
	rel = malloc(len + 2);
	if (!rel)
		return NULL;
	rel[0] = '/';
	memcpy(rel + 1, p, len);
	rel[len + 1] = '\0';
	return rel;
}

/* The cgroup @rel's directory, opened a name at a time: an fd or -errno */
static int open_rel(const struct cgcount *s, const char *rel)
{
	int root_fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

	if (root_fd < 0)
		return -errno;
	fd = cgutil_open_dir_at(root_fd, rel);
	close(root_fd);
	return fd;
}

int cgc_resolve_path(const struct cgcount *s, const char *path, char **rel, uint64_t *id)
{
	int fd, ret;

	*rel = NULL;
	if (!path)
		return cgc_err(EINVAL, "no cgroup path given");
	*rel = cgc_normalize_path(s, path);
	if (!*rel)
		return cgc_err(ENOMEM, "out of memory");
	fd = open_rel(s, *rel);
	if (fd < 0) {
		ret = cgc_err(ENOENT, "cgroup '%s' not found: no directory %s%s (%s; give a path "
			      "relative to the cgroup2 mount %s, or an absolute one)",
			      path, s->root, strcmp(*rel, "/") ? *rel : "", strerror(-fd), s->root);
		goto fail;
	}
	ret = cgutil_cgroup_id_at(fd, "", id);
	close(fd);
	if (!ret)
		return 0;
	ret = cgc_err(-ret, "the cgroup id of %s%s: %s", s->root, *rel, strerror(-ret));
fail:
	free(*rel);
	*rel = NULL;
	return ret;
}


/* a walk's callback found what it looked for: stop, successfully */
#define WALK_FOUND (-ECANCELED)

/*
 * One walk of libcgcount below the cgroup @rel: @fn for each cgroup whose
 * path ("/a/b", @rel's first) @filter accepts (NULL: all).
 */
struct cgc_walk {
	struct cgcount *s;
	const char *rel;
	size_t rel_len;		/* 0 for "/" */
	char *path;		/* "/a/b": @rel, '/', the walk's path */
	size_t path_cap;
	bool (*filter)(const char *path, void *arg);
	cgc_walk_fn fn;
	void *arg;
	bool said;		/* the error that stopped the walk was printed */
};

static int walk_path(struct cgc_walk *w, const struct cgutil_walk_entry *e)
{
	size_t need = w->rel_len + 1 + e->path_len + 1;
	char *p;

	if (need > w->path_cap) {
		p = realloc(w->path, need);
		if (!p)
			return cgc_err(ENOMEM, "out of memory");
		w->path = p;
		w->path_cap = need;
	}
	if (!e->path_len) {
		memcpy(w->path, w->rel, w->rel_len ? w->rel_len + 1 : 2);
		return 0;
	}
	memcpy(w->path, w->rel, w->rel_len);
	w->path[w->rel_len] = '/';
	memcpy(w->path + w->rel_len + 1, e->path, e->path_len + 1);
	return 0;
}

static int walk_visit(const struct cgutil_walk_entry *e, void *ctx)
{
	struct cgc_walk *w = ctx;
	int ret = walk_path(w, e);

	if (!ret && (!w->filter || w->filter(w->path, w->arg)))
		ret = w->fn(w->s, w->path, e->id, w->arg);
	w->said = ret < 0;
	return ret;
}

/*
 * Walk below @fd, the cgroup @rel.  Cgroups that vanish or cannot be read
 * meanwhile are left out (a debug message counts them): a walk of a live
 * tree races with rmdir.  0, WALK_FOUND, or a negative errno (printed).
 */
static int walk_fd(struct cgc_walk *w, int fd)
{
	uint64_t skipped = 0;
	int ret;

	w->rel_len = strcmp(w->rel, "/") ? strlen(w->rel) : 0;
	ret = cgutil_walk(fd, 0, walk_visit, w, &skipped);
	free(w->path);
	w->s->errors.walk_skipped += skipped;
	if (skipped)
		cgc_print(CGCOUNT_DEBUG, "cgroup walk: %llu cgroup(s) below %s%s vanished or "
			  "could not be read during the walk\n", (unsigned long long)skipped,
			  w->s->root, w->rel_len ? w->rel : "");
	if (ret < 0 && !w->said)
		cgc_err(-ret, "walking the cgroups below %s%s: %s", w->s->root,
			w->rel_len ? w->rel : "", strerror(-ret));
	return ret;
}

struct id_search {
	uint64_t id;
	char *rel;
};

static int match_id(struct cgcount *s, const char *rel, uint64_t id, void *arg)
{
	struct id_search *q = arg;

	(void)s;
	if (id != q->id)
		return 0;
	q->rel = strdup(rel);
	return q->rel ? WALK_FOUND : cgc_err(ENOMEM, "out of memory");
}

int cgc_id_to_path(const struct cgcount *s, uint64_t id, char **rel)
{
	struct id_search q = { .id = id };
	struct cgc_walk w = { .s = (struct cgcount *)s, .rel = "/", .fn = match_id, .arg = &q };
	int fd = cgc_open_cgroup_dir(s, "/", 0), ret;

	if (fd < 0)
		return fd == -ENOENT ? cgc_err(ENOENT, "%s is gone", s->root) : fd;
	ret = walk_fd(&w, fd);
	close(fd);
	*rel = q.rel;
	if (ret == WALK_FOUND)
		return 0;
	if (ret)
		return ret;
	return cgc_err(ENOENT, "cgroup id %llu not found under %s (no live cgroup has it)",
		       (unsigned long long)id, s->root);
}

/* The directory of @rel if it is the cgroup @id (0: any): an fd, or -ENOENT
 * when it is removed or another cgroup has its name, or another -errno */
static int open_rel_id(const struct cgcount *s, const char *rel, uint64_t id)
{
	int fd = open_rel(s, rel);
	uint64_t now;

	if (fd < 0 || !id)
		return fd;
	if (cgutil_cgroup_id_at(fd, "", &now) || now != id) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

int cgc_open_cgroup_dir(const struct cgcount *s, const char *rel, uint64_t id)
{
	int fd = open_rel_id(s, rel, id);

	if (fd < 0 && fd != -ENOENT)
		return cgc_err(-fd, "cannot open cgroup %s%s: %s", s->root,
			       strcmp(rel, "/") ? rel : "", strerror(-fd));
	return fd;
}

bool cgc_cgroup_gone(const struct cgcount *s, const char *rel, uint64_t id)
{
	int fd = open_rel_id(s, rel, id);

	if (fd >= 0)
		close(fd);
	return fd == -ENOENT;
}

/* the handle type of a cgroup2 directory: its 64-bit id (kernfs) */
#define FILEID_KERNFS 0xfe

bool cgc_cgroup_id_gone(const struct cgcount *s, uint64_t id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = FILEID_KERNFS },
		.id = id };
	int mount_fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, err;

	if (mount_fd < 0)
		return false;
	fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	close(mount_fd);
	return err == ESTALE;
}

int cgc_walk_below(struct cgcount *s, const char *rel, uint64_t id, cgc_walk_fn fn,
		   void *arg)
{
	struct cgc_walk w = { .s = s, .rel = rel, .fn = fn, .arg = arg };
	int fd = open_rel_id(s, rel, id), ret;

	/* removed, or another cgroup by that name */
	if (fd < 0)
		return 0;
	ret = walk_fd(&w, fd);
	close(fd);
	return ret < 0 ? ret : 0;
}

struct regex_walk {
	regex_t re;
	cgc_walk_fn fn;
	void *arg;
};

static bool match_regex(const char *path, void *arg)
{
	struct regex_walk *r = arg;

	return !regexec(&r->re, path, 0, NULL, 0);
}

static int regex_visit(struct cgcount *s, const char *rel, uint64_t id, void *arg)
{
	struct regex_walk *r = arg;

	return r->fn(s, rel, id, r->arg);
}

int cgc_walk_regex(struct cgcount *s, const char *regex, cgc_walk_fn fn, void *arg)
{
	struct regex_walk r = { .fn = fn, .arg = arg };
	struct cgc_walk w = { .s = s, .rel = "/", .filter = match_regex, .fn = regex_visit,
			      .arg = &r };
	char msg[128];
	int fd, ret;

	if (!regex)
		return cgc_err(EINVAL, "no regex given");
	ret = regcomp(&r.re, regex, REG_EXTENDED | REG_NOSUB);
	if (ret) {
		regerror(ret, &r.re, msg, sizeof(msg));
		return cgc_err(EINVAL, "bad regex '%s': %s", regex, msg);
	}
	fd = cgc_open_cgroup_dir(s, "/", 0);
	if (fd == -ENOENT)
		fd = cgc_err(ENOENT, "%s is gone", s->root);
	ret = fd < 0 ? fd : walk_fd(&w, fd);
	if (fd >= 0)
		close(fd);
	regfree(&r.re);
	return ret < 0 ? ret : 0;
}
