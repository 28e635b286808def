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
 *    lookups) check no capability on 6.1 or later; loading (BPF_PROG_LOAD,
 *    BPF_MAP_CREATE) does, and is done.  Every other one goes from the effective, permitted and
 *    inheritable sets, the ambient set is cleared and so is the bounding set
 *    (when the exporter may: CAP_SETPCAP);
 *  - PR_SET_NO_NEW_PRIVS: no execve() can give any back;
 *  - a seccomp filter, an allowlist: the system calls the exporter makes
 *    once counting, on every backend, and those of its backend alone
 *    (perf_event_open for events; for rstat, bpf() with the commands its
 *    reads make on what it holds, never one that loads code or takes
 *    another's objects).  Any other call fails with EPERM, and the kernel
 *    logs it (SECCOMP_FILTER_FLAG_LOG: an audit record of the call's
 *    number, in the kernel log).  EPERM, not death (SECCOMP_RET_KILL_PROCESS):
 *    a call this list missed, on a path rare enough to escape its traces
 *    (another C library, a new kernel's fallback), then fails like any
 *    refused call, which every caller handles, instead of killing a
 *    monitoring daemon at random; and not SECCOMP_RET_LOG, which would let
 *    it through.
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

/*
 * The allowlist: the system calls the exporter makes once counting, on
 * x86-64 and arm64 (names libseccomp resolves on the architecture it runs
 * on: those an architecture lacks are skipped), traced with strace -f over
 * scrapes, bad requests, removed cgroups and text files on every backend.
 */
static const char *const allowed_syscalls[] = {
	/* memory (glibc's malloc, thread stacks) */
	"brk", "mmap", "munmap", "mprotect", "madvise", "mremap",
	/* threads: libmicrohttpd's, started after the drop (clone: below) */
	"futex", "set_robust_list", "get_robust_list", "rseq", "sched_yield",
	"sched_getaffinity", "membarrier",
	/* signals, exits */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sigaltstack",
	"restart_syscall", "getpid", "gettid", "tgkill", "exit", "exit_group",
	/* time (where the vDSO falls back to a system call) and sleeps */
	"clock_gettime", "clock_getres", "gettimeofday", "time", "clock_nanosleep",
	"nanosleep",
	/* randomness: the text file's names, TLS */
	"getrandom",
	/* files: cgroupfs walks and reads, /proc, the text file's write and
	 * rename, the web configuration and TLS keys read again */
	"openat", "open", "close", "read", "pread64", "readv", "write", "writev", "pwrite64",
	"lseek", "fstat", "newfstatat", "stat", "lstat", "statx", "fstatfs", "statfs",
	"getdents64", "fcntl", "dup", "dup3", "fsync", "fdatasync", "rename", "renameat",
	"renameat2", "unlink", "unlinkat", "readlink", "readlinkat", "faccessat",
	"faccessat2", "access", "name_to_handle_at", "getcwd", "umask",
	/* sockets: accept and answer, poll (libmicrohttpd: epoll, eventfd or a
	 * pipe to wake its thread) */
	"accept4", "accept", "recvfrom", "recvmsg", "sendto", "sendmsg", "sendmmsg",
	"sendfile", "shutdown", "setsockopt", "getsockopt", "getsockname", "getpeername",
	"poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "eventfd2", "pipe2",
	/* what libc asks of itself: uname (gnutls), limits, resource use */
	"uname", "getrlimit", "getrusage", "getuid", "geteuid", "getgid", "getegid",
	"sysinfo",
#ifdef __SANITIZE_ADDRESS__
	/* LeakSanitizer's exit check: a tracer thread stops the others,
	 * listing them with the raw system calls x86-64 keeps (getdents) */
	"ptrace", "wait4", "getppid", "kill", "prctl", "getdents",
#endif
};

/* The perf ioctls' type, the '$' of PERF_EVENT_IOC_* (linux/perf_event.h) */
#define PERF_IOC_TYPE 0x2400
#define IOC_TYPE_MASK 0xff00
#define TCGETS_REQUEST 0x5401	/* isatty(): x86-64 and arm64 alike */

/* bpf() commands of rstat's reads (lib/cgrstat/cgrstat_read.c, traced), on
 * the maps, programs and links it holds: map reads, an iterator link on a
 * loaded program and its reads, test runs on a cpu, object information;
 * its map updates are done at load */
static const int rstat_bpf_cmds[] = {
	BPF_MAP_LOOKUP_ELEM, BPF_PROG_TEST_RUN, BPF_OBJ_GET_INFO_BY_FD, BPF_LINK_CREATE,
	BPF_ITER_CREATE,
};

/* clone(): threads, never a new namespace */
#define NEW_NAMESPACES (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
			CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

static int allow_names(scmp_filter_ctx ctx, const char *const *names, size_t nr)
{
	size_t i;
	int nr_sys, err;

	for (i = 0; i < nr; i++) {
		nr_sys = seccomp_syscall_resolve_name(names[i]);
		if (nr_sys == __NR_SCMP_ERROR)
			continue;	/* not on this architecture */
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr_sys, 0);
		if (err)
			return err;
	}
	return 0;
}

/* What one backend adds: events opens perf events for the cgroups found
 * later, rstat reads through bpf() */
static int allow_backend(scmp_filter_ctx ctx, enum cgcount_backend b)
{
	size_t i;
	int err = 0;

	if (b == CGCOUNT_EVENTS)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(perf_event_open), 0);
	if (b != CGCOUNT_RSTAT)
		return 0;
	for (i = 0; !err && i < sizeof(rstat_bpf_cmds) / sizeof(rstat_bpf_cmds[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
				       SCMP_A0(SCMP_CMP_EQ, rstat_bpf_cmds[i]));
	return err;
}

static int add_rules(scmp_filter_ctx ctx, enum cgcount_backend b)
{
	int err = allow_names(ctx, allowed_syscalls,
			      sizeof(allowed_syscalls) / sizeof(allowed_syscalls[0]));

	/* the perf ioctls (enable, read a cgroup, attach the cgroups found
	 * later), and isatty() of stdio */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, IOC_TYPE_MASK, PERF_IOC_TYPE));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_EQ, TCGETS_REQUEST));
	/* libmicrohttpd names its thread */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				       SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				       SCMP_A0(SCMP_CMP_MASKED_EQ, NEW_NAMESPACES, 0));
	/* clone3's flags are in memory, out of a filter's reach: ENOSYS makes
	 * glibc create its threads with clone */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!err)
		err = allow_backend(ctx, b);
	return err;
}

/* 0, 1 when this kernel has no seccomp filters, -errno */
static int install_filter(enum cgcount_backend b)
{
	scmp_filter_ctx ctx;
	int err;

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
		return 1;	/* CONFIG_SECCOMP=n */
	/* anything else: EPERM, and the kernel's audit log says which call */
	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -ENOMEM;
	err = add_rules(ctx, b);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
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
	err = install_filter(cgcount_backend(s));
	if (err == 1)
		fprintf(stderr, PROG ": this kernel has no seccomp filters "
			"(CONFIG_SECCOMP_FILTER): running without one\n");
	else if (err) {
		fprintf(stderr, PROG ": cannot install the seccomp filter: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}
