// SPDX-License-Identifier: GPL-2.0
/*
 * memcg-stat: print selected memory.stat fields of cgroups, read through
 * the bpf_mem_cgroup_* kfuncs when the kernel has them (see memcg_stat.h).
 *
 *   memcg-stat [-f FIELD,...] [-r] [-t|-b] [-n COUNT] CGROUP_DIR...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgutil.h"
#include "memcg_stat.h"
#include "cli.h"

#define MAX_FIELDS 48
#define DEFAULT_FIELDS "anon,file,kernel,shmem,slab,pgfault"

struct cli {
	char *fields_arg;
	const char *fields[MAX_FIELDS];
	int nr_fields;
	enum memcg_stat_scope scope;
	struct memcg_stat_opts opts;
	long count;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memcg-stat [-f FIELD,...] [-r] [-t|-b] [-n COUNT] CGROUP_DIR...\n"
		"  -f  memory.stat fields, \"usage\" or \"events.NAME\" (default %s)\n"
		"  -r  the cgroup and all its descendants\n"
		"  -t  parse memory.stat (text backend); -b  require the bpf backend\n"
		"  -n  read COUNT times, print the last (for timing)\n"
		"  -m  at most this many cgroups per read (default 4096)\n"
		"  -h, --help  this text;  --version  the version\n",
		DEFAULT_FIELDS);
}

static int split_fields(struct cli *c)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(c->fields_arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c->nr_fields == MAX_FIELDS)
			return -1;
		c->fields[c->nr_fields++] = tok;
	}
	return c->nr_fields ? 0 : -1;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	int opt;

	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};

	c->count = 1;
	c->opts.sz = sizeof(c->opts);
	while ((opt = getopt_long(argc, argv, "f:rtbn:m:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f': c->fields_arg = optarg; break;
		case 'r': c->scope = MEMCG_STAT_SUBTREE; break;
		case 't': c->opts.flags |= MEMCG_STAT_FORCE_TEXT; break;
		case 'b': c->opts.flags |= MEMCG_STAT_FORCE_BPF; break;
		case 'n': c->count = strtol(optarg, NULL, 0); break;
		case 'm': c->opts.max_cgroups = strtoul(optarg, NULL, 0); break;
		case 'h': usage(stdout); exit(0);
		case 'V': exit(cli_version("memcg-stat"));
		default: return -1;
		}
	}
	if (!c->fields_arg)
		c->fields_arg = strdup(DEFAULT_FIELDS);
	else
		c->fields_arg = strdup(c->fields_arg);
	if (!c->fields_arg || split_fields(c) || c->count < 1 || optind >= argc)
		return -1;
	return 0;
}

/* cgroup id -> path below the directory given on the command line */
static uint64_t find_id;
static char found_path[4096];

static int match_id(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	uint64_t id;

	(void)st;
	(void)ftw;
	if (type == FTW_D && !cgutil_cgroup_id(path, &id) && id == find_id) {
		snprintf(found_path, sizeof(found_path), "%s", path);
		return 1;
	}
	return 0;
}

static const char *cgroup_name(const char *top, uint64_t id,
			       enum memcg_stat_scope scope)
{
	if (scope == MEMCG_STAT_SELF)
		return top;
	find_id = id;
	if (nftw(top, match_id, 16, FTW_PHYS) == 1)
		return found_path;
	snprintf(found_path, sizeof(found_path), "cgroup-id:%llu",
		 (unsigned long long)id);
	return found_path;
}

static void print_rows(const struct cli *c, const struct memcg_stat_reader *r,
		       const char *top, int nr_rows)
{
	int i, f;

	for (i = 0; i < nr_rows; i++) {
		const struct memcg_stat_row *row = memcg_stat_row(r, i);

		printf("%s", cgroup_name(top, row->cgroup_id, c->scope));
		if (!row->has_memcg) {
			printf(" (memory controller not enabled)\n");
			continue;
		}
		for (f = 0; f < c->nr_fields; f++) {
			if (row->values[f] == MEMCG_STAT_NA)
				printf(" %s=n/a", c->fields[f]);
			else
				printf(" %s=%llu", c->fields[f],
				       (unsigned long long)row->values[f]);
		}
		printf("\n");
	}
}

static int read_cgroup(const struct cli *c, struct memcg_stat_reader *r,
		       const char *path)
{
	struct memcg_stat_target *tg;
	int ret = 0;
	long i;

	tg = memcg_stat_target_open(r, path, c->scope);
	if (!tg) {
		fprintf(stderr, "memcg-stat: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (i = 0; i < c->count && ret >= 0; i++)
		ret = memcg_stat_read_target(r, tg);
	memcg_stat_target_close(tg);
	if (ret < 0) {
		fprintf(stderr, "memcg-stat: %s: %s\n", path, strerror(-ret));
		return 1;
	}
	print_rows(c, r, path, ret);
	return 0;
}

/* The library's messages after the tool's name; its DEBUG one is the
 * backend it chose, and why not bpf, which this tool always reports. */
static int print_with_prog(enum memcg_stat_print_level level, const char *fmt,
			   va_list ap)
{
	(void)level;
	fputs("memcg-stat: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct memcg_stat_reader *r;
	struct cli c = {};
	int i, status = 0;

	if (parse_args(&c, argc, argv)) {
		usage(stderr);
		free(c.fields_arg);
		return CLI_EXIT_USAGE;
	}
	memcg_stat_set_print(print_with_prog);
	r = memcg_stat_open(c.fields, c.nr_fields, &c.opts);
	if (!r) {
		/* the library said why; a field it does not know is a usage error */
		status = errno == ENOENT || errno == EINVAL ? CLI_EXIT_USAGE : 1;
		free(c.fields_arg);
		return status;
	}
	for (i = optind; i < argc; i++)
		status |= read_cgroup(&c, r, argv[i]);
	memcg_stat_close(r);
	free(c.fields_arg);
	return status;
}
