// SPDX-License-Identifier: GPL-2.0
/*
 * What cgroup-exporter's privilege drop (tools/exporter/privileges.c) refuses,
 * tried for real: a child process opens a counting session as the exporter
 * does, calls drop_privileges() and then attempts what a compromised
 * exporter must never do.  Each attempt must fail with EPERM (the filter's
 * answer, or the missing capability's), while what the exporter keeps doing
 * (reading its counts, opening files, creating a thread) still works.
 * Runs as root in the guests (tests/vm-tests.d/65-tools.list).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgcount.h"
#include "exporter.h"
#include "harness.h"

FIXTURE(dropped) {
	struct cgcount *s;
};

FIXTURE_VARIANT(dropped) {
	const char *backend;
};

FIXTURE_VARIANT_ADD(dropped, events) { .backend = "events" };
FIXTURE_VARIANT_ADD(dropped, rstat) { .backend = "rstat" };

FIXTURE_SETUP(dropped)
{
	CGCOUNT_OPTS(cgcount_opts, opts);

	ASSERT_EQ(0, getuid()) TH_LOG("run as root: the drop is what is tested");
	ASSERT_EQ(0, cgcount_parse_backend(variant->backend, &opts.backend));
	self->s = cgcount_open("cpu-clock", &opts);
	ASSERT_NE(NULL, self->s) TH_LOG("cgcount_open(%s): %s", variant->backend,
					 strerror(errno));
	ASSERT_EQ(0, cgcount_add_path(self->s, "/"));
	ASSERT_EQ(0, drop_privileges(self->s));
}

FIXTURE_TEARDOWN(dropped)
{
	cgcount_close(self->s);
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* The exporter's own work goes on: a read of its counts, a file, a thread */
TEST_F(dropped, keeps_what_it_uses)
{
	struct cgcount_value v;
	pthread_t t;
	int fd;

	EXPECT_EQ(0, cgcount_read_path(self->s, "/", &v, 1));
	EXPECT_LT(0, v.value);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	EXPECT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, thread_fn, NULL));
	pthread_join(t, NULL);
}

#define EXPECT_EPERM(call) do {						\
		errno = 0;						\
		EXPECT_EQ(-1, (long)(call));				\
		EXPECT_EQ(EPERM, errno) TH_LOG("%s: %s", #call, strerror(errno)); \
	} while (0)

TEST_F(dropped, refuses_what_it_must_never_do)
{
	char *const argv[] = { "/bin/true", NULL };
	union bpf_attr attr;
	pid_t parent = getppid();
	int fd;

	EXPECT_EQ(1, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	EXPECT_EQ(2, prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	EXPECT_EPERM(execve(argv[0], argv, environ));
	EXPECT_EPERM(unshare(CLONE_NEWNS));
	EXPECT_EPERM(mount("none", "/tmp", "tmpfs", 0, NULL));
	EXPECT_EPERM(ptrace(PTRACE_ATTACH, parent, NULL, NULL));
	EXPECT_EPERM(syscall(SYS_init_module, NULL, 0, ""));
	memset(&attr, 0, sizeof(attr));
	EXPECT_EPERM(syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)));
	EXPECT_EPERM(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)));
	/* root's other powers are gone with its capabilities */
	EXPECT_EPERM(setuid(1));
	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	EXPECT_EPERM(fchown(fd, 1, 1));
	close(fd);
}

TEST_HARNESS_MAIN
