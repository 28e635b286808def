// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-exporter's privilege drop (tools/exporter/privileges.c) tried for
 * real, on every backend the kernel has:
 *
 *  - in this process: a counting session opened as the exporter opens it,
 *    drop_privileges(), then what a compromised exporter must never do, and
 *    what its allowlist leaves out though a denylist would let it through
 *    (a new socket, another backend's calls, foreign ioctls and prctls):
 *    each fails with EPERM (the filter's answer, or the missing
 *    capability's), clone3 with ENOSYS (glibc then clones); what the
 *    exporter keeps doing (its counts, files, /proc, a thread) still works;
 *  - the exporter itself, under its filter: 20 scrapes over HTTP and 20
 *    writes of its text file while cgroups come and go below its subtree,
 *    each answer or write whole, exit 0, and nothing on stderr but its
 *    backend and why (explicit: "asked"; auto: shared where the kernel has
 *    the ioctl, else events) and where it listens: a call the filter
 *    refused would fail a scrape or a write, which says so.
 * Runs as root in the guests, x86-64 and arm64 (tests/vm-tests.d/65-tools.list);
 * TOOLS_BIN selects the exporter (default build/bin).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgcount.h"
#include "cgtest.h"
#include "exporter.h"
#include "harness.h"
#include "pcg_lib.h"

FIXTURE(dropped) {
	struct cgcount *s;
};

FIXTURE_VARIANT(dropped) {
	const char *backend;
};

FIXTURE_VARIANT_ADD(dropped, events) { .backend = "events" };
FIXTURE_VARIANT_ADD(dropped, shared) { .backend = "shared" };
FIXTURE_VARIANT_ADD(dropped, rstat) { .backend = "rstat" };

/* shared needs the kernel series: Debian's kernels (stock-*) lack it */
static int backend_missing(const char *backend)
{
	return !strcmp(backend, "shared") && !pcg_kernel_has_attach();
}

FIXTURE_SETUP(dropped)
{
	CGCOUNT_OPTS(cgcount_opts, opts);

	ASSERT_EQ(0, getuid()) TH_LOG("run as root: the drop is what is tested");
	if (backend_missing(variant->backend))
		SKIP(return, "this kernel has no PERF_EVENT_IOC_ATTACH_CGROUP (a stock kernel)");
	ASSERT_EQ(0, cgcount_parse_backend(variant->backend, &opts.backend));
	self->s = cgcount_open("cpu-clock", &opts);
	ASSERT_NE(NULL, self->s) TH_LOG("cgcount_open(%s): %s", variant->backend,
					 strerror(errno));
	ASSERT_EQ(0, cgcount_add_path(self->s, "/"));
	ASSERT_EQ(0, drop_privileges(self->s));
}

FIXTURE_TEARDOWN(dropped)
{
	if (self->s)
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
	char status[4096];
	pid_t parent = getppid();
	int fd;


	/* the kernel's word (prctl's PR_GET_* are refused too) */
	ASSERT_LT(0, cgtest_read("/proc/self/status", status, sizeof(status)));
	EXPECT_NE(NULL, strstr(status, "\nNoNewPrivs:\t1\n"));
	EXPECT_NE(NULL, strstr(status, "\nSeccomp:\t2\n"));
	EXPECT_EPERM(prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
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

/* What only an allowlist refuses: calls the exporter never makes once
 * counting, harmless-looking ones included */
TEST_F(dropped, refuses_what_it_does_not_use)
{
	struct perf_event_attr pe = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(pe),
				      .config = PERF_COUNT_SW_CPU_CLOCK };
	union bpf_attr attr;
	int fds[2], n;

	EXPECT_EPERM(socket(AF_INET, SOCK_STREAM, 0));
	EXPECT_EPERM(socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
	EXPECT_EPERM(syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0));
	EXPECT_EPERM(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
	EXPECT_EPERM(ioctl(0, FIONREAD, &n));
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_clone3, NULL, 0));
	EXPECT_EQ(ENOSYS, errno);
	/* another backend's calls */
	memset(&attr, 0, sizeof(attr));
	if (strcmp(variant->backend, "rstat"))
		EXPECT_EPERM(syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr)));
	else {	/* rstat: only its reads' commands */
		EXPECT_EPERM(syscall(SYS_bpf, BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr)));
		EXPECT_EPERM(syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr)));
	}
	if (strcmp(variant->backend, "events"))
		EXPECT_EPERM(syscall(SYS_perf_event_open, &pe, -1, 0, -1, 0));
}

/* ---- the exporter itself, under its filter ---- */

#define SCRAPES 20
#define EXPORTER_PORT 9473

FIXTURE(exporter) {
	char cg[4096];		/* its --subtree */
	const char *rel;	/* the same below the cgroup2 root */
	char err[64];		/* its stderr */
	char text[64];		/* its --textfile */
};

FIXTURE_VARIANT(exporter) {
	const char *backend;
};

FIXTURE_VARIANT_ADD(exporter, events) { .backend = "events" };
FIXTURE_VARIANT_ADD(exporter, shared) { .backend = "shared" };
FIXTURE_VARIANT_ADD(exporter, rstat) { .backend = "rstat" };
FIXTURE_VARIANT_ADD(exporter, auto) { .backend = "auto" };

/* The guest's init leaves loopback down (and the arm64 guest has no ip(8)) */
static int loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = -1;

	if (fd < 0)
		return -1;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

FIXTURE_SETUP(exporter)
{
	ASSERT_EQ(0, getuid()) TH_LOG("run as root: the drop is what is tested");
	if (backend_missing(variant->backend))
		SKIP(return, "this kernel has no PERF_EVENT_IOC_ATTACH_CGROUP (a stock kernel)");
	ASSERT_EQ(0, cgtest_create_test_root(self->cg, "seccomp"));
	self->rel = self->cg + strlen(cgtest_root());
	snprintf(self->err, sizeof(self->err), "/tmp/exporter-seccomp.%d.err", getpid());
	snprintf(self->text, sizeof(self->text), "/tmp/exporter-seccomp.%d.prom", getpid());
	ASSERT_EQ(0, loopback_up());
}

FIXTURE_TEARDOWN(exporter)
{
	if (!self->cg[0])
		return;
	cgtest_destroy_tree(self->cg);
	unlink(self->err);
	unlink(self->text);
}

/* The exporter with @args after its backend and subtree, stderr to @err */
static pid_t start_exporter(const char *backend, const char *subtree, const char *err,
			    const char *const *args)
{
	const char *bin = getenv("TOOLS_BIN") ? getenv("TOOLS_BIN") : "build/bin";
	char path[4096], backend_opt[64], subtree_opt[4200];
	const char *argv[16];
	pid_t pid;
	int i = 0, fd;

	snprintf(path, sizeof(path), "%s/cgroup-exporter", bin);
	snprintf(backend_opt, sizeof(backend_opt), "--backend=%s", backend);
	snprintf(subtree_opt, sizeof(subtree_opt), "--subtree=%s", subtree);
	argv[i++] = path;
	argv[i++] = backend_opt;
	argv[i++] = "-e";
	argv[i++] = "cpu-clock,context-switches";
	argv[i++] = subtree_opt;
	while (*args && i < 15)
		argv[i++] = *args++;
	argv[i] = NULL;
	pid = fork();
	if (pid)
		return pid;
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || dup2(fd, 2) < 0)
		_exit(127);
	execv(path, (char *const *)argv);
	_exit(127);
}

static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The whole of a small file, or "" */
static void slurp(const char *path, char *buf, size_t len)
{
	if (cgtest_read(path, buf, len) < 0)
		buf[0] = '\0';
}

/* The line the exporter starts with: its backend and why */
static void expected_backend_line(const char *backend, char *buf, size_t len)
{
	int shared = pcg_kernel_has_attach();

	if (strcmp(backend, "auto"))
		snprintf(buf, len, PROG ": backend %s (asked)\n", backend);
	else if (shared)
		snprintf(buf, len, PROG ": backend shared (auto: the kernel has %s)\n",
			 "PERF_EVENT_IOC_ATTACH_CGROUP");
	else
		snprintf(buf, len, PROG ": backend events (auto: no PERF_EVENT_IOC_ATTACH_CGROUP "
			 "in this kernel; rstat loads BPF only when asked)\n");
}

/* GET (or @method) @path over HTTP/1.0: the answer whole, or -1 */
static int http(const char *method, const char *path, char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(EXPORTER_PORT),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 60 };
	char req[256];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\n\r\n", method, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	return n < 0 ? -1 : 0;
}

/* "HTTP/1.1 200 OK..." -> 200; -1 if not an HTTP answer */
static int http_status(const char *answer)
{
	int status;

	return sscanf(answer, "HTTP/1.%*d %d", &status) == 1 ? status : -1;
}

/* Has @pid's stderr file said "listening"? Waits up to 120 s */
static int wait_listening(pid_t pid, const char *err)
{
	char buf[4096];
	int i;

	for (i = 0; i < 1200; i++) {
		slurp(err, buf, sizeof(buf));
		if (strstr(buf, "listening"))
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(100000);
	}
	return -1;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A child cgroup made before scrape @i and removed after it */
static void churn(const char *cg, int i, int make)
{
	char child[4200];

	snprintf(child, sizeof(child), "%s/c%d", cg, i);
	if (make)
		cgtest_mkdir(child);
	else
		cgtest_rmdir(child);
}

TEST_F(exporter, serves_scrapes_under_its_filter)
{
	static const char *const args[] = { "--web.listen-address=127.0.0.1:9473", NULL };
	static char body[1 << 20];
	char line[256], err[4096];
	int i, whole = 0, status;
	pid_t pid;

	expected_backend_line(variant->backend, line, sizeof(line));
	pid = start_exporter(variant->backend, self->rel, self->err, args);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, wait_listening(pid, self->err)) {
		slurp(self->err, err, sizeof(err));
		TH_LOG("the exporter did not listen: %s", err);
	}
	for (i = 0; i < SCRAPES; i++) {
		churn(self->cg, i, 1);
		whole += !http("GET", "/metrics", body, sizeof(body)) &&
			 http_status(body) == 200 &&
			 strstr(body, "\nprocess_open_fds ") &&
			 strstr(body, "perf_cgroup_exporter_scrape_duration_seconds");
		churn(self->cg, i, 0);
	}
	EXPECT_EQ(SCRAPES, whole) TH_LOG("scrapes answered whole: %d of %d", whole, SCRAPES);
	EXPECT_EQ(0, http("POST", "/metrics", body, sizeof(body)));
	EXPECT_EQ(405, http_status(body)) TH_LOG("POST: %.40s", body);
	EXPECT_EQ(0, http("GET", "/nope", body, sizeof(body)));
	EXPECT_EQ(404, http_status(body)) TH_LOG("404: %.40s", body);
	kill(pid, SIGTERM);
	status = wait_exit(pid);
	EXPECT_EQ(0, status);
	slurp(self->err, err, sizeof(err));
	/* its backend and why, then where it listens; a failed scrape would
	 * have said why */
	EXPECT_EQ(0, strncmp(err, line, strlen(line))) TH_LOG("stderr: %s", err);
	EXPECT_EQ(2, count_lines(err)) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, "listening on 127.0.0.1:9473")) TH_LOG("stderr: %s", err);
}

TEST_F(exporter, writes_its_text_file_under_its_filter)
{
	char line[256], err[4096], text_opt[128], *body;
	const char *args[] = { text_opt, "--textfile.interval=0.05", "--textfile.writes=20",
			       NULL };
	static char text[1 << 20];
	int i, status;
	pid_t pid;

	snprintf(text_opt, sizeof(text_opt), "--textfile=%s", self->text);
	expected_backend_line(variant->backend, line, sizeof(line));
	pid = start_exporter(variant->backend, self->rel, self->err, args);
	ASSERT_LT(0, pid);
	for (i = 0; waitpid(pid, &status, WNOHANG) == 0; i++) {
		churn(self->cg, i, 1);
		usleep(30000);
		churn(self->cg, i, 0);
	}
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	slurp(self->err, err, sizeof(err));
	/* a write that failed says so on stderr: only the backend line */
	EXPECT_STREQ(line, err);
	slurp(self->text, text, sizeof(text));
	body = strstr(text, "\nprocess_open_fds ");
	EXPECT_NE(NULL, body) TH_LOG("the text file: %.200s", text);
	EXPECT_NE(NULL, strstr(text, self->rel)) TH_LOG("no series of %s", self->rel);
}

TEST_HARNESS_MAIN
