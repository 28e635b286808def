/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libmemcgstat's internals (not installed). memcg_stat.c is the API: it
 * resolves the field names (memcg_fields.c), picks one reader at open and
 * calls it only through its struct memcg_reader_ops:
 *   memcg_kfunc.c  the bpf_mem_cgroup_* kfuncs (memcg_stat.bpf.c), binary
 *   memcg_text.c   memory.stat, memory.current and memory.events parsed
 */
#ifndef MEMCG_INT_H
#define MEMCG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "memcg_stat.h"
#include "memcg_stat_abi.h"

struct btf;

/* "libmemcgstat: MESSAGE\n" through the print callback; errno is kept */
void memcg_say(enum memcg_stat_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The file of a cgroup's directory the text reader finds a field in. */
enum memcg_source { MEMCG_SRC_STAT, MEMCG_SRC_CURRENT, MEMCG_SRC_EVENTS, MEMCG_NR_SOURCES };

struct memcg_field {
	const char *name;		/* as requested */
	const char *key;		/* its key in the source file */
	enum memcg_source src;
	int first_term;			/* the kfunc terms summed into it */
	int nr_terms;
};

/* The kfunc calls that read every field, as memcg_stat.bpf.c takes them. */
struct memcg_terms {
	int nr;
	__u32 kind[MEMCG_STAT_MAX_TERMS];
	__s32 idx[MEMCG_STAT_MAX_TERMS];
};

struct memcg_stat_target {
	const struct memcg_reader_ops *ops;	/* its reader's, once it opened tg */
	enum memcg_stat_scope scope;
	char *path;			/* as the caller named it, for messages */
	int dirfd;			/* the cgroup's directory */
	uint64_t cgroup_id;
	void *priv;			/* the reader's own */
};

struct memcg_reader_ops;

struct memcg_stat_reader {
	const struct memcg_reader_ops *ops;
	unsigned int flags;		/* memcg_stat_opts.flags */
	unsigned int max_rows;
	int nr_fields;
	struct memcg_field *fields;
	bool need_src[MEMCG_NR_SOURCES];
	struct memcg_terms terms;
	uint64_t *values;		/* max_rows * nr_fields */
	struct memcg_stat_row *rows;	/* max_rows */
	int nr_rows;			/* of the last read */
	void *priv;			/* the reader's own */
};

/*
 * One way of reading the fields. Every function that fails returns a
 * negative errno and has said what to do through memcg_say(), but open(),
 * whose failure may only mean "use the next reader": it says nothing and
 * writes the reason to @why.
 */
struct memcg_reader_ops {
	enum memcg_stat_backend backend;
	/* Set up r->priv for r's resolved fields and terms. */
	int (*open)(struct memcg_stat_reader *r, const struct btf *btf, char *why,
		    size_t why_len);
	void (*close)(struct memcg_stat_reader *r);
	/* tg->priv for tg's cgroup (its dirfd and id are set) and scope. */
	int (*target_open)(struct memcg_stat_reader *r, struct memcg_stat_target *tg);
	void (*target_close)(struct memcg_stat_target *tg);
	/* Fill r->rows: returns their number (and sets r->nr_rows). */
	int (*read)(struct memcg_stat_reader *r, struct memcg_stat_target *tg);
	/* what to do when a read fails for a reason of this reader's own */
	const char *read_hint;
};

/* Say why @r reading @tg (@below it: "" for itself) failed with @err; @err. */
int memcg_say_read_error(const struct memcg_stat_reader *r, const struct memcg_stat_target *tg,
			 const char *below, int err);

extern const struct memcg_reader_ops memcg_kfunc_ops;
extern const struct memcg_reader_ops memcg_text_ops;

/*
 * Resolve r->nr_fields names into r->fields, r->terms (with @btf, the
 * running kernel's; may be NULL) and r->need_src; -ENOENT for a name this
 * kernel does not know, -E2BIG for too many terms, each said.
 */
int memcg_fields_resolve(struct memcg_stat_reader *r, const struct btf *btf,
			 const char *const *names);

/* The text scanner: the value of the line "@key VALUE" of @text (a
 * memory.stat or memory.events file); false if there is none. */
bool memcg_text_find(const char *text, const char *key, uint64_t *value);
/* The longest text file read (memory.stat: about 2 KiB on 7.3). */
#define MEMCG_TEXT_MAX 16384
/* The open file @fd read whole from its start into @buf (@len bytes at
 * least MEMCG_TEXT_MAX), NUL-terminated: 0 or -errno, -EFBIG if longer. */
int memcg_text_pread(int fd, char *buf, size_t len);

#endif
