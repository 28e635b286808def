// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount: subtrees (cgcount_add_subtree()), whose cgroups created later
 * each read adds; with a backend that has a watch (the shared backend on a
 * kernel with PERF_ATTACH_CGROUPS_DESCENDANTS) the kernel attaches them at
 * their creation.  An add that fails leaves nothing behind: no subtree,
 * no cgroup, no watch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgset.h"

static struct cgc_subtree *subtree_find(const struct cgcount *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->nr_subtrees; i++)
		if (s->subtrees[i].id == id)
			return &s->subtrees[i];
	return NULL;
}

static int subtree_remember(struct cgcount *s, const char *rel, uint64_t id)
{
	struct cgc_subtree *n;

	n = realloc(s->subtrees, (s->nr_subtrees + 1) * sizeof(*n));
	if (!n)
		return cgc_err(ENOMEM, "out of memory");
	s->subtrees = n;
	n[s->nr_subtrees].path = strdup(rel);
	if (!n[s->nr_subtrees].path)
		return cgc_err(ENOMEM, "out of memory");
	n[s->nr_subtrees++].id = id;
	return 0;
}

/* the subtree remembered last */
static void subtree_forget_last(struct cgcount *s)
{
	free(s->subtrees[--s->nr_subtrees].path);
}

void cgc_subtrees_free(struct cgcount *s)
{
	size_t i;

	for (i = 0; i < s->nr_subtrees; i++)
		free(s->subtrees[i].path);
	free(s->subtrees);
}

/* A subtree walk: the cgroups to add, and the highest id it saw */
struct subtree_walk {
	struct cgc_pending p;
	uint64_t last_id;
};

static int subtree_visit(struct cgcount *s, const char *rel, uint64_t id, void *arg)
{
	struct subtree_walk *w = arg;

	if (id > w->last_id)
		w->last_id = id;
	return cgc_pending_add(s, rel, id, &w->p);
}

/*
 * Mark the cgroups of a walk created since the previous one: cgroup ids only
 * grow, so those above the highest id the previous walk saw (rstat counts
 * them from their creation). A cgroup stopped with cgcount_remove_*() that
 * a walk finds again is older and counts from then.
 */
static void walk_mark_created(struct cgcount *s, struct subtree_walk *w, int walked_before)
{
	size_t i;

	for (i = 0; i < w->p.nr; i++)
		w->p.cgs[i]->created_later = walked_before && w->p.cgs[i]->id > s->subtree_last_id;
	if (w->last_id > s->subtree_last_id)
		s->subtree_last_id = w->last_id;
}

/* the walk, the subtree remembered, its cgroups counted: all or nothing */
static int subtree_add(struct cgcount *s, const char *rel, uint64_t id, bool known)
{
	struct subtree_walk w = { .p.walked = true };
	uint64_t last_id = s->subtree_last_id;
	int ret = cgc_walk_below(s, rel, id, subtree_visit, &w);

	if (!ret && !known)
		ret = subtree_remember(s, rel, id);
	if (ret)
		goto out;
	walk_mark_created(s, &w, 0);
	ret = cgc_pending_commit(s, &w.p);
	if (ret < 0) {
		s->subtree_last_id = last_id;
		if (!known)
			subtree_forget_last(s);
	}
out:
	cgc_pending_free(&w.p);
	return ret;
}

int cgcount_add_subtree(struct cgcount *s, const char *path)
{
	bool known, watched = false;
	char *rel;
	uint64_t id;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = cgc_resolve_path(s, path, &rel, &id);
	known = !ret && subtree_find(s, id);
	/* first, so that the kernel attaches what is created during the walk */
	if (!ret && s->ops->watch && !known) {
		ret = s->ops->watch(s, id);
		watched = !ret;
	}
	if (!ret)
		ret = subtree_add(s, rel, id, known);
	if (ret < 0 && watched)
		s->ops->unwatch(s, id);
	pthread_mutex_unlock(&s->lock);
	free(rel);
	return ret;
}

int cgc_subtrees_walk(struct cgcount *s)
{
	struct subtree_walk w = { .p.walked = true };
	size_t i;
	int ret = 0;

	for (i = 0; i < s->nr_subtrees && !ret; i++)
		ret = cgc_walk_below(s, s->subtrees[i].path, s->subtrees[i].id,
				     subtree_visit, &w);
	if (!ret) {
		cgc_pending_dedup(&w.p);
		walk_mark_created(s, &w, 1);
		ret = cgc_pending_commit(s, &w.p);
	}
	cgc_pending_free(&w.p);
	return ret < 0 ? ret : 0;
}
