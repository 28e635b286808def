// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The text reader: memory.stat, memory.current and memory.events of each
 * cgroup, parsed. For kernels without the bpf_mem_cgroup_* kfuncs. A
 * single cgroup keeps its files open between reads; a subtree is read by
 * cgutil_walk(), parents first, as the kfunc reader's cgroup_iter walks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgutil.h"
#include "memcg_int.h"

static const char *const source_file[MEMCG_NR_SOURCES] = {
	[MEMCG_SRC_STAT] = "memory.stat",
	[MEMCG_SRC_CURRENT] = "memory.current",
	[MEMCG_SRC_EVENTS] = "memory.events",
};

/* One cgroup's open files; -1 for a file not needed or absent. */
struct text_files {
	int fd[MEMCG_NR_SOURCES];
};

bool memcg_text_find(const char *text, const char *key, uint64_t *value)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			*value = strtoull(p + klen + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

int memcg_text_pread(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, 0);

	if (n < 0)
		return -errno;
	if ((size_t)n == len)
		return -EFBIG;
	buf[n] = '\0';
	return 0;
}

static void close_files(struct text_files *tf)
{
	int s;

	for (s = 0; s < MEMCG_NR_SOURCES; s++) {
		if (tf->fd[s] >= 0)
			close(tf->fd[s]);
		tf->fd[s] = -1;
	}
}

/* Open the files @r needs in the cgroup @dirfd; memory.stat always, as it
 * tells whether the memory controller is on there. */
static int open_files(const struct memcg_stat_reader *r, int dirfd, struct text_files *tf)
{
	int s, err;

	for (s = 0; s < MEMCG_NR_SOURCES; s++)
		tf->fd[s] = -1;
	for (s = 0; s < MEMCG_NR_SOURCES; s++) {
		if (!r->need_src[s] && s != MEMCG_SRC_STAT)
			continue;
		tf->fd[s] = openat(dirfd, source_file[s], O_RDONLY | O_CLOEXEC);
		if (tf->fd[s] < 0 && errno != ENOENT) {
			err = -errno;
			close_files(tf);
			return err;
		}
	}
	return 0;
}

/* The values of one source file into @vals. */
static int parse_source(struct memcg_stat_reader *r, enum memcg_source s, int fd,
			uint64_t *vals)
{
	char *text = r->priv;
	int f, err;

	err = memcg_text_pread(fd, text, MEMCG_TEXT_MAX);
	if (err)
		return err;
	for (f = 0; f < r->nr_fields; f++) {
		if (r->fields[f].src != s)
			continue;
		if (s == MEMCG_SRC_CURRENT)
			vals[f] = strtoull(text, NULL, 10);
		else if (!memcg_text_find(text, r->fields[f].key, &vals[f]))
			vals[f] = MEMCG_STAT_NA;
	}
	return 0;
}

/* Row r->nr_rows from one cgroup's open files. */
static int fill_row(struct memcg_stat_reader *r, uint64_t cgroup_id,
		    const struct text_files *tf)
{
	struct memcg_stat_row *row = &r->rows[r->nr_rows];
	uint64_t *vals = r->values + (size_t)r->nr_rows * r->nr_fields;
	int s, f, err;

	row->cgroup_id = cgroup_id;
	row->has_memcg = tf->fd[MEMCG_SRC_STAT] >= 0;
	row->values = vals;
	for (f = 0; f < r->nr_fields; f++)
		vals[f] = MEMCG_STAT_NA;
	for (s = 0; s < MEMCG_NR_SOURCES && row->has_memcg; s++) {
		if (tf->fd[s] < 0 || !r->need_src[s])
			continue;
		err = parse_source(r, s, tf->fd[s], vals);
		if (err)
			return err;
	}
	r->nr_rows++;
	return 0;
}

struct walk_ctx {
	struct memcg_stat_reader *r;
	const struct memcg_stat_target *tg;
	bool said;		/* the failure is told */
};

/* One cgroup of the walk. One removed meanwhile is left out, as
 * cgutil_walk() leaves out one removed before it comes to it. */
static int read_walked(const struct cgutil_walk_entry *e, void *ctx)
{
	struct walk_ctx *w = ctx;
	struct memcg_stat_reader *r = w->r;
	struct text_files tf;
	int err = -ENOSPC;

	if (r->nr_rows < (int)r->max_rows) {
		err = open_files(r, e->dirfd, &tf);
		if (!err)
			err = fill_row(r, e->id, &tf);
		close_files(&tf);
	}
	if (err == -ENODEV && e->depth > 0)
		return 0;
	if (err) {
		w->said = true;
		memcg_say_read_error(r, w->tg, e->path, err);
	}
	return err;
}

static int text_read(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	struct walk_ctx w = { .r = r, .tg = tg };
	int err;

	r->nr_rows = 0;
	if (tg->scope == MEMCG_STAT_SUBTREE)
		err = cgutil_walk(tg->dirfd, 0, read_walked, &w, NULL);
	else
		err = fill_row(r, tg->cgroup_id, tg->priv);
	if (err && !w.said)
		memcg_say_read_error(r, tg, "", err);
	return err ? err : r->nr_rows;
}

static int text_target_open(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	struct text_files *tf;
	int err;

	if (tg->scope != MEMCG_STAT_SELF)
		return 0;
	tf = malloc(sizeof(*tf));
	if (!tf)
		return -ENOMEM;
	err = open_files(r, tg->dirfd, tf);
	if (err) {
		free(tf);
		return memcg_say_read_error(r, tg, "", err);
	}
	tg->priv = tf;
	return 0;
}

static void text_target_close(struct memcg_stat_target *tg)
{
	if (tg->priv)
		close_files(tg->priv);
	free(tg->priv);
}

/* r->priv: the buffer each file is read into */
static int text_open(struct memcg_stat_reader *r, const struct btf *btf, char *why,
		     size_t why_len)
{
	(void)btf;
	(void)why;
	(void)why_len;
	r->priv = malloc(MEMCG_TEXT_MAX);
	return r->priv ? 0 : -ENOMEM;
}

static void text_close(struct memcg_stat_reader *r)
{
	free(r->priv);
}

const struct memcg_reader_ops memcg_text_ops = {
	.backend = MEMCG_STAT_BACKEND_TEXT,
	.open = text_open,
	.close = text_close,
	.target_open = text_target_open,
	.target_close = text_target_close,
	.read = text_read,
	.read_hint = "check that the cgroup's memory files are readable",
};
