// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount: the set of counted cgroups, sorted by id, and the batches that
 * add to it: new cgroups are collected first, then started with one
 * backend call, all or nothing.  A batch a walk collected races with rmdir:
 * the cgroups removed since the walk are left out and the others counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgset.h"

static size_t lower_bound(const struct cgcount *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_cgroups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->cgroups[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct cgc_cgroup *cgc_find(const struct cgcount *s, uint64_t id)
{
	size_t i = lower_bound(s, id);

	return i < s->nr_cgroups && s->cgroups[i]->id == id ? s->cgroups[i] : NULL;
}

static int set_reserve(struct cgcount *s, size_t extra)
{
	size_t cap = s->cap_cgroups ? s->cap_cgroups : 16;
	struct cgc_cgroup **n;

	while (cap < s->nr_cgroups + extra)
		cap *= 2;
	if (cap == s->cap_cgroups)
		return 0;
	n = realloc(s->cgroups, cap * sizeof(*n));
	if (!n)
		return cgc_err(ENOMEM, "out of memory");
	s->cgroups = n;
	s->cap_cgroups = cap;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct cgc_cgroup *x = *(struct cgc_cgroup *const *)a;
	const struct cgc_cgroup *y = *(struct cgc_cgroup *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Append n new cgroups (room reserved), then sort: O(n log n) for a regex. */
static void set_insert_many(struct cgcount *s, struct cgc_cgroup **cgs, size_t n)
{
	memcpy(s->cgroups + s->nr_cgroups, cgs, n * sizeof(*cgs));
	s->nr_cgroups += n;
	qsort(s->cgroups, s->nr_cgroups, sizeof(*s->cgroups), by_id);
}

void cgc_set_delete(struct cgcount *s, uint64_t id)
{
	size_t i = lower_bound(s, id);

	memmove(s->cgroups + i, s->cgroups + i + 1, (s->nr_cgroups - i - 1) * sizeof(void *));
	s->nr_cgroups--;
}

void cgc_cgroup_free(struct cgc_cgroup *cg)
{
	if (!cg)
		return;
	free(cg->fds);
	free(cg->path);
	free(cg);
}

static struct cgc_cgroup *cgroup_new(const struct cgcount *s, const char *rel, uint64_t id)
{
	struct cgc_cgroup *cg = calloc(1, sizeof(*cg) + 3 * s->nr_events * sizeof(*cg->values));

	if (!cg)
		return NULL;
	cg->base = cg->values;
	cg->acc = cg->base + s->nr_events;
	cg->last = cg->acc + s->nr_events;
	cg->id = id;
	cg->path = strdup(rel);
	if (!cg->path) {
		free(cg);
		return NULL;
	}
	return cg;
}

void cgc_values_add(struct cgcount_value *acc, const struct cgcount_value *v)
{
	acc->value += v->value;
	acc->enabled += v->enabled;
	acc->running += v->running;
}

/* ---- batches ---- */

int cgc_pending_add(struct cgcount *s, const char *rel, uint64_t id, void *arg)
{
	struct cgc_pending *p = arg;
	struct cgc_cgroup **n;

	/* a walk visits each cgroup once: only the session can have it */
	if (cgc_find(s, id))
		return 0;
	if (p->nr == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		n = realloc(p->cgs, p->cap * sizeof(*n));
		if (!n)
			return cgc_err(ENOMEM, "out of memory");
		p->cgs = n;
	}
	p->cgs[p->nr] = cgroup_new(s, rel, id);
	if (!p->cgs[p->nr])
		return cgc_err(ENOMEM, "out of memory");
	p->nr++;
	return 0;
}

void cgc_pending_dedup(struct cgc_pending *p)
{
	size_t i, n = 0;

	if (!p->nr)
		return;
	qsort(p->cgs, p->nr, sizeof(*p->cgs), by_id);
	for (i = 0; i < p->nr; i++) {
		if (n && p->cgs[n - 1]->id == p->cgs[i]->id)
			cgc_cgroup_free(p->cgs[i]);
		else
			p->cgs[n++] = p->cgs[i];
	}
	p->nr = n;
}

void cgc_pending_free(struct cgc_pending *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		cgc_cgroup_free(p->cgs[i]);
	free(p->cgs);
}

/* a cgroup of a walk's batch the backend could not add is gone since the walk */
static bool vanished(const struct cgcount *s, const struct cgc_cgroup *cg, int err)
{
	return err == -ENOENT || cgc_cgroup_gone(s, cg->path, cg->id);
}

/*
 * A walk's batch the backend refused, one cgroup at a time: one that
 * vanished since the walk is left out and counted (cgcount_errors'
 * vanished); the kernel may hold it all the same (a subtree's watch
 * attached it at its creation), so the backend lets go of it.  Any other
 * failure undoes the others and is the batch's.  One call per cgroup, no
 * retry: which cgroups vanished is the kernel's answer, not a guess.
 */
static int add_one_by_one(struct cgcount *s, struct cgc_pending *p)
{
	size_t i, j, kept = 0;
	int ret = 0;

	for (i = 0; i < p->nr; i++) {
		ret = s->ops->add(s, &p->cgs[i], 1);
		if (!ret) {
			p->cgs[kept++] = p->cgs[i];
			continue;
		}
		if (!vanished(s, p->cgs[i], ret))
			break;
		s->ops->remove(s, p->cgs[i]);
		cgc_cgroup_free(p->cgs[i]);
		s->errors.vanished++;
	}
	if (i < p->nr) {
		for (j = 0; j < kept; j++)
			s->ops->remove(s, p->cgs[j]);
		memmove(p->cgs + kept, p->cgs + i, (p->nr - i) * sizeof(*p->cgs));
		p->nr = kept + p->nr - i;
		return ret;
	}
	if (kept < p->nr)
		cgc_print(CGCOUNT_DEBUG, "libcgcount: %zu cgroup(s) removed since the walk that "
			  "found them left out, %zu added\n", p->nr - kept, kept);
	p->nr = kept;
	return 0;
}

/* The backend's add, all or nothing; a walk's batch leaves out what vanished */
static int add_batch(struct cgcount *s, struct cgc_pending *p)
{
	int ret = s->ops->add(s, p->cgs, p->nr);

	if (ret && p->walked)
		ret = add_one_by_one(s, p);
	if (ret == -ENOENT)
		return cgc_err(ENOENT, "attaching %zu cgroup(s) (%s%s...): a cgroup was removed",
			       p->nr, s->root, p->cgs[0]->path);
	return ret;
}

int cgc_pending_commit(struct cgcount *s, struct cgc_pending *p)
{
	int ret;

	if (!p->nr)
		return 0;
	ret = set_reserve(s, p->nr);
	if (!ret)
		ret = add_batch(s, p);
	if (ret)
		return ret;
	set_insert_many(s, p->cgs, p->nr);
	ret = p->nr;
	p->nr = 0;
	return ret;
}
