// SPDX-License-Identifier: GPL-2.0
/*
 * cgtop: the busiest cgroups by a perf event, refreshed every interval.
 *
 *   cgtop [-e EVENT] [-n ROWS] [-b BACKEND] [-d SECONDS] [-r REGEX]
 *         [--iterations N] [--batch]
 *
 * Counts EVENT (default cpu-clock) for every cgroup whose path (relative to
 * the cgroup2 root, e.g. "/a/b") matches REGEX (default: all), and every
 * SECONDS (default 1) prints the ROWS (default 20) cgroups that counted the
 * most in the interval.  Counts are hierarchical: a parent includes its
 * children (-r '/.+/' style regexes pick leaves).  New cgroups are picked
 * up at each refresh, removed ones dropped.  --batch prints plain tables
 * one after the other (no screen clearing); --iterations stops after N.
 * Uses libcgcount (lib/cgcount/cgcount.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgcount.h"

struct options {
	const char *event;
	const char *regex;
	struct cgcount_opts lib;
	int rows;
	double interval;
	long iterations;	/* 0: forever */
	int batch;
};

/* One cgroup's count in the interval. */
struct row {
	uint64_t id;
	const char *path;
	double delta;
};

struct snapshot {
	struct cgcount_reading *r;
	size_t nr;
	double when;		/* CLOCK_MONOTONIC seconds */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-e EVENT] [-n ROWS] [-b auto|events|shared|rstat] "
		"[-d SECONDS] [-r REGEX] [--iterations N] [--batch]\n", prog);
}

static int parse_number(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out < 0 ? -1 : 0;
}

static int parse_one(struct options *o, int c, const char *arg)
{
	double v;

	switch (c) {
	case 'e':
		o->event = arg;
		return 0;
	case 'r':
		o->regex = arg;
		return 0;
	case 'b':
		return cgcount_parse_backend(arg, &o->lib.backend);
	case 'n':
		if (parse_number(arg, &v) || v < 1)
			return -1;
		o->rows = v;
		return 0;
	case 'd':
		if (parse_number(arg, &v) || v < 0.01)
			return -1;
		o->interval = v;
		return 0;
	case 'i':
		if (parse_number(arg, &v) || v < 1)
			return -1;
		o->iterations = v;
		return 0;
	case 'B':
		o->batch = 1;
		return 0;
	}
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "iterations", required_argument, NULL, 'i' },
		{ "batch", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct options){ .event = "cpu-clock", .regex = ".*", .rows = 20,
			       .interval = 1, .lib.sz = sizeof(o->lib) };
	while ((c = getopt_long(argc, argv, "e:n:b:d:r:h", longopts, NULL)) != -1) {
		if (parse_one(o, c, optarg))
			return -1;	/* a bad -b: the library said why */
	}
	return optind == argc ? 0 : -1;
}

static void sleep_interval(double secs)
{
	struct timespec ts = { .tv_sec = (time_t)secs,
			       .tv_nsec = (long)((secs - (time_t)secs) * 1e9) };

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Pick up new cgroups, drop the ones removed from the tree. */
static int refresh_cgroups(struct cgcount *s, const struct options *o,
			   const struct snapshot *last)
{
	char full[8192];
	struct stat st;
	size_t i;

	for (i = 0; last && i < last->nr; i++) {
		snprintf(full, sizeof(full), "%s%s", cgcount_cgroup_root(s), last->r[i].path);
		if (stat(full, &st))
			cgcount_remove_id(s, last->r[i].cgroup_id);
	}
	return cgcount_add_regex(s, o->regex) < 0 ? -1 : 0;
}

static const struct cgcount_reading *find_reading(const struct snapshot *snap, uint64_t id)
{
	size_t lo = 0, hi = snap->nr;

	while (lo < hi) {	/* readings are sorted by id */
		size_t mid = lo + (hi - lo) / 2;

		if (snap->r[mid].cgroup_id == id)
			return &snap->r[mid];
		if (snap->r[mid].cgroup_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int by_delta_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta < y->delta ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* Rows: what each cgroup counted between the two snapshots, busiest first. */
static struct row *make_rows(const struct snapshot *prev, const struct snapshot *now)
{
	struct row *rows = calloc(now->nr ? now->nr : 1, sizeof(*rows));
	const struct cgcount_reading *before;
	size_t i;

	if (!rows)
		return NULL;
	for (i = 0; i < now->nr; i++) {
		before = find_reading(prev, now->r[i].cgroup_id);
		rows[i].id = now->r[i].cgroup_id;
		rows[i].path = now->r[i].path;
		rows[i].delta = cgcount_scaled(&now->r[i].values[0]) -
				(before ? cgcount_scaled(&before->values[0]) : 0);
	}
	qsort(rows, now->nr, sizeof(*rows), by_delta_desc);
	return rows;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @secs: the time between the two snapshots (the interval plus reading) */
static void print_table(struct cgcount *s, const struct options *o, const struct row *rows,
			size_t nr, long iteration, double secs)
{
	int is_time = !strcmp(o->event, "cpu-clock") || !strcmp(o->event, "task-clock");
	size_t i;

	if (!o->batch)
		printf("\033[H\033[2J");
	printf("cgtop: %s via the %s backend, %zu cgroups, interval %.2f s, iteration %ld\n",
	       o->event, cgcount_backend_name(cgcount_backend(s)), nr, secs, iteration);
	printf("%4s %18s %14s %s\n", "RANK", o->event, is_time ? "CPU%" : "PER-SEC", "CGROUP");
	for (i = 0; i < nr && i < (size_t)o->rows; i++)
		printf("%4zu %18.0f %14.1f %s\n", i + 1, rows[i].delta,
		       is_time ? rows[i].delta / (secs * 1e9) * 100 : rows[i].delta / secs,
		       rows[i].path);
	printf("\n");
	fflush(stdout);
}

static int take_snapshot(struct cgcount *s, struct snapshot *snap)
{
	snap->r = NULL;
	snap->nr = 0;
	snap->when = now_seconds();
	if (!cgcount_read_all(s, &snap->r, &snap->nr))
		return 0;
	return -1;
}

static int one_iteration(struct cgcount *s, const struct options *o, struct snapshot *prev,
			 long iteration)
{
	struct snapshot now;
	struct row *rows;

	sleep_interval(o->interval);
	if (take_snapshot(s, &now))
		return -1;
	rows = make_rows(prev, &now);
	if (rows)
		print_table(s, o, rows, now.nr, iteration, now.when - prev->when);
	free(rows);
	cgcount_readings_free(prev->r, prev->nr);
	*prev = now;
	if (refresh_cgroups(s, o, prev))
		return -1;
	return rows ? 0 : -1;
}

static int run(struct cgcount *s, const struct options *o)
{
	struct snapshot prev;
	long i;
	int ret = 0;

	if (refresh_cgroups(s, o, NULL) || take_snapshot(s, &prev))
		return 1;
	for (i = 1; !ret && !stop && (!o->iterations || i <= o->iterations); i++)
		ret = one_iteration(s, o, &prev, i);
	cgcount_readings_free(prev.r, prev.nr);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct cgcount *s;
	int ret;

	if (parse_options(argc, argv, &o)) {
		usage(argv[0]);
		return 2;
	}
	s = cgcount_open(o.event, &o.lib);
	if (!s)
		return 1;	/* libcgcount printed why */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ret = run(s, &o);
	cgcount_close(s);
	return ret;
}
