// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgutil: the online cpus, from the kernel's cpu list
 * /sys/devices/system/cpu/online ("0-3,8,10-11\n": bitmap_print_to_pagebuf()'s
 * ranges, ascending).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cgutil.h"

#define ONLINE_CPUS "/sys/devices/system/cpu/online"

/* a cpu number at *p, *p moved past it: 0, or -EINVAL */
static int parse_cpu(const char **p, int *cpu)
{
	unsigned long n;
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	n = strtoul(*p, &end, 10);
	if (errno || n > INT_MAX)
		return -EINVAL;
	*p = end;
	*cpu = (int)n;
	return 0;
}

/* append first..last to *cpus (of *nr, *cap): 0 or -ENOMEM */
static int add_range(int **cpus, int *nr, int *cap, int first, int last)
{
	int *grown, cpu;

	for (cpu = first; cpu <= last; cpu++) {
		if (*nr == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			grown = realloc(*cpus, *cap * sizeof(**cpus));
			if (!grown)
				return -ENOMEM;
			*cpus = grown;
		}
		(*cpus)[(*nr)++] = cpu;
	}
	return 0;
}

int cgutil_parse_cpu_list(const char *list, int **cpus)
{
	int *out = NULL, nr = 0, cap = 0, first, last, ret = 0;
	const char *p = list;

	while (!ret && *p && *p != '\n') {
		ret = parse_cpu(&p, &first);
		last = first;
		if (!ret && *p == '-') {
			p++;
			ret = parse_cpu(&p, &last);
		}
		/* ascending and disjoint, as the kernel prints its lists */
		if (!ret && (last < first || (nr && first <= out[nr - 1])))
			ret = -EINVAL;
		if (!ret)
			ret = add_range(&out, &nr, &cap, first, last);
		if (!ret && *p == ',' && p[1] && p[1] != '\n')
			p++;
		else if (!ret && *p && *p != '\n')
			ret = -EINVAL;
	}
	if (!ret && (p[*p == '\n'] || !nr))
		ret = -EINVAL;	/* text after the newline, or no cpu at all */
	if (ret) {
		free(out);
		return ret;
	}
	*cpus = out;
	return nr;
}

int cgutil_online_cpus(int **cpus)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret;

	f = fopen(ONLINE_CPUS, "re");
	if (!f)
		return -errno;
	ret = getline(&line, &cap, f) > 0 ? cgutil_parse_cpu_list(line, cpus) : -EIO;
	free(line);
	fclose(f);
	return ret;
}
