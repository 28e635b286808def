// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The kfunc reader: memcg_stat.bpf.c calls the bpf_mem_cgroup_* kfuncs
 * (Linux 7.0, or 6.12 with kernel/backport-6.12) and writes one binary
 * record per cgroup into an mmap()ed array map. A subtree is one walk of
 * the sleepable cgroup_iter program; a single cgroup is one BPF_PROG_RUN
 * of the syscall program, by id, unless MEMCG_STAT_ITER_ALWAYS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "memcg_int.h"
#include "memcg_stat.skel.h"

struct kfunc_reader {
	struct memcg_stat *skel;
	struct memcg_stat_rec *recs;	/* mmap of the recs map */
	size_t recs_len;
};

/* NULL, or why this kernel cannot run the kfunc reader */
static const char *kfuncs_missing(const struct btf *btf)
{
	if (!btf)
		return "no kernel BTF";
	if (btf__find_by_name_kind(btf, "bpf_mem_cgroup_page_state", BTF_KIND_FUNC) < 0)
		return "kernel has no bpf_mem_cgroup_* kfuncs";
	return NULL;
}

static int load(struct kfunc_reader *k, const struct memcg_stat_reader *r)
{
	long page = sysconf(_SC_PAGESIZE);
	struct memcg_stat *skel;
	int err;

	skel = memcg_stat__open();
	if (!skel)
		return -errno;
	k->skel = skel;
	skel->rodata->nr_terms = r->terms.nr;
	memcpy((void *)skel->rodata->term_kind, r->terms.kind, sizeof(r->terms.kind));
	memcpy((void *)skel->rodata->term_idx, r->terms.idx, sizeof(r->terms.idx));
	skel->rodata->flush = !(r->flags & MEMCG_STAT_NO_FLUSH);
	err = bpf_map__set_max_entries(skel->maps.recs, r->max_rows);
	if (!err)
		err = memcg_stat__load(skel);
	if (err)
		return err;
	k->recs_len = (sizeof(struct memcg_stat_rec) * r->max_rows + page - 1) / page * page;
	k->recs = mmap(NULL, k->recs_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(skel->maps.recs), 0);
	if (k->recs == MAP_FAILED) {
		k->recs = NULL;
		return -errno;
	}
	return 0;
}

static void kfunc_close(struct memcg_stat_reader *r)
{
	struct kfunc_reader *k = r->priv;

	if (!k)
		return;
	if (k->recs)
		munmap(k->recs, k->recs_len);
	memcg_stat__destroy(k->skel);
	free(k);
	r->priv = NULL;
}

static int kfunc_open(struct memcg_stat_reader *r, const struct btf *btf, char *why,
		      size_t why_len)
{
	const char *missing = kfuncs_missing(btf);
	int err;

	if (missing) {
		snprintf(why, why_len, "%s", missing);
		return -EOPNOTSUPP;
	}
	r->priv = calloc(1, sizeof(struct kfunc_reader));
	if (!r->priv)
		return -ENOMEM;
	err = load(r->priv, r);
	if (err) {
		snprintf(why, why_len, "loading the bpf program failed: %s", strerror(-err));
		kfunc_close(r);
	}
	return err;
}

/* A walk needs an iterator link; a single cgroup is read by its id. */
static int kfunc_target_open(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	struct kfunc_reader *k = r->priv;
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	int err;

	if (tg->scope == MEMCG_STAT_SELF && !(r->flags & MEMCG_STAT_ITER_ALWAYS))
		return 0;
	info.cgroup.cgroup_fd = tg->dirfd;
	info.cgroup.order = tg->scope == MEMCG_STAT_SELF ?
		BPF_CGROUP_ITER_SELF_ONLY : BPF_CGROUP_ITER_DESCENDANTS_PRE;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	tg->priv = bpf_program__attach_iter(k->skel->progs.memcg_stat, &opts);
	if (tg->priv)
		return 0;
	err = -errno;
	memcg_say(MEMCG_STAT_WARN, "%s: cannot attach the cgroup iterator (%s): "
		  "run as root (CAP_BPF and CAP_PERFMON), or use the text backend",
		  tg->path, strerror(-err));
	return err;
}

static void kfunc_target_close(struct memcg_stat_target *tg)
{
	bpf_link__destroy(tg->priv);
}

static void fill_row(struct memcg_stat_reader *r, int i)
{
	const struct memcg_stat_rec *rec = &((struct kfunc_reader *)r->priv)->recs[i];
	struct memcg_stat_row *row = &r->rows[i];
	uint64_t *vals = r->values + (size_t)i * r->nr_fields;
	int f, t;

	row->cgroup_id = rec->cgroup_id;
	row->has_memcg = !(rec->flags & MEMCG_REC_NO_MEMCG);
	row->values = vals;
	for (f = 0; f < r->nr_fields; f++) {
		const struct memcg_field *fd = &r->fields[f];

		vals[f] = 0;
		for (t = fd->first_term; t < fd->first_term + fd->nr_terms; t++) {
			if (!row->has_memcg || rec->val[t] == (__u64)-1) {
				vals[f] = MEMCG_STAT_NA;
				break;
			}
			vals[f] += rec->val[t];
		}
	}
}

/* One cgroup: run memcg_stat_one, no iterator fd to set up. */
static int run_one(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	struct kfunc_reader *k = r->priv;
	struct memcg_stat_run_args args = { .cgroup_id = tg->cgroup_id };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.memcg_stat_one), &opts))
		return -errno;
	if ((int)opts.retval < 0)
		return (int)opts.retval;
	r->nr_rows = 1;
	return 0;
}

/* A walk: read() the iterator to its end. */
static int run_walk(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	struct kfunc_reader *k = r->priv;
	char buf[8];
	int fd, n;

	k->skel->bss->nr_recs = 0;
	k->skel->bss->overflow = 0;
	fd = bpf_iter_create(bpf_link__fd(tg->priv));
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf, sizeof(buf));
	} while (n > 0);
	n = n < 0 ? -errno : 0;
	close(fd);
	if (n)
		return n;
	if (k->skel->bss->overflow)
		return -ENOSPC;
	r->nr_rows = k->skel->bss->nr_recs;
	return 0;
}

static int kfunc_read(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	int err, i;

	r->nr_rows = 0;
	err = tg->priv ? run_walk(r, tg) : run_one(r, tg);
	if (err)
		return memcg_say_read_error(r, tg, "", err);
	for (i = 0; i < r->nr_rows; i++)
		fill_row(r, i);
	return r->nr_rows;
}

const struct memcg_reader_ops memcg_kfunc_ops = {
	.backend = MEMCG_STAT_BACKEND_BPF,
	.open = kfunc_open,
	.close = kfunc_close,
	.target_open = kfunc_target_open,
	.target_close = kfunc_target_close,
	.read = kfunc_read,
	.read_hint = "use the text backend (MEMCG_STAT_FORCE_TEXT)",
};
