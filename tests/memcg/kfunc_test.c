// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf_mem_cgroup_* kfuncs themselves: invalid indexes return
 * (unsigned long)-1 (and, with check.sh's log scan, never WARN), valid ones
 * match memory.stat / memory.current / memory.events of an idle cgroup,
 * the root memcg is reachable, every program type may call them, and the
 * verifier enforces KF_SLEEPABLE, KF_ACQUIRE/KF_RELEASE and trusted args.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "harness.h"
#include "kfunc_bounds.skel.h"
#include "mcg_util.h"

static int enum_val(const struct btf *btf, const char *type, const char *name)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	for (i = 0, e = btf_enum(t); i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
			return e->val;
	return -1;
}

static int set_indexes(struct kfunc_bounds *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct kfunc_bounds__rodata *ro = skel->rodata;

	if (!btf)
		return -1;
	ro->anon_idx = enum_val(btf, "node_stat_item", "NR_ANON_MAPPED");
	ro->untracked_state = enum_val(btf, "node_stat_item", "NR_ISOLATED_ANON");
	ro->nr_memcg_stat = enum_val(btf, "memcg_stat_item", "MEMCG_NR_STAT");
	ro->pgfault_idx = enum_val(btf, "vm_event_item", "PGFAULT");
	ro->untracked_event = enum_val(btf, "vm_event_item", "PGFREE");
	ro->nr_vm_events = enum_val(btf, "vm_event_item", "NR_VM_EVENT_ITEMS");
	ro->nr_memory_events = enum_val(btf, "memcg_memory_event",
					"MEMCG_NR_MEMORY_EVENTS");
	ro->oom_idx = enum_val(btf, "memcg_memory_event", "MEMCG_OOM");
	btf__free(btf);
	return ro->anon_idx < 0 || ro->untracked_state < 0 ||
	       ro->nr_memcg_stat < 0 || ro->pgfault_idx < 0 ||
	       ro->untracked_event < 0 || ro->nr_vm_events < 0 ||
	       ro->nr_memory_events < 0 || ro->oom_idx < 0 ? -1 : 0;
}

static int run_iter(struct bpf_program *prog, const char *cg)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct bpf_link *link;
	int cgfd, fd, n;
	char buf[16];

	cgfd = open(cg, O_RDONLY | O_DIRECTORY);
	if (cgfd < 0)
		return -1;
	info.cgroup.cgroup_fd = cgfd;
	info.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	link = bpf_program__attach_iter(prog, &opts);
	close(cgfd);
	if (!link)
		return -1;
	fd = bpf_iter_create(bpf_link__fd(link));
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return fd < 0 || n < 0 ? -1 : 0;
}

FIXTURE(kfunc) {
	struct kfunc_bounds *skel;
	char cg[256];
	struct mcg_task task;
	int task_running;
};

FIXTURE_SETUP(kfunc)
{
	struct mcg_work w = { .anon_kb = 1024 };

	if (!mcg_kernel_has_kfuncs()) {
		ASSERT_FALSE(mcg_kfuncs_required()) {
			TH_LOG("this kernel must have the bpf_mem_cgroup_* kfuncs");
		}
		SKIP(return, "kernel has no bpf_mem_cgroup_* kfuncs");
	}
	self->skel = kfunc_bounds__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, set_indexes(self->skel));
	snprintf(self->cg, sizeof(self->cg), MCG_ROOT "/memcg-kfunc-test-%d", getpid());
	ASSERT_EQ(0, mcg_create(self->cg, 0));
	ASSERT_EQ(0, mcg_task_start(&self->task, self->cg, &w));
	self->task_running = 1;
}

FIXTURE_TEARDOWN(kfunc)
{
	if (self->task_running)
		mcg_task_stop(&self->task);
	if (self->cg[0])
		mcg_destroy(self->cg);
	kfunc_bounds__destroy(self->skel);
}

TEST_F(kfunc, invalid_index_returns_minus_one)
{
	int i;

	ASSERT_EQ(0, kfunc_bounds__load(self->skel));
	ASSERT_EQ(0, run_iter(self->skel->progs.bounds, self->cg));
	ASSERT_EQ(1, self->skel->bss->visited);
	for (i = 0; i < (int)(sizeof(self->skel->bss->bad) / sizeof(__u64)); i++) {
		EXPECT_EQ((__u64)-1, self->skel->bss->bad[i]) {
			TH_LOG("bad[%d] = %llu", i,
			       (unsigned long long)self->skel->bss->bad[i]);
		}
	}
}

TEST_F(kfunc, valid_index_matches_cgroupfs)
{
	struct kfunc_bounds__bss *bss;

	ASSERT_EQ(0, kfunc_bounds__load(self->skel));
	ASSERT_EQ(0, run_iter(self->skel->progs.bounds, self->cg));
	bss = self->skel->bss;
	/* the task is idle: nothing changes between the two reads */
	EXPECT_EQ(mcg_stat(self->cg, "anon"), (int64_t)bss->anon);
	EXPECT_EQ(mcg_stat(self->cg, "pgfault"), (int64_t)bss->pgfault);
	EXPECT_EQ(mcg_read_u64(self->cg, "memory.current"), (int64_t)bss->usage);
	EXPECT_GE(bss->anon, 1024 << 10);
	EXPECT_EQ(0, bss->oom);
	/* the root's hierarchical anon includes this cgroup's */
	EXPECT_GE(bss->root_anon, bss->anon);
}

TEST_F(kfunc, callable_from_syscall_program)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	bpf_program__set_autoload(self->skel->progs.from_syscall, true);
	ASSERT_EQ(0, kfunc_bounds__load(self->skel));
	ASSERT_EQ(0, bpf_prog_test_run_opts(
			bpf_program__fd(self->skel->progs.from_syscall), &opts));
	EXPECT_EQ(0, opts.retval);
	EXPECT_NE(0, self->skel->bss->syscall_anon);
	EXPECT_NE((__u64)-1, self->skel->bss->syscall_anon);
}

static char verifier_log[65536];

/* Load only @prog; 0 if it loaded, else whether the log says @why. */
static int rejected_because(struct kfunc_bounds *skel, struct bpf_program *prog,
			    const char *why)
{
	size_t len;

	verifier_log[0] = '\0';
	bpf_program__set_autoload(skel->progs.bounds, false);
	bpf_program__set_autoload(prog, true);
	bpf_program__set_log_buf(prog, verifier_log, sizeof(verifier_log));
	if (!kfunc_bounds__load(skel))
		return 0;
	if (strstr(verifier_log, why))
		return 1;
	len = strlen(verifier_log);
	fprintf(stderr, "# expected \"%s\"; the verifier said: ...%s\n", why,
		verifier_log + (len > 1500 ? len - 1500 : 0));
	return 0;
}

TEST_F(kfunc, flush_rejected_in_non_sleepable_program)
{
	EXPECT_TRUE(rejected_because(self->skel, self->skel->progs.flush_not_sleepable,
		"program must be sleepable to call sleepable kfunc bpf_mem_cgroup_flush_stats"));
}

TEST_F(kfunc, leaked_reference_rejected)
{
	EXPECT_TRUE(rejected_because(self->skel, self->skel->progs.leaks_reference,
				     "Unreleased reference"));
}

/* The verifier names the argument "arg0" up to 7.0, "R1" in 7.3. */
TEST_F(kfunc, untrusted_argument_rejected)
{
	EXPECT_TRUE(rejected_because(self->skel, self->skel->progs.null_memcg,
				     "Possibly NULL pointer passed to trusted "));
}

TEST_HARNESS_MAIN
