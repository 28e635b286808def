// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libcgrstat's readers: a cgroup iterator over one cgroup or a subtree,
 * run after the cpus that may run a cgroup of it noted what they counted
 * since their last charge; the records it writes into the mmap()ed records
 * map, or the text program's "name value" lines, read or pinned in bpffs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgrstat.h"
#include "cgrstat_int.h"
#include "cgrstat.skel.h"

/*
 * A cgroup removed before its read: -ENOENT, said at debug level only.  A
 * reader of a live tree meets it all the time (a walk, then an rmdir); the
 * caller knows whether it matters and says so.
 */
static int removed(const char *cgroup)
{
	cgrstat__print(CGRSTAT_DEBUG, "libcgrstat: cgroup %s: removed\n", cgroup);
	return -ENOENT;
}

int cgrstat__make_iter(struct cgrstat *s, struct bpf_program *prog, const char *path,
		       uint64_t id, enum bpf_cgroup_iter_order order, struct bpf_link **out)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	char full[PATH_MAX];
	struct bpf_link *link;
	int cg_fd = -1, err;

	if (path) {
		cgrstat__resolve_path(s, path, full, sizeof(full));
		cg_fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg_fd < 0 && errno == ENOENT)
			return removed(full);
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
	err = errno;
	if (cg_fd >= 0)
		close(cg_fd);
	if (!link && err == ENOENT)
		return removed(full);
	if (!link)
		return fail(err, "cannot create a cgroup iterator on cgroup %s: %s",
			    full, strerror(err));
	*out = link;
	return 0;
}

/* Whether @path is the session's root (cgroup_root) */
static bool is_root(const struct cgrstat *s, const char *path)
{
	size_t n = strlen(s->root);
	char full[PATH_MAX];

	cgrstat__resolve_path(s, path, full, sizeof(full));
	return !strncmp(full, s->root, n) && (!full[n] || (full[n] == '/' && !full[n + 1]));
}

/*
 * Whether a read of the subtree of the cgroup with id @subtree needs cpu
 * @cpu's tail, the cpu's seq being @seq now: unless the cpu's last note is
 * still valid (it did not charge since, so it runs the cgroup noted) and
 * that cgroup is outside the subtree.  A running task moved by another
 * task changes the cpu's cgroup without a charge: its time since its last
 * switch then waits for the switch that charges it to the new cgroup.
 */
static bool needs_sync(const struct cgrstat *s, int cpu, uint64_t seq, uint64_t subtree)
{
	const struct cpu_tail *t = &s->tails[cpu];
	uint32_t i;

	if (!t->gen || t->seq != seq)
		return true;
	for (i = 0; i < t->nr_ids && i < CGRSTAT_MAX_LEVELS; i++)
		if (t->ids[i] == subtree)
			return true;
	return false;
}

/* Every cpu's reading (its seq) into s->readings: NULL if it cannot be read */
static const struct cpu_reading *cpu_readings(struct cgrstat *s)
{
	if (!s->readings)
		s->readings = calloc(s->nr_cpus, sizeof(*s->readings));
	if (!s->readings || cgrstat__percpu_entry(s->skel->maps.cpu_readings, s->readings,
						  sizeof(*s->readings)))
		return NULL;
	return s->readings;
}

/*
 * The collector charges a cpu's counts at cgroup switches: bring the counts
 * since the last switch up to now, by running cgrstat_sync (an IPI) on each
 * cpu that may run a cgroup of the subtree of the cgroup with id *@subtree
 * (NULL: every cpu; offline cpus fail with ENXIO and have nothing to
 * charge).  One system call reads every cpu's seq: a cpu that did not
 * charge since its last note still runs the cgroup noted, and when that
 * one is outside the subtree its tail is not the read's.
 */
static void sync_cpus(struct cgrstat *s, const uint64_t *subtree)
{
	int fd = bpf_program__fd(s->skel->progs.cgrstat_sync);
	const struct cpu_reading *r = subtree ? cpu_readings(s) : NULL;
	int cpu;

	s->skel->bss->read_gen++;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = cpu);

		if (!r || needs_sync(s, cpu, r[cpu].seq, *subtree))
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

	ret = cgrstat__make_iter(s, prog, path, id, order, &link);
	if (ret)
		return ret;
	if (path && (is_root(s, path) || cgrstat_cgroup_id(s, path, &id)))
		sync_cpus(s, NULL);	/* the root's read needs every cpu's tail */
	else
		sync_cpus(s, &id);
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
	if (!nr)	/* 6.1's iterator skips a cgroup removed since its open */
		ret = removed(path && *path ? path : "(by id)");
	else if (nr != 1)
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
		return fail(cgrstat__refused(-err), "the kernel refused the text iterator: %s "
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
		ret = cgrstat__make_iter(s, prog, path ? path : "", 0, BPF_CGROUP_ITER_SELF_ONLY,
					 &link);
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
