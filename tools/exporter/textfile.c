// SPDX-License-Identifier: GPL-2.0
/*
 * --textfile: the metrics written to a file every --textfile.interval
 * seconds for node_exporter's textfile collector, each time the totals since
 * the exporter started, so that the values are counters whose only resets
 * are the exporter's restarts (which rate() handles).  node_exporter reads
 * *.prom files whenever it is scraped: each text is written to a temporary
 * file, then renamed over the last one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "exporter.h"

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Write @len bytes to @path whole or not at all, and never through a link:
 * the text file's directory is often shared (node_exporter's textfile
 * directory), and we run as root. The bytes go to a new file of a random
 * name beside @path, created O_EXCL|O_NOFOLLOW (a planted file or link
 * makes us pick another name), which is then renamed over @path (rename
 * replaces a link at @path, it does not follow it). 0 or -errno.
 */
static int write_file_atomically(const char *path, const char *body, size_t len)
{
	char *dir_copy = strdup(path), *base_copy = strdup(path), tmp[NAME_MAX + 1];
	int dfd = -1, fd = -1, err = -ENOMEM, tries;
	const char *base;
	unsigned int r;

	if (!dir_copy || !base_copy)
		goto out;
	base = basename(base_copy);
	dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = dfd < 0 ? -errno : -EEXIST;
	for (tries = 0; dfd >= 0 && err == -EEXIST && tries < 16; tries++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (unsigned int)getpid() * 2654435761u + tries;
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%08x.tmp", base, r) >= sizeof(tmp)) {
			err = -ENAMETOOLONG;
			break;
		}
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		err = fd < 0 ? -errno : 0;
	}
	if (err)
		goto out;
	if (write_all(fd, body, len) || fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
out:
	if (dfd >= 0)
		close(dfd);
	free(dir_copy);
	free(base_copy);
	return err;
}

/* Sleep until @at (now_seconds()), or until SIGINT or SIGTERM */
static void sleep_until(double at)
{
	double secs;
	struct timespec ts;

	while (!cgtool_stop && (secs = at - now_seconds()) > 0) {
		ts.tv_sec = (time_t)secs;
		ts.tv_nsec = (long)((secs - (time_t)secs) * 1e9);
		nanosleep(&ts, NULL);
	}
}

/* One text of the metrics to @o->textfile; 0 or -1 after a message */
static int write_textfile(struct cgcount *s, const struct options *o)
{
	size_t len;
	char *body;
	int err;

	body = render_metrics(s, o, &len);
	if (!body)
		return -1;	/* libcgcount said why */
	if (!strcmp(o->textfile, "-")) {
		err = fwrite(body, 1, len, stdout) != len || fflush(stdout);
		if (err)
			perror(PROG ": standard output");
	} else {
		err = write_file_atomically(o->textfile, body, len);
		if (err)
			fprintf(stderr, PROG ": cannot write %s: %s\n", o->textfile,
				strerror(-err));
	}
	free(body);
	return err ? -1 : 0;
}

/*
 * Every interval from the start (not from the end of the previous write,
 * which would drift by the time each write takes), until SIGINT or SIGTERM
 * or --textfile.writes.  A write that fails is said and tried again at the
 * next interval: the exit status is 1 when the last one failed.
 */
int write_textfiles(struct cgcount *s, const struct options *o)
{
	double start = now_seconds();
	long writes = 0;
	int ret = 0;

	while (!o->textfile_writes || writes < o->textfile_writes) {
		sleep_until(start + (writes + 1) * o->textfile_interval);
		if (cgtool_stop)
			break;
		ret = write_textfile(s, o) ? 1 : 0;
		writes++;
	}
	return ret;
}
