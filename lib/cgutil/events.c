// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgutil: event strings -> struct perf_event_attr. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgutil.h"

struct generic_event {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* perf's names (tools/perf/util/parse-events.c: event_symbols_{hw,sw}) */
static const struct generic_event generic_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

#define NR_GENERIC (sizeof(generic_events) / sizeof(generic_events[0]))

int cgutil_parse_event(const char *str, size_t len, struct perf_event_attr *attr)
{
	size_t i;

	for (i = 0; i < NR_GENERIC; i++) {
		if (strlen(generic_events[i].name) == len &&
		    !strncmp(generic_events[i].name, str, len)) {
			memset(attr, 0, sizeof(*attr));
			attr->size = sizeof(*attr);
			attr->type = generic_events[i].type;
			attr->config = generic_events[i].config;
			return 0;
		}
	}
	return -ENOENT;
}

void cgutil_event_names(char *buf, size_t len)
{
	size_t i, used = 0;
	int n;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < NR_GENERIC && used < len; i++) {
		n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			     generic_events[i].name);
		if (n < 0)
			break;
		used += n;
	}
}
