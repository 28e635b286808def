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
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
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
	const char *cgroupfs;	/* --path.cgroupfs: relative CGROUP_DIRs are below it */
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
		CGROUPFS_USAGE
		"                       (a relative CGROUP_DIR is below it)\n"
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
		{ CGROUPFS_OPTION, required_argument, NULL, 'C' },
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
		case 'C': c->cgroupfs = optarg; break;
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

/* Each row's cgroup by path: the rows' ids, sorted, looked up by one walk. */
struct row_names {
	const char *top;
	int nr_rows;
	struct id_row { uint64_t id; int row; } *by_id;
	char **names;		/* per row; NULL until the walk meets it */
};

static int cmp_id(const void *a, const void *b)
{
	const struct id_row *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int name_row(const struct cgutil_walk_entry *e, void *ctx)
{
	struct row_names *rn = ctx;
	struct id_row key = { .id = e->id }, *found;

	found = bsearch(&key, rn->by_id, rn->nr_rows, sizeof(key), cmp_id);
	if (found && !rn->names[found->row] &&
	    asprintf(&rn->names[found->row], "%s%s%s", rn->top, *e->path ? "/" : "",
		     e->path) < 0) {
		rn->names[found->row] = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* rn->names for the rows of a read of @top's subtree; -errno */
static int name_rows(struct row_names *rn, const struct memcg_stat_reader *r)
{
	int i, dirfd, err;

	rn->by_id = calloc(rn->nr_rows, sizeof(*rn->by_id));
	rn->names = calloc(rn->nr_rows, sizeof(*rn->names));
	if (!rn->by_id || !rn->names)
		return -ENOMEM;
	for (i = 0; i < rn->nr_rows; i++)
		rn->by_id[i] = (struct id_row){ memcg_stat_row(r, i)->cgroup_id, i };
	qsort(rn->by_id, rn->nr_rows, sizeof(*rn->by_id), cmp_id);
	dirfd = open(rn->top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	err = cgutil_walk(dirfd, 0, name_row, rn, NULL);
	close(dirfd);
	return err;
}

static void free_row_names(struct row_names *rn)
{
	for (int i = 0; rn->names && i < rn->nr_rows; i++)
		free(rn->names[i]);
	free(rn->names);
	free(rn->by_id);
}

static void print_row(const struct cli *c, const struct memcg_stat_row *row,
		      const char *name)
{
	int f;

	if (name)
		printf("%s", name);
	else
		printf("cgroup-id:%llu", (unsigned long long)row->cgroup_id);
	if (!row->has_memcg) {
		printf(" (memory controller not enabled)\n");
		return;
	}
	for (f = 0; f < c->nr_fields; f++) {
		if (row->values[f] == MEMCG_STAT_NA)
			printf(" %s=n/a", c->fields[f]);
		else
			printf(" %s=%llu", c->fields[f], (unsigned long long)row->values[f]);
	}
	printf("\n");
}

static int print_rows(const struct cli *c, const struct memcg_stat_reader *r,
		      const char *top, int nr_rows)
{
	struct row_names rn = { .top = top, .nr_rows = nr_rows };
	int i, err = 0;

	if (c->scope == MEMCG_STAT_SUBTREE)
		err = name_rows(&rn, r);
	if (err)
		fprintf(stderr, "memcg-stat: %s: cannot name its cgroups: %s\n", top,
			strerror(-err));
	for (i = 0; i < nr_rows && !err; i++)
		print_row(c, memcg_stat_row(r, i), rn.names ? rn.names[i] : top);
	free_row_names(&rn);
	return err ? 1 : 0;
}

/*
 * --path.cgroupfs: the bpf reader finds a single cgroup by id; where only
 * paths reach DIR's cgroups, the text reader.  The exit status.
 */
static int use_cgroupfs(struct cli *c)
{
	int by_id, status;

	if (!c->cgroupfs)
		return 0;
	status = cgroupfs_prepare("memcg-stat", c->cgroupfs, &by_id);
	if (status || by_id)
		return status;
	if (c->opts.flags & MEMCG_STAT_FORCE_BPF) {
		fprintf(stderr, "memcg-stat: -b: the bpf reader finds cgroups by id: run it "
			"with the host's PID namespace, CAP_SYS_ADMIN and CAP_SYS_PTRACE, or without -b\n");
		return 1;
	}
	fprintf(stderr, "memcg-stat: reading memory.stat as text, by path\n");
	c->opts.flags |= MEMCG_STAT_FORCE_TEXT;
	return 0;
}

static int read_target(const struct cli *c, struct memcg_stat_reader *r, const char *path)
{
	struct memcg_stat_target *tg;
	int ret = 0;
	long i;

	tg = memcg_stat_target_open(r, path, c->scope);
	if (!tg)
		return 1;
	for (i = 0; i < c->count && ret >= 0; i++)
		ret = memcg_stat_read_target(r, tg);
	memcg_stat_target_close(tg);
	return ret < 0 ? 1 : print_rows(c, r, path, ret);
}

/* A CGROUP_DIR argument: the library says why a cgroup cannot be read. */
static int read_cgroup(const struct cli *c, struct memcg_stat_reader *r,
		       const char *arg)
{
	char *path = NULL;
	int ret;

	if (c->cgroupfs && arg[0] != '/') {
		if (asprintf(&path, "%s/%s", c->cgroupfs, arg) < 0)
			return 1;
		arg = path;
	}
	ret = read_target(c, r, arg);
	free(path);
	return ret;
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
	status = use_cgroupfs(&c);
	if (status) {
		free(c.fields_arg);
		return status;
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
