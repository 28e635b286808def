/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgcount: count perf events for many cgroups, over any backend.
 *
 *	char err[CGCOUNT_ERR_LEN];
 *	struct cgcount_opts opts = { .sz = sizeof(opts) };   // backend: auto
 *	struct cgcount *s = cgcount_open("cpu-clock,context-switches", &opts,
 *					 err, sizeof(err));
 *	if (!s) { fprintf(stderr, "%s\n", err); exit(1); }
 *	cgcount_add_path(s, "/sys/fs/cgroup/web");     // or "web"
 *	cgcount_add_regex(s, "^/batch/job-[0-9]+$");    // every matching cgroup
 *	...
 *	struct cgcount_reading *r; size_t n;
 *	if (cgcount_read_all(s, &r, &n) == 0) {
 *		for (size_t i = 0; i < n; i++)
 *			printf("%s %.0f\n", r[i].path,
 *			       cgcount_scaled(&r[i].values[0]));
 *		cgcount_readings_free(r, n);
 *	}
 *	cgcount_close(s);
 *
 * Backends (struct cgcount_opts.backend):
 *
 *   CGCOUNT_CLASSIC  one classic cgroup event (perf_event_open with
 *                    PERF_FLAG_PID_CGROUP) per event, cgroup and CPU; works on
 *                    any kernel with CONFIG_CGROUP_PERF.  E x G x C events.
 *   CGCOUNT_SHARED   one CPU event per event and CPU, with every cgroup
 *                    attached to it (PERF_EVENT_IOC_ATTACH_CGROUP, read with
 *                    PERF_EVENT_IOC_READ_CGROUP(S)); needs the kernel patches
 *                    of the kernel series (kernel/).  E x C events for any number of
 *                    cgroups.
 *   CGCOUNT_RSTAT    the BPF rstat backend (lib/cgrstat/cgrstat.h): BPF charges each
 *                    cgroup switch, rstat sums up the tree when read.  Needs
 *                    BPF trampolines (fentry) and the rstat hook; at most
 *                    CGCOUNT_MAX_EVENTS events, every cgroup of the system is
 *                    counted from cgcount_open() on.  Each read first
 *                    charges what every cpu counted since its last cgroup
 *                    switch (a BPF program run on each cpu).
 *   CGCOUNT_AUTO     the cheapest one this kernel supports: shared if the
 *                    ioctl is there, else rstat, else classic.
 *                    cgcount_backend() says which was picked.
 *
 * Semantics, the same for all three backends:
 *   - A cgroup's value is what the event counted while the running task was
 *     in that cgroup or any of its descendants (hierarchical, like cpu.stat):
 *     classic cgroup events match descendants, the shared backend charges
 *     every attached ancestor, rstat propagates up the tree.  A parent and
 *     its child can both be added; the parent's count includes the child's.
 *   - Counting of a cgroup starts when it is added (the rstat backend reads
 *     a baseline at add time and subtracts it).
 *   - Adding or removing a cgroup never disturbs the counts of the others.
 *   - Values are summed over the CPUs; enabled/running are the sums of the
 *     per-CPU times (ns), so cgcount_scaled() corrects for multiplexing.
 *   - Per-switch events (context-switches, cgroup-switches) go to the cgroup
 *     of the task switched out.
 *   - A cgroup removed from the file system keeps its final counts with the
 *     classic and shared backends; with rstat its counts move to its parent,
 *     cgcount_read_id() of it fails with -ENOENT and cgcount_read_all()
 *     repeats its last reading.  Remove such cgroups from the session.
 *
 * All functions are thread-safe: one mutex per session serialises them, so
 * several threads may read (and add/remove) concurrently.
 *
 * Functions return 0 (or a count) on success and a negative errno on
 * failure; cgcount_errmsg() then says what went wrong and what to do
 * (a thread-local message: the calling thread's last failure).
 */
#ifndef CGCOUNT_H
#define CGCOUNT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGCOUNT_MAX_EVENTS 8
#define CGCOUNT_ERR_LEN 512

enum cgcount_backend {
	CGCOUNT_AUTO = 0,
	CGCOUNT_CLASSIC,
	CGCOUNT_SHARED,
	CGCOUNT_RSTAT,
};

struct cgcount;

struct cgcount_opts {
	size_t sz;			/* sizeof(struct cgcount_opts) */
	enum cgcount_backend backend;	/* CGCOUNT_AUTO (0) by default */
	const char *cgroup_root;	/* cgroup2 mount; NULL: autodetect */
};

struct cgcount_value {
	uint64_t value;		/* the count, summed over CPUs */
	uint64_t enabled;	/* ns the event was enabled (summed over CPUs) */
	uint64_t running;	/* ns it was counting (== enabled unless multiplexed) */
};

struct cgcount_reading {
	uint64_t cgroup_id;	/* cgroup v2 id (inode number of the directory) */
	char *path;		/* relative to the cgroup2 root, "/" for the root */
	int nr_events;
	struct cgcount_value values[CGCOUNT_MAX_EVENTS];
};

/*
 * Open a session counting @events (comma-separated perf event names:
 * cpu-clock, task-clock, context-switches, cpu-migrations, page-faults,
 * minor-faults, major-faults, cgroup-switches, and on hardware cycles,
 * instructions, cache-references, cache-misses, branches, branch-misses)
 * for no cgroup yet.  @opts may be NULL.  On failure returns NULL and
 * writes the reason into @err.
 */
struct cgcount *cgcount_open(const char *events, const struct cgcount_opts *opts,
			     char *err, size_t err_len);
void cgcount_close(struct cgcount *s);

enum cgcount_backend cgcount_backend(const struct cgcount *s);
const char *cgcount_backend_name(enum cgcount_backend b);
/* "auto", "classic", "shared", "rstat" -> backend; -EINVAL if unknown */
int cgcount_parse_backend(const char *name, enum cgcount_backend *b);
int cgcount_nr_events(const struct cgcount *s);
const char *cgcount_event_name(const struct cgcount *s, int idx);
const char *cgcount_cgroup_root(const struct cgcount *s);
/* Number of cgroups counted now. */
size_t cgcount_nr_cgroups(struct cgcount *s);
/* The calling thread's last cgcount error message ("" if none); @s unused. */
const char *cgcount_errmsg(const struct cgcount *s);

/*
 * Start counting cgroups.  A path is absolute or relative to the cgroup2
 * root ("" or "/" is the root).  Adding a cgroup already counted is a no-op
 * (its counts continue).  Return 0, or for a regex the number of cgroups
 * added (POSIX extended regex, unanchored, matched against each path as
 * relative to the root with a leading '/', e.g. "/a/b").
 */
int cgcount_add_path(struct cgcount *s, const char *path);
int cgcount_add_id(struct cgcount *s, uint64_t cgroup_id);
int cgcount_add_regex(struct cgcount *s, const char *regex);

/* Stop counting a cgroup: -ENOENT if it is not counted. */
int cgcount_remove_path(struct cgcount *s, const char *path);
int cgcount_remove_id(struct cgcount *s, uint64_t cgroup_id);

/* The cgroup id of a path (the cgroup need not be counted). */
int cgcount_cgroup_id(struct cgcount *s, const char *path, uint64_t *cgroup_id);

/* Read one counted cgroup: values[0 .. nr_events-1]. */
int cgcount_read_id(struct cgcount *s, uint64_t cgroup_id,
		    struct cgcount_value values[CGCOUNT_MAX_EVENTS]);
int cgcount_read_path(struct cgcount *s, const char *path,
		      struct cgcount_value values[CGCOUNT_MAX_EVENTS]);
/*
 * Read every counted cgroup in one call (one READ_CGROUPS per event and CPU
 * for the shared backend, one iterator read for rstat).  *readings is
 * allocated, sorted by cgroup id; free it with
 * cgcount_readings_free().
 */
int cgcount_read_all(struct cgcount *s, struct cgcount_reading **readings, size_t *nr);
void cgcount_readings_free(struct cgcount_reading *readings, size_t nr);

/* value scaled by enabled / running (as perf stat does); 0 if never ran */
double cgcount_scaled(const struct cgcount_value *v);

#ifdef __cplusplus
}
#endif

#endif /* CGCOUNT_H */
