// SPDX-License-Identifier: GPL-2.0
/*
 * cgrstat: count perf events per cgroup with the BPF rstat backend.
 *
 *   cgrstat -e cpu-clock,context-switches [-r SUBTREE] [-d SECONDS | -- COMMAND...]
 *
 * Counts every cgroup while COMMAND runs (or for SECONDS, or until SIGINT),
 * then prints the totals of SUBTREE (default: the whole hierarchy) and of
 * each cgroup below it, as "name value" lines per cgroup (one iterator read).
 * -p DIR pins one text iterator per cgroup of SUBTREE in DIR (bpffs), named
 * by cgroup id, and keeps counting until SIGINT/SIGTERM: `cat DIR/ID`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cgroupfs.h"
#include "cgrstat.h"
#include "cgutil.h"
#include "cli.h"

static const char *usage_text =
	"usage: cgrstat -e EVENTS [-r SUBTREE] [-p PIN_DIR] [-d SECONDS | -- COMMAND...]\n"
	"  -e EVENTS   comma-separated events (cpu-clock,context-switches,...)\n"
	"  -r SUBTREE  cgroup to report with its descendants (default: all)\n"
	"  -p PIN_DIR  pin a text iterator per cgroup in bpffs, count until a signal\n"
	"  -d SECONDS  count for SECONDS when no command is given (default: until SIGINT)\n"
	CGROUPFS_USAGE
	"  -h, --help  this text;  --version  the version\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* cgroup id -> path below the cgroup2 mount, for the report */
struct cg_name {
	uint64_t id;
	char *path;
};

struct cg_names {
	struct cg_name *v;	/* sorted by id once walked */
	size_t nr, cap;
	const char *prefix;	/* "/SUBTREE", or "" */
};

static int add_name(const struct cgutil_walk_entry *e, void *ctx)
{
	struct cg_names *n = ctx;
	char *path;

	if (n->nr == n->cap) {
		struct cg_name *v = realloc(n->v, (n->cap * 2 + 64) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		n->v = v;
		n->cap = n->cap * 2 + 64;
	}
	if ((e->path_len ? asprintf(&path, "%s/%s", n->prefix, e->path) :
			   asprintf(&path, "%s", *n->prefix ? n->prefix : "/")) < 0)
		return -ENOMEM;
	n->v[n->nr++] = (struct cg_name){ .id = e->id, .path = path };
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct cg_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The cgroups of @subtree of @root, by id. */
static int walk_names(struct cg_names *n, const char *root, const char *subtree)
{
	char top[4096], prefix[4096];
	size_t len;
	int fd, ret;

	while (*subtree == '/')
		subtree++;
	len = strlen(subtree);
	while (len && subtree[len - 1] == '/')
		len--;
	snprintf(prefix, sizeof(prefix), "%s%.*s", len ? "/" : "", (int)len, subtree);
	n->prefix = prefix;
	snprintf(top, sizeof(top), "%s%s", root, prefix);
	fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = cgutil_walk(fd, 0, add_name, n, NULL);
	close(fd);
	n->prefix = NULL;
	qsort(n->v, n->nr, sizeof(*n->v), by_id);
	return ret;
}

static const char *name_of(const struct cg_names *n, uint64_t id)
{
	struct cg_name key = { .id = id }, *found;

	found = n->nr ? bsearch(&key, n->v, n->nr, sizeof(*n->v), by_id) : NULL;
	return found ? found->path : "(removed)";
}

static void free_names(struct cg_names *n)
{
	while (n->nr)
		free(n->v[--n->nr].path);
	free(n->v);
	*n = (struct cg_names){ 0 };
}

/* --path.cgroupfs: its reads find cgroups by id; the exit status */
static int cgroupfs_opts(const char *dir)
{
	int by_id, status = cgroupfs_prepare("cgrstat", dir, &by_id);

	if (status || by_id)
		return status;
	fprintf(stderr, "cgrstat: its reads find cgroups by id: run it with the host's "
		"PID namespace, CAP_SYS_ADMIN and CAP_SYS_PTRACE\n");
	return 1;
}

static int run_command(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "cgrstat: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int pin_all(struct cgrstat *s, const struct cg_names *names,
		   const struct cgrstat_record *recs, size_t nr, const char *dir)
{
	char pin[4096];
	size_t i;

	for (i = 0; i < nr; i++) {
		const char *path = name_of(names, recs[i].cgroup_id);

		snprintf(pin, sizeof(pin), "%s/%llu", dir, (unsigned long long)recs[i].cgroup_id);
		if (cgrstat_pin_text(s, path, pin))
			return -1;	/* libcgrstat printed why */
		printf("%s %s\n", pin, path);
	}
	fflush(stdout);
	return 0;
}

/* Cgroups that found no slot in the maps read 0: their counts are in their
 * nearest ancestor with one (libcgrstat's unplaced).  Said on stderr. */
static void report_unplaced(const struct cgrstat *s)
{
	struct cgrstat_stats st;

	cgrstat_get_stats(s, &st);
	if (!st.unplaced && !st.untracked)
		return;
	fprintf(stderr, "cgrstat: %llu cgroups found no slot in the maps (room for %llu): "
		"they read 0, and %llu charges (unplaced) went to their nearest ancestor "
		"with a slot\n", (unsigned long long)st.untracked,
		(unsigned long long)st.max_cgroups, (unsigned long long)st.unplaced);
}

static void report(struct cgrstat *s, const struct cg_names *names,
		   const struct cgrstat_record *recs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (i)
			putchar('\n');
		printf("cgroup %s\n", name_of(names, recs[i].cgroup_id));
		cgrstat_print_record(s, &recs[i], stdout);
	}
}

int main(int argc, char **argv)
{
	const char *events = NULL, *subtree = "", *pin_dir = NULL;
	struct cgrstat_record *recs = NULL;
	int opt, ret = 0, walk_err, seconds = -1;
	struct cg_names names = { 0 };
	struct cgrstat *s;
	size_t nr;

	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ CGROUPFS_OPTION, required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	CGRSTAT_OPTS(cgrstat_opts, opts);

	while ((opt = getopt_long(argc, argv, "+e:r:p:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'C': opts.cgroup_root = optarg; break;
		case 'e': events = optarg; break;
		case 'r': subtree = optarg; break;
		case 'p': pin_dir = optarg; break;
		case 'd': seconds = atoi(optarg); break;
		case 'V': return cli_version("cgrstat");
		default:
			fputs(usage_text, opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : CLI_EXIT_USAGE;
		}
	}
	if (opts.cgroup_root && (ret = cgroupfs_opts(opts.cgroup_root)))
		return ret;
	/* libcgrstat prints why it fails, and what this kernel cannot do */
	s = cgrstat_open(events, &opts);
	if (!s) {
		/* EINVAL: the library refused the command line (an unknown event) */
		return errno == EINVAL ? cli_usage_hint("cgrstat") : 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "cgrstat: counting\n");
	if (pin_dir) {
		ret = cgrstat_read_subtree(s, subtree, &recs, &nr);
		if (!ret)
			ret = walk_names(&names, cgrstat_cgroup_root(s), subtree);
		if (!ret)
			ret = pin_all(s, &names, recs, nr, pin_dir);
		free(recs);
		recs = NULL;
		while (!ret && !stop)
			pause();
	} else if (optind < argc) {
		ret = run_command(argv + optind);
	} else if (seconds >= 0) {
		sleep(seconds);
	} else {
		while (!stop)
			pause();
	}
	if (ret >= 0)
		ret = cgrstat_read_subtree(s, subtree, &recs, &nr);
	if (ret < 0) {
		fprintf(stderr, "cgrstat: %s: %s\n", subtree, strerror(-ret));
		free_names(&names);
		cgrstat_close(s);
		return 1;
	}
	free_names(&names);
	walk_err = walk_names(&names, cgrstat_cgroup_root(s), subtree);
	if (walk_err)
		fprintf(stderr, "cgrstat: cannot walk the cgroups of '%s': %s\n", subtree,
			strerror(-walk_err));
	report(s, &names, recs, nr);
	report_unplaced(s);
	if (cgrstat_check_overflow(s))	/* printed as an error by libcgrstat */
		ret = ret ? ret : 1;
	if (getenv("CGRSTAT_DEBUG")) {
		struct cgrstat_stats st;

		cgrstat_get_stats(s, &st);
		fprintf(stderr, "cgrstat: %llu cgroup switches charged, %llu read errors, "
			"%llu charges that found no cgroup slot, %llu flush calls, %llu released "
			"cgroups forgotten\n",
			(unsigned long long)st.switches, (unsigned long long)st.read_errors,
			(unsigned long long)st.unattributed_charges, (unsigned long long)st.flush_calls,
			(unsigned long long)st.forgotten);
		if (st.collector_runs)
			fprintf(stderr, "cgrstat: collector %llu runs, %llu ns each; "
				"flusher %llu runs, %llu ns each\n",
				(unsigned long long)st.collector_runs,
				(unsigned long long)(st.collector_ns / st.collector_runs),
				(unsigned long long)st.flusher_runs,
				(unsigned long long)(st.flusher_runs ? st.flusher_ns / st.flusher_runs : 0));
	}
	free(recs);
	free_names(&names);
	cgrstat_close(s);
	return ret;
}
