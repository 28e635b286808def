// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgcount rstat backend: lib/cgrstat/cgrstat.h counts every cgroup from
 * cgrstat_open() on; a cgroup's counts since it was added are its reading
 * minus the baseline read when it was added.  With a group in the event
 * list ({cycles,instructions}) the counters are opened here, a group's as
 * one perf group per cpu (scheduled on the PMU together), and handed to
 * libcgrstat as the caller's; its BPF program reads each member's count
 * and times at every cgroup switch, one member after the other: their
 * times differ by the ns between those reads (32 ns measured on arm64),
 * so every member reports its leader's times, the group's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#include <bpf/libbpf.h>

#include "cgcount_int.h"
#include "cgrstat.h"

/* more cgroups than this are added with one read of the whole tree */
#define BASELINE_READ_ALL_MIN 8

static struct cgrstat *rs(struct cgcount *s)
{
	return s->rstat;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#define CAP_BPF 39
#endif

static int cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return !!(d[cap / 32].effective & (1U << (cap % 32)));
}

/* Loading the BPF programs needs CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN). */
static int may_load_bpf(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, d))
		return 1;	/* cannot tell: let the kernel decide */
	if (cap_effective(d, CAP_SYS_ADMIN))
		return 1;
	return cap_effective(d, CAP_BPF) && cap_effective(d, CAP_PERFMON);
}

/*
 * libcgrstat's messages go to libcgcount's print callback: its failures at
 * libcgcount's level for failures (CGCOUNT_DEBUG while auto probes), as
 * "libcgcount: rstat backend: ...", what the kernel cannot do at
 * CGCOUNT_INFO.  (libcgcount bundles its own libcgrstat: this print
 * function is this copy's alone.)
 */
static int rstat_print(enum cgrstat_print_level level, const char *fmt, va_list ap)
{
	char msg[CGC_MSG_LEN];
	const char *text = msg;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!strncmp(text, "libcgrstat: ", 12))
		text += 12;
	cgc_print(level == CGRSTAT_WARN ? cgc_warn_level() :
		  level == CGRSTAT_INFO ? CGCOUNT_INFO : CGCOUNT_DEBUG,
		  "libcgcount: rstat backend: %s", text);
	return 0;
}

/* libbpf's (the verifier's log) at CGCOUNT_DEBUG */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[CGC_MSG_LEN];

	(void)level;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	cgc_print(CGCOUNT_DEBUG, "libbpf: %s", msg);
	return 0;
}

static int has_groups(const struct cgcount *s)
{
	int e;

	for (e = 0; e < s->nr_events; e++)
		if (cgc_is_group_leader(s, e))
			return 1;
	return 0;
}

static void close_group_fds(struct cgcount *s)
{
	int i;

	for (i = 0; s->rstat_fds && i < s->nr_events * s->rstat_fds_cpus; i++)
		if (s->rstat_fds[i] >= 0)
			close(s->rstat_fds[i]);
	free(s->rstat_fds);
	s->rstat_fds = NULL;
}

/* event @e on cpu number @cpu: alone, or in its group */
static int open_counter(struct cgcount *s, int e, int cpu)
{
	const struct cgc_event *ev = &s->events[e];

	if (ev->leader == e && ev->nr_members == 1)
		return cgc_perf_open(ev, -1, cpu, 0);
	return cgc_perf_open_grouped(ev, -1, cpu, ev->leader == e ? -1 :
				     s->rstat_fds[ev->leader * s->rstat_fds_cpus + cpu], 0);
}

/* every event on every online cpu, the groups' leaders enabled last */
static int open_group_fds(struct cgcount *s)
{
	int e, c, *fd, n;

	for (c = 0; c < s->nr_cpus; c++)
		if (s->cpus[c] >= s->rstat_fds_cpus)
			s->rstat_fds_cpus = s->cpus[c] + 1;
	n = s->nr_events * s->rstat_fds_cpus;
	s->rstat_fds = malloc(n * sizeof(int));
	if (!s->rstat_fds)
		return cgc_err(ENOMEM, "out of memory");
	for (e = 0; e < n; e++)
		s->rstat_fds[e] = -1;
	for (e = 0; e < s->nr_events; e++) {
		for (c = 0; c < s->nr_cpus; c++) {
			fd = &s->rstat_fds[e * s->rstat_fds_cpus + s->cpus[c]];
			*fd = open_counter(s, e, s->cpus[c]);
			if (*fd < 0)
				return cgc_event_open_err(s, e, -*fd);
		}
	}
	for (e = 0; e < s->nr_events; e++)
		for (c = 0; c < s->nr_cpus && cgc_is_group_leader(s, e); c++)
			if (ioctl(s->rstat_fds[e * s->rstat_fds_cpus + s->cpus[c]],
				  PERF_EVENT_IOC_ENABLE, 0) < 0)
				return cgc_err(errno, "enabling the group of %s: %s",
					       s->events[e].name, strerror(errno));
	return 0;
}

/* The session's events, as parsed: handed over, never re-split. */
static int open_counters(struct cgcount *s)
{
	/* max_records: one read returns every cgroup with a slot, and the
	 * subtree's first (0: libcgrstat's defaults, which do the same) */
	CGRSTAT_OPTS(cgrstat_opts, opts, .cgroup_root = s->root, .max_cgroups = s->max_cgroups,
		     .max_records = s->max_cgroups ? s->max_cgroups + 1 : 0);
	struct cgrstat_counter counters[CGRSTAT_MAX_EVENTS] = { { 0 } };
	int i;

	if (s->nr_events > CGRSTAT_MAX_EVENTS)
		return cgc_err(E2BIG, "rstat backend: %d events, its BPF program counts at most "
			       "%d: use the events or shared backend, or one more session",
			       s->nr_events, CGRSTAT_MAX_EVENTS);
	for (i = 0; i < s->nr_events; i++)
		counters[i] = (struct cgrstat_counter){
			.name = s->events[i].name, .attr = &s->events[i].attr,
			.fds = s->rstat_fds ? &s->rstat_fds[i * s->rstat_fds_cpus] : NULL,
			.nr_cpus = s->rstat_fds_cpus,
		};
	cgrstat_set_print(rstat_print);
	libbpf_set_print(libbpf_print);
	s->rstat = cgrstat_open_counters(counters, s->nr_events, &opts);
	if (!s->rstat && !may_load_bpf())
		return cgc_err(EPERM, "rstat backend: permission denied: run as root (with "
			       "CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)");
	if (!s->rstat)
		return cgc_err(errno == E2BIG || errno == EINVAL ? errno : EOPNOTSUPP,
			       "rstat backend not available (the message before says why)");
	return 0;
}

static int rstat_open(struct cgcount *s)
{
	int ret = has_groups(s) ? open_group_fds(s) : 0;

	if (!ret)
		ret = open_counters(s);
	if (ret)
		close_group_fds(s);
	return ret;
}

static void rstat_close(struct cgcount *s)
{
	cgrstat_close(rs(s));
	s->rstat = NULL;
	close_group_fds(s);
}

static void record_values(struct cgcount *s, const struct cgrstat_value *v,
			  struct cgcount_value *out)
{
	int e, l;

	/* a group's members: the leader's times, which are the group's (see above) */
	for (e = 0; e < s->nr_events; e++) {
		l = s->events[e].leader;
		out[e] = (struct cgcount_value){ v[e].counter, v[l].enabled, v[l].running };
	}
}

static int read_one_record(struct cgcount *s, struct cgc_cgroup *cg, struct cgcount_value *out)
{
	struct cgrstat_value v[CGRSTAT_MAX_EVENTS];
	int ret = cgrstat_read_cgroup_id(rs(s), cg->id, v, CGRSTAT_MAX_EVENTS);

	if (ret == -ENOENT) {
		cgc_print(CGCOUNT_DEBUG, "rstat backend: cgroup %s was removed\n", cg->path);
		return ret;	/* the caller says what it does */
	}
	if (ret)
		return cgc_err(-ret, "rstat backend: cannot read %s: %s", cg->path, strerror(-ret));
	record_values(s, v, out);
	return 0;
}

/* Cut @path ("/a/b") to its longest ancestor that also contains @other. */
static void cut_to_common(char *path, const char *other)
{
	size_t k = 0;

	while (path[k] && path[k] == other[k])
		k++;
	if (!path[k] && (other[k] == '/' || !other[k]))
		return;
	while (k > 0 && path[k] != '/')
		k--;
	path[k] = '\0';
}

/* @common cut to its parent ("/a" to "/"): 0, or -1 at the root */
static int cut_to_parent(char *common)
{
	char *slash = strrchr(common, '/');

	if (!slash || !strcmp(common, "/"))
		return -1;
	if (slash == common)
		slash[1] = '\0';
	else
		*slash = '\0';
	return 0;
}

/* The subtree read of @common (relative to the root): -ENOENT if it is gone */
static int read_common(struct cgcount *s, const char *common,
		       struct cgrstat_record **recs, size_t *nr)
{
	struct stat st;
	char *full;
	int ret;

	if (asprintf(&full, "%s%s", s->root, strcmp(common, "/") ? common : "") < 0)
		return -ENOMEM;
	if (stat(full, &st) && errno == ENOENT)
		ret = -ENOENT;	/* without libcgrstat's message: climb instead */
	else
		ret = cgrstat_read_subtree(rs(s), full, recs, nr);
	free(full);
	return ret;
}

/*
 * The records of @cgs with one iterator read: of the subtree of their
 * deepest common ancestor (the whole tree when they are spread out).
 * libcgrstat opens it by path: past PATH_MAX, the nearest ancestor within
 * it, whose subtree holds them too.  An ancestor removed meanwhile (a
 * counted cgroup restarted under its name, the only one counted) gives
 * way to its parent: one step per level, never a loop on one path.
 */
static int read_tree(struct cgcount *s, struct cgc_cgroup **cgs, size_t n,
		     struct cgrstat_record **recs, size_t *nr)
{
	char *common = strdup(n ? cgs[0]->path : "/"), *slash;
	size_t i;
	int ret;

	if (!common)
		return cgc_err(ENOMEM, "out of memory");
	for (i = 1; i < n; i++)
		cut_to_common(common, cgs[i]->path);
	while (strlen(s->root) + strlen(common) >= CGC_PATH_MAX && (slash = strrchr(common, '/')))
		*slash = '\0';
	do
		ret = read_common(s, common, recs, nr);
	while (ret == -ENOENT && !cut_to_parent(common));
	free(common);

	if (ret)
		return cgc_err(-ret, "rstat backend: cannot read the cgroups (%s)", strerror(-ret));
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct cgc_cgroup *x = *(struct cgc_cgroup *const *)a;
	const struct cgc_cgroup *y = *(struct cgc_cgroup *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* @cgs sorted by id: the position of the cgroup with id @id, or @n */
static size_t position_in(struct cgc_cgroup **cgs, size_t n, uint64_t id)
{
	struct cgc_cgroup key = { .id = id }, *k = &key, **found;

	found = bsearch(&k, cgs, n, sizeof(*cgs), by_id);
	return found ? (size_t)(found - cgs) : n;
}

/*
 * The tree's read leaves out the cgroups without a slot in libcgrstat's
 * maps (they read 0): each of @cgs it did not return is read alone, which
 * fails for one that vanished.
 */
static int baseline_from_tree(struct cgcount *s, struct cgc_cgroup **cgs, size_t n)
{
	struct cgrstat_value v[CGRSTAT_MAX_EVENTS];
	struct cgrstat_record *recs;
	size_t nr, i, k, vanished = 0;
	int ret = read_tree(s, cgs, n, &recs, &nr);
	char *found;

	if (ret)
		return ret;
	found = calloc(n ? n : 1, 1);
	if (!found) {
		free(recs);
		return cgc_err(ENOMEM, "out of memory");
	}
	qsort(cgs, n, sizeof(*cgs), by_id);
	for (i = 0; i < nr; i++) {
		k = position_in(cgs, n, recs[i].cgroup_id);
		if (k == n)
			continue;
		if (!cgs[k]->created_later)
			record_values(s, recs[i].values, cgs[k]->base);
		found[k] = 1;
	}
	free(recs);
	for (k = 0; k < n; k++) {
		if (found[k])
			continue;
		if (cgrstat_read_cgroup_id(rs(s), cgs[k]->id, v, CGRSTAT_MAX_EVENTS))
			vanished++;
		else if (!cgs[k]->created_later)
			record_values(s, v, cgs[k]->base);
	}
	free(found);
	if (!vanished)
		return 0;
	cgc_print(CGCOUNT_DEBUG, "rstat backend: %zu of %zu cgroups removed while being added\n",
		  vanished, n);
	return -ENOENT;	/* the caller says what it does */
}

static int rstat_add(struct cgcount *s, struct cgc_cgroup **cgs, size_t n)
{
	size_t i;
	int ret = 0;

	if (n > BASELINE_READ_ALL_MIN)
		return baseline_from_tree(s, cgs, n);
	for (i = 0; i < n && !ret; i++) {
		/* every cgroup counts from its creation: none to subtract */
		if (!cgs[i]->created_later)
			ret = read_one_record(s, cgs[i], cgs[i]->base);
	}
	return ret;
}

static void rstat_remove(struct cgcount *s, struct cgc_cgroup *cg)
{
	(void)s;
	(void)cg;
}

static void minus_base(struct cgcount *s, struct cgc_cgroup *cg, const struct cgcount_value *now)
{
	int e;

	for (e = 0; e < s->nr_events; e++) {
		cg->acc[e].value = now[e].value - cg->base[e].value;
		cg->acc[e].enabled = now[e].enabled - cg->base[e].enabled;
		cg->acc[e].running = now[e].running - cg->base[e].running;
	}
}

static int rstat_read_one(struct cgcount *s, struct cgc_cgroup *cg)
{
	struct cgcount_value now[CGRSTAT_MAX_EVENTS];
	int ret;

	ret = read_one_record(s, cg, now);

	if (!ret)
		minus_base(s, cg, now);
	return ret;
}

/* A removed cgroup is not in the tree any more: report its last reading. */
static void keep_last_of_removed(struct cgcount *s)
{
	struct cgc_cgroup *cg;
	size_t i;

	for (i = 0; i < s->nr_cgroups; i++) {
		cg = s->cgroups[i];
		if (cg->seen)
			memcpy(cg->last, cg->acc, s->nr_events * sizeof(*cg->last));
		else
			memcpy(cg->acc, cg->last, s->nr_events * sizeof(*cg->acc));
		cg->seen = 0;
	}
}

static int rstat_read_all(struct cgcount *s)
{
	struct cgcount_value now[CGRSTAT_MAX_EVENTS];
	struct cgrstat_record *recs;
	struct cgc_cgroup *cg;
	size_t nr, i;
	int ret;

	ret = read_tree(s, s->cgroups, s->nr_cgroups, &recs, &nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		cg = cgc_find(s, recs[i].cgroup_id);
		if (!cg)
			continue;
		record_values(s, recs[i].values, now);
		minus_base(s, cg, now);
		cg->seen = 1;
	}
	free(recs);
	keep_last_of_removed(s);
	return 0;
}

/*
 * Counts of cgroups that found no slot in libcgrstat's maps went to their
 * nearest ancestor with one (or, with none, to no cgroup): never a read's
 * failure, reported here.
 */
static void rstat_errors(struct cgcount *s, struct cgcount_errors *e)
{
	struct cgrstat_stats st;

	if (!rs(s))
		return;
	cgrstat_get_stats(rs(s), &st);
	e->unplaced += st.unplaced + st.unattributed_charges;
}

const struct cgc_backend_ops cgc_rstat_ops = {
	.id = CGCOUNT_RSTAT,
	.open = rstat_open,
	.close = rstat_close,
	.add = rstat_add,
	.remove = rstat_remove,
	.read_one = rstat_read_one,
	.read_all = rstat_read_all,
	.errors = rstat_errors,
};
