// SPDX-License-Identifier: GPL-2.0
/*
 * What cgroup-exporter keeps of root once its counters are open and its
 * listeners bound (cgroup-exporter(1), PRIVILEGES):
 *
 *  - the capabilities its backend uses from then on, of those it has:
 *    CAP_DAC_READ_SEARCH for the cgroup walks (a directory its owner made
 *    unreadable), CAP_PERFMON for the events backend (a cgroup found later
 *    gets perf events of its own).  The shared backend's ioctls need none,
 *    nor do rstat's reads: the bpf() commands they make on the programs,
 *    links and maps it holds (iterator links, program test runs, map
 *    updates) check no capability on 6.1 or later; loading (BPF_PROG_LOAD,
 *    BPF_MAP_CREATE) does, and is done.  Every other one goes from the effective, permitted and
 *    inheritable sets, the ambient set is cleared and so is the bounding set
 *    (when the exporter may: CAP_SETPCAP);
 *  - PR_SET_NO_NEW_PRIVS: no execve() can give any back;
 *  - a seccomp filter that refuses (EPERM) what a compromised exporter
 *    must never do.  A denylist, not an allowlist: what the exporter calls
 *    depends on the backend, the kernel (libbpf's and libcgcount's
 *    fallbacks), glibc and libmicrohttpd's versions and the sanitizers of
 *    the test builds; an allowlist that missed one call would kill a
 *    monitoring daemon on some host, rarely and at random.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exporter.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#define BPF_TOKEN_CREATE_CMD 36		/* Linux 6.9's BPF_TOKEN_CREATE */

/* Capabilities as the two 32-bit words of capget(2) */
struct caps {
	uint32_t effective[2], permitted[2], inheritable[2];
};

static int caps_get(struct caps *c)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	*c = (struct caps){
		.effective = { d[0].effective, d[1].effective },
		.permitted = { d[0].permitted, d[1].permitted },
		.inheritable = { d[0].inheritable, d[1].inheritable },
	};
	return 0;
}

static int caps_set(const struct caps *c)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	int i;

	for (i = 0; i < 2; i++)
		d[i] = (struct __user_cap_data_struct){ .effective = c->effective[i],
			.permitted = c->permitted[i], .inheritable = c->inheritable[i] };
	return syscall(SYS_capset, &h, d);
}

static void cap_add(uint32_t set[2], int cap)
{
	set[cap / 32] |= 1u << (cap % 32);
}

/* The capabilities @s uses after its open */
static void needed_caps(struct cgcount *s, uint32_t need[2])
{
	need[0] = need[1] = 0;
	cap_add(need, CAP_DAC_READ_SEARCH);
	if (cgcount_backend(s) == CGCOUNT_EVENTS)
		cap_add(need, CAP_PERFMON);
}

/* Empty the bounding set, which needs CAP_SETPCAP (still effective here) */
static int clear_bounding_set(const struct caps *c)
{
	int cap;

	if (!(c->effective[CAP_SETPCAP / 32] & (1u << (CAP_SETPCAP % 32))))
		return 0;	/* NO_NEW_PRIVS and the filter keep execve() out */
	for (cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return -1;
	return 0;
}

static int drop_caps(struct cgcount *s)
{
	uint32_t need[2];
	struct caps c;
	int i;

	if (caps_get(&c))
		return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -1;
	if (clear_bounding_set(&c))
		return -1;
	needed_caps(s, need);
	for (i = 0; i < 2; i++) {
		c.permitted[i] &= need[i];
		c.effective[i] = c.permitted[i];
		c.inheritable[i] = 0;
	}
	return caps_set(&c);
}

static const char *const denied_syscalls[] = {
	/* run another program, or reach into another process */
	"execve", "execveat", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
#ifndef __SANITIZE_ADDRESS__
	"ptrace",	/* LeakSanitizer's exit check stops the threads with it */
#endif
	/* leave or remake its namespaces and mounts */
	"setns", "unshare", "mount", "umount2", "pivot_root", "chroot", "move_mount",
	"open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	/* the kernel itself */
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "iopl", "ioperm",
	/* any file by handle: with CAP_DAC_READ_SEARCH, outside its mounts */
	"open_by_handle_at",
	/* keys, and the page-fault handling exploits lean on */
	"add_key", "request_key", "keyctl", "userfaultfd",
};

/* bpf() commands that load or attach new code, or take another's objects */
static const int denied_bpf_cmds[] = {
	BPF_PROG_LOAD, BPF_BTF_LOAD, BPF_MAP_CREATE, BPF_PROG_ATTACH, BPF_RAW_TRACEPOINT_OPEN,
	BPF_PROG_GET_FD_BY_ID, BPF_MAP_GET_FD_BY_ID, BPF_BTF_GET_FD_BY_ID,
	BPF_LINK_GET_FD_BY_ID, BPF_OBJ_GET, BPF_TOKEN_CREATE_CMD,
};

static const unsigned long new_namespaces[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	CLONE_NEWCGROUP,
};

static int add_rules(scmp_filter_ctx ctx)
{
	size_t i;
	int nr, err;

	for (i = 0; i < sizeof(denied_syscalls) / sizeof(denied_syscalls[0]); i++) {
		nr = seccomp_syscall_resolve_name(denied_syscalls[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;	/* not on this architecture */
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (err)
			return err;
	}
	for (i = 0; i < sizeof(denied_bpf_cmds) / sizeof(denied_bpf_cmds[0]); i++) {
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(bpf), 1,
				       SCMP_A0(SCMP_CMP_EQ, denied_bpf_cmds[i]));
		if (err)
			return err;
	}
	/* threads, not new namespaces; clone3's flags are out of a filter's
	 * reach: ENOSYS makes glibc create its threads with clone */
	for (i = 0; i < sizeof(new_namespaces) / sizeof(new_namespaces[0]); i++) {
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				       SCMP_A0(SCMP_CMP_MASKED_EQ, new_namespaces[i],
					       new_namespaces[i]));
		if (err)
			return err;
	}
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
}

/* 0, 1 when this kernel has no seccomp filters, -errno */
static int install_filter(void)
{
	scmp_filter_ctx ctx;
	int err;

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
		return 1;	/* CONFIG_SECCOMP=n */
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	err = add_rules(ctx);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}

int drop_privileges(struct cgcount *s)
{
	int err;

	if (drop_caps(s)) {
		fprintf(stderr, PROG ": cannot drop capabilities: %s\n", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		fprintf(stderr, PROG ": cannot set no_new_privs: %s\n", strerror(errno));
		return -1;
	}
	err = install_filter();
	if (err == 1)
		fprintf(stderr, PROG ": this kernel has no seccomp filters "
			"(CONFIG_SECCOMP_FILTER): running without one\n");
	else if (err) {
		fprintf(stderr, PROG ": cannot install the seccomp filter: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}
