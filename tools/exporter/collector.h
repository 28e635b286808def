/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which counted cgroups and metric families cgroup-exporter exports:
 * --collector.depth, --[no-]collector.leaves-only,
 * --collector.cgroup-include/-exclude, --collector.disable-family.
 *
 * A cgroup's count includes its descendants' (cgcount.h), so a parent and
 * its child exported together count the child twice in a sum().  By
 * default only the leaves of the exported tree are exported: those of the
 * cgroups the depth and the regexes keep that have no kept descendant.  No
 * exported cgroup is then another's ancestor, and sum() over the series is
 * the count of the subtrees they cover (what tasks of an inner cgroup
 * itself, such as the root's, do is in no leaf).
 */
#ifndef TOOLS_EXPORTER_COLLECTOR_H
#define TOOLS_EXPORTER_COLLECTOR_H

#include <regex.h>
#include <stddef.h>

#include "cgcount.h"

/* getopt_long codes, above the tools' and main.c's own */
enum {
	COLLECTOR_OPT_DEPTH = 0x200,
	COLLECTOR_OPT_LEAVES_ONLY,
	COLLECTOR_OPT_ALL_LEVELS,
	COLLECTOR_OPT_INCLUDE,
	COLLECTOR_OPT_EXCLUDE,
	COLLECTOR_OPT_DISABLE_FAMILY,
};

#define COLLECTOR_LONG_OPTIONS						\
	{ "collector.depth", required_argument, NULL, COLLECTOR_OPT_DEPTH }, \
	{ "collector.leaves-only", no_argument, NULL, COLLECTOR_OPT_LEAVES_ONLY }, \
	{ "no-collector.leaves-only", no_argument, NULL, COLLECTOR_OPT_ALL_LEVELS }, \
	{ "collector.cgroup-include", required_argument, NULL, COLLECTOR_OPT_INCLUDE }, \
	{ "collector.cgroup-exclude", required_argument, NULL, COLLECTOR_OPT_EXCLUDE }, \
	{ "collector.disable-family", required_argument, NULL, COLLECTOR_OPT_DISABLE_FAMILY }

#define COLLECTOR_USAGE							\
	"      --collector.depth=N\n"					\
	"                       export the cgroups at most N levels below the\n" \
	"                       root (0: the root alone; default: any depth)\n" \
	"      --collector.leaves-only\n"				\
	"                       export only the cgroups with no exported\n" \
	"                       descendant (default), so that sum() over the\n" \
	"                       series counts nothing twice\n"		\
	"      --no-collector.leaves-only\n"				\
	"                       export every level (a parent includes its\n" \
	"                       children)\n"					\
	"      --collector.cgroup-include=REGEX\n"			\
	"      --collector.cgroup-exclude=REGEX\n"			\
	"                       export only the cgroups whose path (\"/a/b\")\n" \
	"                       matches include and not exclude (POSIX extended,\n" \
	"                       anchored at both ends as Prometheus' relabeling)\n" \
	"      --collector.disable-family=NAME\n"			\
	"                       leave a metric family out (repeat it), e.g.\n" \
	"                       perf_cgroup_events_scaling_ratio, always 1 for\n" \
	"                       software events\n"

struct collector {
	long max_depth;			/* -1: any */
	int all_levels;			/* --no-collector.leaves-only */
	regex_t include, exclude;
	int has_include, has_exclude;
	unsigned int disabled;		/* bit n: metrics.c's family n */
};

void collector_init(struct collector *c);
void collector_free(struct collector *c);
/* One option: 1 when handled, 0 when not a collector option, -1 after a
 * usage error */
int collector_parse_option(struct collector *c, const char *prog, int opt, const char *arg);
/* keep[i] = 1 for each of the @nr readings @r to export */
int collector_select(const struct collector *c, const struct cgcount_reading *r, size_t nr,
		     unsigned char *keep);

/* metrics.c: a family's number by its name, -1 if none; their names */
int metrics_family(const char *name);
const char *metrics_family_names(void);

#endif /* TOOLS_EXPORTER_COLLECTOR_H */
