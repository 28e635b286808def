// SPDX-License-Identifier: GPL-2.0
/* Helpers for the multi-cgroup perf event tests; see pcg_lib.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pcg_lib.h"

/* ---- cgroup v1 ---- */

/*
 * Mount the perf_event controller alone on a cgroup v1 hierarchy at a new
 * directory, @dir (CGTEST_PATH_MAX bytes): a v1/v2 hybrid, where cgroup2 moves
 * and creations no longer involve the controller.  An implicit cgroup2
 * controller, it can be taken while cgroup2 is in use.  0 or -errno.
 */
int pcg_perf_event_v1_mount(char *dir)
{
	snprintf(dir, CGTEST_PATH_MAX, "/tmp/pcg-v1-XXXXXX");
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

int pcg_kernel_patched(void)
{
	const char *v = getenv("KERNEL_PATCHED");

	return v && !strcmp(v, "1");
}

const char *pcg_kernel_name(void)
{
	const char *v = getenv("KERNEL_NAME");

	return v && *v ? v : "this kernel";
}
