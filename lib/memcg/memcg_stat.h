/* SPDX-License-Identifier: GPL-2.0 */
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
 */
#ifndef MEMCG_STAT_H
#define MEMCG_STAT_H

#include <stdint.h>

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

struct memcg_stat_opts {
	unsigned int flags;
	unsigned int max_cgroups;	/* rows per read; 0 = 4096 */
};

/* A value the kernel does not provide (field absent, index untracked). */
#define MEMCG_STAT_NA UINT64_MAX

struct memcg_stat_row {
	uint64_t cgroup_id;	/* cgroup2 inode number / kernfs id */
	int has_memcg;		/* 0: memory controller not enabled there */
	const uint64_t *values;	/* one per requested field */
};

struct memcg_stat_reader;

/*
 * Create a reader for @nr_fields fields. Returns 0 or a negative errno:
 * -ENOENT if a field is not known to the running kernel (*bad_field, if
 * not NULL, then points to it), -EINVAL for bad arguments.
 */
int memcg_stat_reader_new(const char *const *fields, int nr_fields,
			  const struct memcg_stat_opts *opts,
			  struct memcg_stat_reader **out, const char **bad_field);

/*
 * Read the fields for the cgroup at @cgroup_path (a cgroup2 directory)
 * and, for MEMCG_STAT_SUBTREE, its descendants. Returns the number of
 * rows or a negative errno (-ENOENT: no such cgroup; -ENOSPC: more
 * cgroups than max_cgroups).
 */
int memcg_stat_read(struct memcg_stat_reader *r, const char *cgroup_path,
		    enum memcg_stat_scope scope);

/*
 * The same, split for repeated reads of one cgroup (or subtree): a target
 * keeps the bpf iterator link, or the open text files, between reads.
 * memcg_stat_target_open() returns NULL with errno set on error.
 */
struct memcg_stat_target;
struct memcg_stat_target *memcg_stat_target_open(struct memcg_stat_reader *r,
						 const char *cgroup_path,
						 enum memcg_stat_scope scope);
int memcg_stat_read_target(struct memcg_stat_reader *r,
			   struct memcg_stat_target *tg);
void memcg_stat_target_close(struct memcg_stat_target *tg);

/* Row @i of the last read (0 <= i < its return value). */
const struct memcg_stat_row *memcg_stat_row(const struct memcg_stat_reader *r,
					    int i);

enum memcg_stat_backend memcg_stat_backend(const struct memcg_stat_reader *r);
const char *memcg_stat_backend_name(enum memcg_stat_backend backend);

/* Why the bpf backend is not used (NULL if it is). */
const char *memcg_stat_fallback_reason(const struct memcg_stat_reader *r);

void memcg_stat_reader_free(struct memcg_stat_reader *r);

#endif
