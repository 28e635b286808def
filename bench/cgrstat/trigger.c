// SPDX-License-Identifier: GPL-2.0
/*
 * trigger {tp|perf|empty|read|read-count|collector} COMMAND...: run COMMAND with the
 * collector work hooked on tp_btf/sched_switch (tp) or on a cgroup-switches
 * perf event per cpu, sample_period 1 (perf, bperf's way); print how often
 * it ran.  "empty" hooks a program that returns at once and "read" one that
 * only reads the two counters at a cgroup switch: with
 * kernel.bpf_stats_enabled, their run times per call break the collector's
 * down (hook and timing, counter reads, the rest); "read-count" reads them
 * without enabled/running times.
 * "collector" runs cgrstat's real collector (cgrstat.bpf.c,
 * including cgroup_rstat_updated) without its fentry programs: the
 * per-switch cost on kernels that refuse fentry (the 6.18 host).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "trigger.skel.h"
#include "cgrstat.skel.h"

#define MAX_CPUS 256

static int perf_open(__u64 config, int cpu, __u64 period)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE, .config = config,
		.sample_period = period,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_counters(int map_fd, int ncpu, int *fds, int *nfds, int stride)
{
	static const __u64 counted[2] = { PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES };
	int i, cpu;

	for (i = 0; i < 2; i++)
		for (cpu = 0; cpu < ncpu; cpu++) {
			__u32 key = i * stride + cpu;
			int fd = perf_open(counted[i], cpu, 0);

			if (fd < 0)
				continue;
			fds[(*nfds)++] = fd;
			bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY);
		}
	return 0;
}

/* with kernel.bpf_stats_enabled=1: the program's own run time per call */
static void print_prog_time(const char *what, struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) && info.run_cnt)
		printf("prog_ns_per_call %s %llu\n", what,
		       (unsigned long long)(info.run_time_ns / info.run_cnt));
}

static int run(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int collector_only(char **argv)
{
	int fds[2 * MAX_CPUS], nfds = 0, ncpu = libbpf_num_possible_cpus(), ret = 1;
	struct cgrstat_bpf *skel = cgrstat_bpf__open();
	struct bpf_link *link = NULL;

	if (!skel || ncpu > MAX_CPUS)
		return 1;
	skel->rodata->nr_cpus = ncpu;
	skel->rodata->nr_events = 2;
	skel->rodata->switch_events = 2;
	bpf_map__set_max_entries(skel->maps.events, 2 * ncpu);
	bpf_program__set_autoload(skel->progs.cgrstat_flush, false);
	bpf_program__set_autoload(skel->progs.cgrstat_migrate, false);
	if (cgrstat_bpf__load(skel))
		goto out;
	open_counters(bpf_map__fd(skel->maps.events), ncpu, fds, &nfds, ncpu);
	link = bpf_program__attach(skel->progs.cgrstat_switch);
	if (!link)
		goto out;
	ret = run(argv);
	print_prog_time("collector", skel->progs.cgrstat_switch);
out:
	bpf_link__destroy(link);
	while (nfds)
		close(fds[--nfds]);
	cgrstat_bpf__destroy(skel);
	return ret;
}

/* the tracepoint program of MODE, NULL for perf or an unknown mode */
static struct bpf_program *tp_program(struct trigger *skel, const char *mode)
{
	if (!strcmp(mode, "tp"))
		return skel->progs.on_sched_switch;
	if (!strcmp(mode, "empty"))
		return skel->progs.empty_switch;
	if (!strcmp(mode, "read"))
		return skel->progs.read_switch;
	if (!strcmp(mode, "read-count"))
		return skel->progs.read_count_switch;
	return NULL;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[MAX_CPUS] = {};
	int fds[3 * MAX_CPUS], nfds = 0, ncpu, cpu, ret = 1;
	struct trigger *skel;
	bool perf_mode;
	struct bpf_program *tp_prog;

	if (argc >= 3 && !strcmp(argv[1], "collector"))
		return collector_only(argv + 2);
	if (argc < 3) {
		fprintf(stderr, "usage: trigger {tp|perf|empty|read|read-count|collector} COMMAND...\n");
		return 2;
	}
	perf_mode = !strcmp(argv[1], "perf");
	ncpu = libbpf_num_possible_cpus();
	if (ncpu > MAX_CPUS)
		return 2;
	skel = trigger__open();
	if (!skel)
		return 1;
	tp_prog = tp_program(skel, argv[1]);
	if (!perf_mode && !tp_prog) {
		fprintf(stderr, "trigger: unknown mode %s\n", argv[1]);
		trigger__destroy(skel);
		return 2;
	}
	skel->rodata->nr_cpus = ncpu;
	bpf_map__set_max_entries(skel->maps.events, 2 * ncpu);
	bpf_program__set_autoload(skel->progs.on_cgroup_switch, perf_mode);
	bpf_program__set_autoload(skel->progs.on_sched_switch, tp_prog == skel->progs.on_sched_switch);
	bpf_program__set_autoload(skel->progs.empty_switch, tp_prog == skel->progs.empty_switch);
	bpf_program__set_autoload(skel->progs.read_switch, tp_prog == skel->progs.read_switch);
	bpf_program__set_autoload(skel->progs.read_count_switch,
				  tp_prog == skel->progs.read_count_switch);
	if (trigger__load(skel))
		goto out;
	open_counters(bpf_map__fd(skel->maps.events), ncpu, fds, &nfds, ncpu);
	for (cpu = 0; cpu < ncpu; cpu++) {
		if (!perf_mode) {
			links[0] = bpf_program__attach(tp_prog);
			if (!links[0])
				goto out;
			break;
		}
		fds[nfds] = perf_open(PERF_COUNT_SW_CGROUP_SWITCHES, cpu, 1);
		if (fds[nfds] < 0)
			continue;
		links[cpu] = bpf_program__attach_perf_event(skel->progs.on_cgroup_switch, fds[nfds++]);
		if (!links[cpu])
			goto out;
	}
	ret = run(argv + 2);
	printf("trigger %s calls %llu\n", argv[1], (unsigned long long)skel->bss->calls);
	print_prog_time(argv[1], perf_mode ? skel->progs.on_cgroup_switch : tp_prog);
out:
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		bpf_link__destroy(links[cpu]);
	while (nfds)
		close(fds[--nfds]);
	trigger__destroy(skel);
	return ret;
}
