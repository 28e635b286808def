// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for arm64 guests (plugin API version 1, QEMU 7.2):
 * counts the PMU register accesses the guest executes, one counter per
 * instruction, and writes at exit, for each kind, "vaddr 1 executions"
 * lines (the format of tbcount.c, so prof.py maps them to functions):
 *
 *   out=PREFIX  PREFIX-writes.txt  MSR to a PMU register
 *               PREFIX-reads.txt   MRS from a PMU register
 *               PREFIX-isb.txt     ISB (any: the driver follows its writes
 *                                  with one; other code issues them too)
 *
 * The PMU registers (Arm ARM, D24.5: the PMUv3 system registers) are
 * op0 = 3, op1 = 3, CRn = 9, CRm = 12..14 (PMCR, PMCNTENSET/CLR, PMOVSCLR,
 * PMSWINC, PMSELR, PMCEID, PMCCNTR, PMXEVTYPER/CNTR, PMUSERENR, PMOVSSET)
 * and CRm = 4 and 6, op2 = 0 (PMICNTR, PMICFILTR: FEAT_PMUv3_ICNTR);
 * op0 = 3, op1 = 3, CRn = 14, CRm = 8..15 (PMEVCNTR<n>,
 * PMEVTYPER<n>, PMCCFILTR); op0 = 3, op1 = 0, CRn = 9, CRm = 14, op2 = 1..2
 * (PMINTENSET/CLR_EL1) and op2 = 4 (PMUACR_EL1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

enum kind { PMU_WRITE, PMU_READ, ISB, NR_KINDS };
static const char *const kind_file[NR_KINDS] = { "writes", "reads", "isb" };

struct site {
	uint64_t vaddr;
	enum kind kind;
	uint64_t count;
	struct site *next;
};

#define HASH_SIZE (1 << 16)
static struct site *table[HASH_SIZE];
static const char *out_prefix = "pmuregs";

#define ISB_SY 0xd5033fdfu

/* PMU_WRITE, PMU_READ, ISB, or NR_KINDS for any other instruction */
static enum kind classify(uint32_t insn)
{
	uint32_t op0, op1, crn, crm, op2;

	if (insn == ISB_SY)
		return ISB;
	/* MSR/MRS (register): 1101 0101 00 L 1 o0 op1 CRn CRm op2 Rt */
	if ((insn & 0xffd00000u) != 0xd5100000u)
		return NR_KINDS;
	op0 = 2 + ((insn >> 19) & 1);
	op1 = (insn >> 16) & 7;
	crn = (insn >> 12) & 15;
	crm = (insn >> 8) & 15;
	op2 = (insn >> 5) & 7;
	if (op0 != 3 ||
	    !((op1 == 3 && crn == 9 && crm >= 12 && crm <= 14) ||
	      (op1 == 3 && crn == 9 && (crm == 4 || crm == 6) && op2 == 0) ||
	      (op1 == 3 && crn == 14 && crm >= 8) ||
	      (op1 == 0 && crn == 9 && crm == 14 && (op2 == 1 || op2 == 2 || op2 == 4))))
		return NR_KINDS;
	return insn & (1u << 21) ? PMU_READ : PMU_WRITE;
}

static struct site *site_of(uint64_t vaddr, enum kind kind)
{
	uint64_t h = ((vaddr >> 2) * 0x9E3779B97F4A7C15ull) >> 48;
	struct site *s;

	for (s = table[h]; s; s = s->next)
		if (s->vaddr == vaddr)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->vaddr = vaddr;
	s->kind = kind;
	s->next = table[h];
	table[h] = s;
	return s;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t word;
		enum kind k;

		if (qemu_plugin_insn_size(insn) != sizeof(word))
			continue;
		memcpy(&word, qemu_plugin_insn_data(insn), sizeof(word));
		k = classify(word);
		if (k == NR_KINDS)
			continue;
		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
			&site_of(qemu_plugin_insn_vaddr(insn), k)->count, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	char path[4096];
	struct site *s;
	FILE *f;
	size_t i;
	int k;

	(void)id; (void)p;
	for (k = 0; k < NR_KINDS; k++) {
		snprintf(path, sizeof(path), "%s-%s.txt", out_prefix, kind_file[k]);
		f = fopen(path, "w");
		if (!f)
			continue;
		for (i = 0; i < HASH_SIZE; i++)
			for (s = table[i]; s; s = s->next)
				if (s->kind == (enum kind)k && s->count)
					fprintf(f, "%llx 1 %llu\n", (unsigned long long)s->vaddr,
						(unsigned long long)s->count);
		fclose(f);
	}
}

QEMU_PLUGIN_EXPORT
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_prefix = strdup(argv[i] + 4);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
