// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup-counter: count one software event for many cgroups with one
 * perf event per CPU (PERF_EVENT_IOC_ATTACH_CGROUP / READ_CGROUPS).
 *
 *   cgroup-counter [-e EVENT] [-d SECONDS] CGROUP_DIR... [-- COMMAND ARGS...]
 *
 * Opens EVENT (default cpu-clock) on every online CPU, attaches the cgroup v2
 * directories given, counts for SECONDS (default 1) or while COMMAND runs,
 * then prints one line per cgroup: the count summed over CPUs, scaled by
 * time_enabled / time_running, and the cgroup directory.
 *
 * One self-contained file on purpose: it shows the kernel series' ioctl ABI
 * to someone writing their own client, with nothing but libc and the uapi
 * header, and builds against any tree's installed headers (see
 * cgroup-counter.mk).  Its small event table, cgroup id lookup and
 * READ_CGROUPS loop are therefore its own; programs that want them
 * ready-made link libcgcount (lib/cgcount), where each lives once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct sw_event {
	const char *name;
	uint64_t config;
};

static const struct sw_event sw_events[] = {
	{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "cgroup-switches", PERF_COUNT_SW_CGROUP_SWITCHES },
};

/* One cgroup: its id and its values summed over the CPUs. */
struct cgroup_count {
	const char *path;
	uint64_t id;
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
};

struct options {
	const struct sw_event *event;
	unsigned int seconds;
	char **paths;
	int nr_paths;
	char **command;
};

/* --help: to stdout; after a usage error: to stderr */
static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cgroup-counter [-e EVENT] [-d SECONDS] CGROUP_DIR... [-- COMMAND ARGS...]\n"
		"  -e, --event=EVENT    the software event to count (default cpu-clock)\n"
		"  -d, --duration=SECONDS  count for SECONDS when no COMMAND is given (default 1)\n"
		"  -h, --help           this text;  --version  the version\n"
		"events:");
	for (i = 0; i < sizeof(sw_events) / sizeof(sw_events[0]); i++)
		fprintf(f, " %s", sw_events[i].name);
	fprintf(f, "\n");
}

static const struct sw_event *find_event(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(sw_events) / sizeof(sw_events[0]); i++) {
		if (!strcmp(sw_events[i].name, name))
			return &sw_events[i];
	}
	return NULL;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	int c, i;

	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};

	opt->event = &sw_events[0];
	opt->seconds = 1;
	while ((c = getopt_long(argc, argv, "+e:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			opt->event = find_event(optarg);
			if (!opt->event) {
				fprintf(stderr, "unknown event %s\n", optarg);
				return -1;
			}
			break;
		case 'd':
			opt->seconds = strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("cgroup-counter (linux-multicgroup) 0.4.0\n");
			exit(0);
		default:
			return -1;
		}
	}
	opt->paths = argv + optind;
	opt->command = NULL;
	for (i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			opt->command = argv + i + 1;
			break;
		}
	}
	opt->nr_paths = i - optind;
	if (opt->nr_paths == 0 || (opt->command && !opt->command[0]))
		return -1;
	return 0;
}

/* The cgroup v2 id of a cgroup directory is its file handle. */
static int cgroup_id(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} handle = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &handle.fh, &mount_id, 0)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	memcpy(id, handle.fh.f_handle, sizeof(*id));
	return 0;
}

static int open_cpu_event(const struct sw_event *ev, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = ev->config,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

static void close_events(int *fds, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	free(fds);
}

/* Open the event on every CPU; fds[cpu] is -1 for offline CPUs. */
static int *open_events(const struct sw_event *ev, int nr_cpus)
{
	int *fds = malloc(nr_cpus * sizeof(*fds));
	int cpu, opened = 0;

	if (!fds)
		return NULL;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		fds[cpu] = open_cpu_event(ev, cpu);
		if (fds[cpu] >= 0)
			opened++;
		else if (errno != ENODEV && errno != EINVAL) {
			perror("perf_event_open");
			close_events(fds, cpu + 1);
			return NULL;
		}
	}
	if (!opened) {
		fprintf(stderr, "%s: no CPU could be opened\n", ev->name);
		close_events(fds, nr_cpus);
		return NULL;
	}
	return fds;
}

static int attach_cgroups(int *fds, int nr_cpus, struct cgroup_count *cg, int nr)
{
	uint64_t *buf = calloc(nr + 1, sizeof(*buf));
	int cpu, i, ret = 0;

	if (!buf)
		return -1;
	buf[0] = nr;
	for (i = 0; i < nr; i++)
		buf[i + 1] = cg[i].id;
	for (cpu = 0; cpu < nr_cpus && !ret; cpu++) {
		if (fds[cpu] < 0)
			continue;
		ret = ioctl(fds[cpu], PERF_EVENT_IOC_ATTACH_CGROUP, buf);
		if (ret)
			perror("PERF_EVENT_IOC_ATTACH_CGROUP");
	}
	free(buf);
	return ret;
}

static struct cgroup_count *find_cgroup(struct cgroup_count *cg, int nr, uint64_t id)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (cg[i].id == id)
			return &cg[i];
	}
	return NULL;
}

/*
 * Read every cgroup of one CPU event in one call, growing the buffer when
 * the kernel says it is too small, and add the records to @cg.
 */
static int read_cgroups(int fd, struct cgroup_count *cg, int nr)
{
	/* record: { id, value, time_enabled, time_running } */
	size_t size = (3 + 4 * (size_t)nr) * sizeof(uint64_t);
	uint64_t *buf = NULL, i, *rec;
	struct cgroup_count *c;

	for (;;) {
		uint64_t *tmp = realloc(buf, size);

		if (!tmp) {
			free(buf);
			return -1;
		}
		buf = tmp;
		/* the kernel fills it; zeroed so that valgrind sees it defined */
		memset(buf, 0, size);
		buf[0] = size;
		buf[1] = 0;
		if (ioctl(fd, PERF_EVENT_IOC_READ_CGROUPS, buf) >= 0)
			break;
		if (errno != ENOSPC) {
			perror("PERF_EVENT_IOC_READ_CGROUPS");
			free(buf);
			return -1;
		}
		size = buf[0];
	}
	for (i = 0, rec = buf + 3; i < buf[2]; i++, rec += 4) {
		c = find_cgroup(cg, nr, rec[0]);
		if (!c)
			continue;
		c->value += rec[1];
		c->enabled += rec[2];
		c->running += rec[3];
	}
	free(buf);
	return 0;
}

static int run_command(char **command)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		execvp(command[0], command);
		perror(command[0]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void print_counts(const struct sw_event *ev, struct cgroup_count *cg, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		double value = cg[i].value;

		if (cg[i].running && cg[i].running < cg[i].enabled)
			value = value * cg[i].enabled / cg[i].running;
		printf("%20.0f  %-18s %s\n", value, ev->name, cg[i].path);
	}
}

static int count(struct options *opt, struct cgroup_count *cg, int nr_cpus)
{
	int *fds = open_events(opt->event, nr_cpus);
	int cpu, ret = 0;

	if (!fds)
		return -1;
	if (attach_cgroups(fds, nr_cpus, cg, opt->nr_paths)) {
		close_events(fds, nr_cpus);
		return -1;
	}
	if (opt->command)
		ret = run_command(opt->command);
	else
		sleep(opt->seconds);
	for (cpu = 0; cpu < nr_cpus && ret >= 0; cpu++) {
		if (fds[cpu] >= 0 && read_cgroups(fds[cpu], cg, opt->nr_paths))
			ret = -1;
	}
	close_events(fds, nr_cpus);
	if (ret >= 0)
		print_counts(opt->event, cg, opt->nr_paths);
	return ret;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct cgroup_count *cg;
	int i, ret, nr_cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (parse_options(argc, argv, &opt)) {
		usage(stderr);
		return 2;
	}
	cg = calloc(opt.nr_paths, sizeof(*cg));
	if (!cg)
		return 1;
	for (i = 0; i < opt.nr_paths; i++) {
		cg[i].path = opt.paths[i];
		if (cgroup_id(cg[i].path, &cg[i].id)) {
			free(cg);
			return 1;
		}
	}
	ret = count(&opt, cg, nr_cpus);
	free(cg);
	return ret < 0 ? 1 : ret;
}
