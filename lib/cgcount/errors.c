// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount_errors(): what a session could not count.  The library counts
 * what its walks and batches left out; a backend with counts of its own
 * (rstat's cgroups that found no slot in its maps) adds them.
 */
#include <errno.h>
#include <string.h>

#include "cgcount_int.h"

int cgcount_errors(struct cgcount *s, struct cgcount_errors *errors)
{
	struct cgcount_errors e;
	size_t sz;

	if (!s || !errors || errors->sz < sizeof(errors->sz))
		return -EINVAL;
	sz = errors->sz < sizeof(e) ? errors->sz : sizeof(e);
	pthread_mutex_lock(&s->lock);
	e = s->errors;
	if (s->ops->errors)
		s->ops->errors(s, &e);
	pthread_mutex_unlock(&s->lock);
	e.sz = errors->sz;
	memcpy(errors, &e, sz);
	return 0;
}
