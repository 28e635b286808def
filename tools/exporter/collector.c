// SPDX-License-Identifier: GPL-2.0
/*
 * Which cgroups and families cgroup-exporter exports (collector.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtool.h"
#include "collector.h"

void collector_init(struct collector *c)
{
	*c = (struct collector){ .max_depth = -1 };
}

void collector_free(struct collector *c)
{
	if (c->has_include)
		regfree(&c->include);
	if (c->has_exclude)
		regfree(&c->exclude);
	c->has_include = c->has_exclude = 0;
}

/* @regex anchored at both ends, as Prometheus anchors a relabeling regex */
static int compile_anchored(regex_t *re, int *has, const char *prog, const char *opt,
			    const char *regex)
{
	char *anchored, msg[256];
	int err;

	if (*has) {
		cli_usage_error(prog, "--%s: give it once (use | for several)", opt);
		return -1;
	}
	if (asprintf(&anchored, "^(%s)$", regex) < 0) {
		cli_usage_error(prog, "--%s: out of memory", opt);
		return -1;
	}
	err = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (err) {
		regerror(err, re, msg, sizeof(msg));
		cli_usage_error(prog, "--%s: '%s': %s", opt, regex, msg);
		return -1;
	}
	*has = 1;
	return 1;
}

static int disable_family(struct collector *c, const char *prog, const char *name)
{
	int f = metrics_family(name);

	if (f < 0) {
		cli_usage_error(prog, "--collector.disable-family: no family '%s' (%s)", name,
				metrics_family_names());
		return -1;
	}
	c->disabled |= 1u << f;
	return 1;
}

int collector_parse_option(struct collector *c, const char *prog, int opt, const char *arg)
{
	switch (opt) {
	case COLLECTOR_OPT_DEPTH:
		if (cgtool_parse_long(arg, 0, INT32_MAX, &c->max_depth)) {
			cli_usage_error(prog, "--collector.depth: not a number of levels: '%s'", arg);
			return -1;
		}
		return 1;
	case COLLECTOR_OPT_LEAVES_ONLY:
		c->all_levels = 0;
		return 1;
	case COLLECTOR_OPT_ALL_LEVELS:
		c->all_levels = 1;
		return 1;
	case COLLECTOR_OPT_INCLUDE:
		return compile_anchored(&c->include, &c->has_include, prog,
					"collector.cgroup-include", arg);
	case COLLECTOR_OPT_EXCLUDE:
		return compile_anchored(&c->exclude, &c->has_exclude, prog,
					"collector.cgroup-exclude", arg);
	case COLLECTOR_OPT_DISABLE_FAMILY:
		return disable_family(c, prog, arg);
	}
	return 0;
}

/* Levels below the root: "/" 0, "/a" 1, "/a/b" 2 */
static long depth(const char *path)
{
	long d = 0;

	for (; *path; path++)
		d += *path == '/' && path[1];
	return d;
}

static int kept_by_options(const struct collector *c, const char *path)
{
	if (c->max_depth >= 0 && depth(path) > c->max_depth)
		return 0;
	if (c->has_include && regexec(&c->include, path, 0, NULL, 0))
		return 0;
	return !c->has_exclude || regexec(&c->exclude, path, 0, NULL, 0);
}

/* A byte's rank in tree order: the end first, then '/', then the others */
static int tree_rank(unsigned char c)
{
	return !c ? 0 : c == '/' ? 1 : c + 1;
}

/* Readings by path in an order where '/' sorts first: a cgroup's
 * descendants follow it, before any other cgroup */
static int tree_order(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)(*(const struct cgcount_reading *const *)a)->path;
	const unsigned char *y = (const unsigned char *)(*(const struct cgcount_reading *const *)b)->path;

	for (; tree_rank(*x) == tree_rank(*y); x++, y++)
		if (!*x)
			return 0;
	return tree_rank(*x) - tree_rank(*y);
}

/* Is @path below @parent? */
static int below(const char *parent, const char *path)
{
	size_t len = strlen(parent);

	if (!strcmp(parent, "/"))
		return strcmp(path, "/") != 0;
	return !strncmp(parent, path, len) && path[len] == '/';
}

/* Unkeep every kept reading that has a kept descendant */
static int keep_leaves(const struct cgcount_reading *r, size_t nr, unsigned char *keep)
{
	const struct cgcount_reading **sorted = malloc((nr ? nr : 1) * sizeof(*sorted));
	size_t i, n = 0;

	if (!sorted)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		if (keep[i])
			sorted[n++] = &r[i];
	qsort(sorted, n, sizeof(*sorted), tree_order);
	for (i = 0; i + 1 < n; i++)
		if (below(sorted[i]->path, sorted[i + 1]->path))
			keep[sorted[i] - r] = 0;
	free(sorted);
	return 0;
}

int collector_select(const struct collector *c, const struct cgcount_reading *r, size_t nr,
		     unsigned char *keep)
{
	size_t i;

	for (i = 0; i < nr; i++)
		keep[i] = kept_by_options(c, r[i].path);
	return c->all_levels ? 0 : keep_leaves(r, nr, keep);
}
