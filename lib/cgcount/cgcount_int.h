/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* cgcount internals: the session, the cgroup set, the backend operations. */
#ifndef CGCOUNT_INT_H
#define CGCOUNT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "cgcount.h"

#define CGC_PATH_MAX 4096
#define CGC_MSG_LEN 1024
/* events per session; the rstat backend takes at most CGRSTAT_MAX_EVENTS
 * of them (its BPF program's slots), the others this many */
#define CGC_MAX_EVENTS 64

struct cgc_event {
	char *name;			/* as given, e.g. "cpu-clock" */
	struct perf_event_attr attr;	/* read_format set when opened */
	int leader;			/* the first event of its group; itself if alone */
	int nr_members;			/* a leader: the events of its group (1 alone) */
};

/* One counted cgroup. */
struct cgc_cgroup {
	uint64_t id;
	char *path;			/* relative to the root, leading '/' */
	int *fds;			/* events: [event][cpu] */
	/* nr_events values each, in values[] */
	struct cgcount_value *base;	/* rstat: at add */
	struct cgcount_value *acc;	/* scratch for reads */
	struct cgcount_value *last;	/* rstat: last reading */
	int seen;			/* rstat: in this read */
	int created_later;	/* found below a subtree after it was added */
	struct cgcount_value values[];
};

struct cgcount;

struct cgc_backend_ops {
	enum cgcount_backend id;
	int (*open)(struct cgcount *s);
	void (*close)(struct cgcount *s);
	/* start counting @n new cgroups; all or nothing */
	int (*add)(struct cgcount *s, struct cgc_cgroup **cgs, size_t n);
	void (*remove)(struct cgcount *s, struct cgc_cgroup *cg);
	/* cg->acc = the cgroup's values */
	int (*read_one)(struct cgcount *s, struct cgc_cgroup *cg);
	/* every cgroup's acc = its values */
	int (*read_all)(struct cgcount *s);
	/* optional: the kernel attaches the cgroups created below @id */
	int (*watch)(struct cgcount *s, uint64_t id);
	/* with watch: undo a watch whose subtree could not be added */
	void (*unwatch)(struct cgcount *s, uint64_t id);
	/* optional: add the backend's own error counts to @e */
	void (*errors)(struct cgcount *s, struct cgcount_errors *e);
};

/* A subtree whose new cgroups each read adds (cgcount_add_subtree()). */
struct cgc_subtree {
	char *path;			/* relative to the root, leading '/' */
	uint64_t id;
};

struct cgcount {
	pthread_mutex_t lock;
	const struct cgc_backend_ops *ops;
	char root[CGC_PATH_MAX];
	int nr_events;
	struct cgc_event events[CGC_MAX_EVENTS];
	int nr_cpus;
	int *cpus;			/* online cpus (cgutil_online_cpus()) */
	struct cgc_cgroup **cgroups;	/* sorted by id */
	size_t nr_cgroups, cap_cgroups;
	int *shared_fds;		/* shared: [event][cpu] */
	int shared_grouped;		/* shared: [0][cpu] lead a group per cpu */
	uint64_t *rc_buf;		/* shared: the READ_CGROUPS buffer */
	size_t rc_size;			/* its size in bytes */
	void *rstat;			/* rstat: struct cgrstat * */
	int *rstat_fds;			/* rstat with groups: [event][cpu number] */
	int rstat_fds_cpus;		/* its cpu numbers: 0 .. this - 1 */
	size_t max_cgroups;		/* rstat: cgcount_opts.max_cgroups */
	struct cgc_subtree *subtrees;
	size_t nr_subtrees;
	/* the highest id a subtree walk saw: cgroup ids only grow */
	uint64_t subtree_last_id;
	struct cgcount_errors errors;	/* cgcount_errors(): the library's own counts */
	char backend_reason[CGC_MSG_LEN];	/* cgcount_backend_reason() */
};

/*
 * sz-versioned options, as libbpf's OPTS_VALID/OPTS_GET (libbpf_internal.h):
 * a field the caller's (older, smaller) struct does not have reads as the
 * fallback; non-zero bytes past the fields this library knows are refused.
 */
#define cgc_offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= cgc_offsetofend(typeof(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))
/* 0, -EINVAL (sz too small to be a size), -E2BIG (unknown non-zero tail) */
int cgc_opts_valid(const void *opts, size_t user_sz, size_t known_sz, const char *type);

extern const struct cgc_backend_ops cgc_events_ops;
extern const struct cgc_backend_ops cgc_shared_ops;
extern const struct cgc_backend_ops cgc_rstat_ops;

/* messages through the print callback (cgcount_set_print()) */
void cgc_print(enum cgcount_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* errors: print the message (CGCOUNT_WARN), set errno, return -err */
int cgc_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* while on (nested), cgc_err prints at CGCOUNT_DEBUG: auto's probes */
void cgc_probing(int on);
/* the level of a failure's message: CGCOUNT_WARN, CGCOUNT_DEBUG while probing */
enum cgcount_print_level cgc_warn_level(void);
/* an error from perf_event_open, with what to do about it */
int cgc_perf_open_err(int err, const char *what);

/* events */
int cgc_parse_events(struct cgcount *s, const char *list);
void cgc_free_events(struct cgcount *s);
int cgc_perf_open(const struct cgc_event *ev, int pid, int cpu, unsigned long flags);
/* @ev of @pid (-1 cpu-wide, or a cgroup's fd with PERF_FLAG_PID_CGROUP in
 * @flags) on @cpu in the group led by @group_fd, read as a group
 * (PERF_FORMAT_GROUP); @group_fd -1: a new group's leader, opened disabled,
 * to be enabled once its members are in. An fd or -errno. */
int cgc_perf_open_grouped(const struct cgc_event *ev, int pid, int cpu, int group_fd,
			  unsigned long flags);
/* events[e] leads a group of more than one event (opened PERF_FORMAT_GROUP) */
int cgc_is_group_leader(const struct cgcount *s, int e);
/* perf_event_open of event @e failed with @err: say so, naming its group if it has one */
int cgc_event_open_err(const struct cgcount *s, int e, int err);
/* 1 if the kernel has PERF_EVENT_IOC_ATTACH_CGROUP, 0 if not */
int cgc_kernel_has_shared(void);

/* the cgroup tree */
int cgc_find_root(char *root, size_t len);
/* path (absolute or relative) -> relative form with leading '/' (allocated; NULL: ENOMEM) */
char *cgc_normalize_path(const struct cgcount *s, const char *path);
/* the same (*rel) and the id of the cgroup, which must exist */
int cgc_resolve_path(const struct cgcount *s, const char *path, char **rel, uint64_t *id);
/* the path of the cgroup @id (*rel, allocated), found by a walk */
int cgc_id_to_path(const struct cgcount *s, uint64_t id, char **rel);
/* calls @fn for every cgroup whose relative path matches @regex */
typedef int (*cgc_walk_fn)(struct cgcount *s, const char *rel, uint64_t id, void *arg);
int cgc_walk_regex(struct cgcount *s, const char *regex, cgc_walk_fn fn, void *arg);
/* calls @fn for the cgroup @rel and every cgroup below it, if @rel is @id (0: any) */
int cgc_walk_below(struct cgcount *s, const char *rel, uint64_t id, cgc_walk_fn fn,
		   void *arg);
/* the directory of the cgroup @rel if it is @id (0: any): an fd, -ENOENT
 * (not printed) when it is gone, or another -errno (printed) */
int cgc_open_cgroup_dir(const struct cgcount *s, const char *rel, uint64_t id);
/* the cgroup @rel is no longer @id: removed, or another cgroup by that name */
bool cgc_cgroup_gone(const struct cgcount *s, const char *rel, uint64_t id);
/* the cgroup @id is removed (false when that cannot be known: open_by_handle_at
 * needs CAP_DAC_READ_SEARCH) */
bool cgc_cgroup_id_gone(const struct cgcount *s, uint64_t id);

/* the cgroup set */
struct cgc_cgroup *cgc_find(const struct cgcount *s, uint64_t id);
void cgc_values_add(struct cgcount_value *acc, const struct cgcount_value *v);

#endif
