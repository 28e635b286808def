// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libcgrstat's session: what the kernel offers, the BPF object loaded and
 * attached for it, the counters handed to the program, and the library's
 * printing and version.  The readers are in cgrstat_read.c, the tracked
 * cgroups and the statistics in cgrstat_track.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgrstat.h"
#include "cgrstat_int.h"
#include "cgutil.h"
#include "cgrstat.skel.h"

#define DEFAULT_MAX_RECORDS 16384
/* 6.1's hash of cgroup entries: proxy entries beyond 2 x max_cgroups */
#define PROXY_ROOM 4096
#define DEFAULT_FLUSH_HOOK "bpf_rstat_flush"

uint32_t cgrstat_major_version(void)
{
	return CGRSTAT_MAJOR_VERSION;
}

uint32_t cgrstat_minor_version(void)
{
	return CGRSTAT_MINOR_VERSION;
}

#define STR(x) #x
#define XSTR(x) STR(x)

const char *cgrstat_version_string(void)
{
	return "v" XSTR(CGRSTAT_MAJOR_VERSION) "." XSTR(CGRSTAT_MINOR_VERSION) "."
	       XSTR(CGRSTAT_PATCH_VERSION);
}

static int default_print(enum cgrstat_print_level level, const char *fmt, va_list ap)
{
	if (level == CGRSTAT_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static cgrstat_print_fn_t print_fn = default_print;

cgrstat_print_fn_t cgrstat_set_print(cgrstat_print_fn_t fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_SEQ_CST);
}

void cgrstat__print(enum cgrstat_print_level level, const char *fmt, ...)
{
	cgrstat_print_fn_t fn = __atomic_load_n(&print_fn, __ATOMIC_SEQ_CST);
	int saved = errno;
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
	errno = saved;
}

int cgrstat__fail(int errnum, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgrstat__print(CGRSTAT_WARN, "libcgrstat: %s\n", msg);
	return -abs(errnum);
}

int cgrstat__refused(int err)
{
	return err == EPERM || err == EACCES || err == ENOMEM ? err : EOPNOTSUPP;
}

/*
 * sz-versioned options, as libbpf's OPTS_VALID and OPTS_GET: a field the
 * caller's (older, smaller) struct lacks reads as @fallback; non-zero bytes
 * past cgrstat_opts__last_field are a newer header's fields.
 */
#define cgrstat_opts__last_field cgroup_root
#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#define OPTS_GET(opts, field, fallback)						\
	((opts) && (opts)->sz >= offsetofend(struct cgrstat_opts, field) ?	\
	 (opts)->field : (fallback))

/* 0, -EINVAL (sz too small to be a size), -E2BIG (unknown non-zero tail) */
static int opts_valid(const struct cgrstat_opts *opts)
{
	size_t known = offsetofend(struct cgrstat_opts, cgrstat_opts__last_field), i;
	const char *p = (const char *)opts;

	if (!opts)
		return 0;
	if (opts->sz < sizeof(size_t))
		return fail(EINVAL, "cgrstat_opts.sz is %zu: set it to sizeof(struct "
			    "cgrstat_opts) (CGRSTAT_OPTS does)", opts->sz);
	for (i = known; i < opts->sz; i++)
		if (p[i])
			return fail(E2BIG, "cgrstat_opts has a field at byte %zu that "
				    "libcgrstat %s does not know: built against a newer "
				    "header?", i, cgrstat_version_string());
	return 0;
}

static void add_event(struct cgrstat *s, const struct cgrstat_counter *c)
{
	struct event_desc *ev = &s->events[s->nr_events++];

	snprintf(ev->name, sizeof(ev->name), "%s", c->name ? c->name : "");
	ev->own = !c->fds;
	if (c->attr) {
		ev->attr = *c->attr;
	} else {
		ev->attr.type = c->type;
		ev->attr.config = c->config;
	}
	ev->attr.size = sizeof(ev->attr);
	ev->attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

static int find_cgroup2_root(struct cgrstat *s, const char *hint)
{
	int ret;

	if (hint) {
		snprintf(s->root, sizeof(s->root), "%s", hint);
		return 0;
	}
	ret = cgutil_cgroup2_root(s->root, sizeof(s->root));
	if (ret == -ENAMETOOLONG)
		return fail(ret, "the cgroup2 mount point is longer than %zu bytes",
			    sizeof(s->root));
	if (ret)
		return fail(ret, "no cgroup2 file system mounted "
			    "(mount -t cgroup2 none /sys/fs/cgroup)");
	return 0;
}

void cgrstat__resolve_path(const struct cgrstat *s, const char *path, char *out, size_t len)
{
	if (path && path[0] == '/' && strncmp(path, s->root, strlen(s->root)) == 0)
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s/%s", s->root, path ? path : "");
}

int cgrstat_cgroup_id(const struct cgrstat *s, const char *path, uint64_t *id)
{
	char full[PATH_MAX];

	cgrstat__resolve_path(s, path, full, sizeof(full));
	return cgutil_cgroup_id(full, id);
}

/* What the running kernel offers, from its BTF and version. */
struct kernel_features {
	bool css_rstat;		/* 6.16+: css_rstat_updated/flush */
	bool trusted_args;	/* 7.0+: kfuncs take trusted arguments only */
	bool move_hook;		/* css_set_move_task is not inlined */
	bool cgrp_storage;	/* 6.2+: cgroup local storage */
};

static bool btf_has_func(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) >= 0;
}

/* From 7.0 on every kfunc takes trusted arguments (KF_TRUSTED_ARGS became
 * the default); no BTF type tells, the version does. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static int check_kernel(const char *hook, struct kernel_features *kf)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int ret = 0;

	if (!btf)
		return fail(EOPNOTSUPP, "kernel BTF not found (/sys/kernel/btf/vmlinux): "
			    "this needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	kf->css_rstat = btf_has_func(btf, "css_rstat_updated");
	kf->trusted_args = kernel_at_least(7, 0);
	kf->move_hook = btf_has_func(btf, "css_set_move_task");
	kf->cgrp_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_CGRP_STORAGE, NULL) == 1;
	if (!btf_has_func(btf, hook))
		ret = fail(EOPNOTSUPP, "kernel lacks the rstat hook: no function '%s' in its BTF "
			   "(needs Linux 6.1+ with BPF rstat support)", hook);
	else if (!kf->css_rstat && !btf_has_func(btf, "cgroup_rstat_updated"))
		ret = fail(EOPNOTSUPP, "kernel lacks the rstat kfunc: neither 'cgroup_rstat_updated' "
			   "(6.1-6.15) nor 'css_rstat_updated' (6.16+) is in its BTF");
	else if (kf->trusted_args && !btf_has_func(btf, "bpf_cgroup_acquire"))
		ret = fail(EOPNOTSUPP, "kernel lacks the kfunc 'bpf_cgroup_acquire' that its "
			   "trusted-argument rules need");
	else if (!btf_has_func(btf, "bpf_iter_cgroup") &&
		 btf__find_by_name_kind(btf, "bpf_iter__cgroup", BTF_KIND_STRUCT) < 0)
		ret = fail(EOPNOTSUPP, "kernel lacks the cgroup iterator (bpf_iter__cgroup, Linux 6.1+)");
	btf__free(btf);
	return ret;
}

/* 0, 1 for an offline cpu (nothing to count there), or -errno */
static int open_counter(struct cgrstat *s, int ev, int cpu, int *fd)
{
	int ret = cgutil_perf_open(&s->events[ev].attr, -1, cpu, -1, 0);

	if (ret >= 0) {
		*fd = ret;
		return 0;
	}
	if (ret == -ENODEV)
		return 1;
	/* an event this machine cannot count is not the caller's EINVAL */
	if (ret == -ENOENT || ret == -EINVAL || ret == -EOPNOTSUPP)
		return fail(EOPNOTSUPP, "event '%s' is not supported on cpu %d: %s",
			    s->events[ev].name, cpu, cgutil_perf_open_advice(-ret));
	return fail(-ret, "cannot open event '%s' on cpu %d: %s", s->events[ev].name, cpu,
		    cgutil_perf_open_advice(-ret));
}

/* The counters given without fds: open them on every cpu. */
static int open_own_counters(struct cgrstat *s)
{
	int ev, cpu, ret;

	for (ev = 0; ev < s->nr_events; ev++) {
		for (cpu = 0; cpu < s->nr_cpus && s->events[ev].own; cpu++) {
			ret = open_counter(s, ev, cpu, &s->perf_fds[ev * s->nr_cpus + cpu]);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Hand the counters of s->perf_fds to the BPF program. */
static int install_fds(struct cgrstat *s)
{
	int map_fd = bpf_map__fd(s->skel->maps.events);
	int ev, cpu;

	for (ev = 0; ev < s->nr_events; ev++) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			__u32 key = ev * s->nr_cpus + cpu;

			if (s->perf_fds[key] < 0)
				continue;
			if (bpf_map_update_elem(map_fd, &key, &s->perf_fds[key], BPF_ANY))
				return fail(errno, "cannot put event '%s' of cpu %d in the BPF map: %s",
					    s->events[ev].name, cpu, strerror(errno));
		}
	}
	return 0;
}

/* The caller's counters: fds[cpu] of each, -1 where none (opened later
 * by open_own_counters() when a counter has no fds). */
static int take_counters(struct cgrstat *s, const struct cgrstat_counter *counters, int nr)
{
	int i, cpu;

	if (nr <= 0 || !counters)
		return fail(EINVAL, "no counters given");
	if (nr > CGRSTAT_MAX_EVENTS)
		return fail(E2BIG, "%d events: the rstat backend's BPF program counts at most "
			    "%d in one session", nr, CGRSTAT_MAX_EVENTS);
	s->perf_fds = malloc(sizeof(int) * nr * s->nr_cpus);
	if (!s->perf_fds)
		return fail(ENOMEM, "out of memory");
	for (i = 0; i < nr; i++) {
		add_event(s, &counters[i]);
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			s->perf_fds[i * s->nr_cpus + cpu] =
				counters[i].fds && cpu < counters[i].nr_cpus ? counters[i].fds[cpu] : -1;
	}
	return 0;
}

/* Map @nr entries of @size bytes of the BPF array @map read-only. */
static const void *map_array(const struct bpf_map *map, size_t nr, size_t size, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = (nr * size + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (p == MAP_FAILED) {
		*len = 0;
		return NULL;
	}
	return p;
}

/* The records the readers write, and the cpus' notes they pick cpus by */
static int map_records(struct cgrstat *s)
{
	s->records = map_array(s->skel->maps.records, s->max_records, sizeof(*s->records),
			       &s->records_len);
	if (s->records)
		s->tails = map_array(s->skel->maps.cpu_tails, s->nr_cpus, sizeof(*s->tails),
				     &s->tails_len);
	return s->records && s->tails ? 0 : -errno;
}

static void set_events(struct cgrstat *s, struct cgrstat_bpf *skel)
{
	int i;

	skel->rodata->nr_events = s->nr_events;
	skel->rodata->software_only = true;
	for (i = 0; i < s->nr_events; i++) {
		const struct perf_event_attr *attr = &s->events[i].attr;

		if (attr->type != PERF_TYPE_SOFTWARE)
			skel->rodata->software_only = false;
		memcpy((char *)skel->rodata->event_names[i], s->events[i].name,
		       sizeof(skel->rodata->event_names[i]));
		if (attr->type == PERF_TYPE_SOFTWARE &&
		    (attr->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
		     attr->config == PERF_COUNT_SW_CGROUP_SWITCHES))
			skel->rodata->switch_events |= 1U << i;
	}
}

/* Open the BPF object and size it for this session and kernel. */
static int open_bpf(struct cgrstat *s, const struct kernel_features *kf, bool with_move_hook,
		    uint32_t max_cgroups, const char *hook)
{
	struct cgrstat_bpf *skel;

	skel = cgrstat_bpf__open();
	if (!skel)
		return fail(errno, "cannot open the BPF object: %s", strerror(errno));
	s->skel = skel;
	skel->rodata->nr_cpus = s->nr_cpus;
	skel->rodata->have_css_rstat = kf->css_rstat;
	skel->rodata->kfunc_args_trusted = kf->trusted_args;
	skel->rodata->have_cgrp_storage = kf->cgrp_storage;
	skel->rodata->max_cgroups = max_cgroups;
	set_events(s, skel);
	bpf_program__set_autoload(skel->progs.cgrstat_migrate, with_move_hook);
	/* only text reads need it: verified on first use (cgrstat_read.c) */
	bpf_program__set_autoload(skel->progs.cgrstat_dump_text, false);
	bpf_map__set_max_entries(skel->maps.events, s->nr_events * s->nr_cpus);
	bpf_map__set_max_entries(skel->maps.read_seqs, s->nr_cpus);
	bpf_map__set_max_entries(skel->maps.cpu_tails, s->nr_cpus);
	bpf_map__set_max_entries(skel->maps.overlay, s->nr_cpus * CGRSTAT_MAX_LEVELS);
	bpf_map__set_max_entries(skel->maps.overlay_keys, s->nr_cpus * CGRSTAT_MAX_LEVELS);
	/* a cgroup's index: cgroup storage (6.2+) or a hash by id (6.1);
	 * libbpf leaves the other map out and the branches using it are dead */
	bpf_map__set_autocreate(skel->maps.cgrp_index, kf->cgrp_storage);
	bpf_map__set_autocreate(skel->maps.cgrp_index_by_id, !kf->cgrp_storage);
	/* the indices, and as many proxy entries and some (max_cgroups is at
	 * most MAX_MAX_CGROUPS: no overflow) */
	bpf_map__set_max_entries(skel->maps.cgrp_index_by_id,
				 max_cgroups * 2 < UINT32_MAX - PROXY_ROOM ?
				 max_cgroups * 2 + PROXY_ROOM : UINT32_MAX);
	bpf_map__set_max_entries(skel->maps.cgrp_slots, max_cgroups);
	bpf_map__set_max_entries(skel->maps.cgrp_totals, max_cgroups);
	bpf_map__set_max_entries(skel->maps.free_indices, max_cgroups);
	/* only the events in use */
	bpf_map__set_value_size(skel->maps.cgrp_slots, cgrstat_slot_size(s->nr_events));
	bpf_map__set_value_size(skel->maps.cgrp_totals, cgrstat_total_size(s->nr_events));
	bpf_map__set_max_entries(skel->maps.dead_cgroups, max_cgroups);
	bpf_map__set_max_entries(skel->maps.records, s->max_records);
	bpf_program__set_attach_target(skel->progs.cgrstat_flush, 0, hook);
	return 0;
}

static int load_error(int err, const char *hook)
{
	if ((err == -EPERM || err == -EACCES) && geteuid() != 0)
		return fail(err, "no permission to load BPF programs: run as root "
			    "(CAP_BPF + CAP_PERFMON + CAP_SYS_ADMIN)");
	if (err == -EPERM)
		return fail(err, "the kernel refused to load the tracing programs although "
			    "we are root (kernel lockdown or a security module forbids "
			    "fentry on %s?) (CGRSTAT_DEBUG=2 shows the libbpf log)", hook);
	return fail(cgrstat__refused(-err), "the kernel refused the BPF programs: %s "
		    "(CGRSTAT_DEBUG=2 shows the libbpf and verifier log)", strerror(-err));
}

/*
 * The migration hook is optional: when the kernel inlined
 * css_set_move_task or refuses the program, load without it and say what
 * is lost.
 */
static int load_bpf(struct cgrstat *s, const struct cgrstat_opts *opts)
{
	uint32_t max_cgroups = OPTS_GET(opts, max_cgroups, 0) ?:
			       cgrstat__default_max_cgroups(s);
	const char *hook = OPTS_GET(opts, flush_hook, NULL) ?: DEFAULT_FLUSH_HOOK;
	struct kernel_features kf = { 0 };
	bool move_hook;
	int err;

	if (max_cgroups > MAX_MAX_CGROUPS)
		return fail(EINVAL, "cgrstat_opts.max_cgroups %u: at most %u", max_cgroups,
			    MAX_MAX_CGROUPS);
	/* a read's records: those of the cgroups with a slot, and the first */
	s->max_records = OPTS_GET(opts, max_records, 0) ?:
			 (max_cgroups >= DEFAULT_MAX_RECORDS ? max_cgroups + 1 : DEFAULT_MAX_RECORDS);
	err = check_kernel(hook, &kf);
	if (err)
		return err;
	move_hook = kf.move_hook && !getenv("CGRSTAT_NO_MOVE_HOOK");
	for (;;) {
		err = open_bpf(s, &kf, move_hook, max_cgroups, hook);
		if (!err)
			err = cgrstat_bpf__load(s->skel);
		if (!err || !move_hook)
			break;
		cgrstat_bpf__destroy(s->skel);
		s->skel = NULL;
		move_hook = false;
	}
	if (!err)
		err = map_records(s);
	if (err)
		return load_error(err, hook);
	if (!move_hook)
		cgrstat__print(CGRSTAT_INFO, "libcgrstat: no hook on css_set_move_task (%s): a "
			 "running task that moves itself to another cgroup is charged to the new "
			 "one from its last context switch\n",
			 kf.move_hook ? "the kernel refused the program" :
			 "inlined in this kernel");
	return 0;
}

static struct bpf_link *attach(struct bpf_program *prog, const char *what, int *err)
{
	struct bpf_link *link;

	if (*err)
		return NULL;
	link = bpf_program__attach(prog);
	if (!link)
		*err = fail(cgrstat__refused(errno), "cannot attach to %s: %s", what,
			    strerror(errno));
	return link;
}

static int attach_bpf(struct cgrstat *s)
{
	int ret = cgrstat__track_cgroups(s);

	s->flush_link = attach(s->skel->progs.cgrstat_flush, "the rstat hook", &ret);
	s->switch_link = attach(s->skel->progs.cgrstat_switch, "sched_switch", &ret);
	s->release_link = attach(s->skel->progs.cgrstat_release,
				 "the cgroup_release tracepoint", &ret);
	if (bpf_program__autoload(s->skel->progs.cgrstat_migrate))
		s->migrate_link = attach(s->skel->progs.cgrstat_migrate, "css_set_move_task",
					 &ret);
	return ret;
}

struct cgrstat *cgrstat_open_counters(const struct cgrstat_counter *counters, int nr_counters,
				      const struct cgrstat_opts *opts)
{
	struct cgrstat *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		cgrstat__print(CGRSTAT_WARN, "libcgrstat: out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	s->nr_cpus = libbpf_num_possible_cpus();
	ret = opts_valid(opts);
	if (!ret && s->nr_cpus < 0)
		ret = fail(-s->nr_cpus, "cannot count cpus");
	if (!ret)
		ret = take_counters(s, counters, nr_counters);
	if (!ret)
		ret = find_cgroup2_root(s, OPTS_GET(opts, cgroup_root, NULL));
	if (!ret)
		ret = load_bpf(s, opts);
	if (!ret)
		ret = open_own_counters(s);
	if (!ret)
		ret = install_fds(s);
	if (!ret)
		ret = attach_bpf(s);
	if (ret) {
		cgrstat_close(s);
		errno = -ret;
		return NULL;
	}
	return s;
}

void cgrstat_close(struct cgrstat *s)
{
	int i;

	if (!s)
		return;
	bpf_link__destroy(s->switch_link);
	bpf_link__destroy(s->migrate_link);
	bpf_link__destroy(s->release_link);
	bpf_link__destroy(s->mkdir_link);
	bpf_link__destroy(s->flush_link);
	for (i = 0; s->perf_fds && i < s->nr_events * s->nr_cpus; i++)
		if (s->events[i / s->nr_cpus].own && s->perf_fds[i] >= 0)
			close(s->perf_fds[i]);
	free(s->perf_fds);
	if (s->records)
		munmap((void *)s->records, s->records_len);
	if (s->tails)
		munmap((void *)s->tails, s->tails_len);
	free(s->readings);
	cgrstat_bpf__destroy(s->text_skel);
	cgrstat_bpf__destroy(s->skel);
	free(s);
}

int cgrstat_nr_events(const struct cgrstat *s)
{
	return s->nr_events;
}

const char *cgrstat_event_name(const struct cgrstat *s, int idx)
{
	return idx >= 0 && idx < s->nr_events ? s->events[idx].name : NULL;
}

const char *cgrstat_cgroup_root(const struct cgrstat *s)
{
	return s->root;
}
