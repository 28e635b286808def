// SPDX-License-Identifier: GPL-2.0
/*
 * cgbench: the driver of bench/ for counting perf events per cgroup.
 *
 *   cgbench cost  -b BACKEND -e EVENTS -f CGROUP_LIST [-R SUBTREE] [-r REPS] [-m MIN_US]
 *   cgbench count -b BACKEND -e EVENTS -f CGROUP_LIST [-R SUBTREE] [-o OUT] -- COMMAND...
 *   cgbench ring  -f CGROUP_LIST [-t TASKS] [-k TOKENS] [-l LOOPS]
 *   cgbench churn -b BACKEND -e EVENTS -R SUBTREE [-l CGROUPS]
 *
 * cost:  open + attach (setup), read every cgroup, read one cgroup, close
 *        (teardown); fds, slab, percpu and BPF map memory the backend holds.
 *        Each read time is the median of REPS batches of reads that last
 *        MIN_US (default 50000) or more.
 *        Prints one line of key=value pairs.
 * count: count while COMMAND runs, then print "value event cgroup" lines.
 * ring:  the messaging workload: TASKS tasks spread over the cgroups of the
 *        list pass TOKENS tokens around a ring of pipes LOOPS times; prints
 *        wall and cpu microseconds per message (each one a cgroup switch
 *        when neighbours are in different cgroups).
 * churn: with SUBTREE counted with everything created below it
 *        (cgcount_add_subtree(); none: nothing counted), create CGROUPS
 *        (default 1000) cgroups in SUBTREE, then remove them; prints the
 *        microseconds each mkdir and each rmdir took: what the backend adds
 *        to creating and removing cgroups (shared: the kernel attaches each
 *        new cgroup to every event as it is created).
 *
 * CGROUP_LIST: one cgroup v2 directory per line (absolute paths); churn
 * takes none.
 * Backends: none counts nothing (the baseline); floor and floor-read are the
 * bench's own:
 *   floor   one CPU event per event and CPU, no cgroup work: what counting
 *           the events at all costs
 *   floor-read  floor, plus a BPF program that reads each of the CPU's
 *           counters once at every cgroup switch (switch_read.bpf.c): the
 *           least any per-cgroup backend adds to floor
 * events, shared and rstat
 * are libcgcount's (lib/cgcount/cgcount.h), measured through the library
 * programs link, one session with every cgroup of the list added at once
 * (cgcount_add_paths):
 *   events  one cgroup event per cgroup, event and CPU (PERF_FLAG_PID_CGROUP):
 *           the events `perf stat -a --for-each-cgroup` opens ("percg" is
 *           taken as its old name)
 *   shared  one CPU event per event and CPU with every cgroup attached
 *           (PERF_EVENT_IOC_ATTACH_CGROUP, READ_CGROUPS, READ_CGROUP)
 *   rstat   the BPF rstat backend (lib/cgrstat), its maps sized for twice the
 *           cgroups that exist; reads walk the counted cgroups' common subtree
 *           (-R is accepted and no longer needed)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgcount.h"
#include "cgutil.h"
#include "cli.h"
#include "switch_read.skel.h"

#define MAX_EVENTS 8

struct session {
	char *event_list;
	int nr_events;
	char *event_names[MAX_EVENTS];
	int nr_cgroups;
	char **paths;
	uint64_t *ids;
	int *by_id;		/* cgroup indexes sorted by id */
	uint64_t *values;	/* [cgroup][event], filled by read_all */
	enum cgcount_backend backend;
	struct cgcount *cgc;
	int nr_cpus;		/* floor, floor-read */
	void *priv;		/* floor, floor-read: struct floor */
};

struct backend {
	const char *name;
	int (*open)(struct session *s);
	int (*read_all)(struct session *s);
	int (*read_one)(struct session *s, int cg);
	void (*close)(struct session *s);
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static const struct session *sort_session;

static int compare_by_id(const void *a, const void *b)
{
	uint64_t x = sort_session->ids[*(const int *)a];
	uint64_t y = sort_session->ids[*(const int *)b];

	return x < y ? -1 : x > y;
}

/* Index of the cgroup with id @id, or -1. */
static int find_cgroup(const struct session *s, uint64_t id)
{
	int lo = 0, hi = s->nr_cgroups - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		uint64_t v = s->ids[s->by_id[mid]];

		if (v == id)
			return s->by_id[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static void add_value(struct session *s, int cg, int ev, uint64_t v)
{
	s->values[(size_t)cg * s->nr_events + ev] += v;
}

static void clear_values(struct session *s)
{
	memset(s->values, 0, (size_t)s->nr_cgroups * s->nr_events * sizeof(*s->values));
}

/* ---- backend none ---- */

static int none_open(struct session *s)
{
	(void)s;
	return 0;
}

static int none_read_all(struct session *s)
{
	clear_values(s);
	return 0;
}

static int none_read_one(struct session *s, int cg)
{
	(void)s;
	(void)cg;
	return 0;
}

static void none_close(struct session *s)
{
	(void)s;
}

/* ---- backends floor and floor-read: perf events of their own ---- */

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

static int open_cpu_event(const char *name, int cpu)
{
	struct perf_event_attr attr;

	if (cgutil_parse_event(name, strlen(name), &attr)) {
		fprintf(stderr, "cgbench: %s: unknown event\n", name);
		return -1;
	}
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void close_fds(int *fds, size_t nr)
{
	size_t i;

	for (i = 0; fds && i < nr; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	free(fds);
}

static int *new_fds(size_t nr)
{
	int *fds = malloc(nr * sizeof(*fds));
	size_t i;

	for (i = 0; fds && i < nr; i++)
		fds[i] = -1;
	return fds;
}

struct floor {
	int *fds;
	struct switch_read *skel;	/* floor-read only */
	struct bpf_link *link;
};

static size_t floor_nr_fds(const struct session *s)
{
	return (size_t)s->nr_events * s->nr_cpus;
}

static int floor_open(struct session *s)
{
	struct floor *fl = calloc(1, sizeof(*fl));
	int ev, cpu;

	if (!fl)
		return -1;
	s->priv = fl;
	s->nr_cpus = online_cpus();
	fl->fds = new_fds(floor_nr_fds(s));
	if (!fl->fds)
		return -1;
	for (ev = 0; ev < s->nr_events; ev++) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			int fd = open_cpu_event(s->event_names[ev], cpu);

			fl->fds[ev * s->nr_cpus + cpu] = fd;
			if (fd < 0) {
				perror("perf_event_open(cpu)");
				return -1;
			}
		}
	}
	return 0;
}

/* The cpu-wide counts: no cgroup gets a value. */
static int floor_read_one(struct session *s, int cg)
{
	struct floor *fl = s->priv;
	uint64_t v[3];
	size_t i;

	(void)cg;
	for (i = 0; i < floor_nr_fds(s); i++) {
		if (read(fl->fds[i], v, sizeof(v)) != sizeof(v)) {
			perror("read(perf event)");
			return -1;
		}
	}
	return 0;
}

static int floor_read_all(struct session *s)
{
	clear_values(s);
	return floor_read_one(s, 0);
}

static int floor_read_open(struct session *s)
{
	struct floor *fl;
	int fd, map;
	uint32_t i;

	if (floor_open(s))
		return -1;
	fl = s->priv;
	fl->skel = switch_read__open();
	if (!fl->skel)
		return -1;
	fl->skel->rodata->nr_cpus = s->nr_cpus;
	fl->skel->rodata->nr_events = s->nr_events;
	bpf_map__set_max_entries(fl->skel->maps.events, floor_nr_fds(s));
	if (switch_read__load(fl->skel)) {
		fprintf(stderr, "cgbench: loading switch_read.bpf.o failed\n");
		return -1;
	}
	map = bpf_map__fd(fl->skel->maps.events);
	for (i = 0; i < floor_nr_fds(s); i++) {
		fd = fl->fds[i];
		if (bpf_map_update_elem(map, &i, &fd, BPF_ANY)) {
			perror("bpf_map_update_elem(events)");
			return -1;
		}
	}
	fl->link = bpf_program__attach(fl->skel->progs.read_at_cgroup_switch);
	if (!fl->link) {
		perror("attach switch_read");
		return -1;
	}
	return 0;
}

static void floor_close(struct session *s)
{
	struct floor *fl = s->priv;

	if (!fl)
		return;
	bpf_link__destroy(fl->link);
	if (fl->skel && fl->skel->bss->reads == 0 && fl->link)
		fprintf(stderr, "cgbench: floor-read: no counter read at a cgroup switch\n");
	switch_read__destroy(fl->skel);
	close_fds(fl->fds, floor_nr_fds(s));
	free(fl);
	s->priv = NULL;
}

/* ---- backends events, shared, rstat: libcgcount ---- */

static int count_one(const struct cgutil_walk_entry *e, void *ctx)
{
	(void)e;
	++*(size_t *)ctx;
	return 0;
}

/* the cgroups of the tree at @root, the root included (0 if it cannot be read) */
static size_t count_cgroups(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return 0;
	if (cgutil_walk(fd, 0, count_one, &n, NULL))
		n = 0;
	close(fd);
	return n;
}

/* rstat: maps for the cgroups that exist (x2), as a user counting them
 * would size them, not for the library's default of 32768 */
static size_t rstat_max_cgroups(void)
{
	char root[4096];
	size_t want, n = 1024;

	if (cgutil_cgroup2_root(root, sizeof(root)))
		snprintf(root, sizeof(root), "%s", CGUTIL_DEFAULT_ROOT);
	want = 2 * count_cgroups(root) + 256;

	while (n < want)
		n *= 2;
	return n;
}

static int lib_open(struct session *s)
{
	CGCOUNT_OPTS(cgcount_opts, opts, .backend = s->backend);

	if (s->backend == CGCOUNT_RSTAT)
		opts.max_cgroups = rstat_max_cgroups();
	s->cgc = cgcount_open(s->event_list, &opts);
	if (!s->cgc)
		return -1;
	/* the library printed why if it fails */
	return cgcount_add_paths(s->cgc, (const char *const *)s->paths, s->nr_cgroups) ==
	       s->nr_cgroups ? 0 : -1;
}

static int lib_read_all(struct session *s)
{
	struct cgcount_reading *r;
	size_t nr, i;
	int cg, ev;

	clear_values(s);
	if (cgcount_read_all(s->cgc, &r, &nr))
		return -1;
	for (i = 0; i < nr; i++) {
		cg = find_cgroup(s, r[i].cgroup_id);
		for (ev = 0; cg >= 0 && ev < s->nr_events; ev++)
			add_value(s, cg, ev, r[i].values[ev].value);
	}
	cgcount_readings_free(r, nr);
	return 0;
}

static int lib_read_one(struct session *s, int cg)
{
	struct cgcount_value v[MAX_EVENTS];
	int ev;

	if (cgcount_read_id(s->cgc, s->ids[cg], v, MAX_EVENTS))
		return -1;
	for (ev = 0; ev < s->nr_events; ev++)
		add_value(s, cg, ev, v[ev].value);
	return 0;
}

static void lib_close(struct session *s)
{
	cgcount_close(s->cgc);
	s->cgc = NULL;
}

static const struct backend none = { "none", none_open, none_read_all, none_read_one,
				      none_close };
static const struct backend floor_backend = { "floor", floor_open, floor_read_all, floor_read_one,
				       floor_close };
static const struct backend floor_read_backend = { "floor-read", floor_read_open, floor_read_all,
					    floor_read_one, floor_close };
static struct backend lib = { NULL, lib_open, lib_read_all, lib_read_one, lib_close };

static const struct backend *find_backend(const char *name, enum cgcount_backend *b)
{
	if (!strcmp(name, "none"))
		return &none;
	if (!strcmp(name, "floor"))
		return &floor_backend;
	if (!strcmp(name, "floor-read"))
		return &floor_read_backend;
	if (!strcmp(name, "percg"))	/* the bench's old name */
		name = "events";
	if (cgcount_parse_backend(name, b) || *b == CGCOUNT_AUTO) {
		fprintf(stderr, "cgbench: backends: none floor floor-read events shared rstat\n");
		return NULL;
	}
	lib.name = cgcount_backend_name(*b);
	return &lib;
}

/* ---- the session: events, cgroups ---- */

/* The event names, for the output; libcgcount parses them. */
static int parse_events(struct session *s, const char *list)
{
	char *copy = strdup(list), *tok, *save;
	int ret = copy ? 0 : -1;

	s->event_list = strdup(list);
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		if (s->nr_events == MAX_EVENTS) {
			fprintf(stderr, "cgbench: more than %d events\n", MAX_EVENTS);
			ret = -1;
		} else if (!(s->event_names[s->nr_events++] = strdup(tok))) {
			ret = -1;
		}
	}
	free(copy);
	return !ret && s->nr_events && s->event_list ? 0 : -1;
}

static int add_path(struct session *s, const char *line, int *cap)
{
	if (s->nr_cgroups == *cap) {
		int n = *cap ? *cap * 2 : 64;
		char **p = realloc(s->paths, n * sizeof(*p));

		if (!p)
			return -1;
		s->paths = p;
		*cap = n;
	}
	s->paths[s->nr_cgroups] = strdup(line);
	return s->paths[s->nr_cgroups++] ? 0 : -1;
}

static int read_cgroup_list(struct session *s, const char *file)
{
	FILE *f = fopen(file, "r");
	char line[4096];
	int cap = 0, ret = 0;

	if (!f) {
		perror(file);
		return -1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			ret = add_path(s, line, &cap);
	}
	fclose(f);
	if (!ret && !s->nr_cgroups) {
		fprintf(stderr, "cgbench: %s: no cgroups\n", file);
		ret = -1;
	}
	return ret;
}

static int resolve_ids(struct session *s)
{
	int i, ret;

	s->ids = calloc(s->nr_cgroups, sizeof(*s->ids));
	s->by_id = calloc(s->nr_cgroups, sizeof(*s->by_id));
	if (!s->ids || !s->by_id)
		return -1;
	for (i = 0; i < s->nr_cgroups; i++) {
		ret = cgutil_cgroup_id(s->paths[i], &s->ids[i]);
		if (ret) {
			fprintf(stderr, "cgbench: %s: %s\n", s->paths[i], strerror(-ret));
			return -1;
		}
		s->by_id[i] = i;
	}
	sort_session = s;
	qsort(s->by_id, s->nr_cgroups, sizeof(*s->by_id), compare_by_id);
	return 0;
}

static int session_init(struct session *s, const char *events, const char *list)
{
	if (parse_events(s, events) || (list && read_cgroup_list(s, list)) || resolve_ids(s))
		return -1;
	s->values = calloc((size_t)s->nr_cgroups * s->nr_events, sizeof(*s->values));
	return s->values ? 0 : -1;
}

static void session_free(struct session *s)
{
	int i;

	for (i = 0; i < s->nr_cgroups; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->ids);
	free(s->by_id);
	free(s->values);
	free(s->event_list);
	for (i = 0; i < s->nr_events; i++)
		free(s->event_names[i]);
}

/* ---- resources ---- */

static void raise_fd_limit(void)
{
	struct rlimit rl;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	long max = 0;

	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || max <= 0)
		return;
	rl.rlim_cur = rl.rlim_max = max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit(RLIMIT_NOFILE)");
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ., .. and the directory's own fd */
}

/* A /proc/meminfo field in kB. */
static long meminfo_kb(const char *field)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t len = strlen(field);
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			kb = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* The memlock of every BPF map this process holds, in kB. */
static long bpf_map_kb(void)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *e;
	char path[300], line[256];
	long bytes = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int is_map = 0;
		long memlock = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "map_type:", 9))
				is_map = 1;
			else if (!strncmp(line, "memlock:", 8))
				memlock = strtol(line + 8, NULL, 10);
		}
		fclose(f);
		if (is_map)
			bytes += memlock;
	}
	closedir(d);
	return bytes / 1024;
}

/* ---- cost ---- */

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Microseconds per read, every cgroup (@one < 0) or one at a time: the guest
 * clock may tick in milliseconds, so each sample is a batch of reads lasting
 * at least @min_us; the median of @reps samples. */
static double time_reads(const struct backend *b, struct session *s, int reps, double min_us,
			 int one)
{
	double *t = calloc(reps, sizeof(*t)), m, t0, dt;
	int r, ret = 0;
	long n;

	if (!t)
		return -1;
	for (r = 0; r < reps && !ret; r++) {
		t0 = now_us();
		n = 0;
		do {
			ret = one < 0 ? b->read_all(s) : b->read_one(s, (one + n) % s->nr_cgroups);
			n++;
			dt = now_us() - t0;
		} while (!ret && dt < min_us);
		t[r] = dt / n;
	}
	m = ret ? -1 : median(t, reps);
	free(t);
	return m;
}

static int cost(const struct backend *b, struct session *s, int reps, double min_us)
{
	long fds0 = count_fds(), slab0, pcpu0, fds, slab, pcpu, bpf;
	double t0, setup, read_all, read_one, teardown;

	slab0 = meminfo_kb("Slab");
	pcpu0 = meminfo_kb("Percpu");
	t0 = now_us();
	if (b->open(s)) {
		b->close(s);
		return -1;
	}
	setup = now_us() - t0;
	fds = count_fds() - fds0;
	slab = meminfo_kb("Slab") - slab0;
	pcpu = meminfo_kb("Percpu") - pcpu0;
	bpf = bpf_map_kb();
	read_all = time_reads(b, s, reps, min_us, -1);
	read_one = time_reads(b, s, reps, min_us, 0);
	t0 = now_us();
	b->close(s);
	teardown = now_us() - t0;
	if (read_all < 0 || read_one < 0)
		return -1;
	printf("backend=%s cgroups=%d events=%d setup_us=%.0f teardown_us=%.0f "
	       "read_all_us=%.2f read_one_us=%.2f fds=%ld slab_kb=%ld percpu_kb=%ld bpf_map_kb=%ld\n",
	       b->name, s->nr_cgroups, s->nr_events, setup, teardown, read_all, read_one,
	       fds, slab, pcpu, bpf);
	return 0;
}

/* ---- count ---- */

static int run_command(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void print_values(const struct session *s, FILE *out)
{
	int cg, ev;

	for (cg = 0; cg < s->nr_cgroups; cg++) {
		for (ev = 0; ev < s->nr_events; ev++)
			fprintf(out, "%" PRIu64 " %s %s\n",
				s->values[(size_t)cg * s->nr_events + ev],
				s->event_names[ev], s->paths[cg]);
	}
}

static int count(const struct backend *b, struct session *s, char **argv, const char *out_path)
{
	FILE *out = stdout;
	int ret;

	if (b->open(s)) {
		b->close(s);
		return -1;
	}
	ret = run_command(argv);
	if (ret >= 0 && b->read_all(s))
		ret = -1;
	b->close(s);
	if (ret < 0)
		return -1;
	if (out_path && !(out = fopen(out_path, "w"))) {
		perror(out_path);
		return -1;
	}
	print_values(s, out);
	if (out != stdout)
		fclose(out);
	return ret;
}

/* ---- ring: the messaging workload ---- */

static int join_cgroup(const char *path)
{
	char file[4200];
	FILE *f;
	int ret;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	f = fopen(file, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "0\n") < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* Task @i: read a token from @in, pass it on to @out, @msgs times. */
static void ring_task(const char *cgroup, int ready, int in, int out, long msgs)
{
	char c = 0;
	long m;

	if (join_cgroup(cgroup)) {
		perror(cgroup);
		_exit(1);
	}
	if (write(ready, &c, 1) != 1)
		_exit(1);
	for (m = 0; m < msgs; m++) {
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static double cpu_us(struct rusage *ru)
{
	return ru->ru_utime.tv_sec * 1e6 + ru->ru_utime.tv_usec +
	       ru->ru_stime.tv_sec * 1e6 + ru->ru_stime.tv_usec;
}

static int ring(struct session *s, int tasks, int tokens, long loops)
{
	int (*pipes)[2] = calloc(tasks, sizeof(*pipes)), ready[2], i, status, failed = 0;
	long msgs = loops * tokens;
	char c = 0;
	double t0, wall;
	struct rusage ru;

	if (!pipes || pipe(ready))
		return -1;
	for (i = 0; i < tasks; i++) {
		if (pipe(pipes[i]))
			return -1;
	}
	for (i = 0; i < tasks; i++) {
		/* spread the tasks evenly over the cgroups of the list */
		const char *cg = s->paths[(long)i * s->nr_cgroups / tasks];

		if (fork() == 0)
			ring_task(cg, ready[1], pipes[(i + tasks - 1) % tasks][0], pipes[i][1], msgs);
	}
	for (i = 0; i < tasks; i++) {
		if (read(ready[0], &c, 1) != 1)
			return -1;
	}
	t0 = now_us();
	for (i = 0; i < tokens; i++) {
		if (write(pipes[tasks - 1][1], &c, 1) != 1)
			return -1;
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	wall = now_us() - t0;
	getrusage(RUSAGE_CHILDREN, &ru);
	for (i = 0; i < tasks; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	close(ready[0]);
	close(ready[1]);
	free(pipes);
	if (failed)
		return -1;
	printf("tasks=%d tokens=%d loops=%ld messages=%ld wall_us_per_msg=%.3f cpu_us_per_msg=%.3f\n",
	       tasks, tokens, loops, msgs * tasks, wall / (msgs * tasks),
	       cpu_us(&ru) / (msgs * tasks));
	return 0;
}

/* ---- churn: creating and removing cgroups below a counted subtree ---- */

/* mkdir (@make) or rmdir @n cgroups in @dir; the microseconds each took. */
static double churn_step(const char *dir, long n, int make)
{
	char path[4096];
	double t0 = now_us();
	long i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/cgbench-churn-%ld", dir, i);
		if (make ? mkdir(path, 0755) : rmdir(path)) {
			fprintf(stderr, "cgbench: %s %s: %s\n", make ? "mkdir" : "rmdir", path,
				strerror(errno));
			return -1;
		}
	}
	return (now_us() - t0) / n;
}

static int churn(const struct backend *b, struct session *s, const char *subtree, long n)
{
	double mk = -1, rm = -1;

	if (b->open(s))
		return -1;
	/* the library printed why if it fails */
	if (!s->cgc || cgcount_add_subtree(s->cgc, subtree) >= 0) {
		mk = churn_step(subtree, n, 1);
		rm = mk < 0 ? -1 : churn_step(subtree, n, 0);
	}
	b->close(s);
	if (mk < 0 || rm < 0)
		return -1;
	printf("backend=%s cgroups=%ld mkdir_us=%.3f rmdir_us=%.3f\n", b->name, n, mk, rm);
	return 0;
}

/* ---- main ---- */

/* The usage on @f; returns the exit status of a usage error. */
static int usage(FILE *f)
{
	fprintf(f,
		"usage: cgbench cost  -b BACKEND -e EVENTS -f CGROUP_LIST [-R SUBTREE] [-r REPS] [-m MIN_US]\n"
		"       cgbench count -b BACKEND -e EVENTS -f CGROUP_LIST [-R SUBTREE] [-o OUT] -- COMMAND...\n"
		"       cgbench ring  -f CGROUP_LIST [-t TASKS] [-k TOKENS] [-l LOOPS]\n"
		"       cgbench churn -b BACKEND -e EVENTS -R SUBTREE [-l CGROUPS]\n"
		"backends: none floor floor-read events shared rstat\n");
	return CLI_EXIT_USAGE;
}

struct options {
	const char *backend, *events, *list, *subtree, *out;
	int reps, tasks, tokens;
	long loops;
	double min_us;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;

	*o = (struct options){ .backend = "none", .events = "cpu-clock", .subtree = "",
			       .reps = 3, .tasks = 16, .tokens = 2, .loops = 1000,
			       .min_us = 50000 };
	while ((c = getopt(argc, argv, "+b:e:f:R:o:r:m:t:k:l:h")) != -1) {
		switch (c) {
		case 'b': o->backend = optarg; break;
		case 'e': o->events = optarg; break;
		case 'f': o->list = optarg; break;
		case 'R': o->subtree = optarg; break;
		case 'o': o->out = optarg; break;
		case 'r': o->reps = atoi(optarg); break;
		case 'm': o->min_us = atof(optarg); break;
		case 't': o->tasks = atoi(optarg); break;
		case 'k': o->tokens = atoi(optarg); break;
		case 'l': o->loops = atol(optarg); break;
		default: return -1;
		}
	}
	if (o->reps < 1 || o->min_us < 0 || o->tasks < 2 || o->tokens < 1 ||
	    o->tokens > o->tasks || o->loops < 1)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct session s = { 0 };
	struct options o;
	const struct backend *b;
	const char *cmd = argc > 1 ? argv[1] : "";
	int ret = -1;

	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version"))
		return cli_version("cgbench");
	if (parse_options(argc - 1, argv + 1, &o) ||
	    (strcmp(cmd, "churn") ? !o.list : !*o.subtree))
		return usage(stderr);
	optind += 1;
	b = find_backend(o.backend, &s.backend);
	raise_fd_limit();
	signal(SIGPIPE, SIG_IGN);
	if (!b || session_init(&s, o.events, o.list))
		goto out;
	if (!strcmp(cmd, "cost"))
		ret = cost(b, &s, o.reps, o.min_us);
	else if (!strcmp(cmd, "count") && optind < argc)
		ret = count(b, &s, argv + optind, o.out);
	else if (!strcmp(cmd, "ring"))
		ret = ring(&s, o.tasks, o.tokens, o.loops);
	else if (!strcmp(cmd, "churn"))
		ret = churn(b, &s, o.subtree, o.loops);
	else
		ret = usage(stderr);
out:
	session_free(&s);
	return ret < 0 ? 1 : ret;
}
