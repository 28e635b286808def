/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * cgrstat: perf event counts for every cgroup of the cgroup v2 hierarchy,
 * collected by BPF at each cgroup switch (O(1) per switch) and aggregated
 * up the hierarchy by rstat only when read.
 *
 *	char err[256];
 *	struct cgrstat *s = cgrstat_open("cpu-clock,context-switches", NULL,
 *					 err, sizeof(err));
 *	struct cgrstat_record rec;
 *	if (!s) { fprintf(stderr, "%s\n", err); ... }
 *	cgrstat_read_cgroup(s, "/sys/fs/cgroup/a/b", &rec);  // subtree totals of a/b
 *	cgrstat_close(s);
 *
 * Counts of a cgroup always include its descendants (like cpu.stat);
 * a removed cgroup's counts stay in its parent.  Counting starts at
 * cgrstat_open() for every cgroup, including cgroups created later.
 * Functions return 0 or a negative errno; cgrstat_errmsg() says why.
 * cgrstat_open() and cgrstat_open_counters() return NULL with errno set:
 *   EINVAL      the caller's input: an unknown event, no events, bad opts
 *   E2BIG       more than CGRSTAT_MAX_EVENTS events
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

#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>

#define CGRSTAT_MAX_EVENTS 8

struct cgrstat;

struct cgrstat_value {
	uint64_t counter;
	uint64_t enabled;	/* ns the event was enabled while charged here */
	uint64_t running;	/* ns it was counting (== enabled unless multiplexed) */
};

struct cgrstat_record {
	uint64_t cgroup_id;	/* kernfs id == inode number of the cgroup directory */
	uint32_t level;		/* 0 for the root */
	uint32_t nr_events;
	struct cgrstat_value values[CGRSTAT_MAX_EVENTS];
};

struct cgrstat_opts {
	size_t sz;			/* sizeof(struct cgrstat_opts) */
	uint32_t max_cgroups;		/* cgroups tracked at once (0: 4 x those present
					 * at open, at least 4096); preallocated, per
					 * cgroup: (8 + 48 B x events) per possible cpu
					 * + 48 B x events */
	uint32_t max_records;		/* records per read (0: max_cgroups, at least
					 * 16384) */
	const char *flush_hook;		/* rstat hook to attach (0: "bpf_rstat_flush") */
	const char *cgroup_root;	/* cgroup2 mount (0: autodetect) */
};

/* events: comma-separated events as perf stat -e takes them, parsed by
 * lib/cgutil (cgutil_parse_event()): perf's names (cpu-clock, task-clock,
 * context-switches, cpu-migrations, page-faults, minor-faults,
 * major-faults, cgroup-switches, cycles, instructions, ...), a PMU's
 * "pmu/term=value/", a raw "rNNN", libpfm4's names, with :u/:k/:h. */
struct cgrstat *cgrstat_open(const char *events, const struct cgrstat_opts *opts,
			     char *err, size_t err_len);

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
struct cgrstat *cgrstat_open_counters(const struct cgrstat_counter *counters, int nr,
				      const struct cgrstat_opts *opts, char *err, size_t err_len);
void cgrstat_close(struct cgrstat *s);
const char *cgrstat_errmsg(const struct cgrstat *s);
/* What this kernel cannot do that the session would have liked (NULL: none),
 * e.g. no hook for a task moving itself between cgroups. */
const char *cgrstat_warning(const struct cgrstat *s);

int cgrstat_nr_events(const struct cgrstat *s);
const char *cgrstat_event_name(const struct cgrstat *s, int idx);
const char *cgrstat_cgroup_root(const struct cgrstat *s);

/* path: absolute, or relative to the cgroup2 mount ("" or "/" = root) */
int cgrstat_cgroup_id(const struct cgrstat *s, const char *path, uint64_t *id);

/* One cgroup (its subtree totals). */
int cgrstat_read_cgroup(struct cgrstat *s, const char *path, struct cgrstat_record *rec);
int cgrstat_read_cgroup_id(struct cgrstat *s, uint64_t id, struct cgrstat_record *rec);
/* A cgroup and all its descendants in pre-order, with one iterator read.
 * *recs is malloc()ed: free() it. */
int cgrstat_read_subtree(struct cgrstat *s, const char *path,
			 struct cgrstat_record **recs, size_t *nr);
int cgrstat_read_all(struct cgrstat *s, struct cgrstat_record **recs, size_t *nr);

/* Text ("name value" lines) straight from the BPF iterator, one cgroup. */
int cgrstat_read_text(struct cgrstat *s, const char *path, char *buf, size_t len);
/* Pin a text iterator for one cgroup in bpffs: `cat pin_path` reads it. */
int cgrstat_pin_text(struct cgrstat *s, const char *path, const char *pin_path);

/* Print records as text: "cgroup_id N\nevent value\n..." */
void cgrstat_print_record(const struct cgrstat *s, const struct cgrstat_record *rec, FILE *out);

/* Diagnostics: switches charged, perf read errors, flush hook calls. */
struct cgrstat_stats {
	uint64_t switches;
	uint64_t read_errors;
	uint64_t slots_full;	/* unattributed_charges + lost_flushes */
	uint64_t flush_calls;
	uint64_t forgotten;	/* entries of released cgroups deleted */
	uint64_t reflushes;	/* reads that flushed twice (a switch raced the flush) */
	uint64_t slot_entries;	/* cgroups with per-cpu slots now */
	uint64_t total_entries;	/* cgroups with totals now */
	uint64_t max_cgroups;	/* room for that many in each map */
	/* The overflow entry: counts charged to no cgroup because a map was
	 * full (never to another cgroup).  Non-zero is an error: see
	 * cgrstat_check_overflow(). */
	uint64_t unattributed_charges;	/* charges that found no cgroup slot */
	uint64_t lost_flushes;		/* flushes whose cgroup or parent had no total */
	uint64_t dead_lost;		/* released cgroups whose entries stay (map full) */
	uint64_t unattributed[CGRSTAT_MAX_EVENTS];	/* their counts, per event */
	/* with sysctl kernel.bpf_stats_enabled=1: time in the programs */
	uint64_t collector_runs, collector_ns;
	uint64_t flusher_runs, flusher_ns;
	uint64_t untracked;	/* cgroups that found no room at creation */
};
void cgrstat_get_stats(const struct cgrstat *s, struct cgrstat_stats *st);
/* 0, or -ENOSPC when counts went to the overflow entry; cgrstat_errmsg()
 * then says how many, per event. */
int cgrstat_check_overflow(struct cgrstat *s);

#endif
