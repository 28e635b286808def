/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What libcgrstat's own files share and its users do not see: the session,
 * the library's printing (through the function cgrstat_set_print() chose)
 * and the functions one file of the library calls in another:
 *   cgrstat_load.c   probing the kernel, loading the BPF object, the
 *                    counters' fds, the session's life
 *   cgrstat_read.c   the iterators: records, text, pins
 *   cgrstat_track.c  the cgroups the maps track: entries at open, the
 *                    statistics and the overflow entry
 */
#ifndef CGRSTAT_INT_H
#define CGRSTAT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#include "cgrstat.h"
#include "cgrstat_abi.h"

/* The public values are the BPF program's, copied as they are. */
_Static_assert(CGRSTAT_MAX_EVENTS == CGRSTAT_ABI_MAX_EVENTS, "cgrstat.h and cgrstat_abi.h");
_Static_assert(sizeof(struct cgrstat_value) == sizeof(struct cgrstat_abi_value) &&
	       offsetof(struct cgrstat_value, counter) ==
	       offsetof(struct cgrstat_abi_value, counter) &&
	       offsetof(struct cgrstat_value, enabled) ==
	       offsetof(struct cgrstat_abi_value, enabled) &&
	       offsetof(struct cgrstat_value, running) ==
	       offsetof(struct cgrstat_abi_value, running),
	       "struct cgrstat_value is struct cgrstat_abi_value");

struct cgrstat_bpf;
struct bpf_link;
struct bpf_map;
struct bpf_program;

struct event_desc {
	char name[CGRSTAT_NAME_LEN];
	bool own;			/* opened here from attr (counter without fds) */
	struct perf_event_attr attr;
};

struct cgrstat {
	struct cgrstat_bpf *skel;
	struct cgrstat_bpf *text_skel;	/* cgrstat_dump_text, on first use */
	struct bpf_link *switch_link;
	struct bpf_link *flush_link;
	struct bpf_link *migrate_link;
	struct bpf_link *release_link;
	struct bpf_link *mkdir_link;
	int nr_events;
	int nr_cpus;
	struct event_desc events[CGRSTAT_MAX_EVENTS];
	int *perf_fds;			/* nr_events * nr_cpus, -1 if unused */
	uint32_t max_records;
	const struct cgrstat_abi_record *records;	/* the records map, mmap()ed */
	size_t records_len;
	const struct cpu_tail *tails;	/* the cpu_tails map, mmap()ed */
	size_t tails_len;
	struct cpu_reading *readings;	/* every cpu's, read by each read */
	char root[PATH_MAX];
};

void cgrstat__print(enum cgrstat_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print a failure as "libcgrstat: <message>" and return -@errnum. */
int cgrstat__fail(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define fail cgrstat__fail
/* The errno of the kernel refusing a program or an attach: EOPNOTSUPP but
 * for a lack of permission or memory (EINVAL is only ever the caller's). */
int cgrstat__refused(int err);

/* @path (absolute, or relative to the cgroup2 mount) made absolute */
void cgrstat__resolve_path(const struct cgrstat *s, const char *path, char *out, size_t len);
/* An iterator link over the cgroup at @path (or with id @id if !path). */
int cgrstat__make_iter(struct cgrstat *s, struct bpf_program *prog, const char *path,
		       uint64_t id, enum bpf_cgroup_iter_order order,
		       struct bpf_link **out);

/* The one entry of the per-cpu array @map, each possible cpu's, into
 * @vals[] (@size bytes each, the map's value size); -errno if it cannot be
 * read. */
int cgrstat__percpu_entry(const struct bpf_map *map, void *vals, size_t size);

/* cgrstat_opts.max_cgroups at most: an index keeps bit 31 free (the BPF
 * program's proxy entries) */
#define MAX_MAX_CGROUPS (UINT32_MAX / 2)

/* Entries for every cgroup present and created from now on (at open). */
int cgrstat__track_cgroups(struct cgrstat *s);
/* The maps' default size: from the cgroups present below s->root. */
uint32_t cgrstat__default_max_cgroups(const struct cgrstat *s);

#endif /* CGRSTAT_INT_H */
