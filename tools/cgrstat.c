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
#include <ftw.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cgrstat.h"
#include "cgutil.h"
#include "cli.h"

static const char *usage_text =
	"usage: cgrstat -e EVENTS [-r SUBTREE] [-p PIN_DIR] [-d SECONDS | -- COMMAND...]\n"
	"  -e EVENTS   comma-separated events (cpu-clock,context-switches,...)\n"
	"  -r SUBTREE  cgroup to report with its descendants (default: all)\n"
	"  -p PIN_DIR  pin a text iterator per cgroup in bpffs, count until a signal\n"
	"  -d SECONDS  count for SECONDS when no command is given (default: until SIGINT)\n"
	"  -h, --help  this text;  --version  the version\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* cgroup id -> path, for the report */
struct cg_name {
	uint64_t id;
	char *path;
};

static struct cg_name *names;
static size_t nr_names, cap_names;
static size_t root_len;

static int add_name(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	(void)st;
	if (type != FTW_D)
		return 0;
	if (nr_names == cap_names) {
		struct cg_name *n = realloc(names, (cap_names * 2 + 64) * sizeof(*n));

		if (!n)
			return -1;
		names = n;
		cap_names = cap_names * 2 + 64;
	}
	if (cgutil_cgroup_id(path, &names[nr_names].id))
		return 0;	/* removed meanwhile */
	names[nr_names].path = strdup(strlen(path) > root_len ? path + root_len : "/");
	nr_names++;
	return 0;
}

static const char *name_of(uint64_t id)
{
	size_t i;

	for (i = 0; i < nr_names; i++)
		if (names[i].id == id)
			return names[i].path;
	return "(removed)";
}

static void free_names(void)
{
	while (nr_names)
		free(names[--nr_names].path);
	free(names);
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

static int pin_all(struct cgrstat *s, const struct cgrstat_record *recs, size_t nr,
		   const char *dir)
{
	char pin[4096];
	size_t i;

	for (i = 0; i < nr; i++) {
		const char *path = name_of(recs[i].cgroup_id);

		snprintf(pin, sizeof(pin), "%s/%llu", dir, (unsigned long long)recs[i].cgroup_id);
		if (cgrstat_pin_text(s, path, pin))
			return -1;	/* libcgrstat printed why */
		printf("%s %s\n", pin, path);
	}
	fflush(stdout);
	return 0;
}

static void report(struct cgrstat *s, const struct cgrstat_record *recs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (i)
			putchar('\n');
		printf("cgroup %s\n", name_of(recs[i].cgroup_id));
		cgrstat_print_record(s, &recs[i], stdout);
	}
}

int main(int argc, char **argv)
{
	const char *events = NULL, *subtree = "", *pin_dir = NULL;
	struct cgrstat_record *recs = NULL;
	int opt, ret = 0, seconds = -1;
	char top[4096];
	struct cgrstat *s;
	size_t nr;

	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};

	while ((opt = getopt_long(argc, argv, "+e:r:p:d:h", longopts, NULL)) != -1) {
		switch (opt) {
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
	/* libcgrstat prints why it fails, and what this kernel cannot do */
	s = cgrstat_open(events, NULL);
	if (!s) {
		/* EINVAL: the library refused the command line (an unknown event) */
		return errno == EINVAL ? cli_usage_hint("cgrstat") : 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "cgrstat: counting\n");
	if (pin_dir) {
		ret = cgrstat_read_subtree(s, subtree, &recs, &nr);
		root_len = strlen(cgrstat_cgroup_root(s));
		snprintf(top, sizeof(top), "%s/%s", cgrstat_cgroup_root(s), subtree);
		if (!ret)
			ret = nftw(top, add_name, 64, FTW_PHYS) ? -1 : pin_all(s, recs, nr, pin_dir);
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
	if (ret < 0 || cgrstat_read_subtree(s, subtree, &recs, &nr)) {
		if (ret < 0)
			fprintf(stderr, "cgrstat: %s\n", strerror(-ret));
		free_names();
		cgrstat_close(s);
		return 1;
	}
	free_names();
	root_len = strlen(cgrstat_cgroup_root(s));
	snprintf(top, sizeof(top), "%s/%s", cgrstat_cgroup_root(s), subtree);
	if (nftw(top, add_name, 64, FTW_PHYS))
		fprintf(stderr, "cgrstat: cannot walk %s: %s\n", top, strerror(errno));
	report(s, recs, nr);
	if (cgrstat_check_overflow(s))	/* printed as an error by libcgrstat */
		ret = ret ? ret : 1;
	if (getenv("CGRSTAT_DEBUG")) {
		struct cgrstat_stats st;

		cgrstat_get_stats(s, &st);
		fprintf(stderr, "cgrstat: %llu cgroup switches charged, %llu read errors, "
			"%llu slots full, %llu flush calls, %llu released cgroups forgotten\n",
			(unsigned long long)st.switches, (unsigned long long)st.read_errors,
			(unsigned long long)st.slots_full, (unsigned long long)st.flush_calls,
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
	free_names();
	cgrstat_close(s);
	return ret;
}
