// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgutil: the one walk of a cgroup tree.
 *
 * Iterative, depth first, parents before children.  Each directory is listed
 * into memory when it is entered (its children's names, NUL-separated), so
 * the walk needs an fd only for the cgroups whose children it still has to
 * open.  At most WALK_LEVEL_FDS of those stay open, the deepest ones; a
 * shallower one that was closed is opened again by the names of its
 * ancestors, one openat(2) each from the deepest open ancestor, and
 * recognised by its device and inode.  Every child is opened by name with
 * O_NOFOLLOW relative to its parent, so no path is ever longer than a name
 * and no planted link is followed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgutil.h"

/* fds of cgroups with children still to open, kept open at once */
#define WALK_LEVEL_FDS 16
#define WALK_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* A cgroup of the current branch and the children it has left */
struct walk_level {
	char *names;		/* its child directories' names, each NUL-terminated */
	size_t used, cap;	/* bytes of @names */
	size_t next;		/* offset in @names of the next child to open */
	size_t cur;		/* offset of the child being walked (the next level) */
	size_t path_len;	/* length of its path */
	int fd;			/* -1 while closed */
	dev_t dev;		/* to recognise it when opened again */
	ino_t ino;
};

struct walk {
	struct walk_level *levels;
	unsigned int nr, cap;	/* levels of the current branch, levels[0] the root */
	unsigned int open_fds;	/* of levels[1..nr-1] */
	char *path;
	size_t path_cap;
	unsigned int max_depth;
	cgutil_walk_fn fn;
	void *ctx;
	uint64_t skipped;
};

/* errors of the process, not of the tree: they stop the walk */
static bool is_fatal(int err)
{
	return err == -ENOMEM || err == -EMFILE || err == -ENFILE;
}

static int grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*(void **)pp, n * elem);
	if (!p)
		return -ENOMEM;
	*(void **)pp = p;
	*cap = n;
	return 0;
}

static int add_name(struct walk_level *l, const char *name)
{
	size_t len = strlen(name) + 1;

	if (grow(&l->names, &l->cap, l->used + len, 1))
		return -ENOMEM;
	memcpy(l->names + l->used, name, len);
	l->used += len;
	return 0;
}

/* true if @name in directory @dir is a directory (not a link to one) */
static bool is_dir(DIR *dir, const struct dirent *de, struct walk *w)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
		w->skipped++;
		return false;
	}
	return S_ISDIR(st.st_mode);
}

/* Read the child directories of @fd into @l->names */
static int list_children(struct walk *w, int fd, struct walk_level *l)
{
	int dfd = openat(fd, ".", WALK_OPEN_FLAGS);
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			ret = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (is_dir(dir, de, w) && add_name(l, de->d_name)) {
			ret = -ENOMEM;
			break;
		}
	}
	closedir(dir);
	return ret;
}

/* Close the fd of level @i (not the root's, which is the caller's) */
static void close_level(struct walk *w, unsigned int i)
{
	struct walk_level *l = &w->levels[i];
	struct stat st;

	if (!i || l->fd < 0)
		return;
	if (!fstat(l->fd, &st)) {
		l->dev = st.st_dev;
		l->ino = st.st_ino;
	}
	close(l->fd);
	l->fd = -1;
	w->open_fds--;
}

/* Keep at most WALK_LEVEL_FDS open: close the shallowest ones */
static void bound_fds(struct walk *w)
{
	unsigned int i;

	for (i = 1; i < w->nr && w->open_fds > WALK_LEVEL_FDS; i++)
		close_level(w, i);
}

/* Open level @i again by its name from level @i - 1, which is open */
static int reopen_level(struct walk *w, unsigned int i)
{
	struct walk_level *parent = &w->levels[i - 1], *l = &w->levels[i];
	struct stat st;
	int fd;

	fd = openat(parent->fd, parent->names + parent->cur, WALK_OPEN_FLAGS);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_dev != l->dev || st.st_ino != l->ino) {
		close(fd);
		return -ENOENT;	/* renamed away, another in its place */
	}
	l->fd = fd;
	w->open_fds++;
	return 0;
}

/* Make sure level @top has an fd: open again its closed ancestors down to it */
static int open_level(struct walk *w, unsigned int top)
{
	unsigned int i = top;
	int ret;

	while (w->levels[i].fd < 0)
		i--;
	for (i++; i <= top; i++) {
		ret = reopen_level(w, i);
		if (ret)
			return ret;
		/* the ancestor was only needed to reach this one */
		if (w->open_fds > WALK_LEVEL_FDS)
			close_level(w, i - 1);
	}
	return 0;
}

static unsigned int names_left(const struct walk_level *l)
{
	unsigned int n = 0;
	size_t off;

	for (off = l->next; off < l->used; off += strlen(l->names + off) + 1)
		n++;
	return n;
}

/* Append "/@name" (or "@name" below the root) to the path of @parent */
static int set_path(struct walk *w, const struct walk_level *parent, const char *name,
		    size_t *len)
{
	size_t at = parent->path_len, nlen = strlen(name);

	if (grow(&w->path, &w->path_cap, at + 1 + nlen + 1, 1))
		return -ENOMEM;
	if (at)
		w->path[at++] = '/';
	memcpy(w->path + at, name, nlen + 1);
	*len = at + nlen;
	return 0;
}

static int push_level(struct walk *w, int fd, size_t path_len)
{
	struct walk_level *l;
	size_t cap = w->cap;

	if (grow(&w->levels, &cap, w->nr + 1, sizeof(*l)))
		return -ENOMEM;
	w->cap = cap;
	l = &w->levels[w->nr];
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->path_len = path_len;
	return 0;
}

static void pop_level(struct walk *w)
{
	close_level(w, --w->nr);
	free(w->levels[w->nr].names);
}

/*
 * Call @w->fn on the cgroup @fd (which this takes) at @depth, then, unless
 * pruned or at the depth limit, list its children and make it the top level.
 */
static int visit(struct walk *w, int fd, size_t path_len, unsigned int depth)
{
	struct cgutil_walk_entry e = {
		.dirfd = fd, .path = w->path, .path_len = path_len, .depth = depth,
	};
	struct walk_level *l;
	int ret;

	if (cgutil_cgroup_id_at(fd, "", &e.id))
		e.id = 0;
	ret = w->fn(&e, w->ctx);
	if (ret < 0 || ret == CGUTIL_WALK_PRUNE || (w->max_depth && depth >= w->max_depth))
		goto out;
	ret = push_level(w, fd, path_len);
	if (ret)
		goto out;
	l = &w->levels[w->nr];
	ret = list_children(w, fd, l);
	if (ret) {
		free(l->names);
		if (is_fatal(ret))
			goto out;
		w->skipped++;
		ret = 0;
		goto out;
	}
	w->nr++;
	if (depth) {
		w->open_fds++;
		bound_fds(w);
	}
	return 0;
out:
	if (depth)
		close(fd);
	return ret < 0 ? ret : 0;
}

/* Open and visit the next child of the top level, or leave the level */
static int step(struct walk *w)
{
	unsigned int top = w->nr - 1;
	struct walk_level *l = &w->levels[top];
	const char *name;
	size_t path_len;
	int fd, ret;

	if (l->next == l->used) {
		pop_level(w);
		return 0;
	}
	ret = open_level(w, top);
	if (ret) {
		if (is_fatal(ret))
			return ret;
		/* the cgroup itself went: its children with it */
		w->skipped += names_left(l);
		l->next = l->used;
		return 0;
	}
	l->cur = l->next;
	name = l->names + l->cur;
	l->next += strlen(name) + 1;
	fd = openat(l->fd, name, WALK_OPEN_FLAGS);
	if (fd < 0) {
		if (is_fatal(-errno))
			return -errno;
		w->skipped++;
		return 0;
	}
	if (l->next == l->used)
		close_level(w, top);	/* no other child needs it */
	ret = set_path(w, l, name, &path_len);
	if (ret) {
		close(fd);
		return ret;
	}
	return visit(w, fd, path_len, top + 1);
}

int cgutil_walk(int root_dirfd, unsigned int max_depth, cgutil_walk_fn fn, void *ctx,
		uint64_t *skipped)
{
	struct walk w = { .max_depth = max_depth, .fn = fn, .ctx = ctx };
	struct stat st;
	int ret;

	if (skipped)
		*skipped = 0;
	if (fstat(root_dirfd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	w.path = malloc(1);
	if (!w.path)
		return -ENOMEM;
	w.path[0] = '\0';
	w.path_cap = 1;
	ret = visit(&w, root_dirfd, 0, 0);
	while (!ret && w.nr)
		ret = step(&w);
	while (w.nr)
		pop_level(&w);
	free(w.levels);
	free(w.path);
	if (skipped)
		*skipped = w.skipped;
	return ret;
}

/* Open the @len bytes at @name below @dirfd: O_PATH unless it is the last */
static int open_name(int dirfd, const char *name, size_t len, bool last)
{
	char *n = strndup(name, len);
	int fd;

	if (!n)
		return -ENOMEM;
	fd = openat(dirfd, n, last ? WALK_OPEN_FLAGS : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	free(n);
	return fd;
}

int cgutil_open_dir_at(int dirfd, const char *path)
{
	int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), next;
	const char *end;
	size_t len;

	if (fd < 0)
		return -errno;
	while (*path == '/')
		path++;
	if (!*path) {
		next = open_name(fd, ".", 1, true);
		close(fd);
		return next;
	}
	while (*path) {
		len = strcspn(path, "/");
		end = path + len;
		while (*end == '/')
			end++;
		next = open_name(fd, path, len, !*end);
		close(fd);
		if (next < 0)
			return next;
		fd = next;
		path = end;
	}
	return fd;
}
