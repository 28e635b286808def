// SPDX-License-Identifier: GPL-2.0
/* The cgroup helpers of the C tests; see cgtest.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgtest.h"
#include "cgutil.h"

/* ---- files ---- */

int cgtest_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return (int)n;
}

int cgtest_write(const char *path, const char *text)
{
	ssize_t len = (ssize_t)strlen(text), n;
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != len)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

/* dir/name into out (size bytes) */
static int join_path(char *out, size_t size, const char *dir, const char *name)
{
	int n = snprintf(out, size, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int cgtest_read_file(const char *cg, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	int ret = join_path(path, sizeof(path), cg, file);

	return ret ? ret : cgtest_read(path, buf, size);
}

static int write_file(const char *cg, const char *file, const char *text)
{
	char path[PATH_MAX];
	int ret = join_path(path, sizeof(path), cg, file);

	return ret ? ret : cgtest_write(path, text);
}

/* ---- cgroups ---- */

const char *cgtest_root(void)
{
	static char root[CGTEST_PATH_MAX];
	const char *env = getenv("CGROUP2_ROOT");

	if (env)
		return env;
	if (!root[0] && cgutil_cgroup2_root(root, sizeof(root)))
		root[0] = '\0';
	return root[0] ? root : NULL;
}

int cgtest_mkdir(const char *path)
{
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

int cgtest_create(char *out, const char *parent, const char *name)
{
	int ret = join_path(out, CGTEST_PATH_MAX, parent, name);

	return ret ? ret : cgtest_mkdir(out);
}

int cgtest_create_test_root(char *out, const char *tag)
{
	const char *root = cgtest_root();
	char name[64];

	if (!root)
		return -ENOENT;
	snprintf(name, sizeof(name), "cgtest-%s-%d", tag, getpid());
	return cgtest_create(out, root, name);
}

int cgtest_rmdir(const char *path)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

static int remove_subtree(const char *path)
{
	char child[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(path);
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >=
		    (int)sizeof(child))
			ret = -ENAMETOOLONG;
		else
			ret = remove_subtree(child);
	}
	closedir(d);
	return ret ? ret : cgtest_rmdir(path);
}

int cgtest_wait_released(const char *path)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (cgtest_stat_field(path, "cgroup.stat", "nr_dying_descendants") == 0)
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

int cgtest_destroy_tree(const char *path)
{
	if (!path || !path[0])
		return 0;
	write_file(path, "cgroup.kill", "1");	/* ENOENT when gone, or before 5.14 */
	return remove_subtree(path);
}

int cgtest_enable_controllers(const char *path, const char *controllers)
{
	return write_file(path, "cgroup.subtree_control", controllers);
}

int cgtest_move(const char *path, pid_t pid)
{
	char s[32];

	snprintf(s, sizeof(s), "%d", pid);
	return write_file(path, "cgroup.procs", s);
}

uint64_t cgtest_id(const char *path)
{
	uint64_t id;

	return cgutil_cgroup_id(path, &id) ? 0 : id;
}

int cgtest_nr_procs(const char *cg)
{
	char buf[4096];
	int n = cgtest_read_file(cg, "cgroup.procs", buf, sizeof(buf)), i, lines = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		lines += buf[i] == '\n';
	return lines;
}

/* ---- statistics ---- */

int64_t cgtest_stat_field(const char *cg, const char *file, const char *key)
{
	char buf[16384], *line, *save = NULL;
	size_t len = strlen(key);
	int n = cgtest_read_file(cg, file, buf, sizeof(buf));

	if (n < 0)
		return n;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, len) && line[len] == ' ')
			return strtoll(line + len + 1, NULL, 10);
	return -ENODATA;
}

int64_t cgtest_usage_usec(const char *cg)
{
	return cgtest_stat_field(cg, "cpu.stat", "usage_usec");
}

int64_t cgtest_read_u64(const char *cg, const char *file)
{
	char buf[64];
	int n = cgtest_read_file(cg, file, buf, sizeof(buf));

	return n < 0 ? n : strtoll(buf, NULL, 10);
}

/* ---- time and cpus ---- */

uint64_t cgtest_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t cgtest_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int cgtest_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void cgtest_burn_ns(uint64_t ns)
{
	uint64_t end = cgtest_thread_cpu_ns() + ns;
	volatile uint64_t sink = 0;
	int i;

	while (cgtest_thread_cpu_ns() < end)
		for (i = 0; i < 20000; i++)
			sink += i;
}

void cgtest_settle_exited_tasks(void)
{
	cpu_set_t saved, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			sched_yield();
	}
	sched_setaffinity(0, sizeof(saved), &saved);
}

int cgtest_within_pct(double a, double b, double pct)
{
	double hi = a > b ? a : b, diff = a > b ? a - b : b - a;

	return diff <= hi * pct / 100.0;
}

/* ---- workers ---- */

struct cgtest_worker_stat *cgtest_stats_alloc(int n)
{
	void *p = mmap(NULL, n * sizeof(struct cgtest_worker_stat),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void cgtest_stats_free(struct cgtest_worker_stat *s, int n)
{
	if (s)
		munmap(s, n * sizeof(*s));
}

static uint64_t own_csw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* In a fresh child: join cg, pin, record the starting point. */
static void worker_join(const char *cg, int cpu, struct cgtest_worker_stat *st)
{
	if (cgtest_move(cg, getpid()) || cgtest_pin_self(cpu))
		_exit(2);
	if (st) {
		st->csw_joined = own_csw();
		st->cpu_ns_joined = cgtest_thread_cpu_ns();
		__atomic_store_n(&st->ready, 1, __ATOMIC_RELEASE);
	}
}

static void worker_finish(struct cgtest_worker_stat *st)
{
	if (st) {
		st->cpu_ns_end = cgtest_thread_cpu_ns();
		st->csw_end = own_csw();
	}
	_exit(0);
}

/* fork(): the parent gets the pid (or -errno), the child 0 once it joined cg */
static pid_t fork_worker(const char *cg, int cpu, struct cgtest_worker_stat *st)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		worker_join(cg, cpu, st);
	return pid;
}

pid_t cgtest_spawn_busy(const char *cg, uint64_t ns, int cpu,
			struct cgtest_worker_stat *st)
{
	pid_t pid = fork_worker(cg, cpu, st);

	if (pid)
		return pid;
	cgtest_burn_ns(ns);
	worker_finish(st);
	return 0;
}

static int leave_to_parent(const char *cg)
{
	char parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", cg);
	slash = strrchr(parent, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	return cgtest_move(parent, getpid());
}

pid_t cgtest_spawn_busy_migrating(const char *cg1, uint64_t ns1,
				  const char *cg2, uint64_t ns2, int cpu,
				  struct cgtest_worker_stat *st)
{
	pid_t pid = fork_worker(cg1, cpu, st);

	if (pid)
		return pid;
	cgtest_burn_ns(ns1);
	if (st)
		st->cpu_ns_moved = cgtest_thread_cpu_ns();
	if (cgtest_move(cg2, getpid()))
		_exit(3);
	cgtest_burn_ns(ns2);
	if (st)
		st->cpu_ns_end = cgtest_thread_cpu_ns();
	/* exit (mm teardown) outside cg2, so cg2 holds just the burn */
	if (leave_to_parent(cg2))
		_exit(3);
	_exit(0);
	return 0;
}

pid_t cgtest_spawn_sleeper(const char *cg)
{
	pid_t pid = fork_worker(cg, -1, NULL);

	if (pid)
		return pid;
	for (;;)
		pause();
	return 0;
}

static void pingpong_loop(int rfd, int wfd, int iterations, int starter)
{
	char c = 'x';
	int i;

	for (i = 0; i < iterations; i++) {
		if (starter && write(wfd, &c, 1) != 1)
			_exit(4);
		if (read(rfd, &c, 1) != 1)
			_exit(5);
		if (!starter && write(wfd, &c, 1) != 1)
			_exit(4);
	}
}

int cgtest_spawn_pingpong(const char *cga, const char *cgb, int iterations,
			  int cpu, struct cgtest_worker_stat *st, pid_t pids[2])
{
	int ab[2], ba[2], k;

	if (pipe2(ab, O_CLOEXEC) || pipe2(ba, O_CLOEXEC))
		return -errno;
	for (k = 0; k < 2; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			return -errno;
		if (pids[k])
			continue;
		worker_join(k ? cgb : cga, cpu, &st[k]);
		if (k)
			pingpong_loop(ab[0], ba[1], iterations, 0);
		else
			pingpong_loop(ba[0], ab[1], iterations, 1);
		worker_finish(&st[k]);
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	return 0;
}

int cgtest_wait(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	cgtest_settle_exited_tasks();
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int cgtest_wait_ready(struct cgtest_worker_stat *st, int timeout_ms)
{
	while (!__atomic_load_n(&st->ready, __ATOMIC_ACQUIRE)) {
		if (timeout_ms-- <= 0)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}
