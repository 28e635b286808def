// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong CGROUP_A CGROUP_B ROUNDS: two processes, one in each cgroup
 * (directories), both pinned to cpu 0, pass a byte back and forth over
 * pipes ROUNDS times: every round is two context switches, each one a
 * cgroup switch.  Prints "ns_per_switch N" (wall time / (2 * ROUNDS)) and
 * "cpu_ns_per_switch N" (cpu time of both tasks / (2 * ROUNDS)): the latter
 * does not count time cpu 0 spent on other processes, so it is the number
 * to compare on a shared machine.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void enter(const char *cg)
{
	char path[4096];
	cpu_set_t set;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die(path);
	close(fd);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void bounce(int in, int out, long rounds, int first)
{
	char c = 'x';
	long i;

	for (i = 0; i < rounds; i++) {
		if (first && write(out, &c, 1) != 1)
			die("write");
		if (read(in, &c, 1) != 1)
			die("read");
		if (!first && write(out, &c, 1) != 1)
			die("write");
	}
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	int ab[2], ba[2], go[2], sa, sb;
	struct rusage ru;
	long rounds;
	double t0;
	pid_t a, b;
	char c;

	if (argc != 4) {
		fprintf(stderr, "usage: pingpong CGROUP_A CGROUP_B ROUNDS\n");
		return 2;
	}
	rounds = atol(argv[3]);
	if (pipe(ab) || pipe(ba) || pipe(go))
		die("pipe");
	b = fork();
	if (b == 0) {
		close(ab[1]);
		close(ba[0]);
		close(go[1]);
		enter(argv[2]);
		bounce(ab[0], ba[1], rounds, 0);
		_exit(0);
	}
	a = fork();
	if (a == 0) {
		close(ab[0]);
		close(ba[1]);
		close(go[1]);
		enter(argv[1]);
		if (read(go[0], &c, 1) != 1)
			die("read go");
		bounce(ba[0], ab[1], rounds, 1);
		_exit(0);
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	usleep(100000);
	t0 = now_ns();
	if (write(go[1], "g", 1) != 1)
		die("write go");
	if (waitpid(a, &sa, 0) < 0 || waitpid(b, &sb, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(sa) || WEXITSTATUS(sa) || !WIFEXITED(sb) || WEXITSTATUS(sb)) {
		fprintf(stderr, "pingpong: a worker failed\n");
		return 1;
	}
	printf("ns_per_switch %.0f\n", (now_ns() - t0) / (2.0 * rounds));
	if (!getrusage(RUSAGE_CHILDREN, &ru))
		printf("cpu_ns_per_switch %.0f\n",
		       ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3) / (2.0 * rounds));
	return 0;
}
