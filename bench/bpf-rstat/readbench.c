// SPDX-License-Identifier: GPL-2.0
/*
 * readbench SUBTREE REPEAT: time cgrstat_read_subtree() of SUBTREE (one
 * iterator read returning every cgroup below it).  Prints the number of
 * cgroups and the mean time per read.
 * readbench populate DIR N: create DIR/g0 .. DIR/gN-1 and run a task that
 * exits at once in each (clone3 into the cgroup), so that each has counts.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgrstat.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int populate(const char *dir, int n)
{
	char path[4096];
	int i;

	mkdir(dir, 0755);
	for (i = 0; i < n; i++) {
		struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
		long pid;
		int fd;

		snprintf(path, sizeof(path), "%s/g%d", dir, i);
		mkdir(path, 0755);
		fd = open(path, O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		args.cgroup = fd;
		pid = syscall(SYS_clone3, &args, sizeof(args));
		if (pid == 0)
			_exit(0);
		close(fd);
		if (pid < 0 || waitpid(pid, NULL, 0) < 0) {
			perror("clone3");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cgrstat_opts opts = { .sz = sizeof(opts), .max_records = 65536 };
	struct cgrstat_record *recs;
	int i, repeat;
	struct cgrstat *s;
	char err[512];
	size_t nr = 0;
	double t0;

	if (argc == 4 && !strcmp(argv[1], "populate"))
		return populate(argv[2], atoi(argv[3]));
	if (argc != 3) {
		fprintf(stderr, "usage: readbench SUBTREE REPEAT\n");
		return 2;
	}
	repeat = atoi(argv[2]);
	s = cgrstat_open("cpu-clock,context-switches", &opts, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "readbench: %s\n", err);
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < repeat; i++) {
		if (cgrstat_read_subtree(s, argv[1], &recs, &nr)) {
			fprintf(stderr, "readbench: %s\n", cgrstat_errmsg(s));
			cgrstat_close(s);
			return 1;
		}
		free(recs);
	}
	printf("cgroups %zu us_per_read %.1f\n", nr, (now_ns() - t0) / repeat / 1e3);
	cgrstat_close(s);
	return 0;
}
