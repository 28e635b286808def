// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_stat_bench: the experiment of the upstream memcg kfuncs patch (JP
 * Kobryn's, "introduce BPF kfuncs to access memcg statistics"). Reading memory.stat as text
 * (lseek + read; and with parsing) against the BPF reader (bpf_mem_cgroup_*
 * kfuncs), for one cgroup read N times and for C cgroups read once each per
 * round, N rounds. The BPF reader reads one cgroup with BPF_PROG_RUN of a
 * syscall program (bpf-run) or through a cgroup_iter fd (bpf-iter), and C
 * cgroups in one cgroup_iter walk of their parent (bpf-walk). Prints
 * real/user/sys per mode and the text/BPF ratios.
 *
 *   memcg_stat_bench [-n ITERS] [-N ROUNDS] [-c CGROUPS] [-f FIELDS] [-R SLICES]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "memcg_stat.h"
#include "mcg_util.h"

#define USAGE "usage: memcg_stat_bench [-n ITERS] [-N ROUNDS] [-c CGROUPS] [-f FIELDS] [-R SLICES]\n"

#define BENCH_CG MCG_ROOT "/memcg-stat-bench"
#define MAX_FIELDS 48

struct times {
	double real, user, sys;
};

struct cfg {
	long iters;		/* single cgroup: reads */
	long rounds;		/* many cgroups: rounds */
	int nr_cgroups;
	int repeats;
	const char *fields[MAX_FIELDS];
	int nr_fields;
	char *fields_arg;
	const char *fields_text;
};

static double tv(struct timeval t)
{
	return t.tv_sec + t.tv_usec / 1e6;
}

static void now(struct times *t)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	getrusage(RUSAGE_SELF, &ru);
	t->real = ts.tv_sec + ts.tv_nsec / 1e9;
	t->user = tv(ru.ru_utime);
	t->sys = tv(ru.ru_stime);
}

static struct times since(const struct times *a)
{
	struct times b;

	now(&b);
	b.real -= a->real;
	b.user -= a->user;
	b.sys -= a->sys;
	return b;
}

static void report(const char *scenario, const char *mode, long reads,
		   struct times t)
{
	printf("%-5s %-13s reads=%-8ld real=%8.3fs user=%7.3fs sys=%8.3fs  %8.2f us/read\n",
	       scenario, mode, reads, t.real, t.user, t.sys,
	       t.real * 1e6 / reads);
	fflush(stdout);
}

/* ---- the modes: each reads @nr cgroups @rounds times ---- */

static int text_plain(char **paths, int nr, long rounds, struct times *out)
{
	static char buf[16384];
	struct times t0;
	int *fds = calloc(nr, sizeof(int)), i, err = 0;
	long r;

	for (i = 0; i < nr && fds; i++)
		if ((fds[i] = open(paths[i], O_RDONLY)) < 0)
			err = -errno;
	now(&t0);
	for (r = 0; r < rounds && !err && fds; r++)
		for (i = 0; i < nr; i++)
			if (lseek(fds[i], 0, SEEK_SET) < 0 ||
			    read(fds[i], buf, sizeof(buf)) <= 0)
				err = -EIO;
	*out = since(&t0);
	for (i = 0; i < nr && fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return fds ? err : -ENOMEM;
}

/* Through the library: text backend (lseek/pread + parse) or bpf. One
 * target per cgroup, or one subtree target when @subtree.
 */
static int lib_read(const struct cfg *c, unsigned int flags, char **dirs,
		    int nr, int subtree, long rounds, struct times *out)
{
	MEMCG_STAT_OPTS(memcg_stat_opts, opts, .flags = flags,
			.max_cgroups = c->nr_cgroups + 1);
	struct memcg_stat_target **tg;
	struct memcg_stat_reader *rd;
	int i, n = subtree ? 1 : nr, err;
	struct times t0;
	long r;

	rd = memcg_stat_open(c->fields, c->nr_fields, &opts);
	if (!rd)
		return -errno;
	err = 0;
	tg = calloc(n, sizeof(*tg));
	for (i = 0; i < n && tg && !err; i++)
		if (!(tg[i] = memcg_stat_target_open(rd, dirs[i],
				subtree ? MEMCG_STAT_SUBTREE : MEMCG_STAT_SELF)))
			err = -errno;
	now(&t0);
	for (r = 0; r < rounds && !err && tg; r++)
		for (i = 0; i < n && !err; i++)
			if (memcg_stat_read_target(rd, tg[i]) < 1)
				err = -EIO;
	*out = since(&t0);
	for (i = 0; i < n && tg; i++)
		memcg_stat_target_close(tg[i]);
	free(tg);
	memcg_stat_close(rd);
	return tg ? err : -ENOMEM;
}

/* ---- setup ---- */

static char **make_paths(const char *fmt_dir, int nr, const char *file)
{
	char **p = calloc(nr + 1, sizeof(char *)), dir[256];
	int i;

	for (i = 0; i < nr && p; i++) {
		snprintf(dir, sizeof(dir), fmt_dir, i);
		if (asprintf(&p[i], "%s%s%s", dir, file ? "/" : "",
			     file ? file : "") < 0)
			exit(1);
	}
	return p;
}

static void free_paths(char **p)
{
	for (int i = 0; p && p[i]; i++)
		free(p[i]);
	free(p);
}

static int setup_cgroups(int nr, struct mcg_task *task)
{
	struct mcg_work w = { .anon_kb = 8192, .shmem_kb = 4096 };
	char path[256];
	int i;

	mcg_destroy(BENCH_CG);
	if (mcg_create(BENCH_CG, 1) || mcg_create(BENCH_CG "/one", 0) ||
	    mcg_create(BENCH_CG "/many", 1))
		return -1;
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), BENCH_CG "/many/c%d", i);
		if (mcg_create(path, 0))
			return -1;
	}
	return mcg_task_start(task, BENCH_CG "/one", &w);
}

static int parse_args(struct cfg *c, int argc, char **argv)
{
	char *save = NULL, *tok;
	int opt;

	c->iters = 1000000;
	c->rounds = 1000;
	c->nr_cgroups = 1000;
	c->repeats = 10;
	c->fields_arg = "anon,file,kernel,shmem,slab,pgfault";
	while ((opt = getopt(argc, argv, "n:N:c:f:R:")) != -1) {
		switch (opt) {
		case 'n': c->iters = atol(optarg); break;
		case 'N': c->rounds = atol(optarg); break;
		case 'c': c->nr_cgroups = atoi(optarg); break;
		case 'f': c->fields_arg = optarg; break;
		case 'R': c->repeats = atoi(optarg); break;
		default: return -1;
		}
	}
	c->fields_text = c->fields_arg;
	c->fields_arg = strdup(c->fields_arg);
	for (tok = strtok_r(c->fields_arg, ",", &save); tok && c->nr_fields < MAX_FIELDS;
	     tok = strtok_r(NULL, ",", &save))
		c->fields[c->nr_fields++] = tok;
	return c->iters > 0 && c->rounds > 0 && c->nr_cgroups > 0 &&
	       c->repeats > 0 ? 0 : -1;
}

static void verdict(const char *scenario, struct times plain, struct times parse,
		    struct times bpf)
{
	printf("%-12s bpf vs text+parse: %.1fx less total time (target >= 5x); "
	       "bpf vs plain read: %.0f%% less kernel time (target >= 70%%)\n",
	       scenario, parse.real / bpf.real, 100.0 * (1 - bpf.sys / plain.sys));
}

enum mode { ONE_READ, ONE_PARSE, ONE_BPF, ONE_ITER, MANY_READ, MANY_PARSE,
	    MANY_BPF, MANY_WALK, NR_MODES };

static const char *const mode_name[NR_MODES] = {
	"text-read", "text-parse", "bpf-run", "bpf-iter", "text-read",
	"text-parse", "bpf-run-each", "bpf-walk",
};

struct paths {
	char **one_dir, **one_stat, **many_dir, **many_stat, **parent;
};

static int run_mode(const struct cfg *c, const struct paths *p, enum mode m,
		    long n, struct times *t)
{
	switch (m) {
	case ONE_READ: return text_plain(p->one_stat, 1, n, t);
	case ONE_PARSE: return lib_read(c, MEMCG_STAT_FORCE_TEXT, p->one_dir, 1, 0, n, t);
	case ONE_BPF: return lib_read(c, MEMCG_STAT_FORCE_BPF, p->one_dir, 1, 0, n, t);
	case ONE_ITER:
		return lib_read(c, MEMCG_STAT_FORCE_BPF | MEMCG_STAT_ITER_ALWAYS,
				p->one_dir, 1, 0, n, t);
	case MANY_READ: return text_plain(p->many_stat, c->nr_cgroups, n, t);
	case MANY_PARSE:
		return lib_read(c, MEMCG_STAT_FORCE_TEXT, p->many_dir, c->nr_cgroups, 0, n, t);
	case MANY_BPF:
		return lib_read(c, MEMCG_STAT_FORCE_BPF, p->many_dir, c->nr_cgroups, 0, n, t);
	default: return lib_read(c, MEMCG_STAT_FORCE_BPF, p->parent, 1, 1, n, t);
	}
}

/* The modes run interleaved, in @c->repeats slices each, so that a slow
 * phase of a shared host does not fall on one mode only.
 */
static int run(const struct cfg *c)
{
	struct paths p = {
		make_paths(BENCH_CG "/one", 1, NULL),
		make_paths(BENCH_CG "/one", 1, "memory.stat"),
		make_paths(BENCH_CG "/many/c%d", c->nr_cgroups, NULL),
		make_paths(BENCH_CG "/many/c%d", c->nr_cgroups, "memory.stat"),
		make_paths(BENCH_CG "/many", 1, NULL),
	};
	struct times sum[NR_MODES] = {}, t;
	int err = 0, rep, m;
	long n, reads;

	for (rep = 0; rep < c->repeats && !err; rep++) {
		for (m = 0; m < NR_MODES && !err; m++) {
			n = m < MANY_READ ? c->iters : c->rounds;
			n = n / c->repeats + (rep < n % c->repeats);
			err = run_mode(c, &p, m, n, &t);
			sum[m].real += t.real;
			sum[m].user += t.user;
			sum[m].sys += t.sys;
		}
	}
	printf("# one cgroup: %ld reads per mode; %d cgroups: %ld rounds; fields %s; "
	       "%d interleaved slices\n", c->iters, c->nr_cgroups, c->rounds,
	       c->fields_text, c->repeats);
	for (m = 0; m < NR_MODES && !err; m++) {
		reads = m < MANY_READ ? c->iters :
			c->rounds * (c->nr_cgroups + (m == MANY_WALK));
		report(m < MANY_READ ? "one" : "many", mode_name[m], reads, sum[m]);
	}
	if (!err) {
		verdict("one-run", sum[ONE_READ], sum[ONE_PARSE], sum[ONE_BPF]);
		verdict("one-iter", sum[ONE_READ], sum[ONE_PARSE], sum[ONE_ITER]);
		verdict("many-run", sum[MANY_READ], sum[MANY_PARSE], sum[MANY_BPF]);
		verdict("many-walk", sum[MANY_READ], sum[MANY_PARSE], sum[MANY_WALK]);
	}
	free_paths(p.one_dir);
	free_paths(p.one_stat);
	free_paths(p.many_dir);
	free_paths(p.many_stat);
	free_paths(p.parent);
	return err;
}

int main(int argc, char **argv)
{
	struct mcg_task task;
	struct cfg c = {};
	int err;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(USAGE, stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--version"))
		return cli_version("memcg_stat_bench");
	if (parse_args(&c, argc, argv)) {
		fputs(USAGE, stderr);
		return CLI_EXIT_USAGE;
	}
	if (setup_cgroups(c.nr_cgroups, &task)) {
		fprintf(stderr, "memcg_stat_bench: cannot set up cgroups under %s\n", BENCH_CG);
		return 1;
	}
	err = run(&c);
	if (err)
		fprintf(stderr, "memcg_stat_bench: a mode failed (%d)\n", err);
	mcg_task_stop(&task);
	mcg_destroy(BENCH_CG);
	free(c.fields_arg);
	return err ? 1 : 0;
}
