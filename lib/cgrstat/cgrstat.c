// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgrstat library: loads cgrstat.bpf.c, opens the counters, reads results. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgrstat.h"
#include "cgrstat_int.h"
#include "cgutil.h"
#include "cgrstat.skel.h"

#define NAME_LEN 32
/* Cgroups the maps hold by default: 4 times those present at open (room
 * for the ones created until the next read forgets the removed ones), at
 * least this many. */
#define MIN_MAX_CGROUPS 4096
#define MAX_CGROUPS_PER_PRESENT 4
#define DEFAULT_MAX_RECORDS 16384
#define DEFAULT_FLUSH_HOOK "bpf_rstat_flush"
#define MAX_LEVELS 32		/* CGRSTAT_MAX_LEVELS of the BPF program */

/* A record as the BPF program writes it (struct cgrstat_record there). */
struct raw_record {
	uint64_t cgroup_id;
	uint32_t level;
	uint32_t nr_events;
	struct cgrstat_value values[CGRSTAT_MAX_EVENTS];
};

struct event_desc {
	const char *name;
	__u32 type;
	__u64 config;
	bool own;			/* opened here from attr (counter without fds) */
	struct perf_event_attr attr;
};

struct cgrstat {
	struct cgrstat_bpf *skel;
	struct cgrstat_bpf *text_skel;	/* cgrstat_dump_text, on first use */
	struct bpf_link *switch_link;
	struct bpf_link *flush_link;
	int nr_events;
	int nr_cpus;
	struct event_desc events[CGRSTAT_MAX_EVENTS];
	char event_names[CGRSTAT_MAX_EVENTS][NAME_LEN];
	struct bpf_link *migrate_link;
	struct bpf_link *release_link;
	struct bpf_link *mkdir_link;
	int *perf_fds;			/* nr_events * nr_cpus, -1 if unused */
	uint32_t max_records;
	const struct raw_record *records;	/* the records map, mmap()ed */
	size_t records_len;
	char root[PATH_MAX];
};

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

/* Print a failure as "libcgrstat: <message>" and return -@errnum. */
static int fail(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(int errnum, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgrstat__print(CGRSTAT_WARN, "libcgrstat: %s\n", msg);
	return -abs(errnum);
}

#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
/* a field the caller's (older, smaller) struct has, as libbpf's OPTS_GET */
#define OPTS_GET(opts, field, fallback)						\
	((opts) && (opts)->sz >= offsetofend(struct cgrstat_opts, field) ?	\
	 (opts)->field : (fallback))

/* 0, -EINVAL (sz too small to be a size), -E2BIG (unknown non-zero tail) */
static int opts_valid(const struct cgrstat_opts *opts)
{
	const char *p = (const char *)opts;
	size_t i;

	if (!opts)
		return 0;
	if (opts->sz < sizeof(size_t))
		return fail(EINVAL, "cgrstat_opts.sz is %zu: set it to sizeof(struct "
			    "cgrstat_opts) (CGRSTAT_OPTS does)", opts->sz);
	for (i = sizeof(*opts); i < opts->sz; i++)
		if (p[i])
			return fail(E2BIG, "cgrstat_opts has a field at byte %zu that "
				    "libcgrstat %s does not know: built against a newer "
				    "header?", i, cgrstat_version_string());
	return 0;
}

static void add_event(struct cgrstat *s, const struct cgrstat_counter *c)
{
	struct event_desc *ev = &s->events[s->nr_events];

	snprintf(s->event_names[s->nr_events], NAME_LEN, "%s", c->name ? c->name : "");
	ev->name = s->event_names[s->nr_events];
	ev->own = !c->fds;
	if (c->attr) {
		ev->attr = *c->attr;
	} else {
		ev->attr.type = c->type;
		ev->attr.config = c->config;
	}
	ev->attr.size = sizeof(ev->attr);
	ev->attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	ev->type = ev->attr.type;
	ev->config = ev->attr.config;
	s->nr_events++;
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

static void resolve_path(const struct cgrstat *s, const char *path, char *out, size_t len)
{
	if (path && path[0] == '/' && strncmp(path, s->root, strlen(s->root)) == 0)
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s/%s", s->root, path ? path : "");
}

int cgrstat_cgroup_id(const struct cgrstat *s, const char *path, uint64_t *id)
{
	char full[PATH_MAX];

	resolve_path(s, path, full, sizeof(full));
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

static long perf_event_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_counter(struct cgrstat *s, int ev, int cpu, int *fd)
{
	*fd = perf_event_open(&s->events[ev].attr, cpu);
	if (*fd >= 0)
		return 0;
	switch (errno) {
	case ENODEV:
		return 1;	/* offline cpu: nothing to count there */
	case EACCES:
	case EPERM:
		return fail(errno, "no permission to open event '%s' on cpu %d: run as root "
			    "(CAP_PERFMON + CAP_BPF) or lower /proc/sys/kernel/perf_event_paranoid",
			    s->events[ev].name, cpu);
	case ENOENT:
	case EOPNOTSUPP:
	case EINVAL:
		return fail(EOPNOTSUPP, "event '%s' is not supported by this machine "
			    "(no hardware PMU?): %s", s->events[ev].name, strerror(errno));
	default:
		return fail(errno, "perf_event_open('%s', cpu %d): %s",
			    s->events[ev].name, cpu, strerror(errno));
	}
}

static int alloc_fds(struct cgrstat *s)
{
	int i, n = s->nr_events * s->nr_cpus;

	s->perf_fds = malloc(sizeof(int) * n);
	if (!s->perf_fds)
		return fail(ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		s->perf_fds[i] = -1;
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

/* The counters given without fds: open them on every cpu. */
static int open_counters(struct cgrstat *s)
{
	int ev, cpu, ret;

	for (ev = 0; ev < s->nr_events; ev++) {
		for (cpu = 0; cpu < s->nr_cpus && s->events[ev].own; cpu++) {
			ret = open_counter(s, ev, cpu, &s->perf_fds[ev * s->nr_cpus + cpu]);
			if (ret < 0)
				return ret;
		}
	}
	return install_fds(s);
}

/* The caller's counters: fds[cpu] of each, -1 where none (opened later
 * by open_counters() when a counter has no fds). */
static int take_counters(struct cgrstat *s, const struct cgrstat_counter *counters, int nr)
{
	int i, cpu, ret;

	if (nr <= 0 || !counters)
		return fail(EINVAL, "no counters given");
	if (nr > CGRSTAT_MAX_EVENTS)
		return fail(E2BIG, "too many events: at most %d", CGRSTAT_MAX_EVENTS);
	for (i = 0; i < nr; i++)
		add_event(s, &counters[i]);
	ret = alloc_fds(s);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++)
		for (cpu = 0; cpu < s->nr_cpus && cpu < counters[i].nr_cpus; cpu++)
			s->perf_fds[i * s->nr_cpus + cpu] = counters[i].fds ? counters[i].fds[cpu] : -1;
	return 0;
}

/* The BPF side lays out records[] the same way (array values are 8-byte aligned). */
_Static_assert(sizeof(struct raw_record) == 208, "record layout changed");

static int map_records(struct cgrstat *s)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	s->records_len = ((size_t)s->max_records * sizeof(struct raw_record) + page - 1) /
			 page * page;
	p = mmap(NULL, s->records_len, PROT_READ, MAP_SHARED,
		 bpf_map__fd(s->skel->maps.records), 0);
	if (p == MAP_FAILED) {
		s->records_len = 0;
		return -errno;
	}
	s->records = p;
	return 0;
}

static size_t nr_cgroups_seen;

static int count_cgroup(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)st;
	(void)ftw;
	if (type == FTW_D)
		nr_cgroups_seen++;
	return 0;
}

/* Default size of the cgroup maps, from the cgroups present now. */
static uint32_t default_max_cgroups(const struct cgrstat *s)
{
	size_t n;

	nr_cgroups_seen = 0;
	nftw(s->root, count_cgroup, 32, FTW_PHYS | FTW_MOUNT);
	n = nr_cgroups_seen * MAX_CGROUPS_PER_PRESENT;
	return n < MIN_MAX_CGROUPS ? MIN_MAX_CGROUPS : n > UINT32_MAX / 2 ? UINT32_MAX / 2 : n;
}

/* Bytes per (cgroup, cpu) slot and per cgroup total for @nr_events events
 * (the layouts of struct cgrp_cpu_slot and struct cgrp_total). */
static uint32_t slot_bytes(int nr_events)
{
	return 8 + nr_events * 2 * sizeof(struct cgrstat_value);
}

static uint32_t total_bytes(int nr_events)
{
	return nr_events * 2 * sizeof(struct cgrstat_value);
}

/* Open the BPF object and size it for this session and kernel. */
static int open_bpf(struct cgrstat *s, const struct kernel_features *kf, bool with_move_hook,
		    uint32_t max_cgroups, const char *hook)
{
	struct cgrstat_bpf *skel;
	int i;

	skel = cgrstat_bpf__open();
	if (!skel)
		return fail(errno, "cannot open the BPF object: %s", strerror(errno));
	s->skel = skel;
	skel->rodata->nr_cpus = s->nr_cpus;
	skel->rodata->nr_events = s->nr_events;
	skel->rodata->have_css_rstat = kf->css_rstat;
	skel->rodata->kfunc_args_trusted = kf->trusted_args;
	skel->rodata->have_cgrp_storage = kf->cgrp_storage;
	skel->rodata->max_cgroups = max_cgroups;
	skel->rodata->software_only = true;
	for (i = 0; i < s->nr_events; i++) {
		const struct event_desc *ev = &s->events[i];

		if (ev->type != PERF_TYPE_SOFTWARE)
			skel->rodata->software_only = false;
		strncpy((char *)skel->rodata->event_names[i], ev->name, NAME_LEN - 1);
		if (ev->type == PERF_TYPE_SOFTWARE &&
		    (ev->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
		     ev->config == PERF_COUNT_SW_CGROUP_SWITCHES))
			skel->rodata->switch_events |= 1U << i;
	}
	bpf_program__set_autoload(skel->progs.cgrstat_migrate, with_move_hook);
	/* only text reads need it: verified on first use (text_program()) */
	bpf_program__set_autoload(skel->progs.cgrstat_dump_text, false);
	bpf_map__set_max_entries(skel->maps.events, s->nr_events * s->nr_cpus);
	bpf_map__set_max_entries(skel->maps.read_seqs, s->nr_cpus);
	bpf_map__set_max_entries(skel->maps.overlay, s->nr_cpus * MAX_LEVELS);
	/* a cgroup's index: cgroup storage (6.2+) or a hash by id (6.1);
	 * libbpf leaves the other map out and the branches using it are dead */
	bpf_map__set_autocreate(skel->maps.cgrp_index, kf->cgrp_storage);
	bpf_map__set_autocreate(skel->maps.cgrp_index_by_id, !kf->cgrp_storage);
	bpf_map__set_max_entries(skel->maps.cgrp_index_by_id, max_cgroups);
	bpf_map__set_max_entries(skel->maps.cgrp_slots, max_cgroups);
	bpf_map__set_max_entries(skel->maps.cgrp_totals, max_cgroups);
	bpf_map__set_max_entries(skel->maps.free_indices, max_cgroups);
	/* only the events in use: struct cgrp_cpu_slot and cgrp_total */
	bpf_map__set_value_size(skel->maps.cgrp_slots, slot_bytes(s->nr_events));
	bpf_map__set_value_size(skel->maps.cgrp_totals, total_bytes(s->nr_events));
	bpf_map__set_max_entries(skel->maps.dead_cgroups, max_cgroups);
	bpf_map__set_max_entries(skel->maps.records, s->max_records);
	bpf_program__set_attach_target(skel->progs.cgrstat_flush, 0, hook);
	return 0;
}

/*
 * The errno of the kernel refusing a program or an attach: EOPNOTSUPP (this
 * kernel cannot run the pipeline), so that EINVAL only ever means the
 * caller's input; a lack of permission or memory keeps its own.
 */
static int refused(int err)
{
	return err == EPERM || err == EACCES || err == ENOMEM ? err : EOPNOTSUPP;
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
	return fail(refused(-err), "the kernel refused the BPF programs: %s "
		    "(CGRSTAT_DEBUG=2 shows the libbpf and verifier log)", strerror(-err));
}

/*
 * The migration hook is optional: when the kernel inlined
 * css_set_move_task or refuses the program, load without it and say what
 * is lost.
 */
static int load_bpf(struct cgrstat *s, const struct cgrstat_opts *opts)
{
	uint32_t max_cgroups = OPTS_GET(opts, max_cgroups, 0) ?: default_max_cgroups(s);
	const char *hook = OPTS_GET(opts, flush_hook, NULL) ?: DEFAULT_FLUSH_HOOK;
	struct kernel_features kf = { 0 };
	bool move_hook;
	int err;

	s->max_records = OPTS_GET(opts, max_records, 0) ?:
			 (max_cgroups > DEFAULT_MAX_RECORDS ? max_cgroups : DEFAULT_MAX_RECORDS);
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

static int make_iter(struct cgrstat *s, struct bpf_program *prog, const char *path,
		     uint64_t id, enum bpf_cgroup_iter_order order, struct bpf_link **out);

/*
 * Entries for every cgroup: cgrstat_mkdir gives each new cgroup its
 * entries when it is created, then one walk gives them to the cgroups
 * present (in that order: none is missed).  The collector never creates
 * one.
 */
static int track_cgroups(struct cgrstat *s)
{
	struct bpf_link *walk;
	char sink[64];
	int fd, ret;
	ssize_t n;

	s->mkdir_link = bpf_program__attach(s->skel->progs.cgrstat_mkdir);
	if (!s->mkdir_link)
		return fail(refused(errno), "cannot attach to the cgroup_mkdir tracepoint: %s",
			    strerror(errno));
	ret = make_iter(s, s->skel->progs.cgrstat_adopt, "", 0,
			BPF_CGROUP_ITER_DESCENDANTS_PRE, &walk);
	if (ret)
		return ret;
	fd = bpf_iter_create(bpf_link__fd(walk));
	if (fd < 0) {
		ret = fail(errno, "bpf_iter_create: %s", strerror(errno));
	} else {
		while ((n = read(fd, sink, sizeof(sink))) > 0 || (n < 0 && errno == EINTR))
			;
		if (n < 0)
			ret = fail(errno, "walking the cgroups: %s", strerror(errno));
		close(fd);
	}
	bpf_link__destroy(walk);
	return ret;
}

static int attach_bpf(struct cgrstat *s)
{
	int ret = track_cgroups(s);

	if (ret)
		return ret;
	s->flush_link = bpf_program__attach(s->skel->progs.cgrstat_flush);
	if (!s->flush_link)
		return fail(refused(errno), "cannot attach to the rstat hook: %s", strerror(errno));
	s->switch_link = bpf_program__attach(s->skel->progs.cgrstat_switch);
	if (!s->switch_link)
		return fail(refused(errno), "cannot attach to sched_switch: %s", strerror(errno));
	s->release_link = bpf_program__attach(s->skel->progs.cgrstat_release);
	if (!s->release_link)
		return fail(refused(errno), "cannot attach to the cgroup_release tracepoint: %s",
			    strerror(errno));
	if (bpf_program__autoload(s->skel->progs.cgrstat_migrate)) {
		s->migrate_link = bpf_program__attach(s->skel->progs.cgrstat_migrate);
		if (!s->migrate_link)
			return fail(refused(errno), "cannot attach to css_set_move_task: %s",
				    strerror(errno));
	}
	return 0;
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
		ret = open_counters(s);
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

/* An iterator link over the cgroup at @path (or with id @id if !path). */
static int make_iter(struct cgrstat *s, struct bpf_program *prog, const char *path,
		     uint64_t id, enum bpf_cgroup_iter_order order, struct bpf_link **out)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	char full[PATH_MAX];
	struct bpf_link *link;
	int cg_fd = -1;

	if (path) {
		resolve_path(s, path, full, sizeof(full));
		cg_fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg_fd < 0)
			return fail(errno, "cgroup '%s': %s", full, strerror(errno));
		info.cgroup.cgroup_fd = cg_fd;
	} else {
		snprintf(full, sizeof(full), "id %llu", (unsigned long long)id);
		info.cgroup.cgroup_id = id;
	}
	info.cgroup.order = order;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	link = bpf_program__attach_iter(prog, &opts);
	if (!link) {
		int err = errno;

		if (cg_fd >= 0)
			close(cg_fd);
		return fail(err, "cannot create a cgroup iterator on cgroup %s: %s",
			    full, strerror(err));
	}
	if (cg_fd >= 0)
		close(cg_fd);
	*out = link;
	return 0;
}

/*
 * The collector charges a cpu's counts at cgroup switches: bring every cpu's
 * counts since its last switch up to now, by running cgrstat_sync on each
 * cpu (offline cpus fail with ENXIO and have nothing to charge).
 */
static void sync_cpus(struct cgrstat *s)
{
	int fd = bpf_program__fd(s->skel->progs.cgrstat_sync);
	int cpu;

	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = cpu);

		bpf_prog_test_run_opts(fd, &opts);
	}
}

/* Run an iterator over the cgroup at @path (or @id) in @order, read it whole. */
static int run_iter(struct cgrstat *s, struct bpf_program *prog, const char *path, uint64_t id,
		    enum bpf_cgroup_iter_order order, char *buf, size_t len)
{
	struct bpf_link *link = NULL;
	int iter_fd, ret;
	char sink[4096];
	size_t used = 0;
	ssize_t n;

	ret = make_iter(s, prog, path, id, order, &link);
	if (ret)
		return ret;
	sync_cpus(s);
	iter_fd = bpf_iter_create(bpf_link__fd(link));
	if (iter_fd < 0) {
		ret = fail(errno, "bpf_iter_create: %s", strerror(errno));
		goto out;
	}
	for (;;) {
		char *dst = buf && used + 1 < len ? buf + used : sink;
		size_t room = buf && used + 1 < len ? len - 1 - used : sizeof(sink);

		n = read(iter_fd, dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = fail(errno, "reading the cgroup iterator: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (dst != sink)
			used += n;
	}
	if (buf && len)
		buf[used] = 0;
	close(iter_fd);
out:
	bpf_link__destroy(link);
	return ret;
}

/* The records into one block: n records, then their values. */
static int fetch_records(struct cgrstat *s, struct cgrstat_record **recs, size_t *nr)
{
	uint32_t n = s->skel->bss->nr_records, i;
	size_t nv = s->nr_events;
	struct cgrstat_value *values;
	struct cgrstat_record *out;

	if (s->skel->bss->records_dropped)
		return fail(ENOSPC, "more than %u cgroups in the walk: raise "
			    "cgrstat_opts.max_records", s->max_records);
	if (n > s->max_records)
		return fail(EIO, "the reader returned %u records for %u slots", n,
			    s->max_records);
	out = malloc((n ? n : 1) * (sizeof(*out) + nv * sizeof(*values)));
	if (!out)
		return fail(ENOMEM, "out of memory");
	values = (struct cgrstat_value *)(out + n);
	for (i = 0; i < n; i++) {
		out[i] = (struct cgrstat_record){
			.cgroup_id = s->records[i].cgroup_id,
			.level = s->records[i].level,
			.nr_events = nv,
			.values = values + i * nv,
		};
		memcpy(out[i].values, s->records[i].values, nv * sizeof(*values));
	}
	*recs = out;
	*nr = n;
	return 0;
}

static int read_records(struct cgrstat *s, const char *path, uint64_t id,
			enum bpf_cgroup_iter_order order, struct cgrstat_record **recs, size_t *nr)
{
	int ret;

	s->skel->bss->records_dropped = 0;
	s->skel->bss->nr_records = 0;
	ret = run_iter(s, s->skel->progs.cgrstat_dump_records, path, id, order, NULL, 0);
	return ret ? ret : fetch_records(s, recs, nr);
}

static int read_one(struct cgrstat *s, const char *path, uint64_t id,
		    struct cgrstat_value *values, size_t nr_values)
{
	struct cgrstat_record *recs = NULL;
	size_t nr = 0;
	int ret;

	if (nr_values < (size_t)s->nr_events)
		return fail(ENOSPC, "room for %zu values, the session counts %d events",
			    nr_values, s->nr_events);
	ret = read_records(s, path, id, BPF_CGROUP_ITER_SELF_ONLY, &recs, &nr);
	if (ret)
		return ret;
	if (nr != 1)
		ret = fail(EIO, "iterator returned %zu records for one cgroup", nr);
	else
		memcpy(values, recs[0].values, s->nr_events * sizeof(*values));
	free(recs);
	return ret;
}

int cgrstat_read_cgroup(struct cgrstat *s, const char *path, struct cgrstat_value *values,
			size_t nr_values)
{
	return read_one(s, path ? path : "", 0, values, nr_values);
}

int cgrstat_read_cgroup_id(struct cgrstat *s, uint64_t id, struct cgrstat_value *values,
			   size_t nr_values)
{
	return read_one(s, NULL, id, values, nr_values);
}

int cgrstat_read_subtree(struct cgrstat *s, const char *path,
			 struct cgrstat_record **recs, size_t *nr)
{
	return read_records(s, path ? path : "", 0, BPF_CGROUP_ITER_DESCENDANTS_PRE, recs, nr);
}

int cgrstat_read_all(struct cgrstat *s, struct cgrstat_record **recs, size_t *nr)
{
	return cgrstat_read_subtree(s, "", recs, nr);
}

/*
 * The text iterator, loaded on the first text read or pin: a second copy
 * of the object with only that program, on the session's maps.  Verifying
 * it took 0.39 s of a 1.4 s open on Debian's 7.3 under QEMU, for what
 * only text reads use.
 */
static int text_program(struct cgrstat *s, struct bpf_program **prog)
{
	struct cgrstat_bpf *t;
	struct bpf_program *p;
	struct bpf_map *m;
	int err;

	if (s->text_skel) {
		*prog = s->text_skel->progs.cgrstat_dump_text;
		return 0;
	}
	t = cgrstat_bpf__open();
	if (!t)
		return fail(errno, "cannot open the BPF object: %s", strerror(errno));
	bpf_object__for_each_program(p, t->obj)
		bpf_program__set_autoload(p, p == t->progs.cgrstat_dump_text);
	bpf_object__for_each_map(m, t->obj) {
		const struct bpf_map *own = bpf_object__find_map_by_name(s->skel->obj,
									  bpf_map__name(m));

		/* a map the session did not create has only a placeholder fd */
		if (own && bpf_map__autocreate(own))
			err = bpf_map__reuse_fd(m, bpf_map__fd(own));
		else
			err = bpf_map__set_autocreate(m, false);
		if (err) {
			cgrstat_bpf__destroy(t);
			return fail(-err, "cannot share map '%s' with the text iterator: %s",
				    bpf_map__name(m), strerror(-err));
		}
	}
	err = cgrstat_bpf__load(t);
	if (err) {
		cgrstat_bpf__destroy(t);
		return fail(refused(-err), "the kernel refused the text iterator: %s "
			    "(CGRSTAT_DEBUG=2 shows the verifier log)", strerror(-err));
	}
	s->text_skel = t;
	*prog = t->progs.cgrstat_dump_text;
	return 0;
}

int cgrstat_read_text(struct cgrstat *s, const char *path, char *buf, size_t len)
{
	struct bpf_program *prog;
	int ret = text_program(s, &prog);

	if (ret)
		return ret;
	return run_iter(s, prog, path ? path : "", 0, BPF_CGROUP_ITER_SELF_ONLY, buf, len);
}

int cgrstat_pin_text(struct cgrstat *s, const char *path, const char *pin_path)
{
	struct bpf_link *link = NULL;
	struct bpf_program *prog;
	int ret;

	ret = text_program(s, &prog);
	if (!ret)
		ret = make_iter(s, prog, path ? path : "", 0, BPF_CGROUP_ITER_SELF_ONLY, &link);
	if (ret)
		return ret;
	if (bpf_link__pin(link, pin_path))
		ret = fail(errno, "cannot pin the iterator at '%s' (is bpffs mounted?): %s",
			   pin_path, strerror(errno));
	bpf_link__destroy(link);
	return ret;
}

void cgrstat_print_record(const struct cgrstat *s, const struct cgrstat_record *rec, FILE *out)
{
	int i;

	fprintf(out, "cgroup_id %llu\n", (unsigned long long)rec->cgroup_id);
	for (i = 0; i < s->nr_events; i++) {
		const struct cgrstat_value *v = &rec->values[i];

		fprintf(out, "%s %llu\n", s->events[i].name, (unsigned long long)v->counter);
		fprintf(out, "%s.time_enabled %llu\n", s->events[i].name,
			(unsigned long long)v->enabled);
		fprintf(out, "%s.time_running %llu\n", s->events[i].name,
			(unsigned long long)v->running);
	}
}

/* Sum a one-entry per-cpu array over the cpus, as u64 words. */
static int sum_percpu(const struct cgrstat *s, const struct bpf_map *map, uint64_t *sum,
		      size_t words)
{
	size_t one = bpf_map__value_size(map), w;
	__u32 key = 0;
	char *buf;
	int cpu, ret;

	memset(sum, 0, words * sizeof(*sum));
	if (words * sizeof(*sum) > one)
		return -EINVAL;
	buf = calloc(s->nr_cpus, one);
	if (!buf)
		return -ENOMEM;
	ret = bpf_map_lookup_elem(bpf_map__fd(map), &key, buf) ? -errno : 0;
	for (cpu = 0; !ret && cpu < s->nr_cpus; cpu++)
		for (w = 0; w < words; w++) {
			uint64_t v;

			memcpy(&v, buf + cpu * one + w * sizeof(v), sizeof(v));
			sum[w] += v;
		}
	free(buf);
	return ret;
}

/* struct cpu_reading: last[] then seq, two per charge */
static uint64_t charged_switches(const struct cgrstat *s)
{
	uint64_t words[CGRSTAT_MAX_EVENTS * 3 + 1];

	if (sum_percpu(s, s->skel->maps.cpu_readings, words, CGRSTAT_MAX_EVENTS * 3 + 1))
		return 0;
	return words[CGRSTAT_MAX_EVENTS * 3] / 2;
}

/* struct cgrstat_overflow: values[], slot_charges (summed over the cpus
 * into @words; zeros if it cannot be read) */
#define OVERFLOW_WORDS (CGRSTAT_MAX_EVENTS * 3 + 1)
static void read_overflow(const struct cgrstat *s, uint64_t words[OVERFLOW_WORDS])
{
	if (sum_percpu(s, s->skel->maps.overflow, words, OVERFLOW_WORDS))
		memset(words, 0, OVERFLOW_WORDS * sizeof(*words));
}

static void overflow_stats(const struct cgrstat *s, struct cgrstat_stats *st)
{
	uint64_t words[OVERFLOW_WORDS];

	read_overflow(s, words);
	st->unattributed_charges = words[CGRSTAT_MAX_EVENTS * 3];
	st->lost_flushes = 0;	/* a slot and its total share one index */
}

void cgrstat_unattributed(const struct cgrstat *s, uint64_t *counts, size_t nr)
{
	uint64_t words[OVERFLOW_WORDS];
	size_t i;

	read_overflow(s, words);
	for (i = 0; i < nr; i++)
		counts[i] = i < (size_t)s->nr_events ? words[i * 3] : 0;
}

static void prog_run_stats(const struct bpf_program *prog, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	*runs = *ns = 0;
	if (bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return;
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
}

void cgrstat_get_stats(const struct cgrstat *s, struct cgrstat_stats *st)
{
	memset(st, 0, sizeof(*st));
	/* one index per cgroup holds both its slot and its total */
	st->slot_entries = s->skel->bss->nr_tracked;
	st->total_entries = s->skel->bss->nr_tracked;
	st->max_cgroups = bpf_map__max_entries(s->skel->maps.cgrp_totals);
	st->switches = charged_switches(s);
	st->read_errors = s->skel->bss->nr_collect_errors;
	st->flush_calls = s->skel->bss->nr_flush_calls;
	st->forgotten = s->skel->bss->nr_gc;
	st->dead_lost = s->skel->bss->nr_dead_lost;
	st->reflushes = s->skel->bss->nr_reflush;
	st->untracked = s->skel->bss->nr_untracked;
	overflow_stats(s, st);
	st->slots_full = st->unattributed_charges + st->lost_flushes;
	prog_run_stats(s->skel->progs.cgrstat_switch, &st->collector_runs, &st->collector_ns);
	prog_run_stats(s->skel->progs.cgrstat_flush, &st->flusher_runs, &st->flusher_ns);
}

int cgrstat_check_overflow(struct cgrstat *s)
{
	uint64_t unattributed[CGRSTAT_MAX_EVENTS];
	struct cgrstat_stats st;
	char vals[256] = "";
	size_t len = 0;
	int i;

	cgrstat_get_stats(s, &st);
	if (!st.unattributed_charges && !st.dead_lost)
		return 0;
	cgrstat_unattributed(s, unattributed, CGRSTAT_MAX_EVENTS);
	for (i = 0; i < s->nr_events && len < sizeof(vals); i++)
		len += snprintf(vals + len, sizeof(vals) - len, "%s%s %llu", i ? ", " : "",
				s->events[i].name, (unsigned long long)unattributed[i]);
	return fail(ENOSPC, "cgroup maps full: %llu cgroups found no free index, %llu charges "
		    "found no cgroup slot, %llu released cgroups kept their index; counts not "
		    "attributed to any cgroup: %s (raise cgrstat_opts.max_cgroups)",
		    (unsigned long long)st.untracked, (unsigned long long)st.unattributed_charges,
		    (unsigned long long)st.dead_lost, vals);
}
