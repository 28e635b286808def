/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * memcg_stat: read selected memory.stat fields of one cgroup or of a
 * cgroup subtree.
 *
 * Two backends give the same values:
 *   bpf   a sleepable cgroup_iter program calls the bpf_mem_cgroup_* kfuncs
 *         and writes binary records into a shared map: the kernel formats
 *         no text and the reader parses none. A single cgroup is read by a
 *         syscall program run with BPF_PROG_RUN instead (one syscall, no
 *         iterator fd), unless MEMCG_STAT_ITER_ALWAYS.
 *   text  reads and parses memory.stat (memory.current, memory.events) of
 *         every cgroup; used on kernels without the kfuncs.
 *
 * Field names are memory.stat's ("anon", "file", "slab", "pgfault", ...),
 * plus "usage" (memory.current, bytes) and "events.NAME" (memory.events).
 * They are resolved at run time through the running kernel's BTF enums
 * (node_stat_item, memcg_stat_item, vm_event_item, memcg_memory_event).
 *
 * Conventions (libbpf's, as libcgcount's; lib/README.md): an opaque handle
 * (memcg_stat_open() / memcg_stat_close()); functions return 0 (or a count)
 * or a negative errno, constructors NULL with errno set; every failure is
 * also described, with what to do, through the print callback
 * (memcg_stat_set_print()); options in a struct whose first member is its
 * size (MEMCG_STAT_OPTS): an older, smaller struct keeps working, fields
 * this library does not know give -E2BIG.
 */
#ifndef MEMCG_STAT_H
#define MEMCG_STAT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The version of this header; the .so's soname carries the major one. */
#define MEMCG_STAT_MAJOR_VERSION 0
#define MEMCG_STAT_MINOR_VERSION 1
#define MEMCG_STAT_PATCH_VERSION 0

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MEMCG_STAT_API
#define MEMCG_STAT_API __attribute__((visibility("default")))
#endif

/* The library's version at run time (the macros give the header's). */
MEMCG_STAT_API uint32_t memcg_stat_major_version(void);
MEMCG_STAT_API uint32_t memcg_stat_minor_version(void);
MEMCG_STAT_API const char *memcg_stat_version_string(void);

enum memcg_stat_print_level {
	MEMCG_STAT_WARN,
	MEMCG_STAT_INFO,
	MEMCG_STAT_DEBUG,
};

typedef int (*memcg_stat_print_fn_t)(enum memcg_stat_print_level level,
				     const char *fmt, va_list ap);

/*
 * Where the library's messages go (process-wide, like libbpf_set_print());
 * NULL silences them.  Returns the previous function.  The default prints
 * MEMCG_STAT_WARN and MEMCG_STAT_INFO to stderr.  The backend chosen, and
 * why not bpf, is told at MEMCG_STAT_DEBUG.
 */
MEMCG_STAT_API memcg_stat_print_fn_t memcg_stat_set_print(memcg_stat_print_fn_t fn);

enum memcg_stat_backend {
	MEMCG_STAT_BACKEND_BPF,
	MEMCG_STAT_BACKEND_TEXT,
};

enum memcg_stat_scope {
	MEMCG_STAT_SELF,	/* the cgroup only */
	MEMCG_STAT_SUBTREE,	/* the cgroup and its descendants, pre-order */
};

/* memcg_stat_opts.flags */
#define MEMCG_STAT_FORCE_TEXT	0x1	/* do not try the bpf backend */
#define MEMCG_STAT_FORCE_BPF	0x2	/* fail instead of falling back */
#define MEMCG_STAT_NO_FLUSH	0x4	/* bpf: do not flush before reading */
#define MEMCG_STAT_ITER_ALWAYS	0x8	/* bpf: read one cgroup by a walk too */

/*
 * Options.  Fields are only ever added at the end; declare with
 * MEMCG_STAT_OPTS() so that sz is right and the unset fields are zero.
 */
struct memcg_stat_opts {
	size_t sz;			/* sizeof(struct memcg_stat_opts) */
	unsigned int flags;		/* MEMCG_STAT_FORCE_TEXT, ... */
	unsigned int max_cgroups;	/* rows per read; 0 = 4096 */
	size_t :0;
};
/* The last field this header knows: a caller's non-zero bytes past it give -E2BIG. */
#define memcg_stat_opts__last_field max_cgroups

/*
 * libbpf's LIBBPF_OPTS: zeroes the struct, padding included, then sets sz
 * and the fields given. Valid C and C++ (g++ too, whose -Wextra would warn
 * of the fields left to zero).
 */
#define MEMCG_STAT_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = __extension__ ({					\
		memset(&NAME, 0, sizeof(struct TYPE));				\
		_Pragma("GCC diagnostic push")					\
		_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"") \
		struct TYPE NAME##_memcg_stat_init = {				\
			.sz = sizeof(struct TYPE),				\
			__VA_ARGS__						\
		};								\
		_Pragma("GCC diagnostic pop")					\
		NAME##_memcg_stat_init;						\
	})

/* A value the kernel does not provide (field absent, index untracked). */
#define MEMCG_STAT_NA UINT64_MAX

struct memcg_stat_row {
	uint64_t cgroup_id;	/* cgroup v2 id (the directory's file handle) */
	int has_memcg;		/* 0: memory controller not enabled there */
	const uint64_t *values;	/* one per requested field */
};

struct memcg_stat_reader;

/*
 * Open a reader of @nr_fields fields; @opts may be NULL.  Returns NULL with
 * errno set: ENOENT if a field is not known to the running kernel (the
 * message names it), EINVAL for bad arguments (flags this library does not
 * know, or both MEMCG_STAT_FORCE_*), E2BIG for options this library does
 * not know, EOPNOTSUPP for MEMCG_STAT_FORCE_BPF on a kernel without the
 * kfuncs.
 */
MEMCG_STAT_API struct memcg_stat_reader *
memcg_stat_open(const char *const *fields, int nr_fields,
		const struct memcg_stat_opts *opts);
/* Close a reader (NULL is a no-op). */
MEMCG_STAT_API void memcg_stat_close(struct memcg_stat_reader *r);

/*
 * Read the fields for the cgroup at @cgroup_path (a cgroup2 directory)
 * and, for MEMCG_STAT_SUBTREE, its descendants. Returns the number of
 * rows or a negative errno (-ENOENT: no such cgroup; -ENOSPC: more
 * cgroups than max_cgroups).
 */
MEMCG_STAT_API int memcg_stat_read(struct memcg_stat_reader *r, const char *cgroup_path,
		    enum memcg_stat_scope scope);

/*
 * The same, split for repeated reads of one cgroup (or subtree): a target
 * keeps the bpf iterator link, or the open text files, between reads.
 * memcg_stat_target_open() returns NULL with errno set on error.
 */
struct memcg_stat_target;
MEMCG_STAT_API struct memcg_stat_target *
memcg_stat_target_open(struct memcg_stat_reader *r, const char *cgroup_path,
		       enum memcg_stat_scope scope);
MEMCG_STAT_API int memcg_stat_read_target(struct memcg_stat_reader *r,
					  struct memcg_stat_target *tg);
MEMCG_STAT_API void memcg_stat_target_close(struct memcg_stat_target *tg);

/* Row @i of the last read (0 <= i < its return value). */
MEMCG_STAT_API const struct memcg_stat_row *
memcg_stat_row(const struct memcg_stat_reader *r, int i);

MEMCG_STAT_API enum memcg_stat_backend
memcg_stat_backend(const struct memcg_stat_reader *r);
MEMCG_STAT_API const char *memcg_stat_backend_name(enum memcg_stat_backend backend);

#ifdef __cplusplus
}
#endif

#endif
