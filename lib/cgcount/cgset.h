/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * cgcount internals: the set of counted cgroups (cgset.c), batches of
 * cgroups added with one backend call (cgset.c), the subtrees whose new
 * cgroups the reads add (subtree.c).
 */
#ifndef CGC_SET_H
#define CGC_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgcount_int.h"

/* cgroups to start counting with one backend call */
struct cgc_pending {
	struct cgc_cgroup **cgs;
	size_t nr, cap;
	/* found by a walk: one removed since is left out of the batch
	 * (cgcount_errors' vanished), the rest counted; else all or nothing */
	bool walked;
};

/* a cgc_walk_fn: @rel (@id) into the batch @arg unless the session counts it */
int cgc_pending_add(struct cgcount *s, const char *rel, uint64_t id, void *arg);
/* sort by id and drop the cgroups named twice */
void cgc_pending_dedup(struct cgc_pending *p);
void cgc_pending_free(struct cgc_pending *p);
/* start counting the batch: how many were added, or -errno */
int cgc_pending_commit(struct cgcount *s, struct cgc_pending *p);

/* the set */
void cgc_set_delete(struct cgcount *s, uint64_t id);
void cgc_cgroup_free(struct cgc_cgroup *cg);

/* subtrees: add the cgroups found below them that are not counted yet */
int cgc_subtrees_walk(struct cgcount *s);
void cgc_subtrees_free(struct cgcount *s);

#endif
