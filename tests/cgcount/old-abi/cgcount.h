/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * TEST FIXTURE, not the library's header: the part of lib/cgcount/cgcount.h
 * that old_client.c uses, as an older release of the same ABI
 * (CGCOUNT_0.1.0) had it, with a smaller struct cgcount_opts (no
 * max_cgroups).  old_client.c is built against it and run with the current
 * libcgcount.so (tests/cgcount/install.sh): the library must read the
 * fields the old struct lacks as their defaults.  Keep it frozen.
 */
#ifndef CGCOUNT_H
#define CGCOUNT_H

#include <stddef.h>
#include <stdint.h>

enum cgcount_backend {
	CGCOUNT_AUTO = 0,
	CGCOUNT_EVENTS,
	CGCOUNT_SHARED,
	CGCOUNT_RSTAT,
};

struct cgcount;

struct cgcount_opts {
	size_t sz;
	enum cgcount_backend backend;
	const char *cgroup_root;
	size_t :0;
};

struct cgcount_value {
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
};

struct cgcount *cgcount_open(const char *events, const struct cgcount_opts *opts);
void cgcount_close(struct cgcount *s);
enum cgcount_backend cgcount_backend(const struct cgcount *s);
int cgcount_add_path(struct cgcount *s, const char *path);
int cgcount_read_path(struct cgcount *s, const char *path,
		      struct cgcount_value *values, size_t nr_values);

#endif
