// SPDX-License-Identifier: GPL-2.0
/*
 * churn DIR SECONDS [PERIOD_US]: make and remove a new cgroup below DIR
 * (mkdir DIR/cN, rmdir DIR/cN) at every tick of PERIOD_US microseconds
 * (default 1000) for SECONDS, on absolute deadlines: a tick that comes late
 * is made up at once, so the rate holds whenever one mkdir + rmdir takes
 * less than a period on average; the ticks left after SECONDS and one more
 * second of grace are given up.  Prints "CYCLES TICKS MAX_LAG_US": cycles
 * done, ticks due in SECONDS (equal when the pace held), and the latest a
 * cycle started after its tick.  It runs SCHED_FIFO, so that the tools it races (ordinary tasks)
 * never delay a tick: what can is the kernel making it wait.
 * Exits 1 when a mkdir or rmdir fails.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000LL

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_until(long long deadline_ns)
{
	struct timespec ts = { .tv_sec = deadline_ns / NSEC_PER_SEC,
			       .tv_nsec = deadline_ns % NSEC_PER_SEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int make_and_remove(const char *dir, long n)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/c%ld", dir, n);
	if (mkdir(path, 0755)) {
		fprintf(stderr, "churn: mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (rmdir(path)) {
		fprintf(stderr, "churn: rmdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long long start, end, tick, now, period_ns, max_lag = 0;
	long cycles = 0;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: churn DIR SECONDS [PERIOD_US]\n");
		return 2;
	}
	period_ns = (argc == 4 ? atoll(argv[3]) : 1000) * 1000;
	if (period_ns <= 0 || atof(argv[2]) <= 0) {
		fprintf(stderr, "churn: SECONDS and PERIOD_US must be positive\n");
		return 2;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = 1 })) {
		fprintf(stderr, "churn: SCHED_FIFO: %s\n", strerror(errno));
		return 1;
	}
	start = now_ns();
	end = start + (long long)(atof(argv[2]) * NSEC_PER_SEC);
	for (tick = start; tick < end; tick += period_ns) {
		sleep_until(tick);
		now = now_ns();
		if (now >= end + NSEC_PER_SEC)
			break;
		if (now - tick > max_lag)
			max_lag = now - tick;
		if (make_and_remove(argv[1], cycles))
			return 1;
		cycles++;
	}
	printf("%ld %lld %lld\n", cycles, (end - start + period_ns - 1) / period_ns,
	       max_lag / 1000);
	return 0;
}
