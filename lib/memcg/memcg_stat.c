// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * memcg_stat: memory.stat fields through the bpf_mem_cgroup_* kfuncs (a
 * cgroup_iter program writing binary records), or by parsing memory.stat
 * on kernels without them. See memcg_stat.h.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgutil.h"
#include "memcg_stat.h"
#include "memcg_stat_abi.h"
#include "memcg_stat.skel.h"

#define DEFAULT_MAX_CGROUPS 4096
#define MSG_LEN 512
#define MAX_TERMS_PER_FIELD 3
#define TEXT_BUF_SIZE 16384

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

/* "libmemcgstat: MESSAGE\n" through the print callback; errno kept */
static void __attribute__((format(printf, 2, 3)))
say(enum memcg_stat_print_level level, const char *fmt, ...)
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

#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
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
		say(MEMCG_STAT_WARN, "memcg_stat_opts.sz is %zu: set it to "
		    "sizeof(struct memcg_stat_opts) (MEMCG_STAT_OPTS does)", opts->sz);
		return -EINVAL;
	}
	for (i = sizeof(*opts); i < opts->sz; i++) {
		if (p[i]) {
			say(MEMCG_STAT_WARN, "memcg_stat_opts has a field at byte %zu that "
			    "libmemcgstat %s does not know: build against this "
			    "library's header", i, memcg_stat_version_string());
			return -E2BIG;
		}
	}
	return 0;
}

/* memory.stat fields that are page (or byte) state items, from 6.12's
 * memory_stats[] table in mm/memcontrol.c. The kfunc returns them in
 * memory.stat's unit. "slab" is the sum of its two parts.
 */
struct state_field {
	const char *name;
	const char *items[2];
};

static const struct state_field state_fields[] = {
	{ "anon", { "NR_ANON_MAPPED" } },
	{ "file", { "NR_FILE_PAGES" } },
	{ "kernel", { "MEMCG_KMEM" } },
	{ "kernel_stack", { "NR_KERNEL_STACK_KB" } },
	{ "pagetables", { "NR_PAGETABLE" } },
	{ "sec_pagetables", { "NR_SECONDARY_PAGETABLE" } },
	{ "percpu", { "MEMCG_PERCPU_B" } },
	{ "sock", { "MEMCG_SOCK" } },
	{ "vmalloc", { "MEMCG_VMALLOC" } },
	{ "shmem", { "NR_SHMEM" } },
	{ "zswap", { "MEMCG_ZSWAP_B" } },
	{ "zswapped", { "MEMCG_ZSWAPPED" } },
	{ "file_mapped", { "NR_FILE_MAPPED" } },
	{ "file_dirty", { "NR_FILE_DIRTY" } },
	{ "file_writeback", { "NR_WRITEBACK" } },
	{ "swapcached", { "NR_SWAPCACHE" } },
	{ "anon_thp", { "NR_ANON_THPS" } },
	{ "file_thp", { "NR_FILE_THPS" } },
	{ "shmem_thp", { "NR_SHMEM_THPS" } },
	{ "inactive_anon", { "NR_INACTIVE_ANON" } },
	{ "active_anon", { "NR_ACTIVE_ANON" } },
	{ "inactive_file", { "NR_INACTIVE_FILE" } },
	{ "active_file", { "NR_ACTIVE_FILE" } },
	{ "unevictable", { "NR_UNEVICTABLE" } },
	{ "slab_reclaimable", { "NR_SLAB_RECLAIMABLE_B" } },
	{ "slab_unreclaimable", { "NR_SLAB_UNRECLAIMABLE_B" } },
	{ "slab", { "NR_SLAB_RECLAIMABLE_B", "NR_SLAB_UNRECLAIMABLE_B" } },
	{ "workingset_refault_anon", { "WORKINGSET_REFAULT_ANON" } },
	{ "workingset_refault_file", { "WORKINGSET_REFAULT_FILE" } },
	{ "workingset_activate_anon", { "WORKINGSET_ACTIVATE_ANON" } },
	{ "workingset_activate_file", { "WORKINGSET_ACTIVATE_FILE" } },
	{ "workingset_restore_anon", { "WORKINGSET_RESTORE_ANON" } },
	{ "workingset_restore_file", { "WORKINGSET_RESTORE_FILE" } },
	{ "workingset_nodereclaim", { "WORKINGSET_NODERECLAIM" } },
	{ "pgdemote_kswapd", { "PGDEMOTE_KSWAPD" } },
	{ "pgdemote_direct", { "PGDEMOTE_DIRECT" } },
	{ "pgdemote_khugepaged", { "PGDEMOTE_KHUGEPAGED" } },
	{ "pgpromote_success", { "PGPROMOTE_SUCCESS" } },
};

/* memory.stat's summed event fields; every other event is vm_event_name(),
 * i.e. the lower-case vm_event_item name.
 */
struct event_sum_field {
	const char *name;
	const char *items[MAX_TERMS_PER_FIELD];
};

static const struct event_sum_field event_sum_fields[] = {
	{ "pgscan", { "PGSCAN_KSWAPD", "PGSCAN_DIRECT", "PGSCAN_KHUGEPAGED" } },
	{ "pgsteal", { "PGSTEAL_KSWAPD", "PGSTEAL_DIRECT", "PGSTEAL_KHUGEPAGED" } },
};

/* Where the text backend finds a field. */
enum text_source { SRC_STAT, SRC_CURRENT, SRC_EVENTS, NR_SOURCES };

static const char *const source_file[NR_SOURCES] = {
	"memory.stat", "memory.current", "memory.events",
};

struct field {
	const char *name;	/* as requested */
	const char *key;	/* key in its text file */
	enum text_source src;
	int first_term;
	int nr_terms;
};

struct memcg_stat_target {
	enum memcg_stat_scope scope;
	int dirfd;				/* the cgroup directory */
	int fds[NR_SOURCES];			/* text, MEMCG_STAT_SELF */
	struct bpf_link *link;			/* bpf, iterator */
	uint64_t cgroup_id;			/* bpf, BPF_PROG_RUN */
};

struct memcg_stat_reader {
	enum memcg_stat_backend backend;
	const char *fallback_reason;
	unsigned int flags;
	unsigned int max_rows;
	int nr_fields;
	struct field *fields;
	bool need_src[NR_SOURCES];
	int nr_terms;
	__u32 term_kind[MEMCG_STAT_MAX_TERMS];
	__s32 term_idx[MEMCG_STAT_MAX_TERMS];
	struct memcg_stat *skel;
	struct memcg_stat_rec *recs;		/* mmap of the recs map */
	size_t recs_len;
	uint64_t *values;			/* max_rows * nr_fields */
	struct memcg_stat_row *rows;		/* max_rows */
	char *text;				/* TEXT_BUF_SIZE */
	int nr_rows;
};

/* ---- BTF name resolution ---- */

static bool btf_enum_value(const struct btf *btf, const char *enum_name,
			   const char *item, __s64 *value)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++, e++) {
		if (!strcmp(btf__name_by_offset(btf, e->name_off), item)) {
			*value = e->val;
			return true;
		}
	}
	return false;
}

static int add_term(struct memcg_stat_reader *r, __u32 kind, __s64 idx)
{
	if (r->nr_terms >= MEMCG_STAT_MAX_TERMS)
		return -E2BIG;
	r->term_kind[r->nr_terms] = kind;
	r->term_idx[r->nr_terms] = (__s32)idx;
	r->nr_terms++;
	return 0;
}

static int add_enum_term(struct memcg_stat_reader *r, const struct btf *btf,
			 const char *item)
{
	static const char *const state_enums[] = {
		"node_stat_item", "memcg_stat_item",
	};
	__s64 idx;
	size_t i;

	for (i = 0; i < sizeof(state_enums) / sizeof(state_enums[0]); i++)
		if (btf_enum_value(btf, state_enums[i], item, &idx))
			return add_term(r, MEMCG_TERM_PAGE_STATE, idx);
	if (btf_enum_value(btf, "vm_event_item", item, &idx))
		return add_term(r, MEMCG_TERM_VM_EVENT, idx);
	if (btf_enum_value(btf, "memcg_memory_event", item, &idx))
		return add_term(r, MEMCG_TERM_MEMORY_EVENT, idx);
	return -ENOENT;
}

/*
 * A field that memory.stat prints as a sum (pgscan, pgsteal, slab): the
 * items this kernel has. 6.1 has no PGSCAN_KHUGEPAGED, and its pgscan is
 * the sum of the other two; the field is unknown only when none exists.
 */
static int add_sum_terms(struct memcg_stat_reader *r, const struct btf *btf,
			 const char *const *items, size_t nr)
{
	int err = -ENOENT, one;
	size_t i;

	for (i = 0; i < nr && items[i]; i++) {
		one = add_enum_term(r, btf, items[i]);
		if (one && one != -ENOENT)
			return one;
		if (!one)
			err = 0;
	}
	return err;
}

static void upper_name(char *dst, size_t len, const char *prefix,
		       const char *name)
{
	size_t n = strlen(prefix), i;

	snprintf(dst, len, "%s%s", prefix, name);
	for (i = n; dst[i]; i++)
		dst[i] = toupper((unsigned char)dst[i]);
}

/* Fill f->src/key and, with @btf, the kfunc terms of one field. */
static int resolve_field(struct memcg_stat_reader *r, const struct btf *btf,
			 struct field *f)
{
	const char *const *items = NULL;
	char item[64];
	size_t i, nr = 0;
	int err;

	f->src = SRC_STAT;
	f->key = f->name;
	f->first_term = r->nr_terms;
	for (i = 0; i < sizeof(state_fields) / sizeof(state_fields[0]); i++)
		if (!strcmp(f->name, state_fields[i].name))
			items = state_fields[i].items, nr = 2;
	for (i = 0; i < sizeof(event_sum_fields) / sizeof(event_sum_fields[0]); i++)
		if (!strcmp(f->name, event_sum_fields[i].name))
			items = event_sum_fields[i].items, nr = MAX_TERMS_PER_FIELD;

	if (!strcmp(f->name, "usage")) {
		f->src = SRC_CURRENT;
		err = btf ? add_term(r, MEMCG_TERM_USAGE, 0) : 0;
	} else if (!strncmp(f->name, "events.", 7) && f->name[7]) {
		f->src = SRC_EVENTS;
		f->key = f->name + 7;
		upper_name(item, sizeof(item), "MEMCG_", f->key);
		err = btf ? add_enum_term(r, btf, item) : 0;
	} else if (items) {
		err = btf ? add_sum_terms(r, btf, items, nr) : 0;
	} else {
		/* any other memory.stat event is a vm_event_item */
		upper_name(item, sizeof(item), "", f->name);
		err = btf ? add_enum_term(r, btf, item) : 0;
	}
	f->nr_terms = r->nr_terms - f->first_term;
	r->need_src[f->src] = true;
	return err;
}

/* ---- bpf backend ---- */

static int bpf_backend_init(struct memcg_stat_reader *r)
{
	struct memcg_stat *skel;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	skel = memcg_stat__open();
	if (!skel)
		return -errno;
	skel->rodata->nr_terms = r->nr_terms;
	memcpy((void *)skel->rodata->term_kind, r->term_kind, sizeof(r->term_kind));
	memcpy((void *)skel->rodata->term_idx, r->term_idx, sizeof(r->term_idx));
	skel->rodata->flush = !(r->flags & MEMCG_STAT_NO_FLUSH);
	err = bpf_map__set_max_entries(skel->maps.recs, r->max_rows);
	if (!err)
		err = memcg_stat__load(skel);
	if (err) {
		memcg_stat__destroy(skel);
		return err;
	}
	r->skel = skel;
	r->recs_len = (sizeof(struct memcg_stat_rec) * r->max_rows + page - 1) /
		      page * page;
	r->recs = mmap(NULL, r->recs_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(skel->maps.recs), 0);
	if (r->recs == MAP_FAILED) {
		r->recs = NULL;
		return -errno;
	}
	return 0;
}

static struct bpf_link *bpf_attach(struct memcg_stat_reader *r, int dirfd,
				   enum memcg_stat_scope scope)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};

	info.cgroup.cgroup_fd = dirfd;
	info.cgroup.order = scope == MEMCG_STAT_SELF ?
		BPF_CGROUP_ITER_SELF_ONLY : BPF_CGROUP_ITER_DESCENDANTS_PRE;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	return bpf_program__attach_iter(r->skel->progs.memcg_stat, &opts);
}

static void bpf_fill_row(struct memcg_stat_reader *r, int i)
{
	const struct memcg_stat_rec *rec = &r->recs[i];
	struct memcg_stat_row *row = &r->rows[i];
	uint64_t *vals = r->values + (size_t)i * r->nr_fields;
	int f, t;

	row->cgroup_id = rec->cgroup_id;
	row->has_memcg = !(rec->flags & MEMCG_REC_NO_MEMCG);
	row->values = vals;
	for (f = 0; f < r->nr_fields; f++) {
		const struct field *fd = &r->fields[f];

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
static int bpf_run_one(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	struct memcg_stat_run_args args = { .cgroup_id = tg->cgroup_id };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(r->skel->progs.memcg_stat_one),
				   &opts))
		return -errno;
	if ((int)opts.retval < 0)
		return (int)opts.retval;
	r->nr_rows = 1;
	bpf_fill_row(r, 0);
	return 1;
}

static int bpf_read(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	char buf[8];
	int fd, i, n;

	if (!tg->link)
		return bpf_run_one(r, tg);
	r->skel->bss->nr_recs = 0;
	r->skel->bss->overflow = 0;
	fd = bpf_iter_create(bpf_link__fd(tg->link));
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf, sizeof(buf));
	} while (n > 0);
	i = n < 0 ? -errno : 0;
	close(fd);
	if (i)
		return i;
	if (r->skel->bss->overflow)
		return -ENOSPC;
	r->nr_rows = r->skel->bss->nr_recs;
	for (i = 0; i < r->nr_rows; i++)
		bpf_fill_row(r, i);
	return r->nr_rows;
}

/* ---- text backend ---- */

static int read_whole(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Find "key value\n" in @text; a single number if @key is NULL. */
static uint64_t text_value(const char *text, const char *key)
{
	size_t klen;
	const char *p;

	if (!key)
		return strtoull(text, NULL, 10);
	klen = strlen(key);
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtoull(p + klen + 1, NULL, 10);
	return MEMCG_STAT_NA;
}

static int text_open_sources(const struct memcg_stat_reader *r, int dirfd,
			     int fds[NR_SOURCES])
{
	int s;

	for (s = 0; s < NR_SOURCES; s++) {
		fds[s] = -1;
		/* memory.stat tells whether the memory controller is on */
		if (!r->need_src[s] && s != SRC_STAT)
			continue;
		fds[s] = openat(dirfd, source_file[s], O_RDONLY | O_CLOEXEC);
		if (fds[s] < 0 && errno != ENOENT)
			return -errno;
	}
	return 0;
}

static void close_fds(int fds[NR_SOURCES])
{
	int s;

	for (s = 0; s < NR_SOURCES; s++) {
		if (fds[s] >= 0)
			close(fds[s]);
		fds[s] = -1;
	}
}

/* Parse the text files of one cgroup into row @i. */
static int text_fill_row(struct memcg_stat_reader *r, int i, int dirfd,
			 const int fds[NR_SOURCES])
{
	struct memcg_stat_row *row = &r->rows[i];
	uint64_t *vals = r->values + (size_t)i * r->nr_fields;
	int s, f, err;

	err = cgutil_cgroup_id_at(dirfd, "", &row->cgroup_id);
	if (err)
		return err;
	row->has_memcg = fds[SRC_STAT] >= 0;
	row->values = vals;
	for (f = 0; f < r->nr_fields; f++)
		vals[f] = MEMCG_STAT_NA;
	for (s = 0; s < NR_SOURCES && row->has_memcg; s++) {
		if (fds[s] < 0 || !r->need_src[s])
			continue;
		err = read_whole(fds[s], r->text, TEXT_BUF_SIZE);
		if (err)
			return err;
		for (f = 0; f < r->nr_fields; f++)
			if (r->fields[f].src == (enum text_source)s)
				vals[f] = text_value(r->text, s == SRC_CURRENT ?
						     NULL : r->fields[f].key);
	}
	return 0;
}

static int text_read_one(struct memcg_stat_reader *r, int dirfd)
{
	int fds[NR_SOURCES], err;

	if (r->nr_rows >= (int)r->max_rows)
		return -ENOSPC;
	err = text_open_sources(r, dirfd, fds);
	if (!err)
		err = text_fill_row(r, r->nr_rows, dirfd, fds);
	close_fds(fds);
	if (!err)
		r->nr_rows++;
	return err;
}

/* Pre-order walk, like BPF_CGROUP_ITER_DESCENDANTS_PRE. */
static int text_read_tree(struct memcg_stat_reader *r, int dirfd)
{
	struct dirent *de;
	DIR *dir;
	int err, fd, sub;

	err = text_read_one(r, dirfd);
	if (err)
		return err;
	fd = dup(dirfd);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (!err && (de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;	/* removed meanwhile */
		err = text_read_tree(r, sub);
		close(sub);
	}
	closedir(dir);
	return err;
}

static int text_read(struct memcg_stat_reader *r, struct memcg_stat_target *tg)
{
	int err;

	r->nr_rows = 0;
	if (tg->scope == MEMCG_STAT_SUBTREE)
		err = text_read_tree(r, tg->dirfd);
	else
		err = text_fill_row(r, r->nr_rows++, tg->dirfd, tg->fds);
	return err ? err : r->nr_rows;
}

/* ---- reader ---- */

static const char *bpf_unusable(const struct btf *btf)
{
	if (!btf)
		return "no kernel BTF";
	if (btf__find_by_name_kind(btf, "bpf_mem_cgroup_page_state",
				   BTF_KIND_FUNC) < 0)
		return "kernel has no bpf_mem_cgroup_* kfuncs";
	return NULL;
}

/*
 * The cgroup2 root's memory.stat, NUL-terminated in @buf, or NULL when
 * there is none (no cgroup2 mount, an old kernel without it at the root).
 */
static const char *root_memory_stat(char *buf, size_t len)
{
	char root[4096], path[4096 + 16];
	ssize_t n;
	int fd;

	if (cgutil_cgroup2_root(root, sizeof(root)))
		return NULL;
	snprintf(path, sizeof(path), "%s/memory.stat", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* memory.stat text @stat has a line "@key value" */
static bool stat_has_key(const char *stat, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = stat; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return true;
	return false;
}

/*
 * A memory.stat field must be one this kernel prints: the enums may hold
 * an item that its memory.stat leaves out (6.1 has PGPROMOTE_SUCCESS, its
 * memory.stat no pgpromote_success), and the text backend could only
 * return "not available" for it.
 */
static int resolve_fields(struct memcg_stat_reader *r, const struct btf *btf,
			  const char *const *names)
{
	const char *stat = root_memory_stat(r->text, TEXT_BUF_SIZE);
	int i, err;

	for (i = 0; i < r->nr_fields; i++) {
		r->fields[i].name = names[i];
		err = resolve_field(r, btf, &r->fields[i]);
		if (!err && stat && r->fields[i].src == SRC_STAT &&
		    !stat_has_key(stat, r->fields[i].key))
			err = -ENOENT;
		if (err == -ENOENT)
			say(MEMCG_STAT_WARN, "%s: stat not known to the running kernel "
			    "(the names are memory.stat's, \"usage\" and "
			    "\"events.NAME\" of memory.events)", names[i]);
		else if (err)
			say(MEMCG_STAT_WARN, "%s: more than %d kfunc terms in all: "
			    "ask for fewer fields", names[i], MEMCG_STAT_MAX_TERMS);
		if (err)
			return err;
	}
	return 0;
}

static int alloc_buffers(struct memcg_stat_reader *r)
{
	r->values = calloc((size_t)r->max_rows * r->nr_fields, sizeof(*r->values));
	r->rows = calloc(r->max_rows, sizeof(*r->rows));
	r->text = malloc(TEXT_BUF_SIZE);
	return r->values && r->rows && r->text ? 0 : -ENOMEM;
}

/*
 * Pick the backend: bpf unless forced off, unusable or failing to load.
 * Field names are checked against the kernel's BTF whenever it has one,
 * whatever the backend.
 */
static int choose_backend(struct memcg_stat_reader *r, const char *const *names)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int err;

	if (r->flags & MEMCG_STAT_FORCE_TEXT)
		r->fallback_reason = "text backend requested";
	else
		r->fallback_reason = bpf_unusable(btf);
	err = resolve_fields(r, btf, names);
	btf__free(btf);
	if (err)
		return err;
	if (!r->fallback_reason) {
		err = bpf_backend_init(r);
		if (err)
			r->fallback_reason = "loading the bpf program failed";
	}
	r->backend = r->fallback_reason ? MEMCG_STAT_BACKEND_TEXT :
					  MEMCG_STAT_BACKEND_BPF;
	if (r->fallback_reason && (r->flags & MEMCG_STAT_FORCE_BPF)) {
		say(MEMCG_STAT_WARN, "the bpf backend was required, but %s: use a "
		    "kernel with the bpf_mem_cgroup_* kfuncs (7.0, or 6.12 with "
		    "kernel/backport-6.12), or the text backend", r->fallback_reason);
		return err ? err : -EOPNOTSUPP;
	}
	say(MEMCG_STAT_DEBUG, "backend %s%s%s%s",
	    memcg_stat_backend_name(r->backend), r->fallback_reason ? " (" : "",
	    r->fallback_reason ? r->fallback_reason : "", r->fallback_reason ? ")" : "");
	return 0;
}

struct memcg_stat_reader *memcg_stat_open(const char *const *fields, int nr_fields,
					   const struct memcg_stat_opts *opts)
{
	struct memcg_stat_reader *r;
	int err = opts_valid(opts);

	if (!err && (!fields || nr_fields <= 0 || nr_fields > MEMCG_STAT_MAX_TERMS)) {
		say(MEMCG_STAT_WARN, "%d fields asked for: give 1 to %d",
		    nr_fields, MEMCG_STAT_MAX_TERMS);
		err = -EINVAL;
	}
	r = err ? NULL : calloc(1, sizeof(*r));
	if (!r) {
		errno = err ? -err : ENOMEM;
		return NULL;
	}
	r->flags = OPTS_GET(opts, flags, 0);
	r->max_rows = OPTS_GET(opts, max_cgroups, 0) ?: DEFAULT_MAX_CGROUPS;
	r->nr_fields = nr_fields;
	r->fields = calloc(nr_fields, sizeof(*r->fields));
	err = r->fields ? alloc_buffers(r) : -ENOMEM;
	if (!err)
		err = choose_backend(r, fields);
	if (err) {
		memcg_stat_close(r);
		errno = -err;
		return NULL;
	}
	return r;
}

/* A single cgroup is read by id (BPF_PROG_RUN), a subtree by a walk. */
static int bpf_target_open(struct memcg_stat_reader *r,
			   struct memcg_stat_target *tg)
{
	if (tg->scope == MEMCG_STAT_SELF && !(r->flags & MEMCG_STAT_ITER_ALWAYS))
		return cgutil_cgroup_id_at(tg->dirfd, "", &tg->cgroup_id);
	tg->link = bpf_attach(r, tg->dirfd, tg->scope);
	return tg->link ? 0 : -errno;
}

struct memcg_stat_target *memcg_stat_target_open(struct memcg_stat_reader *r,
						 const char *cgroup_path,
						 enum memcg_stat_scope scope)
{
	struct memcg_stat_target *tg = calloc(1, sizeof(*tg));
	int err = 0;

	if (!tg)
		return NULL;
	tg->scope = scope;
	for (int s = 0; s < NR_SOURCES; s++)
		tg->fds[s] = -1;
	tg->dirfd = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tg->dirfd < 0) {
		err = -errno;
	} else if (!cgutil_is_cgroup2(cgroup_path)) {
		say(MEMCG_STAT_WARN, "%s is not a cgroup2 directory: give one below "
		    "the cgroup2 mount (grep cgroup2 /proc/self/mounts)", cgroup_path);
		err = -EINVAL;
	} else if (r->backend == MEMCG_STAT_BACKEND_BPF)
		err = bpf_target_open(r, tg);
	else if (scope == MEMCG_STAT_SELF)
		err = text_open_sources(r, tg->dirfd, tg->fds);
	if (err) {
		memcg_stat_target_close(tg);
		errno = -err;
		return NULL;
	}
	return tg;
}

int memcg_stat_read_target(struct memcg_stat_reader *r,
			   struct memcg_stat_target *tg)
{
	r->nr_rows = 0;
	if (r->backend == MEMCG_STAT_BACKEND_BPF)
		return bpf_read(r, tg);
	return text_read(r, tg);
}

void memcg_stat_target_close(struct memcg_stat_target *tg)
{
	if (!tg)
		return;
	bpf_link__destroy(tg->link);
	close_fds(tg->fds);
	if (tg->dirfd >= 0)
		close(tg->dirfd);
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

const struct memcg_stat_row *memcg_stat_row(const struct memcg_stat_reader *r,
					    int i)
{
	return i >= 0 && i < r->nr_rows ? &r->rows[i] : NULL;
}

enum memcg_stat_backend memcg_stat_backend(const struct memcg_stat_reader *r)
{
	return r->backend;
}

const char *memcg_stat_backend_name(enum memcg_stat_backend backend)
{
	return backend == MEMCG_STAT_BACKEND_BPF ? "bpf" : "text";
}

void memcg_stat_close(struct memcg_stat_reader *r)
{
	if (!r)
		return;
	if (r->recs)
		munmap(r->recs, r->recs_len);
	memcg_stat__destroy(r->skel);
	free(r->fields);
	free(r->values);
	free(r->rows);
	free(r->text);
	free(r);
}
