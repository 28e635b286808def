/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * cgrstat: perf event counts for every cgroup of the cgroup v2 hierarchy,
 * collected by BPF at each cgroup switch (O(1) per switch) and aggregated
 * up the hierarchy by rstat only when read.
 *
 *	CGRSTAT_OPTS(cgrstat_opts, opts, .max_cgroups = 8192);
 *	struct cgrstat *s = cgrstat_open("cpu-clock,context-switches", &opts);
 *	struct cgrstat_value v[2];
 *	if (!s) { ... }			// the library printed why (cgrstat_set_print)
 *	cgrstat_read_cgroup(s, "/sys/fs/cgroup/a/b", v, 2);  // subtree totals of a/b
 *	cgrstat_close(s);
 *
 * Counts of a cgroup always include its descendants (like cpu.stat);
 * a removed cgroup's counts stay in its parent.  Counting starts at
 * cgrstat_open() for every cgroup, including cgroups created later.
 * Conventions (libbpf's, as libcgcount's; lib/README.md): an opaque handle;
 * functions return 0 or a negative errno, the constructors NULL with errno
 * set; every failure is described, with what to do about it, through the
 * print callback (cgrstat_set_print(); by default to stderr).
 * Options are passed in a struct whose first member is its size
 * (CGRSTAT_OPTS): a program built against an older, smaller struct keeps
 * working, and one that sets fields this library does not know gets E2BIG.
 * cgrstat_open() and cgrstat_open_counters() return NULL with errno set:
 *   EINVAL      the caller's input: an unknown event, no events, bad opts
 *   E2BIG       more than CGRSTAT_MAX_EVENTS events, or opts with a field
 *               this library does not know (built against a newer header)
 *   ENOENT      no cgroup2 file system mounted
 *   EOPNOTSUPP  this kernel or machine cannot run it: no BTF, no rstat hook
 *               or kfunc, an event it cannot count (no hardware PMU), the
 *               verifier refused a program or an attach failed
 *   EPERM, EACCES  no permission (CAP_BPF + CAP_PERFMON, or root)
 *   ENOMEM      out of memory (or the locked-memory limit of older kernels)
 * A session is not thread-safe: use one per thread or lock around it.
 */
#ifndef CGRSTAT_H
#define CGRSTAT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The version of this header; the .so's soname carries the major one. */
#define CGRSTAT_MAJOR_VERSION 0
#define CGRSTAT_MINOR_VERSION 1
#define CGRSTAT_PATCH_VERSION 0

#ifndef CGRSTAT_API
#define CGRSTAT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version at run time (the macros give the header's). */
CGRSTAT_API uint32_t cgrstat_major_version(void);
CGRSTAT_API uint32_t cgrstat_minor_version(void);
CGRSTAT_API const char *cgrstat_version_string(void);

enum cgrstat_print_level {
	CGRSTAT_WARN,
	CGRSTAT_INFO,
	CGRSTAT_DEBUG,
};

typedef int (*cgrstat_print_fn_t)(enum cgrstat_print_level level, const char *fmt,
				  va_list ap);

/*
 * Where the library's messages go (process-wide, like libbpf_set_print());
 * NULL silences them.  Returns the previous function.  The default prints
 * CGRSTAT_WARN (every failure) and CGRSTAT_INFO (what this kernel cannot
 * do that the session would have liked, e.g. no hook for a task moving
 * itself between cgroups) to stderr.
 */
CGRSTAT_API cgrstat_print_fn_t cgrstat_set_print(cgrstat_print_fn_t fn);

/* Events a session counts at most (the BPF program's slots). */
#define CGRSTAT_MAX_EVENTS 8

struct cgrstat;

struct cgrstat_value {
	uint64_t counter;
	uint64_t enabled;	/* ns the event was enabled while charged here */
	uint64_t running;	/* ns it was counting (== enabled unless multiplexed) */
};

struct cgrstat_record {
	uint64_t cgroup_id;	/* cgroup v2 id (the directory's file handle) */
	uint32_t level;		/* 0 for the root */
	uint32_t nr_events;	/* == cgrstat_nr_events() */
	struct cgrstat_value *values;	/* values[0 .. nr_events - 1] */
};

/*
 * Options.  Fields are only ever added at the end; declare with
 * CGRSTAT_OPTS() so that sz is right and the unset fields are zero.
 */
struct cgrstat_opts {
	size_t sz;			/* sizeof(struct cgrstat_opts) */
	uint32_t max_cgroups;		/* cgroups tracked at once (0: 4 x those present
					 * at open, at least 4096; at most 2^31 - 1);
					 * preallocated, per cgroup: (8 + 48 B x events)
					 * per possible cpu + 48 B x events.  A cgroup
					 * created while all are in use is counted in
					 * its nearest ancestor with room (stats'
					 * unplaced); a removed cgroup's room is free
					 * again at the next mkdir, release or read */
	uint32_t max_records;		/* records per read (0: max_cgroups + 1, at
					 * least 16384); a subtree read has one for
					 * its first cgroup and each below with room */
	const char *flush_hook;		/* rstat hook to attach (0: "bpf_rstat_flush") */
	const char *cgroup_root;	/* cgroup2 mount (0: autodetect) */
	size_t :0;
};

/*
 * libbpf's LIBBPF_OPTS: zeroes the struct, padding included, then sets sz
 * and the fields given.  Valid C and C++ (g++ too, whose -Wextra would warn
 * of the fields left to zero).
 */
#define CGRSTAT_OPTS(TYPE, NAME, ...)						\
	struct TYPE NAME = __extension__ ({					\
		memset(&NAME, 0, sizeof(struct TYPE));				\
		_Pragma("GCC diagnostic push")					\
		_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"") \
		struct TYPE NAME##_cgrstat_init = {				\
			.sz = sizeof(struct TYPE),				\
			__VA_ARGS__						\
		};								\
		_Pragma("GCC diagnostic pop")					\
		NAME##_cgrstat_init;						\
	})

/* events: comma-separated events as perf stat -e takes them, parsed by
 * lib/cgutil (cgutil_parse_event()): perf's names (cpu-clock, task-clock,
 * context-switches, cpu-migrations, page-faults, minor-faults,
 * major-faults, cgroup-switches, cycles, instructions, ...), a PMU's
 * "pmu/term=value/", a raw "rNNN", libpfm4's names, with :u/:k/:h. */
CGRSTAT_API struct cgrstat *cgrstat_open(const char *events, const struct cgrstat_opts *opts);

/*
 * Counters the caller opened itself (perf stat, with its own event
 * parser): one per event, cpu-wide on every cpu (pid -1, no cgroup),
 * with read_format PERF_FORMAT_TOTAL_TIME_ENABLED |
 * PERF_FORMAT_TOTAL_TIME_RUNNING.  The fds stay the caller's: close them
 * after cgrstat_close().  A counter without fds (NULL) is opened by the
 * session on every cpu, from @attr (NULL: @type and @config), and closed
 * by cgrstat_close(): cgrstat_open() hands its parsed events over so.
 */
struct perf_event_attr;
struct cgrstat_counter {
	const char *name;	/* for the text readers */
	uint32_t type;		/* perf_event_attr.type and .config: the events */
	uint64_t config;	/* a context switch counts (context-switches...) */
	const int *fds;		/* fds[cpu] for cpu < nr_cpus, -1 where none */
	int nr_cpus;
	const struct perf_event_attr *attr;	/* without fds: what to open */
};
CGRSTAT_API struct cgrstat *cgrstat_open_counters(const struct cgrstat_counter *counters, int nr,
						  const struct cgrstat_opts *opts);
CGRSTAT_API void cgrstat_close(struct cgrstat *s);

CGRSTAT_API int cgrstat_nr_events(const struct cgrstat *s);
CGRSTAT_API const char *cgrstat_event_name(const struct cgrstat *s, int idx);
CGRSTAT_API const char *cgrstat_cgroup_root(const struct cgrstat *s);

/* path: absolute, or relative to the cgroup2 mount ("" or "/" = root) */
CGRSTAT_API int cgrstat_cgroup_id(const struct cgrstat *s, const char *path, uint64_t *id);

/* One cgroup (its subtree totals) into values[0 .. cgrstat_nr_events() - 1];
 * -ENOSPC if @nr_values is smaller than that.  These reads and
 * cgrstat_read_subtree() return -ENOENT for a cgroup removed before the
 * read with a CGRSTAT_DEBUG message only (a reader of a live tree meets
 * that race all the time; the caller says whether it matters). */
CGRSTAT_API int cgrstat_read_cgroup(struct cgrstat *s, const char *path,
				    struct cgrstat_value *values, size_t nr_values);
CGRSTAT_API int cgrstat_read_cgroup_id(struct cgrstat *s, uint64_t id,
				       struct cgrstat_value *values, size_t nr_values);
/* A cgroup and all its descendants in pre-order, with one iterator read.
 * *recs is one malloc()ed block, the values included: free() it. */
CGRSTAT_API int cgrstat_read_subtree(struct cgrstat *s, const char *path,
			 struct cgrstat_record **recs, size_t *nr);
CGRSTAT_API int cgrstat_read_all(struct cgrstat *s, struct cgrstat_record **recs, size_t *nr);

/* Text ("name value" lines) straight from the BPF iterator, one cgroup. */
CGRSTAT_API int cgrstat_read_text(struct cgrstat *s, const char *path, char *buf, size_t len);
/* Pin a text iterator for one cgroup in bpffs: `cat pin_path` reads it. */
CGRSTAT_API int cgrstat_pin_text(struct cgrstat *s, const char *path, const char *pin_path);

/* Print records as text: "cgroup_id N\nevent value\n..." */
CGRSTAT_API void cgrstat_print_record(const struct cgrstat *s, const struct cgrstat_record *rec, FILE *out);

/* Diagnostics: switches charged, perf read errors, flush hook calls. */
struct cgrstat_stats {
	uint64_t switches;
	uint64_t read_errors;
	uint64_t flush_calls;
	uint64_t forgotten;	/* entries of released cgroups deleted */
	uint64_t reflushes;	/* reads that flushed twice (a switch raced the flush) */
	uint64_t tracked;	/* cgroups holding an entry (per-cpu slots and a
				 * total) now */
	uint64_t max_cgroups;	/* room for that many */
	/* The overflow entry: counts charged to no cgroup because the maps
	 * were full and no ancestor had room either (never to another
	 * cgroup).  Non-zero is an error: see
	 * cgrstat_check_overflow(). */
	uint64_t unattributed_charges;	/* charges that found no cgroup slot */
	uint64_t dead_lost;		/* released cgroups whose index stays in use */
	/* their counts per event: cgrstat_unattributed() */
	/* with sysctl kernel.bpf_stats_enabled=1: time in the programs */
	uint64_t collector_runs, collector_ns;
	uint64_t flusher_runs, flusher_ns;
	uint64_t untracked;	/* cgroups that found no room at creation */
	/* Counts of cgroups without a slot of their own (created while the
	 * maps were full): they go to the nearest ancestor with a slot, whose
	 * subtree totals stay whole, while such a cgroup reads 0 (and is left
	 * out of the subtree reads below their first cgroup).  Each charge to
	 * an ancestor's slot, and each flush that passed a cgroup's counts up
	 * past a parent without a slot, counts one.  Not an error: a hint to
	 * raise cgrstat_opts.max_cgroups. */
	uint64_t unplaced;
};
CGRSTAT_API void cgrstat_get_stats(const struct cgrstat *s, struct cgrstat_stats *st);
/* The counts of the overflow entry, per event, into counts[0 .. nr - 1]
 * (0 for the events past cgrstat_nr_events()). */
CGRSTAT_API void cgrstat_unattributed(const struct cgrstat *s, uint64_t *counts, size_t nr);
/* 0, or -ENOSPC when counts went to the overflow entry; the message says
 * how many, per event. */
CGRSTAT_API int cgrstat_check_overflow(struct cgrstat *s);

#ifdef __cplusplus
}
#endif

#endif /* CGRSTAT_H */
