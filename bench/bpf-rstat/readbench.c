// SPDX-License-Identifier: GPL-2.0
/*
 * readbench SUBTREE REPEAT: time cgrstat_read_subtree() of SUBTREE (one
 * iterator read returning every cgroup below it).  Prints the number of
 * cgroups and the mean time per read.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cgrstat.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
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
