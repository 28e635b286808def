// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libcgcount on a cgroup tree built as an unprivileged owner of a delegated
 * subtree may build it: hostile_tree DIR [BACKEND [UID]] builds below the
 * empty cgroup DIR (as UID when given: its effective uid and gid, which
 * leaves it no capability, the owner of a subtree delegated to UID)
 *   - chain/: 1,500 levels, d/d/d/... (HOSTILE_DEPTH levels when set);
 *   - long/: names of up to 255 bytes down to a cgroup whose absolute path
 *     is 4,095 bytes, and its child "child", past PATH_MAX;
 *   - names/: 0xff bytes, terminal escape sequences, quotes, backslash,
 *     printf conversions, a tab, a leading dot (what the kernel takes: all
 *     but '/' and newline);
 *   - wide/: 2,000 siblings (HOSTILE_WIDE when set);
 * and checks libcgcount, through BACKEND (default auto), against the paths
 * it made (the truth: each mkdir that succeeded): cgcount_add_subtree() and
 * cgcount_add_regex() count every cgroup of the tree, each path whole;
 * cgcount_add_path() takes the path longer than PATH_MAX, cgcount_add_id()
 * finds the chain's last level by its id.  It prints "COUNT n" (the cgroups of
 * DIR's tree, DIR included) for the tools' checks and a "RESULT ok|fail
 * what" line per check; the caller (tests/cgcount/hostile-tree.sh) removes
 * the tree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cgcount.h"

#define CHAIN_DEPTH 1500	/* HOSTILE_DEPTH overrides */
#define WIDE 2000		/* HOSTILE_WIDE overrides */
#define LONG_PATH 4095	/* PATH_MAX less its NUL */

/* The paths made (relative to the cgroup2 root, leading '/'): the truth */
struct made {
	char **paths;
	size_t nr, cap;
};

static void fail_out(const char *what)
{
	fprintf(stderr, "hostile_tree: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void remember(struct made *m, const char *path)
{
	if (m->nr == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		m->paths = realloc(m->paths, m->cap * sizeof(*m->paths));
		if (!m->paths)
			fail_out("realloc");
	}
	m->paths[m->nr] = strdup(path);
	if (!m->paths[m->nr++])
		fail_out("strdup");
}

/* "@parent/@name", allocated */
static char *join(const char *parent, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", parent, name) < 0)
		fail_out("asprintf");
	return p;
}

/* mkdir @name in @dirfd (the cgroup @parent), remember it; its fd if @open */
static int make(struct made *m, int dirfd, const char *parent, const char *name, bool open,
		char **path)
{
	char *p = join(parent, name);
	int fd = -1;

	if (mkdirat(dirfd, name, 0755))
		fail_out(p);
	remember(m, p);
	if (open) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fail_out(p);
	}
	if (path)
		*path = p;
	else
		free(p);
	return fd;
}

/* a chain of @depth cgroups "d" below @fd, the cgroup @path; the deepest's path */
static char *make_chain(struct made *m, int fd, char *path, int depth)
{
	char *next_path;
	int i, next;

	for (i = 0; i < depth; i++) {
		next = make(m, fd, path, "d", true, &next_path);
		close(fd);
		free(path);
		fd = next;
		path = next_path;
	}
	close(fd);
	return path;
}

/* names down to an absolute path of LONG_PATH bytes, and "child"; the child's path */
static char *make_long(struct made *m, int fd, char *path, size_t abs_len)
{
	char name[256], *next_path, *child;
	size_t left = LONG_PATH - abs_len, len;
	int next, i = 0;

	while (left) {
		len = left - 1 > 255 ? 255 : left - 1;
		if (left - 1 - len == 1)	/* no room left for a "/" and a name */
			len--;
		memset(name, 'a' + i++ % 26, len);
		name[len] = '\0';
		next = make(m, fd, path, name, true, &next_path);
		close(fd);
		free(path);
		fd = next;
		path = next_path;
		left -= len + 1;
	}
	make(m, fd, path, "child", false, &child);
	close(fd);
	free(path);
	return child;
}

/* $@var, a count from 1 to 100,000, else @def (-1 when it is not one) */
static int size_from_env(const char *var, int def)
{
	const char *s = getenv(var);
	char *end;
	long n;

	if (!s)
		return def;
	errno = 0;
	n = strtol(s, &end, 10);
	return errno || end == s || *end || n < 1 || n > 100000 ? -1 : (int)n;
}

static const char *const hostile_names[] = {
	"\xff", "\xfe\xff\x80", "\x1b[2J\x1b[31mred", "\x1b]0;title\x07", "quote\"back\\slash",
	"%s%n%x", " lead space", "tab\tname", ".hidden", "-dash", "*?[",
};

struct tree {
	int depth, wide;	/* the chain's levels, wide/'s siblings */
	struct made made;
	char *deepest;		/* the chain's last level */
	char *past_path_max;	/* long/.../child */
};

static void build(struct tree *t, const char *root, const char *dir, const char *rel)
{
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	char *path, name[32];
	size_t i;

	if (dir_fd < 0)
		fail_out(dir);
	remember(&t->made, rel);
	fd = make(&t->made, dir_fd, rel, "chain", true, &path);
	t->deepest = make_chain(&t->made, fd, path, t->depth);
	fd = make(&t->made, dir_fd, rel, "long", true, &path);
	t->past_path_max = make_long(&t->made, fd, path, strlen(root) + strlen(path));
	fd = make(&t->made, dir_fd, rel, "names", true, &path);
	for (i = 0; i < sizeof(hostile_names) / sizeof(hostile_names[0]); i++)
		make(&t->made, fd, path, hostile_names[i], false, NULL);
	close(fd);
	free(path);
	fd = make(&t->made, dir_fd, rel, "wide", true, &path);
	for (i = 0; i < (size_t)t->wide; i++) {
		snprintf(name, sizeof(name), "s%zu", i);
		make(&t->made, fd, path, name, false, NULL);
	}
	close(fd);
	free(path);
	close(dir_fd);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void result(bool ok, const char *what)
{
	printf("RESULT %s %s\n", ok ? "ok" : "fail", what);
	fflush(stdout);
}

/* The session's cgroups are exactly the made ones, path for path */
static bool counts_all(struct cgcount *s, struct made *m, const char *how)
{
	struct cgcount_reading *r;
	const char **paths;
	size_t nr, i, differ = 0;
	int ret = cgcount_read_all(s, &r, &nr);

	if (ret) {
		printf("# %s: cgcount_read_all: %s\n", how, strerror(-ret));
		return false;
	}
	paths = calloc(nr ? nr : 1, sizeof(*paths));
	if (!paths)
		fail_out("calloc");
	for (i = 0; i < nr; i++)
		paths[i] = r[i].path;
	qsort(paths, nr, sizeof(*paths), by_string);
	for (i = 0; i < nr && i < m->nr; i++)
		differ += strcmp(paths[i], m->paths[i]) != 0;
	printf("# %s: %zu cgroups counted, %zu made, %zu paths differ\n", how, nr, m->nr, differ);
	free(paths);
	cgcount_readings_free(r, nr);
	return nr == m->nr && !differ;
}

static enum cgcount_backend backend = CGCOUNT_AUTO;

static struct cgcount *session(void)
{
	CGCOUNT_OPTS(cgcount_opts, opts, .backend = backend);
	struct cgcount *s = cgcount_open("cpu-clock", &opts);

	if (!s)
		fail_out("cgcount_open");
	return s;
}

static void check_subtree(struct tree *t, const char *dir)
{
	struct cgcount *s = session();
	int ret = cgcount_add_subtree(s, dir);

	if (ret < 0)
		printf("# cgcount_add_subtree: %s\n", strerror(-ret));
	result(ret >= 0 && counts_all(s, &t->made, "subtree"),
	       "cgcount_add_subtree counts every cgroup of the hostile tree, paths whole");
	cgcount_close(s);
}

static void check_regex(struct tree *t, const char *rel)
{
	struct cgcount *s = session();
	char *regex;
	int ret;

	if (asprintf(&regex, "^%s(/|$)", rel) < 0)
		fail_out("asprintf");
	ret = cgcount_add_regex(s, regex);
	if (ret < 0)
		printf("# cgcount_add_regex: %s\n", strerror(-ret));
	result(ret >= 0 && counts_all(s, &t->made, "regex"),
	       "cgcount_add_regex counts every cgroup of the hostile tree, paths whole");
	free(regex);
	cgcount_close(s);
}

/* one cgroup added by @add, which must read back as @want */
static bool added_as(struct cgcount *s, int ret, const char *want, const char *how)
{
	struct cgcount_reading *r;
	size_t nr;
	bool ok;

	if (ret < 0) {
		printf("# %s: %s\n", how, strerror(-ret));
		return false;
	}
	ret = cgcount_read_all(s, &r, &nr);
	if (ret)
		return false;
	ok = nr == 1 && !strcmp(r[0].path, want);
	printf("# %s: %zu cgroup(s), path of %zu bytes\n", how, nr, nr ? strlen(r[0].path) : 0);
	cgcount_readings_free(r, nr);
	return ok;
}

static void check_one(struct tree *t, const char *root)
{
	struct cgcount *s = session();
	char *abs = join(root, t->past_path_max + 1), what[80];
	uint64_t id;
	int ret;

	result(added_as(s, cgcount_add_path(s, abs), t->past_path_max, "add_path"),
	       "cgcount_add_path takes a path longer than PATH_MAX");
	cgcount_close(s);
	free(abs);

	s = session();
	ret = cgcount_cgroup_id(s, t->deepest, &id);
	if (!ret)
		ret = cgcount_add_id(s, id);
	snprintf(what, sizeof(what), "cgcount_add_id finds the chain's level %d, its path whole",
		 t->depth);
	result(added_as(s, ret, t->deepest, "add_id"), what);
	cgcount_close(s);
}

/*
 * Become @uid (effective uid and gid: the kernel takes the effective
 * capabilities away with the uid) to build, root again to check.
 */
static void build_as(struct tree *t, const char *root, const char *dir, const char *rel,
		     long uid)
{
	if (uid < 0) {
		build(t, root, dir, rel);
		return;
	}
	if (setegid(uid) || seteuid(uid))
		fail_out("seteuid");
	build(t, root, dir, rel);
	if (seteuid(0) || setegid(0))
		fail_out("seteuid(0)");
}

int main(int argc, char **argv)
{
	struct tree t = {
		.depth = size_from_env("HOSTILE_DEPTH", CHAIN_DEPTH),
		.wide = size_from_env("HOSTILE_WIDE", WIDE),
	};
	struct cgcount *s;
	const char *dir = argc > 1 ? argv[1] : NULL, *rel;
	char root[4096], *end = NULL;
	long uid = argc > 3 ? strtol(argv[3], &end, 10) : -1;
	size_t i;

	if (!dir || dir[0] != '/' || (argc > 2 && cgcount_parse_backend(argv[2], &backend)) ||
	    (end && (*end || uid <= 0)) || t.depth < 0 || t.wide < 0) {
		fprintf(stderr, "usage: [HOSTILE_DEPTH=LEVELS] [HOSTILE_WIDE=SIBLINGS] "
			"hostile_tree DIR [BACKEND [UID]] (DIR: an empty cgroup, absolute; UID: "
			"who builds, DIR delegated to it; LEVELS, SIBLINGS: 1 to 100,000)\n");
		return 2;
	}
	s = session();
	snprintf(root, sizeof(root), "%s", cgcount_cgroup_root(s));
	cgcount_close(s);
	if (strncmp(dir, root, strlen(root)) || dir[strlen(root)] != '/') {
		fprintf(stderr, "hostile_tree: %s is not below the cgroup2 mount %s\n", dir, root);
		return 2;
	}
	rel = dir + strlen(root);
	build_as(&t, root, dir, rel, uid);
	qsort(t.made.paths, t.made.nr, sizeof(*t.made.paths), by_string);
	printf("COUNT %zu\n", t.made.nr);
	printf("# made %zu cgroups: %d levels, a %zu-byte path, %zu names, %d siblings\n",
	       t.made.nr, t.depth, strlen(root) + strlen(t.past_path_max),
	       sizeof(hostile_names) / sizeof(hostile_names[0]), t.wide);
	check_subtree(&t, dir);
	check_regex(&t, rel);
	check_one(&t, root);
	for (i = 0; i < t.made.nr; i++)
		free(t.made.paths[i]);
	free(t.made.paths);
	free(t.deepest);
	free(t.past_path_max);
	return 0;
}
