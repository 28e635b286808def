/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libcgcount: count perf events for many cgroups, over any backend.
 *
 *	struct cgcount *s = cgcount_open("cpu-clock,context-switches", NULL);
 *	if (!s)
 *		exit(1);		// the library printed why (cgcount_set_print)
 *	cgcount_add_path(s, "/sys/fs/cgroup/web");     // or "web"
 *	cgcount_add_regex(s, "^/batch/job-[0-9]+$");    // every matching cgroup
 *	...
 *	struct cgcount_reading *r; size_t n;
 *	if (cgcount_read_all(s, &r, &n) == 0) {
 *		for (size_t i = 0; i < n; i++)
 *			printf("%s %.0f\n", r[i].path, cgcount_scaled(&r[i].values[0]));
 *		cgcount_readings_free(r, n);
 *	}
 *	cgcount_close(s);
 *
 * Backends (struct cgcount_opts.backend, CGCOUNT_OPTS(cgcount_opts, o, .backend = ...)):
 *
 *   CGCOUNT_EVENTS   one classic cgroup event (perf_event_open with
 *                    PERF_FLAG_PID_CGROUP) per event, cgroup and CPU, as
 *                    perf stat --for-each-cgroup opens; works on any kernel
 *                    with CONFIG_CGROUP_PERF.  E x G x C events.
 *   CGCOUNT_SHARED   one CPU event per event and CPU, with every cgroup
 *                    attached to it (PERF_EVENT_IOC_ATTACH_CGROUP, read with
 *                    PERF_EVENT_IOC_READ_CGROUP(S)); needs the kernel series
 *                    (kernel/).  E x C events for any number of cgroups.
 *   CGCOUNT_RSTAT    the BPF rstat backend (lib/cgrstat): BPF charges each
 *                    cgroup switch, rstat sums up the tree when read.  Needs
 *                    BPF trampolines (fentry) and the rstat hook; at most 8
 *                    events, every cgroup of the system is counted from
 *                    cgcount_open() on.  Each read first charges what every
 *                    cpu counted since its last cgroup switch.
 *   CGCOUNT_AUTO     shared if the kernel has the ioctls, else events, as
 *                    perf stat's --cgroup-backend=auto.  rstat loads BPF
 *                    programs that run at every context switch: only when
 *                    asked (CGCOUNT_RSTAT), never picked by auto.
 *                    cgcount_backend() says which was picked and
 *                    cgcount_backend_reason() why.
 *
 * Semantics, the same for all three backends:
 *   - A cgroup's value is what the event counted while the running task was
 *     in that cgroup or any of its descendants (hierarchical, like cpu.stat).
 *     A parent and its child can both be added; the parent's count includes
 *     the child's.
 *   - Counting of a cgroup starts when it is added (for one created below a
 *     subtree added earlier, see cgcount_add_subtree()).
 *   - Adding or removing a cgroup never disturbs the counts of the others.
 *   - Values are summed over the CPUs; enabled/running are the sums of the
 *     per-CPU times (ns), so cgcount_scaled() corrects for multiplexing.
 *   - Per-switch events (context-switches, cgroup-switches) go to the cgroup
 *     of the task switched out.
 *   - A cgroup removed from the file system keeps its final counts with the
 *     events and shared backends; with rstat its counts move to its parent,
 *     cgcount_read_id() of it fails with -ENOENT and cgcount_read_all()
 *     repeats its last reading.  Remove such cgroups from the session.
 *
 * Conventions (libbpf's): an opaque handle; functions return 0 (or a count)
 * on success and a negative errno on failure, cgcount_open() NULL with
 * errno set; every failure is also described, with what to do about it,
 * through the print callback (cgcount_set_print(); by default warnings go to
 * stderr).  Options are passed in a struct whose first member is its size
 * (CGCOUNT_OPTS): a program built against an older, smaller struct keeps
 * working, and one that sets fields this library does not know gets -E2BIG.
 * All functions are thread-safe: one mutex per session serialises them.
 */
#ifndef CGCOUNT_H
#define CGCOUNT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The version of this header; the .so's soname carries the major one. */
#define CGCOUNT_MAJOR_VERSION 0
#define CGCOUNT_MINOR_VERSION 4
#define CGCOUNT_PATCH_VERSION 0

#ifdef __cplusplus
extern "C" {
#endif

#ifndef CGCOUNT_API
#define CGCOUNT_API __attribute__((visibility("default")))
#endif

/* The library's version at run time (the macros give the header's). */
CGCOUNT_API uint32_t cgcount_major_version(void);
CGCOUNT_API uint32_t cgcount_minor_version(void);
CGCOUNT_API const char *cgcount_version_string(void);

enum cgcount_print_level {
	CGCOUNT_WARN,
	CGCOUNT_INFO,
	CGCOUNT_DEBUG,
};

typedef int (*cgcount_print_fn_t)(enum cgcount_print_level level, const char *fmt,
				  va_list ap);

/*
 * Where the library's messages go (process-wide, like
 * libbpf_set_print()); NULL silences them.  Returns the previous function.
 * The default prints CGCOUNT_WARN and CGCOUNT_INFO to stderr.
 */
CGCOUNT_API cgcount_print_fn_t cgcount_set_print(cgcount_print_fn_t fn);

enum cgcount_backend {
	CGCOUNT_AUTO = 0,
	CGCOUNT_EVENTS,
	CGCOUNT_SHARED,
	CGCOUNT_RSTAT,
};

struct cgcount;

/*
 * Options.  Fields are only ever added at the end; declare with
 * CGCOUNT_OPTS() so that sz is right and the unset fields are zero.
 */
struct cgcount_opts {
	size_t sz;			/* sizeof(struct cgcount_opts) */
	enum cgcount_backend backend;	/* CGCOUNT_AUTO (0) by default */
	const char *cgroup_root;	/* cgroup2 mount; NULL: autodetect */
	size_t max_cgroups;		/* rstat: cgroups tracked at once (its maps are
					 * preallocated); 0: 32768 */
	size_t :0;
};
#define cgcount_opts__last_field max_cgroups

/*
 * libbpf's LIBBPF_OPTS: zeroes the struct, padding included, then sets sz
 * and the fields given.  Valid C and C++ (g++ too, whose -Wextra would warn
 * of the fields left to zero), and ISO C with -pedantic (__extension__).
 */
#define CGCOUNT_OPTS(TYPE, NAME, ...)						\
	struct TYPE NAME = __extension__ ({					\
		memset(&NAME, 0, sizeof(struct TYPE));				\
		_Pragma("GCC diagnostic push")					\
		_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"") \
		struct TYPE NAME##_cgcount_init = {				\
			.sz = sizeof(struct TYPE),				\
			__VA_ARGS__						\
		};								\
		_Pragma("GCC diagnostic pop")					\
		NAME##_cgcount_init;						\
	})

struct cgcount_value {
	uint64_t value;		/* the count, summed over CPUs */
	uint64_t enabled;	/* ns the event was enabled (summed over CPUs) */
	uint64_t running;	/* ns it was counting (== enabled unless multiplexed) */
};
/*
 * Not counted: running == 0 (value 0, cgcount_scaled() 0) when nothing of
 * the cgroup ran on a cpu while the event was counting there: the cgroup
 * was idle, or the event (its group) never got a counter.  Never read a
 * value with running 0 as a count of 0 events.
 */

struct cgcount_reading {
	uint64_t cgroup_id;	/* cgroup v2 id (the directory's file handle) */
	const char *path;	/* relative to the cgroup2 root, "/" for the root */
	size_t nr_values;	/* == cgcount_nr_events() */
	struct cgcount_value *values;	/* values[0 .. nr_values - 1] */
};

/*
 * Open a session counting @events for no cgroup yet.  @events is a
 * comma-separated list of events as perf stat -e takes them: perf's names
 * (cpu-clock, task-clock, context-switches, cpu-migrations, page-faults,
 * minor-faults, major-faults, cgroup-switches; on hardware cycles,
 * instructions, cache-references, cache-misses, branches, branch-misses,
 * ...), a PMU's event from sysfs ("cpu/event=0x3c,umask=0x0/",
 * "cpu/cycles/"), a raw config ("r1a8"), or any name libpfm4 encodes
 * ("INST_RETIRED:ANY_P", "perf::page-faults"), each with perf's modifiers
 * ":u", ":k", ":h" (count in user, kernel, hypervisor mode only).  The rstat
 * backend takes perf's names only.  Events in braces are a group, as perf
 * stat takes them ("cpu-clock,{cycles,instructions}"; no nesting, no
 * modifier after the '}'): its events are scheduled on the PMU together,
 * all or nothing, on every backend; every member of a group reads the
 * same enabled and running times in a cgroup.  A group the PMU can never
 * hold is refused when opened (EINVAL from perf_event_open on most PMUs);
 * one that fits the PMU but never gets it (other events hold counters)
 * reads as not counted.  Events are numbered in the list's order, braces
 * ignored; cgcount_event_name() gives each member's own name.  @opts may
 * be NULL.  Returns NULL with errno set on failure.
 */
CGCOUNT_API struct cgcount *cgcount_open(const char *events, const struct cgcount_opts *opts);
CGCOUNT_API void cgcount_close(struct cgcount *s);

CGCOUNT_API enum cgcount_backend cgcount_backend(const struct cgcount *s);
/*
 * Why the session counts with cgcount_backend(), for a tool to say: "asked"
 * when cgcount_opts.backend named it, else auto's reason ("auto: the kernel
 * has PERF_EVENT_IOC_ATTACH_CGROUP", "auto: no PERF_EVENT_IOC_ATTACH_CGROUP
 * in this kernel; rstat loads BPF only when asked", ...).  Valid until
 * cgcount_close().  Since 0.4.0.
 */
CGCOUNT_API const char *cgcount_backend_reason(const struct cgcount *s);
CGCOUNT_API const char *cgcount_backend_name(enum cgcount_backend b);
/* "auto", "events", "shared", "rstat" -> backend ("classic": "events"); -EINVAL if unknown */
CGCOUNT_API int cgcount_parse_backend(const char *name, enum cgcount_backend *b);
CGCOUNT_API int cgcount_nr_events(const struct cgcount *s);
CGCOUNT_API const char *cgcount_event_name(const struct cgcount *s, int idx);
CGCOUNT_API const char *cgcount_cgroup_root(const struct cgcount *s);
/* Number of cgroups counted now. */
CGCOUNT_API size_t cgcount_nr_cgroups(struct cgcount *s);

/*
 * Start counting cgroups.  A path is absolute or relative to the cgroup2
 * root ("" or "/" is the root).  Adding a cgroup already counted is a no-op
 * (its counts continue).  Return 0, or for a regex the number of cgroups
 * added (POSIX extended regex, unanchored, matched against each path as
 * relative to the root with a leading '/', e.g. "/a/b").
 */
CGCOUNT_API int cgcount_add_path(struct cgcount *s, const char *path);
CGCOUNT_API int cgcount_add_id(struct cgcount *s, uint64_t cgroup_id);
/* Several paths with one backend call (one ATTACH per event fd), all or
 * none; returns the number of cgroups added. */
CGCOUNT_API int cgcount_add_paths(struct cgcount *s, const char *const *paths, size_t nr);
CGCOUNT_API int cgcount_add_regex(struct cgcount *s, const char *regex);
/*
 * Count @path, every cgroup below it, and every cgroup created below it
 * later: cgcount_read_all() adds those it finds (they appear in its
 * readings).  A cgroup created later counts from its creation with the
 * rstat backend, and with the shared backend on a kernel with
 * PERF_ATTACH_CGROUPS_DESCENDANTS (the kernel attaches it when it is
 * created); from the cgcount_read_all() that finds it otherwise.  A cgroup
 * below it that cgcount_remove_*() stopped counting is added again by the
 * next read and counts from then.  Returns the number of cgroups added now.
 */
CGCOUNT_API int cgcount_add_subtree(struct cgcount *s, const char *path);

/* Stop counting a cgroup: -ENOENT if it is not counted. */
CGCOUNT_API int cgcount_remove_path(struct cgcount *s, const char *path);
CGCOUNT_API int cgcount_remove_id(struct cgcount *s, uint64_t cgroup_id);

/* The cgroup id of a path (the cgroup need not be counted). */
CGCOUNT_API int cgcount_cgroup_id(struct cgcount *s, const char *path, uint64_t *cgroup_id);

/*
 * Read one counted cgroup into values[0 .. cgcount_nr_events() - 1];
 * -ENOSPC if @nr_values is smaller than that.
 */
CGCOUNT_API int cgcount_read_id(struct cgcount *s, uint64_t cgroup_id,
				struct cgcount_value *values, size_t nr_values);
CGCOUNT_API int cgcount_read_path(struct cgcount *s, const char *path,
				  struct cgcount_value *values, size_t nr_values);
/*
 * Read every counted cgroup in one call (one READ_CGROUPS per event and CPU
 * for the shared backend, one iterator read for rstat).  *readings is one
 * allocation, sorted by cgroup id; free it with cgcount_readings_free().
 */
CGCOUNT_API int cgcount_read_all(struct cgcount *s, struct cgcount_reading **readings,
				 size_t *nr);
CGCOUNT_API void cgcount_readings_free(struct cgcount_reading *readings, size_t nr);

/*
 * What a session could not count, summed since cgcount_open(): each field
 * only grows, so a monitoring tool exports them as counters.  Declare with
 * CGCOUNT_OPTS(cgcount_errors, e) so that sz is right; fields are only ever
 * added at the end.
 */
struct cgcount_errors {
	size_t sz;		/* sizeof(struct cgcount_errors) */
	/* cgroups a walk (cgcount_add_regex(), _add_subtree(), their reads)
	 * left out: removed during the walk, or a directory it could not
	 * open or read */
	uint64_t walk_skipped;
	/* cgroups removed between a walk and their attach, left out of the
	 * batch that added them (the rest of the batch is counted) */
	uint64_t vanished;
	/* rstat: counts of cgroups that found no slot in the BPF maps
	 * (max_cgroups): each time a cgroup's counts could not be kept in its
	 * own slot.  They are never dropped silently: they go to the nearest
	 * ancestor that has a slot, and this counts each time. */
	uint64_t unplaced;
	size_t :0;
};
#define cgcount_errors__last_field unplaced

/* Copy the session's error counts into @errors (its sz says how much). */
CGCOUNT_API int cgcount_errors(struct cgcount *s, struct cgcount_errors *errors);

/* value scaled by enabled / running (as perf stat does); 0 if never ran */
CGCOUNT_API double cgcount_scaled(const struct cgcount_value *v);

#ifdef __cplusplus
}
#endif

#endif /* CGCOUNT_H */
