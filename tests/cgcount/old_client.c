// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A program built against an older libcgcount header (old-abi/cgcount.h:
 * struct cgcount_opts without its newer fields), run with the current
 * libcgcount.so by tests/cgcount/install.sh.  It counts the cgroup2 root's
 * cpu-clock on the events backend while it burns cpu itself: the count
 * must be at least its own cpu time (getrusage), the independent truth.
 * Exit 0 if so; it prints why not otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cgcount.h"

static double cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

static void burn(double ns)
{
	double end = cpu_ns() + ns;
	volatile unsigned long x = 0;

	while (cpu_ns() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
}

int main(void)
{
	struct cgcount_opts opts = { .sz = sizeof(opts), .backend = CGCOUNT_EVENTS };
	struct cgcount_value v[1];
	struct cgcount *s;
	double before, mine;
	int ret;

	s = cgcount_open("cpu-clock", &opts);
	if (!s) {
		printf("# cgcount_open with a %zu-byte opts struct: %s\n", sizeof(opts),
		       strerror(errno));
		return 1;
	}
	ret = cgcount_backend(s) == CGCOUNT_EVENTS ? cgcount_add_path(s, "/") : -1;
	before = cpu_ns();
	burn(100e6);
	mine = cpu_ns() - before;
	if (!ret)
		ret = cgcount_read_path(s, "/", v, 1);
	cgcount_close(s);
	if (ret) {
		printf("# add/read: %s\n", strerror(-ret));
		return 1;
	}
	printf("# old client: root cgroup cpu-clock %.0f ns, its own cpu time %.0f ns\n",
	       (double)v[0].value, mine);
	return v[0].value >= 0.95 * mine ? 0 : 1;
}
