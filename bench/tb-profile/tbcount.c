// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin (plugin API version 1, QEMU 7.2): counts the guest
 * instructions executed per translation block and writes, at exit,
 * "vaddr insns executions" for every block to the file given by out=PATH
 * (bench/tb-profile/run.sh loads it with -plugin).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t count;
	struct block *next;
};

#define HASH_SIZE (1 << 20)
static struct block *table[HASH_SIZE];
static char *out_path;

static uint64_t hash(uint64_t v, uint64_t n)
{
	return ((v ^ (n << 48)) * 0x9E3779B97F4A7C15ull) >> 44;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb), n = qemu_plugin_tb_n_insns(tb);
	uint64_t h = hash(va, n) & (HASH_SIZE - 1);
	struct block *b;

	(void)id;
	for (b = table[h]; b; b = b->next)
		if (b->vaddr == va && b->insns == n)
			break;
	if (!b) {
		b = calloc(1, sizeof(*b));
		b->vaddr = va;
		b->insns = n;
		b->next = table[h];
		table[h] = b;
	}
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->count, 1);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out_path, "w");
	struct block *b;
	size_t i;

	(void)id; (void)p;
	if (!f)
		return;
	for (i = 0; i < HASH_SIZE; i++)
		for (b = table[i]; b; b = b->next)
			if (b->count)
				fprintf(f, "%llx %llu %llu\n", (unsigned long long)b->vaddr,
					(unsigned long long)b->insns, (unsigned long long)b->count);
	fclose(f);
}

QEMU_PLUGIN_EXPORT
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	(void)info;
	out_path = "tbcount.txt";
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
