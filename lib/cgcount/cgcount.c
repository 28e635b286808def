// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgcount: sessions, the set of counted cgroups, the public API. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgset.h"
#include "cgutil.h"

static const char *const backend_names[] = {
	[CGCOUNT_AUTO] = "auto",
	[CGCOUNT_EVENTS] = "events",
	[CGCOUNT_SHARED] = "shared",
	[CGCOUNT_RSTAT] = "rstat",
};

uint32_t cgcount_major_version(void)
{
	return CGCOUNT_MAJOR_VERSION;
}

uint32_t cgcount_minor_version(void)
{
	return CGCOUNT_MINOR_VERSION;
}

#define STR(x) #x
#define XSTR(x) STR(x)

const char *cgcount_version_string(void)
{
	return "v" XSTR(CGCOUNT_MAJOR_VERSION) "." XSTR(CGCOUNT_MINOR_VERSION) "."
	       XSTR(CGCOUNT_PATCH_VERSION);
}

const char *cgcount_backend_name(enum cgcount_backend b)
{
	if ((unsigned int)b >= sizeof(backend_names) / sizeof(backend_names[0]))
		return "unknown";
	return backend_names[b];
}

int cgcount_parse_backend(const char *name, enum cgcount_backend *b)
{
	unsigned int i;

	for (i = 0; i < sizeof(backend_names) / sizeof(backend_names[0]); i++) {
		if (name && !strcmp(name, backend_names[i])) {
			*b = i;
			return 0;
		}
	}
	if (name && !strcmp(name, "classic")) {	/* the old name of events */
		*b = CGCOUNT_EVENTS;
		return 0;
	}
	return cgc_err(EINVAL, "unknown backend '%s': use auto, events, shared or rstat",
		       name ? name : "");
}

/* ---- adding ---- */

static int add_locked(struct cgcount *s, const char *rel, uint64_t id)
{
	struct cgc_pending p = { 0 };
	int ret = cgc_pending_add(s, rel, id, &p);

	if (!ret)
		ret = cgc_pending_commit(s, &p);
	cgc_pending_free(&p);
	return ret < 0 ? ret : 0;
}

int cgcount_add_path(struct cgcount *s, const char *path)
{
	char *rel;
	uint64_t id;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = cgc_resolve_path(s, path, &rel, &id);
	if (!ret)
		ret = add_locked(s, rel, id);
	pthread_mutex_unlock(&s->lock);
	free(rel);
	return ret;
}

int cgcount_add_paths(struct cgcount *s, const char *const *paths, size_t nr)
{
	struct cgc_pending p = { 0 };
	char *rel;
	uint64_t id;
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < nr && !ret; i++) {
		ret = cgc_resolve_path(s, paths[i], &rel, &id);
		if (!ret)
			ret = cgc_pending_add(s, rel, id, &p);
		free(rel);
	}
	if (!ret) {
		cgc_pending_dedup(&p);
		ret = cgc_pending_commit(s, &p);
	}
	pthread_mutex_unlock(&s->lock);
	cgc_pending_free(&p);
	return ret;
}

int cgcount_add_id(struct cgcount *s, uint64_t cgroup_id)
{
	char *rel = NULL;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = cgc_find(s, cgroup_id) ? 0 : cgc_id_to_path(s, cgroup_id, &rel);
	if (!ret && !cgc_find(s, cgroup_id))
		ret = add_locked(s, rel, cgroup_id);
	pthread_mutex_unlock(&s->lock);
	free(rel);
	return ret;
}

int cgcount_add_regex(struct cgcount *s, const char *regex)
{
	struct cgc_pending p = { .walked = true };
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = cgc_walk_regex(s, regex, cgc_pending_add, &p);
	if (!ret)
		ret = cgc_pending_commit(s, &p);
	pthread_mutex_unlock(&s->lock);
	cgc_pending_free(&p);
	return ret;
}

/* ---- removing ---- */

static int remove_locked(struct cgcount *s, uint64_t id)
{
	struct cgc_cgroup *cg = cgc_find(s, id);

	if (!cg)
		return cgc_err(ENOENT, "cgroup id %llu is not counted by this session",
			       (unsigned long long)id);
	s->ops->remove(s, cg);
	cgc_set_delete(s, id);
	cgc_cgroup_free(cg);
	return 0;
}

int cgcount_remove_id(struct cgcount *s, uint64_t cgroup_id)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = remove_locked(s, cgroup_id);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* By path: the counted cgroup of that name (it may be gone from the tree). */
static struct cgc_cgroup *find_by_rel(const struct cgcount *s, const char *rel)
{
	size_t i;

	for (i = 0; i < s->nr_cgroups; i++)
		if (!strcmp(s->cgroups[i]->path, rel))
			return s->cgroups[i];
	return NULL;
}

static int lookup_path(struct cgcount *s, const char *path, uint64_t *id)
{
	struct cgc_cgroup *cg = NULL;
	char *rel;
	int ret = cgc_resolve_path(s, path, &rel, id);

	free(rel);
	if (!ret && cgc_find(s, *id))
		return 0;
	rel = path ? cgc_normalize_path(s, path) : NULL;
	if (rel)
		cg = find_by_rel(s, rel);
	free(rel);
	if (cg) {
		*id = cg->id;
		return 0;
	}
	return ret ? ret : cgc_err(ENOENT, "cgroup '%s' is not counted by this session: add it first", path);
}

int cgcount_remove_path(struct cgcount *s, const char *path)
{
	uint64_t id;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = lookup_path(s, path, &id);
	if (!ret)
		ret = remove_locked(s, id);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int cgcount_cgroup_id(struct cgcount *s, const char *path, uint64_t *cgroup_id)
{
	char *rel;
	int ret = cgc_resolve_path(s, path, &rel, cgroup_id);

	free(rel);
	return ret;
}

/* ---- reading ---- */

static int read_locked(struct cgcount *s, uint64_t id, struct cgcount_value *values,
		       size_t nr_values)
{
	struct cgc_cgroup *cg = cgc_find(s, id);
	int ret;

	if (nr_values < (size_t)s->nr_events)
		return cgc_err(ENOSPC, "room for %zu values, the session counts %d events",
			       nr_values, s->nr_events);
	if (!cg)
		return cgc_err(ENOENT, "cgroup id %llu is not counted by this session: "
			       "add it first", (unsigned long long)id);
	memset(cg->acc, 0, s->nr_events * sizeof(*cg->acc));
	ret = s->ops->read_one(s, cg);
	if (!ret)
		memcpy(values, cg->acc, s->nr_events * sizeof(*values));
	return ret;
}

int cgcount_read_id(struct cgcount *s, uint64_t cgroup_id,
		    struct cgcount_value *values, size_t nr_values)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = read_locked(s, cgroup_id, values, nr_values);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int cgcount_read_path(struct cgcount *s, const char *path,
		      struct cgcount_value *values, size_t nr_values)
{
	uint64_t id;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = lookup_path(s, path, &id);
	if (!ret)
		ret = read_locked(s, id, values, nr_values);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void cgcount_readings_free(struct cgcount_reading *readings, size_t nr)
{
	(void)nr;
	free(readings);
}

/*
 * The readings in one allocation: the array, then every cgroup's values,
 * then the paths.
 */
static int copy_readings(struct cgcount *s, struct cgcount_reading **out, size_t *nr)
{
	size_t n = s->nr_cgroups, ne = s->nr_events, paths = 0, i, len;
	struct cgcount_reading *r;
	struct cgcount_value *v;
	char *p;

	for (i = 0; i < n; i++)
		paths += strlen(s->cgroups[i]->path) + 1;
	r = malloc(n * (sizeof(*r) + ne * sizeof(*v)) + paths + 1);
	if (!r)
		return cgc_err(ENOMEM, "out of memory");
	v = (struct cgcount_value *)(r + n);
	p = (char *)(v + n * ne);
	for (i = 0; i < n; i++) {
		len = strlen(s->cgroups[i]->path) + 1;
		r[i] = (struct cgcount_reading){ .cgroup_id = s->cgroups[i]->id, .path = p,
						 .nr_values = ne, .values = v + i * ne };
		memcpy(r[i].values, s->cgroups[i]->acc, ne * sizeof(*v));
		memcpy(p, s->cgroups[i]->path, len);
		p += len;
	}
	*out = r;
	*nr = n;
	return 0;
}

int cgcount_read_all(struct cgcount *s, struct cgcount_reading **readings, size_t *nr)
{
	size_t i;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = cgc_subtrees_walk(s);
	for (i = 0; i < s->nr_cgroups; i++)
		memset(s->cgroups[i]->acc, 0, s->nr_events * sizeof(*s->cgroups[i]->acc));
	if (!ret && s->nr_cgroups)
		ret = s->ops->read_all(s);
	if (!ret)
		ret = copy_readings(s, readings, nr);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

double cgcount_scaled(const struct cgcount_value *v)
{
	/* as perf stat (perf_counts_values__scale()): an integer count */
	if (!v->running)
		return 0;
	if (v->running >= v->enabled)
		return (double)v->value;
	return (double)(uint64_t)((double)v->value * v->enabled / v->running);
}

/* ---- sessions ---- */

int cgc_opts_valid(const void *opts, size_t user_sz, size_t known_sz, const char *type)
{
	const char *p = opts;
	size_t i;

	if (!opts)
		return 0;
	if (user_sz < sizeof(size_t))
		return cgc_err(EINVAL, "%s.sz is %zu: set it to sizeof(struct %s) "
			       "(CGCOUNT_OPTS does)", type, user_sz, type);
	for (i = known_sz; i < user_sz; i++) {
		if (p[i])
			return cgc_err(E2BIG, "%s has a field at byte %zu that libcgcount %s "
				       "does not know: built against a newer header?", type, i,
				       cgcount_version_string());
	}
	return 0;
}

static int load_cpus(struct cgcount *s)
{
	int ret = cgutil_online_cpus(&s->cpus);

	if (ret < 0)
		return cgc_err(-ret, "cannot read the online cpus (/sys/devices/system/cpu/online): %s",
			       strerror(-ret));
	s->nr_cpus = ret;
	return 0;
}

/*
 * auto: shared if the kernel has the ioctls, else events, as perf's
 * --cgroup-backend=auto.  rstat, which loads BPF programs that run at every
 * context switch, only when asked.  Why: cgcount_backend_reason().
 */
static int open_auto(struct cgcount *s)
{
	int has_shared = cgc_kernel_has_shared(), ret;

	if (has_shared < 0)
		return cgc_perf_open_err(-has_shared, "cpu-clock on a cpu");
	if (has_shared) {
		s->ops = &cgc_shared_ops;
		cgc_probing(1);
		ret = s->ops->open(s);
		cgc_probing(0);
		if (!ret) {
			snprintf(s->backend_reason, sizeof(s->backend_reason),
				 "auto: the kernel has PERF_EVENT_IOC_ATTACH_CGROUP");
			return 0;
		}
		snprintf(s->backend_reason, sizeof(s->backend_reason),
			 "auto: shared could not open these events (%s); rstat loads BPF only "
			 "when asked", strerror(-ret));
	} else {
		snprintf(s->backend_reason, sizeof(s->backend_reason),
			 "auto: no PERF_EVENT_IOC_ATTACH_CGROUP in this kernel; rstat loads BPF "
			 "only when asked");
	}
	s->ops = &cgc_events_ops;
	return s->ops->open(s);
}

static int open_backend(struct cgcount *s, enum cgcount_backend b)
{
	snprintf(s->backend_reason, sizeof(s->backend_reason), "asked");
	switch (b) {
	case CGCOUNT_AUTO:
		return open_auto(s);
	case CGCOUNT_EVENTS:
		s->ops = &cgc_events_ops;
		break;
	case CGCOUNT_SHARED:
		s->ops = &cgc_shared_ops;
		break;
	case CGCOUNT_RSTAT:
		s->ops = &cgc_rstat_ops;
		break;
	default:
		return cgc_err(EINVAL, "unknown backend %d", b);
	}
	return s->ops->open(s);
}

static int session_init(struct cgcount *s, const char *events, const struct cgcount_opts *o)
{
	const char *root = OPTS_GET(o, cgroup_root, NULL);
	int ret = cgc_parse_events(s, events);

	if (ret)
		return ret;
	s->max_cgroups = OPTS_GET(o, max_cgroups, 0);
	if (root && strlen(root) >= sizeof(s->root))
		return cgc_err(ENAMETOOLONG, "cgcount_opts.cgroup_root is longer than PATH_MAX");
	if (root && !cgutil_is_cgroup2(root))
		return cgc_err(ENOENT, "cgcount_opts.cgroup_root %s is not a cgroup2 mount", root);
	if (root)
		snprintf(s->root, sizeof(s->root), "%s", root);
	else
		ret = cgc_find_root(s->root, sizeof(s->root));
	if (!ret)
		ret = load_cpus(s);
	if (!ret)
		ret = open_backend(s, OPTS_GET(o, backend, CGCOUNT_AUTO));
	return ret;
}

struct cgcount *cgcount_open(const char *events, const struct cgcount_opts *opts)
{
	struct cgcount *s;
	int ret = cgc_opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts), "cgcount_opts");

	if (ret) {
		errno = -ret;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		cgc_err(ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	ret = session_init(s, events, opts);
	if (ret) {
		s->ops = NULL;
		cgcount_close(s);
		errno = -ret;
		return NULL;
	}
	return s;
}

void cgcount_close(struct cgcount *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_cgroups; i++) {
		if (s->ops)
			s->ops->remove(s, s->cgroups[i]);
		cgc_cgroup_free(s->cgroups[i]);
	}
	if (s->ops)
		s->ops->close(s);
	free(s->cgroups);
	free(s->cpus);
	cgc_subtrees_free(s);
	cgc_free_events(s);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

enum cgcount_backend cgcount_backend(const struct cgcount *s)
{
	return s->ops->id;
}

const char *cgcount_backend_reason(const struct cgcount *s)
{
	return s->backend_reason;
}

int cgcount_nr_events(const struct cgcount *s)
{
	return s->nr_events;
}

const char *cgcount_event_name(const struct cgcount *s, int idx)
{
	return idx >= 0 && idx < s->nr_events ? s->events[idx].name : NULL;
}

const char *cgcount_cgroup_root(const struct cgcount *s)
{
	return s->root;
}

size_t cgcount_nr_cgroups(struct cgcount *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->nr_cgroups;
	pthread_mutex_unlock(&s->lock);
	return n;
}
