// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Field names (memory.stat's, "usage", "events.NAME") to the file and key
 * the text reader parses and to the kfunc calls ("terms") the kfunc reader
 * makes, through the running kernel's BTF enums. Whatever the reader, a
 * name must be one this kernel knows: in its BTF when it has one, and in
 * its root memory.stat.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "cgutil.h"
#include "memcg_int.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ITEMS 3

/*
 * memory.stat fields that are not the lower-case name of one vm_event_item:
 * page (or byte) state items, from 6.12's memory_stats[] table in
 * mm/memcontrol.c, which the kfunc returns in memory.stat's unit, and the
 * sums memory.stat prints (slab, pgscan, pgsteal).
 */
struct named_field {
	const char *name;
	const char *items[MAX_ITEMS];
};

static const struct named_field named_fields[] = {
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
	{ "pgscan", { "PGSCAN_KSWAPD", "PGSCAN_DIRECT", "PGSCAN_KHUGEPAGED" } },
	{ "pgsteal", { "PGSTEAL_KSWAPD", "PGSTEAL_DIRECT", "PGSTEAL_KHUGEPAGED" } },
};

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

static int add_term(struct memcg_terms *terms, __u32 kind, __s64 idx)
{
	if (terms->nr >= MEMCG_STAT_MAX_TERMS)
		return -E2BIG;
	terms->kind[terms->nr] = kind;
	terms->idx[terms->nr] = (__s32)idx;
	terms->nr++;
	return 0;
}

/* The term of enum item @item, from whichever of the kernel's enums has it. */
static int add_enum_term(struct memcg_terms *terms, const struct btf *btf,
			 const char *item)
{
	static const struct {
		const char *name;
		__u32 kind;
	} enums[] = {
		{ "node_stat_item", MEMCG_TERM_PAGE_STATE },
		{ "memcg_stat_item", MEMCG_TERM_PAGE_STATE },
		{ "vm_event_item", MEMCG_TERM_VM_EVENT },
		{ "memcg_memory_event", MEMCG_TERM_MEMORY_EVENT },
	};
	__s64 idx;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(enums); i++)
		if (btf_enum_value(btf, enums[i].name, item, &idx))
			return add_term(terms, enums[i].kind, idx);
	return -ENOENT;
}

/*
 * The items of a named field this kernel has. 6.1 has no
 * PGSCAN_KHUGEPAGED, and its pgscan is the sum of the other two: a field
 * is unknown only when none of its items exists.
 */
static int add_named_terms(struct memcg_terms *terms, const struct btf *btf,
			   const struct named_field *nf)
{
	int err = -ENOENT, one;
	size_t i;

	for (i = 0; i < MAX_ITEMS && nf->items[i]; i++) {
		one = add_enum_term(terms, btf, nf->items[i]);
		if (one && one != -ENOENT)
			return one;
		if (!one)
			err = 0;
	}
	return err;
}

static const struct named_field *named_field(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(named_fields); i++)
		if (!strcmp(name, named_fields[i].name))
			return &named_fields[i];
	return NULL;
}

/* @prefix then @name in upper case: "events.oom" -> "MEMCG_OOM" */
static void upper_name(char *dst, size_t len, const char *prefix, const char *name)
{
	size_t i;

	snprintf(dst, len, "%s%s", prefix, name);
	for (i = strlen(prefix); dst[i]; i++)
		dst[i] = toupper((unsigned char)dst[i]);
}

/* f->src and f->key and, with @btf, f's terms. */
static int resolve_field(struct memcg_terms *terms, const struct btf *btf,
			 struct memcg_field *f)
{
	const struct named_field *nf = named_field(f->name);
	char item[64];
	int err = 0;

	f->src = MEMCG_SRC_STAT;
	f->key = f->name;
	f->first_term = terms->nr;
	if (!strcmp(f->name, "usage")) {
		f->src = MEMCG_SRC_CURRENT;
		if (btf)
			err = add_term(terms, MEMCG_TERM_USAGE, 0);
	} else if (!strncmp(f->name, "events.", 7) && f->name[7]) {
		f->src = MEMCG_SRC_EVENTS;
		f->key = f->name + 7;
		upper_name(item, sizeof(item), "MEMCG_", f->key);
		if (btf)
			err = add_enum_term(terms, btf, item);
	} else if (nf) {
		if (btf)
			err = add_named_terms(terms, btf, nf);
	} else {
		/* any other memory.stat event is a vm_event_item */
		upper_name(item, sizeof(item), "", f->name);
		if (btf)
			err = add_enum_term(terms, btf, item);
	}
	f->nr_terms = terms->nr - f->first_term;
	return err;
}

/* The cgroup2 root's memory.stat in @buf, or NULL without one (no cgroup2
 * mount, or a kernel without memory.stat at the root). */
static const char *root_memory_stat(char *buf, size_t len)
{
	char root[4096];
	int dirfd, fd, err;

	if (cgutil_cgroup2_root(root, sizeof(root)))
		return NULL;
	dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return NULL;
	fd = openat(dirfd, "memory.stat", O_RDONLY | O_CLOEXEC);
	close(dirfd);
	if (fd < 0)
		return NULL;
	err = memcg_text_pread(fd, buf, len);
	close(fd);
	return err ? NULL : buf;
}

/*
 * A memory.stat field must be one this kernel prints: the enums may hold an
 * item its memory.stat leaves out (6.1 has PGPROMOTE_SUCCESS, its
 * memory.stat no pgpromote_success), and the text reader could only
 * return "not available" for it.
 */
static int check_field(struct memcg_stat_reader *r, const struct btf *btf,
		       struct memcg_field *f, const char *stat)
{
	uint64_t unused;
	int err = resolve_field(&r->terms, btf, f);

	if (!err && stat && f->src == MEMCG_SRC_STAT && !memcg_text_find(stat, f->key, &unused))
		err = -ENOENT;
	if (err == -ENOENT)
		memcg_say(MEMCG_STAT_WARN, "%s: stat not known to the running kernel "
			  "(the names are memory.stat's, \"usage\" and "
			  "\"events.NAME\" of memory.events)", f->name);
	else if (err)
		memcg_say(MEMCG_STAT_WARN, "%s: more than %d kfunc terms in all: "
			  "ask for fewer fields", f->name, MEMCG_STAT_MAX_TERMS);
	return err;
}

int memcg_fields_resolve(struct memcg_stat_reader *r, const struct btf *btf,
			 const char *const *names)
{
	char *buf = malloc(MEMCG_TEXT_MAX);
	const char *stat = buf ? root_memory_stat(buf, MEMCG_TEXT_MAX) : NULL;
	int i, err = buf ? 0 : -ENOMEM;

	for (i = 0; i < r->nr_fields && !err; i++) {
		r->fields[i].name = names[i];
		err = check_field(r, btf, &r->fields[i], stat);
		r->need_src[r->fields[i].src] = true;
	}
	free(buf);
	return err;
}
