// SPDX-License-Identifier: GPL-2.0
/* Helpers for the multi-cgroup perf event tests; see pcg_lib.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgfile.h"
#include "cgutil.h"
#include "exited_tasks.h"
#include "pcg_lib.h"

/* ---- cgroups ---- */

/* $CGROUP2_ROOT, else cgroup2's mount point (lib/cgutil: getmntent, escapes undone) */
const char *pcg_cgroup_root(void)
{
	static char root[PCG_PATH_MAX];
	const char *env = getenv("CGROUP2_ROOT");

	if (env)
		return env;
	if (!root[0] && cgutil_cgroup2_root(root, sizeof(root)))
		root[0] = '\0';
	return root[0] ? root : NULL;
}

int pcg_cg_create(char *out, const char *parent, const char *name)
{
	int n = snprintf(out, PCG_PATH_MAX, "%s/%s", parent, name);

	if (n < 0 || n >= PCG_PATH_MAX)
		return -ENAMETOOLONG;
	if (mkdir(out, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int pcg_cg_create_test_root(char *out, const char *tag)
{
	const char *root = pcg_cgroup_root();
	char name[64];

	if (!root)
		return -ENOENT;
	snprintf(name, sizeof(name), "pcg-%s-%d", tag, getpid());
	return pcg_cg_create(out, root, name);
}

/*
 * Mount the perf_event controller alone on a cgroup v1 hierarchy at a new
 * directory, @dir (PCG_PATH_MAX bytes): a v1/v2 hybrid, where cgroup2 moves
 * and creations no longer involve the controller.  An implicit cgroup2
 * controller, it can be taken while cgroup2 is in use.  0 or -errno.
 */
int pcg_perf_event_v1_mount(char *dir)
{
	snprintf(dir, PCG_PATH_MAX, "/tmp/pcg-v1-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	if (mount("pcg-perf_event", dir, "cgroup", 0, "perf_event")) {
		int err = -errno;

		rmdir(dir);
		return err;
	}
	return 0;
}

/* Undo pcg_perf_event_v1_mount(): perf_event goes back to cgroup2. */
int pcg_perf_event_v1_umount(const char *dir)
{
	if (umount(dir) || rmdir(dir))
		return -errno;
	return 0;
}

int pcg_cg_remove(const char *path)
{
	return cgfile_rmdir(path);
}

int pcg_cg_destroy_tree(const char *path)
{
	return cgfile_destroy_tree(path);
}

int pcg_cg_move(const char *path, pid_t pid)
{
	char procs[PCG_PATH_MAX], s[32];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	snprintf(s, sizeof(s), "%d", pid);
	return cgfile_write(procs, s);
}

/* The cgroup id (lib/cgutil: the directory's file handle), 0 on error */
uint64_t pcg_cg_id(const char *path)
{
	uint64_t id;

	return cgutil_cgroup_id(path, &id) ? 0 : id;
}

int64_t pcg_cg_usage_usec(const char *path)
{
	char file[PCG_PATH_MAX], buf[1024], *p;
	ssize_t n;

	snprintf(file, sizeof(file), "%s/cpu.stat", path);
	n = cgfile_read(file, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strstr(buf, "usage_usec ");
	if (!p)
		return -ENODATA;
	return strtoll(p + strlen("usage_usec "), NULL, 10);
}

int pcg_cg_nr_procs(const char *path)
{
	char file[PCG_PATH_MAX], buf[4096];
	ssize_t n, i;
	int lines = 0;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	n = cgfile_read(file, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		lines += buf[i] == '\n';
	return lines;
}

/* ---- perf events ---- */

int pcg_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > PCG_MAX_CPUS ? PCG_MAX_CPUS : (int)n;
}

void pcg_attr_init(struct perf_event_attr *attr, uint64_t config,
		   uint64_t read_format, int disabled)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = config;
	attr->read_format = read_format;
	attr->disabled = !!disabled;
}

int pcg_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		  int group_fd, unsigned long flags)
{
	int fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd,
			 flags | PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static void events_reset(struct pcg_events *ev)
{
	int i;

	ev->nr = 0;
	for (i = 0; i < PCG_MAX_CPUS; i++)
		ev->fd[i] = -1;
}

/*
 * One event per cpu 0..@nr-1 into @ev: @pid is -1 or, with
 * PERF_FLAG_PID_CGROUP in @flags, a cgroup fd; @leader (or NULL) gives each
 * cpu's group leader. On failure nothing stays open.
 */
static int open_per_cpu(struct pcg_events *ev, struct perf_event_attr *attr,
			int pid, int nr, const struct pcg_events *leader,
			unsigned long flags)
{
	int cpu;

	events_reset(ev);
	for (cpu = 0; cpu < nr; cpu++) {
		int fd = pcg_perf_open(attr, pid, cpu, leader ? leader->fd[cpu] : -1,
				       flags);

		if (fd < 0) {
			pcg_close_events(ev);
			return fd;
		}
		ev->fd[cpu] = fd;
		ev->nr = cpu + 1;
	}
	return 0;
}

int pcg_open_cpu_events(struct pcg_events *ev, uint64_t config,
			uint64_t read_format, int disabled)
{
	struct perf_event_attr attr;

	pcg_attr_init(&attr, config, read_format, disabled);
	return open_per_cpu(ev, &attr, -1, pcg_nr_cpus(), NULL, 0);
}

int pcg_open_cgroup_events(struct pcg_events *ev, const char *cg,
			   uint64_t config, uint64_t read_format)
{
	struct perf_event_attr attr;
	int cgfd, ret;

	events_reset(ev);
	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	pcg_attr_init(&attr, config, read_format, 0);
	ret = open_per_cpu(ev, &attr, cgfd, pcg_nr_cpus(), NULL, PERF_FLAG_PID_CGROUP);
	close(cgfd);
	return ret;
}

int pcg_open_sibling_events(struct pcg_events *ev,
			    const struct pcg_events *leader, uint64_t config,
			    uint64_t read_format)
{
	struct perf_event_attr attr;

	pcg_attr_init(&attr, config, read_format, 0);
	return open_per_cpu(ev, &attr, -1, leader->nr, leader, 0);
}

void pcg_close_events(struct pcg_events *ev)
{
	int i;

	for (i = 0; i < PCG_MAX_CPUS; i++) {
		if (ev->fd[i] >= 0)
			close(ev->fd[i]);
		ev->fd[i] = -1;
	}
	ev->nr = 0;
}

static int ioctl_all(const struct pcg_events *ev, unsigned long req)
{
	int i;

	for (i = 0; i < ev->nr; i++)
		if (ioctl(ev->fd[i], req, 0))
			return -errno;
	return 0;
}

int pcg_enable(const struct pcg_events *ev)
{
	return ioctl_all(ev, PERF_EVENT_IOC_ENABLE);
}

int pcg_disable(const struct pcg_events *ev)
{
	return ioctl_all(ev, PERF_EVENT_IOC_DISABLE);
}

int pcg_read_sum(const struct pcg_events *ev, uint64_t *sum)
{
	uint64_t v;
	int i;

	*sum = 0;
	for (i = 0; i < ev->nr; i++) {
		ssize_t n = read(ev->fd[i], &v, sizeof(v));

		if (n != sizeof(v))
			return n < 0 ? -errno : -EIO;
		*sum += v;
	}
	return 0;
}

size_t pcg_reading_words(uint64_t read_format)
{
	return 1 + !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		!!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) +
		!!(read_format & PERF_FORMAT_ID);
}

void pcg_parse_reading(const uint64_t *w, uint64_t read_format,
		       struct pcg_reading *r)
{
	memset(r, 0, sizeof(*r));
	r->value = *w++;
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		r->enabled = *w++;
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		r->running = *w++;
	if (read_format & PERF_FORMAT_ID)
		r->id = *w++;
}

/* ---- the multi-cgroup ioctls ---- */

/* The ioctl on { head[0 .. nhead - 1], ids[0 .. nr - 1] } */
static int words_ioctl(int fd, unsigned long req, const uint64_t *head,
		       int nhead, const uint64_t *ids, uint64_t nr)
{
	uint64_t *buf = malloc((nhead + nr) * sizeof(*buf));
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, head, nhead * sizeof(*buf));
	memcpy(buf + nhead, ids, nr * sizeof(*buf));
	if (ioctl(fd, req, buf))
		ret = -errno;
	free(buf);
	return ret;
}

static int ids_ioctl(int fd, unsigned long req, const uint64_t *ids,
		     uint64_t nr)
{
	return words_ioctl(fd, req, &nr, 1, ids, nr);
}

int pcg_attach(int fd, const uint64_t *ids, uint64_t nr)
{
	return ids_ioctl(fd, PERF_EVENT_IOC_ATTACH_CGROUP, ids, nr);
}

int pcg_detach(int fd, const uint64_t *ids, uint64_t nr)
{
	return ids_ioctl(fd, PERF_EVENT_IOC_DETACH_CGROUP, ids, nr);
}

/* The ids ioctl on every cpu's event; stops at the first error. */
static int ids_ioctl_all(const struct pcg_events *ev, unsigned long request,
			 const uint64_t *ids, uint64_t nr)
{
	int i, ret;

	for (i = 0; i < ev->nr; i++) {
		ret = ids_ioctl(ev->fd[i], request, ids, nr);
		if (ret)
			return ret;
	}
	return 0;
}

int pcg_attach_all(const struct pcg_events *ev, const uint64_t *ids,
		   uint64_t nr)
{
	return ids_ioctl_all(ev, PERF_EVENT_IOC_ATTACH_CGROUP, ids, nr);
}

int pcg_detach_all(const struct pcg_events *ev, const uint64_t *ids,
		   uint64_t nr)
{
	return ids_ioctl_all(ev, PERF_EVENT_IOC_DETACH_CGROUP, ids, nr);
}

int pcg_attach_flags(int fd, uint64_t flags, const uint64_t *ids,
		     uint64_t nr)
{
	uint64_t head[2] = { flags, nr };

	return words_ioctl(fd, PERF_EVENT_IOC_ATTACH_CGROUPS, head, 2, ids, nr);
}

int pcg_attach_flags_all(const struct pcg_events *ev, uint64_t flags,
			 const uint64_t *ids, uint64_t nr)
{
	int i, ret;

	for (i = 0; i < ev->nr; i++) {
		ret = pcg_attach_flags(ev->fd[i], flags, ids, nr);
		if (ret)
			return ret;
	}
	return 0;
}

int pcg_read_cgroup(int fd, uint64_t id, uint64_t *out, size_t nwords)
{
	size_t size = (nwords + 2) * sizeof(uint64_t);
	uint64_t *buf = calloc(nwords + 2, sizeof(*buf));
	int ret;

	if (!buf)
		return -ENOMEM;
	buf[0] = size;
	buf[1] = id;
	ret = ioctl(fd, PERF_EVENT_IOC_READ_CGROUP, buf);
	if (ret < 0)
		ret = -errno;
	else
		memcpy(out, buf + 2, nwords * sizeof(*out));
	free(buf);
	return ret;
}

int pcg_read_cgroup_sum(const struct pcg_events *ev, uint64_t id,
			uint64_t read_format, struct pcg_reading *sum)
{
	size_t words = pcg_reading_words(read_format);
	uint64_t out[4];
	struct pcg_reading r;
	int i, ret;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ev->nr; i++) {
		ret = pcg_read_cgroup(ev->fd[i], id, out, words);
		if (ret < 0)
			return ret;
		if ((size_t)ret != words * sizeof(uint64_t))
			return -EPROTO;
		pcg_parse_reading(out, read_format, &r);
		sum->value += r.value;
		sum->enabled += r.enabled;
		sum->running += r.running;
		sum->id = r.id;
	}
	return 0;
}

int pcg_read_cgroups(int fd, uint64_t **bufp, size_t *sizep)
{
	return pcg_read_cgroups_flags(fd, 0, bufp, sizep);
}

int pcg_read_cgroups_flags(int fd, uint64_t flags, uint64_t **bufp,
			   size_t *sizep)
{
	size_t size = 4096;
	uint64_t *buf = NULL;
	int tries, ret = -ENOSPC;

	for (tries = 0; tries < 8 && ret == -ENOSPC; tries++) {
		uint64_t *nbuf = realloc(buf, size);

		if (!nbuf) {
			ret = -ENOMEM;
			break;
		}
		buf = nbuf;
		memset(buf, 0, size);
		buf[0] = size;
		buf[1] = flags;
		ret = ioctl(fd, PERF_EVENT_IOC_READ_CGROUPS, buf);
		if (ret < 0) {
			ret = -errno;
			if (ret == -ENOSPC) {
				if (buf[0] <= size) {
					ret = -EPROTO;
					break;
				}
				size = buf[0];
			}
		}
	}
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*bufp = buf;
	*sizep = size;
	return ret;
}

int pcg_kernel_has_attach(void)
{
	struct perf_event_attr attr;
	uint64_t buf[1] = { 0 };
	int fd, ret;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, 0, 1);
	fd = pcg_perf_open(&attr, -1, 0, -1, 0);
	if (fd < 0)
		return 0;
	/* nr == 0 is -EINVAL on a patched kernel, -ENOTTY otherwise */
	ret = ioctl(fd, PERF_EVENT_IOC_ATTACH_CGROUP, buf);
	ret = ret < 0 && errno == EINVAL;
	close(fd);
	return ret;
}

/* ---- workers ---- */

struct pcg_worker_stat *pcg_stats_alloc(int n)
{
	void *p = mmap(NULL, n * sizeof(struct pcg_worker_stat),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void pcg_stats_free(struct pcg_worker_stat *s, int n)
{
	if (s)
		munmap(s, n * sizeof(*s));
}

uint64_t pcg_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t pcg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int pcg_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void pcg_burn_ns(uint64_t ns)
{
	uint64_t end = pcg_thread_cpu_ns() + ns;
	volatile uint64_t sink = 0;
	int i;

	while (pcg_thread_cpu_ns() < end)
		for (i = 0; i < 20000; i++)
			sink += i;
}

static uint64_t own_csw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* In a fresh child: join cg, pin, record the starting point. */
static void worker_join(const char *cg, int cpu, struct pcg_worker_stat *st)
{
	if (pcg_cg_move(cg, getpid()) || pcg_pin_self(cpu))
		_exit(2);
	if (st) {
		st->csw_joined = own_csw();
		st->cpu_ns_joined = pcg_thread_cpu_ns();
		__atomic_store_n(&st->ready, 1, __ATOMIC_RELEASE);
	}
}

static void worker_finish(struct pcg_worker_stat *st)
{
	if (st) {
		st->cpu_ns_end = pcg_thread_cpu_ns();
		st->csw_end = own_csw();
	}
	_exit(0);
}

pid_t pcg_spawn_busy(const char *cg, uint64_t ns, int cpu,
		     struct pcg_worker_stat *st)
{
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? -errno : pid;
	worker_join(cg, cpu, st);
	pcg_burn_ns(ns);
	worker_finish(st);
	return 0;
}

static int leave_to_parent(const char *cg)
{
	char parent[PCG_PATH_MAX - 16], *slash;

	snprintf(parent, sizeof(parent), "%s", cg);
	slash = strrchr(parent, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	return pcg_cg_move(parent, getpid());
}

pid_t pcg_spawn_busy_migrating(const char *cg1, uint64_t ns1,
			       const char *cg2, uint64_t ns2, int cpu,
			       struct pcg_worker_stat *st)
{
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? -errno : pid;
	worker_join(cg1, cpu, st);
	pcg_burn_ns(ns1);
	if (st)
		st->cpu_ns_moved = pcg_thread_cpu_ns();
	if (pcg_cg_move(cg2, getpid()))
		_exit(3);
	pcg_burn_ns(ns2);
	if (st)
		st->cpu_ns_end = pcg_thread_cpu_ns();
	/* exit (mm teardown) outside cg2, so cg2 holds just the burn */
	if (leave_to_parent(cg2))
		_exit(3);
	_exit(0);
	return 0;
}

pid_t pcg_spawn_sleeper(const char *cg)
{
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? -errno : pid;
	worker_join(cg, -1, NULL);
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

int pcg_spawn_pingpong(const char *cga, const char *cgb, int iterations,
		       int cpu, struct pcg_worker_stat *st, pid_t pids[2])
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

int pcg_wait(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	settle_exited_tasks();
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int pcg_wait_ready(struct pcg_worker_stat *st, int timeout_ms)
{
	while (!__atomic_load_n(&st->ready, __ATOMIC_ACQUIRE)) {
		if (timeout_ms-- <= 0)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

int pcg_within_pct(double a, double b, double pct)
{
	double hi = a > b ? a : b, diff = a > b ? a - b : b - a;

	return diff <= hi * pct / 100.0;
}
