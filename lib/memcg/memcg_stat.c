// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * memcg_stat: memory.stat fields of a cgroup or a cgroup subtree, through
 * the bpf_mem_cgroup_* kfuncs (memcg_kfunc.c) or memory.stat's text
 * (memcg_text.c): one of the two readers, chosen at open, behind struct
 * memcg_reader_ops (memcg_int.h). This file is the API of memcg_stat.h:
 * version, messages, options, the choice of the reader, targets and rows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "cgutil.h"
#include "memcg_int.h"

#define DEFAULT_MAX_CGROUPS 4096
#define MSG_LEN 512
#define WHY_LEN 160
#define KNOWN_FLAGS (MEMCG_STAT_FORCE_TEXT | MEMCG_STAT_FORCE_BPF | MEMCG_STAT_NO_FLUSH | \
		     MEMCG_STAT_ITER_ALWAYS)

/* ---- version, messages, options (libbpf's conventions) ---- */

uint32_t memcg_stat_major_version(void)
{
	return MEMCG_STAT_MAJOR_VERSION;
}

uint32_t memcg_stat_minor_version(void)
{
	return MEMCG_STAT_MINOR_VERSION;
}

#define STR(x) #x
#define XSTR(x) STR(x)

const char *memcg_stat_version_string(void)
{
	return "v" XSTR(MEMCG_STAT_MAJOR_VERSION) "." XSTR(MEMCG_STAT_MINOR_VERSION) "."
	       XSTR(MEMCG_STAT_PATCH_VERSION);
}

static int default_print(enum memcg_stat_print_level level, const char *fmt,
			 va_list ap)
{
	return level == MEMCG_STAT_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static memcg_stat_print_fn_t print_fn = default_print;

memcg_stat_print_fn_t memcg_stat_set_print(memcg_stat_print_fn_t fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_SEQ_CST);
}

static void call_print(memcg_stat_print_fn_t fn, enum memcg_stat_print_level level,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}

void memcg_say(enum memcg_stat_print_level level, const char *fmt, ...)
{
	memcg_stat_print_fn_t fn = __atomic_load_n(&print_fn, __ATOMIC_SEQ_CST);
	int saved = errno;
	char msg[MSG_LEN];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	call_print(fn, level, "libmemcgstat: %s\n", msg);
	errno = saved;
}

int memcg_say_read_error(const struct memcg_stat_reader *r, const struct memcg_stat_target *tg,
			 const char *below, int err)
{
	const char *sep = *below ? "/" : "";

	if (err == -ENOSPC)
		memcg_say(MEMCG_STAT_WARN, "%s: more than max_cgroups (%u) cgroups: raise "
			  "memcg_stat_opts.max_cgroups", tg->path, r->max_rows);
	else if (err == -ENOENT || err == -ENODEV)
		memcg_say(MEMCG_STAT_WARN, "%s%s%s: the cgroup was removed: open it "
			  "again once it exists", tg->path, sep, below);
	else
		memcg_say(MEMCG_STAT_WARN, "%s%s%s: the %s backend cannot read it (%s): %s",
			  tg->path, sep, below, memcg_stat_backend_name(r->ops->backend),
			  strerror(-err), r->ops->read_hint);
	return err;
}

#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
/* the fields this library knows end here (libbpf's OPTS_VALID) */
#define OPTS_KNOWN_END offsetofend(struct memcg_stat_opts, memcg_stat_opts__last_field)
/* a field the caller's (older, smaller) struct has, as libbpf's OPTS_GET */
#define OPTS_GET(opts, field, fallback)						\
	((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), field) ?		\
	 (opts)->field : (fallback))

/* 0, -EINVAL (sz too small to be a size), -E2BIG (unknown non-zero tail) */
static int opts_valid(const struct memcg_stat_opts *opts)
{
	const char *p = (const char *)opts;
	size_t i;

	if (!opts)
		return 0;
	if (opts->sz < sizeof(size_t)) {
		memcg_say(MEMCG_STAT_WARN, "memcg_stat_opts.sz is %zu: set it to "
			  "sizeof(struct memcg_stat_opts) (MEMCG_STAT_OPTS does)", opts->sz);
		return -EINVAL;
	}
	for (i = OPTS_KNOWN_END; i < opts->sz; i++) {
		if (p[i]) {
			memcg_say(MEMCG_STAT_WARN, "memcg_stat_opts has a field at byte %zu "
				  "that libmemcgstat %s does not know: build against this "
				  "library's header", i, memcg_stat_version_string());
			return -E2BIG;
		}
	}
	return 0;
}

static int args_valid(const char *const *fields, int nr_fields, unsigned int flags)
{
	int i;

	if (!fields || nr_fields <= 0 || nr_fields > MEMCG_STAT_MAX_TERMS) {
		memcg_say(MEMCG_STAT_WARN, "%d fields asked for: give 1 to %d",
			  nr_fields, MEMCG_STAT_MAX_TERMS);
		return -EINVAL;
	}
	for (i = 0; i < nr_fields; i++) {
		if (!fields[i]) {
			memcg_say(MEMCG_STAT_WARN, "field %d of %d is NULL: give %d names",
				  i, nr_fields, nr_fields);
			return -EINVAL;
		}
	}
	if (flags & ~KNOWN_FLAGS) {
		memcg_say(MEMCG_STAT_WARN, "memcg_stat_opts.flags 0x%x has bits libmemcgstat "
			  "%s does not know: build against this library's header",
			  flags & ~KNOWN_FLAGS, memcg_stat_version_string());
		return -EINVAL;
	}
	if ((flags & MEMCG_STAT_FORCE_TEXT) && (flags & MEMCG_STAT_FORCE_BPF)) {
		memcg_say(MEMCG_STAT_WARN, "MEMCG_STAT_FORCE_TEXT and MEMCG_STAT_FORCE_BPF "
			  "exclude each other: set one");
		return -EINVAL;
	}
	return 0;
}

/* ---- the reader ---- */

static int alloc_buffers(struct memcg_stat_reader *r)
{
	r->fields = calloc(r->nr_fields, sizeof(*r->fields));
	r->values = calloc((size_t)r->max_rows * r->nr_fields, sizeof(*r->values));
	r->rows = calloc(r->max_rows, sizeof(*r->rows));
	if (r->fields && r->values && r->rows)
		return 0;
	memcg_say(MEMCG_STAT_WARN, "no memory for %u cgroups of %d fields: lower "
		  "memcg_stat_opts.max_cgroups", r->max_rows, r->nr_fields);
	return -ENOMEM;
}

/*
 * Open the first reader that works on this kernel: the kfunc reader, then
 * the text one; only one of them when a flag says so. The choice, and why
 * not the kfuncs, is said at MEMCG_STAT_DEBUG.
 */
static int open_reader(struct memcg_stat_reader *r, const struct btf *btf)
{
	char why[WHY_LEN] = "text backend requested";
	int err;

	if (!(r->flags & MEMCG_STAT_FORCE_TEXT)) {
		r->ops = &memcg_kfunc_ops;
		err = r->ops->open(r, btf, why, sizeof(why));
		if (!err) {
			memcg_say(MEMCG_STAT_DEBUG, "backend bpf");
			return 0;
		}
		if (r->flags & MEMCG_STAT_FORCE_BPF) {
			memcg_say(MEMCG_STAT_WARN, "the bpf backend was required, but %s: %s", why,
				  err == -EOPNOTSUPP ? "use a kernel with the bpf_mem_cgroup_* "
				  "kfuncs (7.0, or 6.12 with kernel/backport-6.12), or the text "
				  "backend" : "run as root (CAP_BPF and CAP_PERFMON), or use the "
				  "text backend");
			r->ops = NULL;
			return err;
		}
	}
	r->ops = &memcg_text_ops;
	err = r->ops->open(r, btf, why, sizeof(why));
	if (err) {
		r->ops = NULL;
		return err;
	}
	memcg_say(MEMCG_STAT_DEBUG, "backend text (%s)", why);
	return 0;
}

struct memcg_stat_reader *memcg_stat_open(const char *const *fields, int nr_fields,
					   const struct memcg_stat_opts *opts)
{
	struct memcg_stat_reader *r = NULL;
	struct btf *btf;
	int err;

	err = opts_valid(opts);
	if (!err)
		err = args_valid(fields, nr_fields, OPTS_GET(opts, flags, 0));
	if (!err) {
		r = calloc(1, sizeof(*r));
		err = r ? 0 : -ENOMEM;
	}
	if (err) {
		errno = -err;
		return NULL;
	}
	r->flags = OPTS_GET(opts, flags, 0);
	r->max_rows = OPTS_GET(opts, max_cgroups, 0) ?: DEFAULT_MAX_CGROUPS;
	r->nr_fields = nr_fields;
	err = alloc_buffers(r);
	if (!err) {
		/* names are checked against the kernel's BTF whatever the reader */
		btf = btf__load_vmlinux_btf();
		err = memcg_fields_resolve(r, btf, fields);
		if (!err)
			err = open_reader(r, btf);
		btf__free(btf);
	}
	if (err) {
		memcg_stat_close(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void memcg_stat_close(struct memcg_stat_reader *r)
{
	if (!r)
		return;
	if (r->ops)
		r->ops->close(r);
	free(r->fields);
	free(r->values);
	free(r->rows);
	free(r);
}

/* ---- targets and rows ---- */

/* tg's cgroup: a cgroup2 directory, its id */
static int open_cgroup(struct memcg_stat_target *tg, const char *cgroup_path)
{
	int err;

	tg->dirfd = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tg->dirfd < 0) {
		err = -errno;
		memcg_say(MEMCG_STAT_WARN, "%s: cannot open it (%s): give a cgroup "
			  "directory below the cgroup2 mount", cgroup_path, strerror(-err));
		return err;
	}
	if (!cgutil_is_cgroup2(cgroup_path)) {
		memcg_say(MEMCG_STAT_WARN, "%s is not a cgroup2 directory: give one below "
			  "the cgroup2 mount (grep cgroup2 /proc/self/mounts)", cgroup_path);
		return -EINVAL;
	}
	err = cgutil_cgroup_id_at(tg->dirfd, "", &tg->cgroup_id);
	if (err)
		memcg_say(MEMCG_STAT_WARN, "%s: cannot read its cgroup id (%s): check "
			  "that the file system supports file handles", cgroup_path,
			  strerror(-err));
	return err;
}

struct memcg_stat_target *memcg_stat_target_open(struct memcg_stat_reader *r,
						 const char *cgroup_path,
						 enum memcg_stat_scope scope)
{
	struct memcg_stat_target *tg;
	int err = -EINVAL;

	if (!r || !cgroup_path || (scope != MEMCG_STAT_SELF && scope != MEMCG_STAT_SUBTREE)) {
		memcg_say(MEMCG_STAT_WARN, "a target needs a reader, a cgroup path and "
			  "MEMCG_STAT_SELF or MEMCG_STAT_SUBTREE");
		errno = EINVAL;
		return NULL;
	}
	tg = calloc(1, sizeof(*tg));
	if (tg) {
		tg->scope = scope;
		tg->dirfd = -1;
		tg->path = strdup(cgroup_path);
		err = tg->path ? open_cgroup(tg, cgroup_path) : -ENOMEM;
	}
	if (tg && !err) {
		err = r->ops->target_open(r, tg);
		if (err)
			tg->priv = NULL;
		else
			tg->ops = r->ops;
	}
	if (!tg || err) {
		memcg_stat_target_close(tg);
		errno = tg ? -err : ENOMEM;
		return NULL;
	}
	return tg;
}

int memcg_stat_read_target(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	if (!r || !tg)
		return -EINVAL;
	return r->ops->read(r, tg);
}

void memcg_stat_target_close(struct memcg_stat_target *tg)
{
	if (!tg)
		return;
	if (tg->ops)
		tg->ops->target_close(tg);
	if (tg->dirfd >= 0)
		close(tg->dirfd);
	free(tg->path);
	free(tg);
}

int memcg_stat_read(struct memcg_stat_reader *r, const char *cgroup_path,
		    enum memcg_stat_scope scope)
{
	struct memcg_stat_target *tg;
	int ret;

	tg = memcg_stat_target_open(r, cgroup_path, scope);
	if (!tg)
		return -errno;
	ret = memcg_stat_read_target(r, tg);
	memcg_stat_target_close(tg);
	return ret;
}

const struct memcg_stat_row *memcg_stat_row(const struct memcg_stat_reader *r, int i)
{
	return r && i >= 0 && i < r->nr_rows ? &r->rows[i] : NULL;
}

enum memcg_stat_backend memcg_stat_backend(const struct memcg_stat_reader *r)
{
	return r->ops->backend;
}

const char *memcg_stat_backend_name(enum memcg_stat_backend backend)
{
	return backend == MEMCG_STAT_BACKEND_BPF ? "bpf" : "text";
}
