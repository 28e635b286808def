// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's own process metrics, as client_golang's process collector
 * (prometheus/client_golang, process_collector.go) names and computes them,
 * so that dashboards made for any Go exporter work:
 *
 *   process_cpu_seconds_total      utime + stime of /proc/self/stat
 *   process_open_fds               the entries of /proc/self/fd
 *   process_max_fds                the soft "Max open files" of /proc/self/limits
 *   process_virtual_memory_bytes   vsize of /proc/self/stat
 *   process_resident_memory_bytes  rss of /proc/self/stat, in bytes
 *   process_start_time_seconds     starttime of /proc/self/stat after btime
 *                                  of /proc/stat, since the epoch
 *
 * /proc/self needs no capability and the seccomp filter lets its reads
 * through: they are read at every scrape.  A value that cannot be read is
 * left out, as client_golang does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporter.h"

/* The fields of /proc/self/stat used here (proc(5) numbers them from 1) */
struct proc_stat {
	unsigned long long utime, stime;	/* 14, 15: clock ticks */
	unsigned long long starttime;		/* 22: ticks after boot */
	unsigned long long vsize;		/* 23: bytes */
	long long rss;				/* 24: pages */
};

/* @path's first @len - 1 bytes as a string; 0 or -1 */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int read_stat(struct proc_stat *st)
{
	char buf[1024], *p;

	if (read_text("/proc/self/stat", buf, sizeof(buf)))
		return -1;
	/* the command name, field 2, may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* from field 3 (state) on */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d"
		   " %*d %*d %*d %llu %llu %lld", &st->utime, &st->stime, &st->starttime,
		   &st->vsize, &st->rss) != 5)
		return -1;
	return 0;
}

/* btime of /proc/stat: the boot time, in seconds since the epoch; 0 unknown */
static unsigned long long boot_time(void)
{
	unsigned long long btime = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime;
}

/* The entries of /proc/self/fd (this listing's own descriptor included, as
 * client_golang counts it); -1 unknown */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The soft limit of "Max open files" in /proc/self/limits; -1 unknown */
static double max_fds(void)
{
	char buf[4096], *p, soft[32];

	if (read_text("/proc/self/limits", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nMax open files");
	if (!p || sscanf(p + strlen("\nMax open files"), " %31s", soft) != 1)
		return -1;
	if (!strcmp(soft, "unlimited"))
		return 18446744073709551615.0;	/* client_golang's math.MaxUint64 */
	return strtod(soft, NULL);
}

static int add(char *buf, size_t len, size_t *used, const char *name, const char *type,
	       const char *help, double value)
{
	int n = snprintf(buf + *used, len - *used, "# HELP %s %s\n# TYPE %s %s\n%s %.15g\n",
			 name, help, name, type, name, value);

	if (n < 0 || (size_t)n >= len - *used)
		return -1;
	*used += n;
	return 0;
}

int process_metrics(char *buf, size_t len)
{
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds = open_fds();
	unsigned long long btime = boot_time();
	double max = max_fds();
	struct proc_stat st;
	size_t used = 0;
	int err = 0;

	buf[0] = '\0';
	if (!read_stat(&st) && ticks > 0) {
		err |= add(buf, len, &used, "process_cpu_seconds_total", "counter",
			   "Total user and system CPU time spent in seconds.",
			   (double)(st.utime + st.stime) / ticks);
		err |= add(buf, len, &used, "process_virtual_memory_bytes", "gauge",
			   "Virtual memory size in bytes.", st.vsize);
		err |= add(buf, len, &used, "process_resident_memory_bytes", "gauge",
			   "Resident memory size in bytes.", (double)st.rss * page);
		if (btime)
			err |= add(buf, len, &used, "process_start_time_seconds", "gauge",
				   "Start time of the process since unix epoch in seconds.",
				   btime + (double)st.starttime / ticks);
	}
	if (fds >= 0)
		err |= add(buf, len, &used, "process_open_fds", "gauge",
			   "Number of open file descriptors.", fds);
	if (max >= 0)
		err |= add(buf, len, &used, "process_max_fds", "gauge",
			   "Maximum number of open file descriptors.", max);
	return err ? -1 : 0;
}
