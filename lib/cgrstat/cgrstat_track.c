// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The cgroups libcgrstat's maps track: how many to make room for, their
 * entries at open (the cgroups present, then each new one at its
 * creation), and what the program reports about them: the statistics
 * (unplaced: counts of a cgroup without a slot, kept by its nearest
 * ancestor with one) and the overflow entry, where counts that found no
 * cgroup at all go.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgrstat.h"
#include "cgrstat_int.h"
#include "cgrstat.skel.h"

/* Cgroups the maps hold by default: 4 times those present at open (room
 * for the ones created until the next read forgets the removed ones), at
 * least this many. */
#define MIN_MAX_CGROUPS 4096
#define MAX_CGROUPS_PER_PRESENT 4

/*
 * The cgroups below the root and the root itself, live or dying (a dying
 * cgroup holds its entry until it is released): from the root's
 * cgroup.stat, one read instead of a walk of the tree.  0 if unreadable.
 */
static uint64_t cgroups_present(const struct cgrstat *s)
{
	char path[PATH_MAX + sizeof("/cgroup.stat")], key[64];
	unsigned long long n = 1, v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.stat", s->root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", key, &v) == 2)
		if (!strcmp(key, "nr_descendants") || !strcmp(key, "nr_dying_descendants"))
			n += v;
	fclose(f);
	return n;
}

uint32_t cgrstat__default_max_cgroups(const struct cgrstat *s)
{
	uint64_t n = cgroups_present(s) * MAX_CGROUPS_PER_PRESENT;

	return n < MIN_MAX_CGROUPS ? MIN_MAX_CGROUPS : n > MAX_MAX_CGROUPS ? MAX_MAX_CGROUPS : n;
}

/*
 * Entries for every cgroup: cgrstat_mkdir gives each new cgroup its
 * entries when it is created, then one walk gives them to the cgroups
 * present (in that order: none is missed).  The collector never creates
 * one.
 */
int cgrstat__track_cgroups(struct cgrstat *s)
{
	struct bpf_link *walk;
	char sink[64];
	int fd, ret;
	ssize_t n;

	s->mkdir_link = bpf_program__attach(s->skel->progs.cgrstat_mkdir);
	if (!s->mkdir_link)
		return fail(cgrstat__refused(errno), "cannot attach to the cgroup_mkdir "
			    "tracepoint: %s", strerror(errno));
	ret = cgrstat__make_iter(s, s->skel->progs.cgrstat_adopt, "", 0,
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

int cgrstat__percpu_entry(const struct bpf_map *map, void *vals, size_t size)
{
	__u32 key = 0;

	if (bpf_map__value_size(map) != size)
		return -EINVAL;
	return bpf_map_lookup_elem(bpf_map__fd(map), &key, vals) ? -errno : 0;
}

/* Context switches charged: every cpu's charges (struct cpu_reading.seq
 * counts two per charge). */
static uint64_t charged_switches(const struct cgrstat *s)
{
	struct cpu_reading *r = calloc(s->nr_cpus, sizeof(*r));
	uint64_t sum = 0;
	int cpu;

	if (r && !cgrstat__percpu_entry(s->skel->maps.cpu_readings, r, sizeof(*r)))
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			sum += r[cpu].seq / 2;
	free(r);
	return sum;
}

/* The overflow entry summed over the cpus (zeros if it cannot be read). */
static void read_overflow(const struct cgrstat *s, struct cgrstat_overflow *sum)
{
	struct cgrstat_overflow *o = calloc(s->nr_cpus, sizeof(*o));
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	if (o && !cgrstat__percpu_entry(s->skel->maps.overflow, o, sizeof(*o))) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS; i++)
				sum->values[i].counter += o[cpu].values[i].counter;
			sum->slot_charges += o[cpu].slot_charges;
			sum->proxy_charges += o[cpu].proxy_charges;
		}
	}
	free(o);
}

void cgrstat_unattributed(const struct cgrstat *s, uint64_t *counts, size_t nr)
{
	struct cgrstat_overflow o;
	size_t i;

	read_overflow(s, &o);
	for (i = 0; i < nr; i++)
		counts[i] = i < (size_t)s->nr_events ? o.values[i].counter : 0;
}

static void prog_run_stats(const struct bpf_program *prog, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	*runs = *ns = 0;
	/* bpf_prog_get_info_by_fd() is libbpf 1.2's; this older form is in
	 * every libbpf (Debian 12's 1.1, which the packages link) */
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return;
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
}

void cgrstat_get_stats(const struct cgrstat *s, struct cgrstat_stats *st)
{
	struct cgrstat_overflow o;

	memset(st, 0, sizeof(*st));
	read_overflow(s, &o);
	st->tracked = s->skel->bss->nr_tracked;
	st->max_cgroups = bpf_map__max_entries(s->skel->maps.cgrp_totals);
	st->switches = charged_switches(s);
	st->read_errors = s->skel->bss->nr_collect_errors;
	st->flush_calls = s->skel->bss->nr_flush_calls;
	st->forgotten = s->skel->bss->nr_gc;
	st->dead_lost = s->skel->bss->nr_dead_lost;
	st->reflushes = s->skel->bss->nr_reflush;
	st->untracked = s->skel->bss->nr_untracked;
	st->unattributed_charges = o.slot_charges;
	st->unplaced = o.proxy_charges + s->skel->bss->nr_unplaced_passups;
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

	/* what every read checks: two counters, no system call */
	if (!s->skel->bss->nr_unattributed && !s->skel->bss->nr_dead_lost)
		return 0;
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
