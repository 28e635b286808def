// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the cgrstat BPF rstat pipeline (lib/cgrstat/cgrstat.h) against
 * independent truths: the kernel's per-task context switch counts
 * (/proc/PID/status), cgroup cpu.stat usage, classic per-cgroup perf events,
 * and sums over children.
 *
 * Workers are started directly inside their cgroup (clone3 +
 * CLONE_INTO_CGROUP), so every context switch they make is in that cgroup,
 * and are driven over pipes: ping (block, wake), spin CPU, move to another
 * cgroup, exit.  Before comparing, a worker is left blocked and quiescent.
 *
 * CGRSTAT_SKIP_UNSUPPORTED=1 turns "this kernel cannot run the pipeline"
 * (no fentry, no hook) into a skip, for runs on the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgtest.h"
#include "harness.h"
#include "cgrstat.h"

/* What libcgrstat printed last: its failures (cgrstat_set_print()) */
static char last_msg[1024];

static int save_msg(enum cgrstat_print_level level, const char *fmt, va_list ap)
{
	if (level == CGRSTAT_WARN)
		vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	return 0;
}

static void __attribute__((constructor)) catch_messages(void)
{
	cgrstat_set_print(save_msg);
}

#define EV_CS 0		/* context-switches */
#define EV_CGS 1	/* cgroup-switches */
#define EV_CLOCK 2	/* cpu-clock */
#define EVENTS "context-switches,cgroup-switches,cpu-clock"

struct worker {
	pid_t pid;
	int cmd_fd;
	int reply_fd;
};

/* ---- cgroup helpers ---- */

static char test_root[4096];

static void cg_path(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", test_root, rel);
}

static int cg_create(const char *rel)
{
	char p[4200];

	cg_path(p, sizeof(p), rel);
	return cgtest_mkdir(p);
}

static int cg_remove(const char *rel)
{
	char p[4200];

	cg_path(p, sizeof(p), rel);
	return rmdir(p) ? -errno : 0;
}

/* cpu.stat usage_usec of a cgroup (its subtree), in ns */
static long long cg_usage_ns(const char *rel)
{
	char p[4200];
	long long usec;

	cg_path(p, sizeof(p), rel);
	usec = cgtest_usage_usec(p);
	return usec < 0 ? -1 : usec * 1000;
}

/* ---- workers ---- */

static void spin_cpu_ms(int ms)
{
	cgtest_burn_ns(ms * NSEC_PER_MSEC);
}

static void move_self(const char *cg_dir)
{
	if (cgtest_move(cg_dir, 0))
		_exit(3);
}

static void __attribute__((noreturn)) worker_main(int cmd_fd, int reply_fd)
{
	char c, path[4096];
	int arg;

	for (;;) {
		if (read(cmd_fd, &c, 1) != 1)
			_exit(1);
		switch (c) {
		case 'p':
			break;
		case 's':
			if (read(cmd_fd, &arg, sizeof(arg)) != sizeof(arg))
				_exit(1);
			spin_cpu_ms(arg);
			break;
		case 'g':
			if (read(cmd_fd, &arg, sizeof(arg)) != sizeof(arg) ||
			    arg >= (int)sizeof(path) || read(cmd_fd, path, arg) != arg)
				_exit(1);
			path[arg] = 0;
			move_self(path);
			break;
		default:
			_exit(0);
		}
		if (write(reply_fd, &c, 1) != 1)
			_exit(1);
	}
}

/* Start a worker directly inside cgroup @rel. */
static int worker_start(struct worker *w, const char *rel)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	int to_w[2], from_w[2], cg_fd;
	char p[4200];
	long pid;

	cg_path(p, sizeof(p), rel);
	cg_fd = open(p, O_RDONLY | O_DIRECTORY);
	if (cg_fd < 0)
		return -errno;
	if (pipe(to_w) || pipe(from_w))
		return -errno;
	args.cgroup = cg_fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		close(to_w[1]);
		close(from_w[0]);
		worker_main(to_w[0], from_w[1]);
	}
	close(cg_fd);
	close(to_w[0]);
	close(from_w[1]);
	if (pid < 0)
		return -errno;
	w->pid = pid;
	w->cmd_fd = to_w[1];
	w->reply_fd = from_w[0];
	return 0;
}

static int worker_cmd(struct worker *w, char c, const void *arg, int len)
{
	char buf[4200], r;

	buf[0] = c;
	memcpy(buf + 1, arg, len);
	if (write(w->cmd_fd, buf, 1 + len) != 1 + len)
		return -1;
	return read(w->reply_fd, &r, 1) == 1 && r == c ? 0 : -1;
}

static int worker_ping(struct worker *w, int n)
{
	while (n--)
		if (worker_cmd(w, 'p', NULL, 0))
			return -1;
	return 0;
}

static int worker_spin(struct worker *w, int ms)
{
	return worker_cmd(w, 's', &ms, sizeof(ms));
}

static int worker_move(struct worker *w, const char *rel)
{
	char p[4200], buf[4200];
	int len;

	cg_path(p, sizeof(p), rel);
	len = strlen(p);
	memcpy(buf, &len, sizeof(len));
	memcpy(buf + sizeof(len), p, len);
	return worker_cmd(w, 'g', buf, sizeof(len) + len);
}

/* Sum of a task's voluntary and involuntary switches, from /proc. */
static long long task_switches(pid_t pid)
{
	char p[64], line[256];
	long long v, sum = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

/* Switches out of the task so far (the kernel's own count), once it is
 * blocked and its count is stable. */
static long long worker_quiesce(struct worker *w)
{
	long long last = -1;
	int i;

	for (i = 0; i < 500; i++) {
		char p[64], state = '?';
		long long sum;
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/stat", w->pid);
		f = fopen(p, "r");
		if (!f)
			return -1;
		if (fscanf(f, "%*d %*s %c", &state) != 1)
			state = '?';
		fclose(f);
		sum = task_switches(w->pid);
		if (state == '?')
			return -1;
		if (sum < 0)
			return -1;
		if (state == 'S' && sum == last)
			return sum;
		last = sum;
		usleep(10000);
	}
	return -1;
}

static void worker_stop(struct worker *w)
{
	if (w->pid <= 0)
		return;
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	close(w->cmd_fd);
	close(w->reply_fd);
	w->pid = 0;
}

/*
 * Kill the worker and return its switches out over its whole life, exit
 * included: the zombie is left unreaped (WNOWAIT) until every cpu has
 * switched it out for the last time, then its final counts are read.
 */
static long long worker_stop_counted(struct worker *w)
{
	long long total = -1, last;
	siginfo_t info;
	int tries = 0;

	kill(w->pid, SIGKILL);
	if (waitid(P_PID, w->pid, &info, WEXITED | WNOWAIT))
		return -1;
	/*
	 * A zombie (waitid returns after exit_notify()) may still be
	 * preempted before its last switch, out of do_task_dead(), which
	 * the collector counts: read its count until it stays the same
	 * over 10 ms with the cpus left to it (on Debian's 6.16 one read
	 * in six came one switch short).
	 */
	do {
		last = total;
		cgtest_settle_exited_tasks();
		usleep(10000);
		total = task_switches(w->pid);
	} while (total != last && ++tries < 50);
	worker_stop(w);
	return total;
}

/* ---- classic per-cgroup perf events (the reference) ---- */

struct classic {
	int fds[256];
	int nr;
};

static int classic_open(struct classic *c, const char *rel, uint32_t type, uint64_t config)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = type, .config = config };
	int cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN), cg_fd;
	char p[4200];

	cg_path(p, sizeof(p), rel);
	cg_fd = open(p, O_RDONLY | O_DIRECTORY);
	if (cg_fd < 0)
		return -errno;
	c->nr = 0;
	for (cpu = 0; cpu < ncpu && cpu < 256; cpu++) {
		int fd = syscall(SYS_perf_event_open, &attr, cg_fd, cpu, -1, PERF_FLAG_PID_CGROUP);

		if (fd < 0) {
			close(cg_fd);
			return -errno;
		}
		c->fds[c->nr++] = fd;
	}
	close(cg_fd);
	return 0;
}

static long long classic_read(struct classic *c)
{
	long long sum = 0, v;
	int i;

	for (i = 0; i < c->nr; i++) {
		if (read(c->fds[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		sum += v;
	}
	return sum;
}

static void classic_close(struct classic *c)
{
	while (c->nr)
		close(c->fds[--c->nr]);
}

/*
 * Can classic per-cgroup cpu-clock events serve as the reference here?
 * Linux 6.16 broke them: "perf: Fix the throttle error of some clock
 * events" (bc4394e5e79c) updates a cpu-clock count at stop only with
 * PERF_EF_UPDATE, which the scheduling out of a cgroup event never
 * passes, so the event counts 0; "perf: Fix 0 count issue of cpu-clock"
 * (f1f96511b1c4, 6.18 and 6.17.y) fixed it after 6.16.y had ended.  Probe
 * it: a task spins 50 ms in a cgroup of its own under a classic event.
 * NULL if the events count, else why not (the tests then assert against
 * cpu.stat alone and say so).
 */
static const char *classic_clock_broken(void)
{
	static const char *verdict;
	static bool probed;
	struct classic c;
	long long ns = -1;
	pid_t pid;

	if (probed)
		return verdict;
	probed = true;
	if (cg_create("clock-probe") ||
	    classic_open(&c, "clock-probe", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK))
		return verdict = "cannot open the probe's classic cpu-clock event";
	pid = fork();
	if (pid == 0) {
		char p[4200];

		cg_path(p, sizeof(p), "clock-probe");
		move_self(p);
		spin_cpu_ms(50);
		_exit(0);
	}
	if (pid > 0 && waitpid(pid, NULL, 0) == pid)
		ns = classic_read(&c);
	classic_close(&c);
	cg_remove("clock-probe");
	if (ns == 0)
		verdict = "this kernel's per-cgroup cpu-clock events count 0 ns (Linux 6.16: "
			  "bc4394e5e79c \"perf: Fix the throttle error of some clock events\", "
			  "fixed by f1f96511b1c4 \"perf: Fix 0 count issue of cpu-clock\" in "
			  "6.17.y and 6.18, never in 6.16.y)";
	else if (ns < 0)
		verdict = "the probe's classic cpu-clock event could not be read";
	else
		verdict = NULL;
	if (verdict)
		printf("# classic cpu-clock reference left out: %s\n", verdict);
	return verdict;
}

/* ---- fixture ---- */

FIXTURE(cg) {
	struct cgrstat *s;
	struct worker w[8];
};

FIXTURE_SETUP(cg)
{

	memset(self, 0, sizeof(*self));
	self->s = cgrstat_open(EVENTS, NULL);
	if (!self->s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, self->s) TH_LOG("cgrstat_open: %s", last_msg);
	snprintf(test_root, sizeof(test_root), "%s/cgrstat-test-%d",
		 cgrstat_cgroup_root(self->s), getpid());
	ASSERT_EQ(0, mkdir(test_root, 0755)) TH_LOG("mkdir %s: %s", test_root, strerror(errno));
}

static void remove_tree(const char *dir)
{
	cgtest_destroy_tree(dir);
}

FIXTURE_TEARDOWN(cg)
{
	int i;

	for (i = 0; i < 8; i++)
		worker_stop(&self->w[i]);
	cgrstat_close(self->s);
	if (test_root[0])
		remove_tree(test_root);
}

static uint64_t read_counter(struct __test_metadata *_metadata, struct cgrstat *s,
			     const char *rel, int ev)
{
	struct cgrstat_value v[CGRSTAT_MAX_EVENTS];
	char p[4200];
	int ret;

	cg_path(p, sizeof(p), rel);
	ret = cgrstat_read_cgroup(s, p, v, CGRSTAT_MAX_EVENTS);
	EXPECT_EQ(0, ret) TH_LOG("read %s: %s", rel, last_msg);
	return ret ? ~0ULL : v[ev].counter;
}

#define REL_CLOSE(a, b, pct) (llabs((long long)(a) - (long long)(b)) * 100 <= (long long)(pct) * llabs((long long)(b)))

/*
 * The hierarchy of the kernel's cgroup_hierarchical_stats selftest: test -> child1, child2 -> two leaves each, one
 * worker per leaf and one in child1 itself.  Leaf counts are exact: every
 * switch out of a worker is charged to its leaf (it is alone there), so
 * context-switches == cgroup-switches == nvcsw + nivcsw of the worker.
 * Parents: exactly the sum of the children plus their own task.
 */
TEST_F(cg, hierarchy_exact)
{
	static const char *const leaves[] = {
		"t/child1/leaf1", "t/child1/leaf2", "t/child2/leaf3", "t/child2/leaf4",
	};
	long long truth[5];
	uint64_t cs[5], cgs[5];
	int i;

	ASSERT_EQ(0, cg_create("t"));
	ASSERT_EQ(0, cg_create("t/child1"));
	ASSERT_EQ(0, cg_create("t/child2"));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, cg_create(leaves[i]));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, worker_start(&self->w[i], leaves[i]));
		ASSERT_EQ(0, worker_ping(&self->w[i], 10 * (i + 1)));
	}
	ASSERT_EQ(0, worker_start(&self->w[4], "t/child1"));
	ASSERT_EQ(0, worker_ping(&self->w[4], 7));

	for (i = 0; i < 5; i++) {
		truth[i] = worker_quiesce(&self->w[i]);
		ASSERT_LT(0, truth[i]);
	}
	for (i = 0; i < 4; i++) {
		cs[i] = read_counter(_metadata, self->s, leaves[i], EV_CS);
		cgs[i] = read_counter(_metadata, self->s, leaves[i], EV_CGS);
		EXPECT_EQ(truth[i], (long long)cs[i]) TH_LOG("%s context-switches", leaves[i]);
		EXPECT_EQ(truth[i], (long long)cgs[i]) TH_LOG("%s cgroup-switches", leaves[i]);
		EXPECT_LT(0U, cs[i]);
	}
	EXPECT_EQ(cs[0] + cs[1] + truth[4], read_counter(_metadata, self->s, "t/child1", EV_CS));
	EXPECT_EQ(cs[2] + cs[3], read_counter(_metadata, self->s, "t/child2", EV_CS));
	EXPECT_EQ(cs[0] + cs[1] + cs[2] + cs[3] + truth[4],
		  read_counter(_metadata, self->s, "t", EV_CS));
	EXPECT_EQ(cgs[2] + cgs[3], read_counter(_metadata, self->s, "t/child2", EV_CGS));
}

/* One iterator read returns the whole subtree, in pre-order, with the same
 * numbers as reading each cgroup alone. */
TEST_F(cg, subtree_one_read)
{
	static const char *const dirs[] = { "t", "t/a", "t/a/x", "t/b" };
	struct cgrstat_value one[CGRSTAT_MAX_EVENTS];
	struct cgrstat_record *recs = NULL;
	uint64_t ids[4];
	char p[4200];
	size_t nr, i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, cg_create(dirs[i]));
	ASSERT_EQ(0, worker_start(&self->w[0], "t/a/x"));
	ASSERT_EQ(0, worker_start(&self->w[1], "t/b"));
	ASSERT_EQ(0, worker_ping(&self->w[0], 20));
	ASSERT_EQ(0, worker_ping(&self->w[1], 5));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	ASSERT_LT(0, worker_quiesce(&self->w[1]));

	for (i = 0; i < 4; i++) {
		cg_path(p, sizeof(p), dirs[i]);
		ASSERT_EQ(0, cgrstat_cgroup_id(self->s, p, &ids[i]));
	}
	cg_path(p, sizeof(p), "t");
	ASSERT_EQ(0, cgrstat_read_subtree(self->s, p, &recs, &nr)) TH_LOG("%s", last_msg);
	ASSERT_EQ(4U, nr);
	EXPECT_EQ(ids[0], recs[0].cgroup_id);
	for (i = 0; i < nr; i++) {
		size_t j;

		for (j = 0; j < 4 && ids[j] != recs[i].cgroup_id; j++)
			;
		ASSERT_LT(j, 4U) TH_LOG("record %zu: unknown cgroup id %llu", i,
				       (unsigned long long)recs[i].cgroup_id);
		EXPECT_EQ(3U, recs[i].nr_events);
		ASSERT_EQ(0, cgrstat_read_cgroup_id(self->s, recs[i].cgroup_id, one, 3));
		EXPECT_EQ(one[EV_CS].counter, recs[i].values[EV_CS].counter);
		EXPECT_EQ(one[EV_CLOCK].counter, recs[i].values[EV_CLOCK].counter);
	}
	EXPECT_EQ(recs[0].values[EV_CS].counter,
		  read_counter(_metadata, self->s, "t/a", EV_CS) +
		  read_counter(_metadata, self->s, "t/b", EV_CS));
	free(recs);
}

/*
 * Busy workload in 3 levels (own task at each level): cpu-clock of each
 * cgroup within 5% of cpu.stat usage and within 2% of classic per-cgroup
 * cpu-clock perf events (where they count: classic_clock_broken()).
 */
TEST_F(cg, cpu_clock_three_levels)
{
	static const char *const dirs[] = { "t", "t/l1", "t/l1/l2", "t/l1/l2/l3" };
	struct classic classic[4];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, cg_create(dirs[i]));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, classic_open(&classic[i], dirs[i], PERF_TYPE_SOFTWARE,
					  PERF_COUNT_SW_CPU_CLOCK));
	for (i = 1; i < 4; i++)
		ASSERT_EQ(0, worker_start(&self->w[i], dirs[i]));
	for (i = 1; i < 4; i++)
		ASSERT_EQ(0, worker_spin(&self->w[i], 150 * i));
	for (i = 1; i < 4; i++)
		ASSERT_LT(0, worker_quiesce(&self->w[i]));

	for (i = 0; i < 4; i++) {
		uint64_t ours = read_counter(_metadata, self->s, dirs[i], EV_CLOCK);
		long long usage = cg_usage_ns(dirs[i]);
		long long ref = classic_read(&classic[i]);

		TH_LOG("%-12s cgrstat %llu ns, cpu.stat %lld ns, classic %lld ns", dirs[i],
		       (unsigned long long)ours, usage, ref);
		EXPECT_TRUE(REL_CLOSE(ours, usage, 5)) TH_LOG("%s vs cpu.stat", dirs[i]);
		if (!classic_clock_broken())
			EXPECT_TRUE(REL_CLOSE(ours, ref, 2)) TH_LOG("%s vs classic", dirs[i]);
		EXPECT_LT(150000000LL * (4 - i) / 2, (long long)ours);
		classic_close(&classic[i]);
	}
}

/* A cgroup created after the session started is counted from its first
 * switch, exactly. */
TEST_F(cg, cgroup_created_after_start)
{
	long long truth;

	usleep(20000);
	ASSERT_EQ(0, cg_create("late"));
	ASSERT_EQ(0, worker_start(&self->w[0], "late"));
	ASSERT_EQ(0, worker_ping(&self->w[0], 25));
	truth = worker_quiesce(&self->w[0]);
	ASSERT_LT(0, truth);
	EXPECT_EQ(truth, (long long)read_counter(_metadata, self->s, "late", EV_CS));
}

/*
 * A removed cgroup's counts, never read (still pending in its per-cpu
 * slots), reach its parent, exactly: the truth is the dead worker's own
 * final switch count, its exit included.
 */
TEST_F(cg, removed_cgroup_counts_kept_by_parent)
{
	uint64_t before, after;
	long long truth;
	int i;

	ASSERT_EQ(0, cg_create("p"));
	ASSERT_EQ(0, cg_create("p/gone"));
	before = read_counter(_metadata, self->s, "p", EV_CS);
	EXPECT_EQ(0U, before);
	ASSERT_EQ(0, worker_start(&self->w[0], "p/gone"));
	ASSERT_EQ(0, worker_ping(&self->w[0], 30));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	truth = worker_stop_counted(&self->w[0]);
	ASSERT_LT(0, truth);
	ASSERT_EQ(0, cg_remove("p/gone"));
	usleep(100000);	/* let the release work run: both orders must work */
	after = read_counter(_metadata, self->s, "p", EV_CS);
	EXPECT_EQ(truth, (long long)after);

	/* once released, the reader forgets the dead cgroup; the parent keeps
	 * its counts (release is asynchronous: wait for it, 5 s at most) */
	for (i = 0; i < 100; i++) {
		struct cgrstat_stats st;

		EXPECT_EQ(after, read_counter(_metadata, self->s, "p", EV_CS));
		cgrstat_get_stats(self->s, &st);
		if (st.forgotten)
			break;
		usleep(50000);
	}
	EXPECT_LT(i, 100) TH_LOG("the released cgroup was never forgotten");
}

/* A task moving itself between cgroups while running: each cgroup gets the
 * cpu time it ran there (cpu.stat splits it the same way). */
TEST_F(cg, migration)
{
	static const char *const dirs[] = { "m", "m/a", "m/b" };
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, cg_create(dirs[i]));
	ASSERT_EQ(0, worker_start(&self->w[0], "m/a"));
	ASSERT_EQ(0, worker_spin(&self->w[0], 200));
	ASSERT_EQ(0, worker_move(&self->w[0], "m/b"));
	ASSERT_EQ(0, worker_spin(&self->w[0], 300));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	for (i = 0; i < 3; i++) {
		uint64_t ours = read_counter(_metadata, self->s, dirs[i], EV_CLOCK);
		long long usage = cg_usage_ns(dirs[i]);

		TH_LOG("%s: cgrstat %llu ns, cpu.stat %lld ns", dirs[i],
		       (unsigned long long)ours, usage);
		EXPECT_TRUE(REL_CLOSE(ours, usage, 5)) TH_LOG("%s vs cpu.stat", dirs[i]);
	}
}

/*
 * A task spinning since its last switch is counted up to the read: the
 * read charges every cpu's tail (cgrstat_sync), without waiting for the
 * task to switch out.  cpu.stat just before and just after the read
 * brackets what it must return.
 */
TEST_F(cg, running_task_counted_at_read)
{
	char cmd[1 + sizeof(int)] = { 's' }, reply;
	int ms = 1500;
	long long before, after;
	uint64_t ours;

	ASSERT_EQ(0, cg_create("run"));
	ASSERT_EQ(0, worker_start(&self->w[0], "run"));
	memcpy(cmd + 1, &ms, sizeof(ms));
	ASSERT_EQ((ssize_t)sizeof(cmd), write(self->w[0].cmd_fd, cmd, sizeof(cmd)));
	usleep(600000);
	before = cg_usage_ns("run");
	ours = read_counter(_metadata, self->s, "run", EV_CLOCK);
	after = cg_usage_ns("run");
	ASSERT_EQ(1, read(self->w[0].reply_fd, &reply, 1));	/* spin done */
	TH_LOG("while running: cgrstat %llu ns, cpu.stat %lld..%lld ns",
	       (unsigned long long)ours, before, after);
	EXPECT_LT(0, before);
	EXPECT_LE(before * 95 / 100, (long long)ours);
	EXPECT_GE(after * 105 / 100, (long long)ours);
}

/*
 * A read syncs only the cpus that may run a cgroup of its subtree: reads
 * of an idle sibling leave alone the cpu of a task spinning in "run" (its
 * last note there is outside the sibling) and see none of it, and the read
 * of "run" that follows, and of the parent, still include what the task
 * ran up to them.
 */
TEST_F(cg, running_task_counted_after_reads_of_others)
{
	char cmd[1 + sizeof(int)] = { 's' }, reply;
	uint64_t ours, parent, sibling;
	long long before, after;
	int ms = 1500, i;

	ASSERT_EQ(0, cg_create("par"));
	ASSERT_EQ(0, cg_create("par/run"));
	ASSERT_EQ(0, cg_create("par/idle"));
	ASSERT_EQ(0, worker_start(&self->w[0], "par/run"));
	memcpy(cmd + 1, &ms, sizeof(ms));
	ASSERT_EQ((ssize_t)sizeof(cmd), write(self->w[0].cmd_fd, cmd, sizeof(cmd)));
	for (i = 0; i < 6; i++) {
		usleep(100000);
		sibling = read_counter(_metadata, self->s, "par/idle", EV_CLOCK);
		EXPECT_EQ(0U, sibling);
	}
	before = cg_usage_ns("par/run");
	ours = read_counter(_metadata, self->s, "par/run", EV_CLOCK);
	parent = read_counter(_metadata, self->s, "par", EV_CLOCK);
	after = cg_usage_ns("par/run");
	ASSERT_EQ(1, read(self->w[0].reply_fd, &reply, 1));	/* spin done */
	TH_LOG("while running: run %llu ns, par %llu ns, cpu.stat %lld..%lld ns",
	       (unsigned long long)ours, (unsigned long long)parent, before, after);
	EXPECT_LT(0, before);
	EXPECT_LE(before * 95 / 100, (long long)ours);
	EXPECT_GE(after * 105 / 100, (long long)ours);
	EXPECT_LE(ours, parent);
	EXPECT_GE(after * 105 / 100, (long long)parent);
}

/* An O_DIRECTORY fd of cgroup @rel (for CLONE_INTO_CGROUP), or -errno. */
static int cg_open_dir(const char *rel)
{
	char p[4200];
	int fd;

	cg_path(p, sizeof(p), rel);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	return fd < 0 ? -errno : fd;
}

/* Start a task directly inside cgroup @rel: "sh -c CMD", or one that exits
 * at once when @cmd is NULL.  Returns its pid or -errno. */
static pid_t start_in_cgroup(const char *rel, const char *cmd)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	long pid;
	int cg_fd;

	cg_fd = cg_open_dir(rel);
	if (cg_fd < 0)
		return cg_fd;
	args.cgroup = cg_fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		if (cmd)
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(cmd ? 127 : 0);
	}
	close(cg_fd);
	return pid < 0 ? -errno : pid;
}

/*
 * The workload that read up to 12 % short on stock kernels: shell loops
 * forking date in a nested cgroup, one per cpu, read while they run and
 * again once they are gone.  The truth is a classic per-cgroup cpu-clock
 * event on the same cgroup, measured in the same run: while running, its
 * readings just before and just after the read bracket ours (5 %); the
 * parent, with no task of its own, reads exactly its child (one read of
 * the subtree); at the end ours is within 5 % of the classic event.
 * cpu.stat is a loose bound (20 %): it is not the same clock (the
 * scheduler's accounting, not perf's): under TCG on a loaded host it read
 * 1-11 % below both perf counts (Debian's 6.1: 705 ms against 780 ms ours
 * and 782 ms classic), and under the lockdep/KASAN kernel 5.3 % below both
 * (2.990 s against 3.149 s ours and 3.163 s classic).  Where
 * the classic event cannot count (classic_clock_broken()), cpu.stat is
 * the truth at 5 %.  (Ours reads 1-3 % below the classic event under TCG:
 * the switch path between the sched_switch tracepoint and perf's own
 * cgroup switch is charged to the next cgroup by us, to the previous one
 * by perf.)
 */
static void read_pair(struct __test_metadata *_metadata, struct cgrstat *s, const char *rel,
		      uint64_t *parent, uint64_t *child)
{
	struct cgrstat_record *recs = NULL;
	char p[4200];
	size_t nr = 0;

	cg_path(p, sizeof(p), rel);
	*parent = *child = 0;
	ASSERT_EQ(0, cgrstat_read_subtree(s, p, &recs, &nr)) TH_LOG("%s", last_msg);
	ASSERT_EQ(2U, nr);
	*parent = recs[0].values[EV_CLOCK].counter;
	*child = recs[1].values[EV_CLOCK].counter;
	free(recs);
}

#define FORK_LOOP_TRUTH_PCT 5
#define FORK_LOOP_CPUSTAT_PCT 20

TEST_F(cg, fork_loop_nested)
{
	const int cpustat_pct = classic_clock_broken() ? FORK_LOOP_TRUTH_PCT :
			       FORK_LOOP_CPUSTAT_PCT;
	long long before, after, usage_before, usage_after, usage, ref;
	struct classic classic;
	uint64_t parent, child;
	pid_t pid[2];
	int i, round;

	ASSERT_EQ(0, cg_create("acc"));
	ASSERT_EQ(0, cg_create("acc/a"));
	ASSERT_EQ(0, classic_open(&classic, "acc/a", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK));
	for (i = 0; i < 2; i++) {
		pid[i] = start_in_cgroup("acc/a", "while :; do date >/dev/null; done");
		ASSERT_LT(0, pid[i]);
	}
	for (round = 0; round < 3; round++) {
		usleep(500000);
		usage_before = cg_usage_ns("acc");
		before = classic_read(&classic);
		read_pair(_metadata, self->s, "acc", &parent, &child);
		after = classic_read(&classic);
		usage_after = cg_usage_ns("acc");
		TH_LOG("running: acc %llu ns, acc/a %llu ns, classic %lld..%lld ns, "
		       "cpu.stat %lld..%lld ns", (unsigned long long)parent,
		       (unsigned long long)child, before, after, usage_before, usage_after);
		if (!classic_clock_broken()) {
			EXPECT_LE(before * (100 - FORK_LOOP_TRUTH_PCT) / 100, (long long)child);
			EXPECT_GE(after * (100 + FORK_LOOP_TRUTH_PCT) / 100, (long long)child);
		}
		EXPECT_LE(usage_before * (100 - cpustat_pct) / 100, (long long)child);
		EXPECT_GE(usage_after * (100 + cpustat_pct) / 100, (long long)child);
		EXPECT_EQ(parent, child);
	}
	for (i = 0; i < 2; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	cgtest_settle_exited_tasks();
	usleep(100000);
	usage = cg_usage_ns("acc");
	read_pair(_metadata, self->s, "acc", &parent, &child);
	ref = classic_read(&classic);
	classic_close(&classic);
	TH_LOG("done: acc %llu ns, acc/a %llu ns, cpu.stat %lld ns, classic %lld ns",
	       (unsigned long long)parent, (unsigned long long)child, usage, ref);
	EXPECT_EQ(parent, child);
	if (!classic_clock_broken())
		EXPECT_TRUE(REL_CLOSE(child, ref, FORK_LOOP_TRUTH_PCT)) TH_LOG("acc/a vs classic");
	EXPECT_TRUE(REL_CLOSE(child, usage, cpustat_pct)) TH_LOG("acc/a vs cpu.stat");
}

/* A cpu that goes idle charges nothing more to the cgroup that ran last. */
TEST_F(cg, idle_cpu_charges_nothing)
{
	uint64_t clock1, cs1;

	ASSERT_EQ(0, cg_create("idle"));
	ASSERT_EQ(0, worker_start(&self->w[0], "idle"));
	ASSERT_EQ(0, worker_spin(&self->w[0], 100));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	clock1 = read_counter(_metadata, self->s, "idle", EV_CLOCK);
	cs1 = read_counter(_metadata, self->s, "idle", EV_CS);
	EXPECT_LT(50000000ULL, clock1);
	usleep(300000);
	EXPECT_EQ(clock1, read_counter(_metadata, self->s, "idle", EV_CLOCK));
	EXPECT_EQ(cs1, read_counter(_metadata, self->s, "idle", EV_CS));
}

/* Text from the iterator, directly and through a file pinned in bpffs. */
TEST_F(cg, text_and_pinned_file)
{
	char text[4096], pinned[4096], p[4200], pin[256], line[128];
	struct cgrstat_value v[3];
	uint64_t id;
	ssize_t n;
	int fd;

	ASSERT_EQ(0, cg_create("txt"));
	ASSERT_EQ(0, worker_start(&self->w[0], "txt"));
	ASSERT_EQ(0, worker_ping(&self->w[0], 12));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	cg_path(p, sizeof(p), "txt");
	/* too small for the session's 3 events */
	EXPECT_EQ(-ENOSPC, cgrstat_read_cgroup(self->s, p, v, 2));
	ASSERT_EQ(0, cgrstat_read_cgroup(self->s, p, v, 3));
	ASSERT_EQ(0, cgrstat_cgroup_id(self->s, p, &id));
	ASSERT_EQ(0, cgrstat_read_text(self->s, p, text, sizeof(text)));
	snprintf(line, sizeof(line), "\ncontext-switches %llu\n",
		 (unsigned long long)v[EV_CS].counter);
	EXPECT_NE(NULL, strstr(text, line)) TH_LOG("text:\n%s\nwanted:%s", text, line);
	snprintf(line, sizeof(line), "cgroup_id %llu\n", (unsigned long long)id);
	EXPECT_EQ(0, strncmp(text, line, strlen(line))) TH_LOG("text:\n%s", text);

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/cgrstat-test-%d", getpid());
	ASSERT_EQ(0, cgrstat_pin_text(self->s, p, pin)) TH_LOG("%s", last_msg);
	fd = open(pin, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, pinned, sizeof(pinned) - 1);
	close(fd);
	unlink(pin);
	ASSERT_LT(0, n);
	pinned[n] = 0;
	EXPECT_STREQ(text, pinned);
}

/* The session's statistics now (a read of the bss, no BPF read) */
static struct cgrstat_stats stats_of(const struct cgrstat *s)
{
	struct cgrstat_stats st;

	cgrstat_get_stats(s, &st);
	return st;
}

/* A session with room for the cgroups present and @extra more */
static struct cgrstat *open_with_room(struct __test_metadata *_metadata, uint32_t extra)
{
	CGRSTAT_OPTS(cgrstat_opts, opts);
	struct cgrstat *s = cgrstat_open(EVENTS, NULL);

	if (!s)
		return NULL;
	opts.max_cgroups = stats_of(s).tracked + extra;
	cgrstat_close(s);
	s = cgrstat_open(EVENTS, &opts);
	EXPECT_NE(NULL, s) TH_LOG("%s", last_msg);
	return s;
}

/*
 * Full maps: room for the cgroups present, the test's root, p and spare.
 * p's four children and q find none: their counts go to their nearest
 * ancestor with a slot (p, the root), exactly, and each such charge is
 * counted (unplaced); nothing is unattributed, no read fails.  Then spare
 * goes, with no read: its slot is free again at the next mkdir, which
 * gives it to q/c, whose counts pass through q (no slot) up to the root.
 * Context switches are exact: each worker is alone in its cgroup.
 */
TEST(maps_full_counts_kept_by_ancestor)
{
	long long truth[4], sum = 0, truth_c;
	struct worker w[5] = {};
	struct cgrstat_stats st;
	struct cgrstat *s;
	uint64_t unplaced;
	char rel[64];
	int i;

	s = open_with_room(_metadata, 3);
	if (!s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, s) TH_LOG("%s", last_msg);
	snprintf(test_root, sizeof(test_root), "%s/cgrstat-full-%d", cgrstat_cgroup_root(s),
		 getpid());
	ASSERT_EQ(0, mkdir(test_root, 0755));
	ASSERT_EQ(0, cg_create("p"));
	ASSERT_EQ(0, cg_create("spare"));
	ASSERT_EQ(0U, stats_of(s).untracked) TH_LOG("the test's first three found no room");
	ASSERT_EQ(0, cg_create("q"));
	for (i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "p/x%d", i);
		ASSERT_EQ(0, cg_create(rel));
		ASSERT_EQ(0, worker_start(&w[i], rel));
		ASSERT_EQ(0, worker_ping(&w[i], 10 + 3 * i));
	}
	for (i = 0; i < 4; i++) {
		truth[i] = worker_quiesce(&w[i]);
		ASSERT_LT(0, truth[i]);
		sum += truth[i];
		snprintf(rel, sizeof(rel), "p/x%d", i);
		EXPECT_EQ(0U, read_counter(_metadata, s, rel, EV_CS)) TH_LOG("%s has no slot", rel);
	}
	EXPECT_EQ(sum, (long long)read_counter(_metadata, s, "p", EV_CS));
	EXPECT_EQ(sum, (long long)read_counter(_metadata, s, "", EV_CS));
	st = stats_of(s);
	TH_LOG("%llu cgroups without a slot, %llu unplaced, %llu unattributed",
	       (unsigned long long)st.untracked, (unsigned long long)st.unplaced,
	       (unsigned long long)st.unattributed_charges);
	EXPECT_EQ(5U, st.untracked);
	EXPECT_LE((uint64_t)sum, st.unplaced);
	EXPECT_EQ(0U, st.unattributed_charges);
	EXPECT_EQ(0, cgrstat_check_overflow(s)) TH_LOG("%s", last_msg);

	ASSERT_EQ(0, cg_remove("spare"));
	ASSERT_EQ(0, cgtest_wait_released(test_root));
	unplaced = stats_of(s).unplaced;
	ASSERT_EQ(0, cg_create("q/c"));
	EXPECT_EQ(5U, stats_of(s).untracked) TH_LOG("q/c found no room: spare's is not free");
	ASSERT_EQ(0, worker_start(&w[4], "q/c"));
	ASSERT_EQ(0, worker_ping(&w[4], 7));
	truth_c = worker_quiesce(&w[4]);
	ASSERT_LT(0, truth_c);
	EXPECT_EQ(truth_c, (long long)read_counter(_metadata, s, "q/c", EV_CS));
	EXPECT_EQ(0U, read_counter(_metadata, s, "q", EV_CS));
	EXPECT_EQ(sum + truth_c, (long long)read_counter(_metadata, s, "", EV_CS))
		TH_LOG("q/c's counts did not pass q");
	EXPECT_LT(unplaced, stats_of(s).unplaced) TH_LOG("q/c's passing q not counted");
	for (i = 0; i < 5; i++)
		worker_stop(&w[i]);
	cgrstat_close(s);
	remove_tree(test_root);
}

/*
 * Cgroups that come and go while nobody reads free their slots at their
 * release: with room for three more than the cgroups present, fifty
 * created, run in and removed in turn (each released before the next
 * mkdir) all find room, and the tracked cgroups return to where they
 * were, all without a read.
 */
TEST(released_slots_freed_without_read)
{
	struct cgrstat_stats st0, st;
	struct cgrstat *s;
	pid_t pid;
	int i;

	s = open_with_room(_metadata, 3);
	if (!s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, s) TH_LOG("%s", last_msg);
	snprintf(test_root, sizeof(test_root), "%s/cgrstat-noread-%d", cgrstat_cgroup_root(s),
		 getpid());
	ASSERT_EQ(0, mkdir(test_root, 0755));
	st0 = stats_of(s);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, cg_create("c"));
		pid = start_in_cgroup("c", NULL);
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, NULL, 0));
		cgtest_settle_exited_tasks();
		while (cg_remove("c") == -EBUSY)
			usleep(1000);
		/* the release is asynchronous (an RCU grace period, a work
		 * item): room for three must not race it */
		ASSERT_EQ(0, cgtest_wait_released(test_root));
	}
	ASSERT_EQ(0, cg_create("last"));
	st = stats_of(s);
	TH_LOG("tracked %llu -> %llu, %llu forgotten, %llu found no room",
	       (unsigned long long)st0.tracked, (unsigned long long)st.tracked,
	       (unsigned long long)st.forgotten, (unsigned long long)st.untracked);
	EXPECT_EQ(0U, st.untracked);
	EXPECT_EQ(st0.tracked + 1, st.tracked);
	EXPECT_LE(50U, st.forgotten - st0.forgotten);
	cgrstat_close(s);
	remove_tree(test_root);
}

/* The maps of an ordinary session hold everything: no overflow. */
/*
 * A cgroup gets its entries (per-cpu slot and total) when it is created,
 * not at its first context switch: the scheduler never allocates.  A
 * cgroup that never ran has them; a task running and switching in it
 * adds none; its removal frees them at the next read.
 */
TEST_F(cg, entries_made_at_mkdir)
{
	struct cgrstat_stats st0, st1, st2, st3;
	struct cgrstat_value v[3];

	cgrstat_get_stats(self->s, &st0);
	ASSERT_EQ(0, cg_create("idle"));
	cgrstat_get_stats(self->s, &st1);
	TH_LOG("tracked %llu -> %llu after mkdir", (unsigned long long)st0.tracked,
	       (unsigned long long)st1.tracked);
	EXPECT_EQ(st0.tracked + 1, st1.tracked);
	ASSERT_EQ(0, worker_start(&self->w[0], "idle"));
	ASSERT_EQ(0, worker_ping(&self->w[0], 20));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	cgrstat_get_stats(self->s, &st2);
	EXPECT_EQ(st1.tracked, st2.tracked) TH_LOG("a switch created an entry");
	EXPECT_LT(0U, read_counter(_metadata, self->s, "idle", EV_CS));
	worker_stop(&self->w[0]);
	ASSERT_EQ(0, cg_remove("idle"));
	/* releases are asynchronous: a read forgets what was released */
	for (int tries = 0; tries < 100; tries++) {
		ASSERT_EQ(0, cgrstat_read_cgroup(self->s, "", v, 3));
		cgrstat_get_stats(self->s, &st3);
		if (st3.tracked == st0.tracked)
			break;
		usleep(100000);
	}
	EXPECT_EQ(st0.tracked, st3.tracked);
}

TEST_F(cg, no_overflow)
{
	ASSERT_EQ(0, cg_create("n"));
	ASSERT_EQ(0, worker_start(&self->w[0], "n"));
	ASSERT_EQ(0, worker_ping(&self->w[0], 5));
	ASSERT_LT(0, worker_quiesce(&self->w[0]));
	EXPECT_LT(0U, read_counter(_metadata, self->s, "n", EV_CS));
	EXPECT_EQ(0, cgrstat_check_overflow(self->s)) TH_LOG("%s", last_msg);
}

/* Remove @rel and read until the reader has forgotten it (its index is
 * free again); 0, or -ETIMEDOUT after 10 s. */
static int remove_and_forget(struct __test_metadata *_metadata, struct cgrstat *s,
			     const char *rel)
{
	struct cgrstat_stats st0, st;
	int ret, tries;

	cgrstat_get_stats(s, &st0);
	while ((ret = cg_remove(rel)) == -EBUSY)
		usleep(1000);
	if (ret)
		return ret;
	for (tries = 0; tries < 100; tries++) {
		read_counter(_metadata, s, "", EV_CS);
		cgrstat_get_stats(s, &st);
		if (st.forgotten > st0.forgotten)
			return 0;
		usleep(100000);
	}
	return -ETIMEDOUT;
}

/*
 * A removed cgroup's index (its per-cpu slot and its total) is freed by
 * the read after its release and handed to the next cgroup created,
 * zeroed.  With room for the cgroups present, the test's two and one
 * more, each of ten cgroups created and removed in turn can only be
 * counted through the index its predecessor freed: each must count
 * exactly its own worker's switches (none of its predecessors'), and the
 * parent all of them.
 */
TEST(freed_index_reused_from_zero)
{
	CGRSTAT_OPTS(cgrstat_opts, opts);
	long long truth, sum = 0;
	struct cgrstat_stats st;
	struct worker w = {};
	struct cgrstat *s;
	uint64_t cs;
	int i;

	s = cgrstat_open(EVENTS, NULL);
	if (!s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, s) TH_LOG("%s", last_msg);
	cgrstat_get_stats(s, &st);
	cgrstat_close(s);
	opts.max_cgroups = st.tracked + 3;
	s = cgrstat_open(EVENTS, &opts);
	ASSERT_NE(NULL, s) TH_LOG("%s", last_msg);
	snprintf(test_root, sizeof(test_root), "%s/cgrstat-reuse-%d", cgrstat_cgroup_root(s),
		 getpid());
	ASSERT_EQ(0, mkdir(test_root, 0755));
	ASSERT_EQ(0, cg_create("p"));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, cg_create("p/c"));
		ASSERT_EQ(0, worker_start(&w, "p/c"));
		ASSERT_EQ(0, worker_ping(&w, 5 + 3 * i));
		truth = worker_quiesce(&w);
		ASSERT_LT(0, truth);
		cs = read_counter(_metadata, s, "p/c", EV_CS);
		EXPECT_EQ(truth, (long long)cs) TH_LOG("cgroup %d of p/c", i);
		truth = worker_stop_counted(&w);
		ASSERT_LT(0, truth);
		sum += truth;
		ASSERT_EQ(0, remove_and_forget(_metadata, s, "p/c")) TH_LOG("cgroup %d", i);
	}
	cgrstat_get_stats(s, &st);
	TH_LOG("room for %llu cgroups, %llu now, %llu forgotten, %llu found no room",
	       (unsigned long long)st.max_cgroups, (unsigned long long)st.tracked,
	       (unsigned long long)st.forgotten, (unsigned long long)st.untracked);
	EXPECT_EQ(0U, st.untracked);
	EXPECT_EQ(st.max_cgroups - 1, st.tracked);
	EXPECT_EQ(sum, (long long)read_counter(_metadata, s, "p", EV_CS));
	EXPECT_EQ(0, cgrstat_check_overflow(s)) TH_LOG("%s", last_msg);
	cgrstat_close(s);
	remove_tree(test_root);
}

/*
 * Start a task directly inside cgroup @rel that exits at once; its pid or
 * -errno.  As start_in_cgroup(rel, NULL), but the child shares our memory
 * until it exits (CLONE_VM | CLONE_VFORK: we wait meanwhile), our files
 * and our signal handlers, so that nothing of this process (its address
 * space, its hundred BPF and perf fds) is copied for it and torn down at
 * its exit: per cgroup of the churn, about a third of the 3.9 ms a fork
 * cost under TCG.  The child runs no C code, only the exit system call:
 * it needs no stack.
 */
static pid_t exit_in_cgroup(const char *rel)
{
#ifdef __x86_64__
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_FS |
			 CLONE_SIGHAND,
		.exit_signal = SIGCHLD,
	};
	long pid;
	int cg_fd;

	cg_fd = cg_open_dir(rel);
	if (cg_fd < 0)
		return cg_fd;
	args.cgroup = cg_fd;
	{
		register long ret asm("rax") = SYS_clone3;
		register long a0 asm("rdi") = (long)&args;
		register long a1 asm("rsi") = sizeof(args);

		asm volatile("syscall\n\t"
			     "test %%rax, %%rax\n\t"
			     "jnz 1f\n\t"
			     "mov %[exit], %%eax\n\t"	/* the child: exit_group(0) */
			     "xor %%edi, %%edi\n\t"
			     "syscall\n"
			     "1:"
			     : "+r"(ret)
			     : "r"(a0), "r"(a1), [exit] "i"(SYS_exit_group)
			     : "rcx", "r11", "memory");
		pid = ret;	/* pid, or -errno: before a call reuses rax */
	}
	close(cg_fd);
	return pid;
#else
	return start_in_cgroup(rel, NULL);
#endif
}

/* Create cgroup @rel, run a task in it that exits at once, reap it and
 * remove the cgroup.  @shared_mm: start the task with exit_in_cgroup(),
 * else fork it. */
static int churn_one(const char *rel, bool shared_mm)
{
	pid_t pid;
	int ret;

	ret = cg_create(rel);
	if (ret)
		return ret;
	pid = shared_mm ? exit_in_cgroup(rel) : start_in_cgroup(rel, NULL);
	if (pid < 0)
		return pid;
	if (waitpid(pid, NULL, 0) != pid)
		return -ECHILD;
	/* reaped, but it may not have switched out for the last time yet */
	while ((ret = cg_remove(rel)) == -EBUSY)
		usleep(1000);
	return ret;
}

/*
 * Cgroup churn: CGRSTAT_CHURN cgroups (default 1000) created, each used by
 * a task that runs and exits in it, and removed, with a read after every
 * 1000, all in one session.  Afterwards the tracked entries return to what
 * they were after a first warm-up cgroup (the released cgroups are
 * forgotten), nothing overflowed, and the parent kept every child's
 * counts: at least one switch per child, cpu-clock within 5 % of classic
 * per-cgroup perf events.  (cpu.stat is only logged: for tasks that live a
 * few ms in a cgroup of their own it reads 20-35 % more than both perf
 * counts, classic events included.)  Past 1000 cgroups the tasks share our
 * memory (exit_in_cgroup()): a fork per cgroup made 100,000 take 6.5 min
 * under TCG.  Fewer keep the fork, whose task lives a few ms in its cgroup
 * (one sharing our memory well under 1 ms): the switches in and out, whose
 * path we charge to the next cgroup and perf to the previous one, then stay
 * a small part of the cpu-clock compared.  (Under single-threaded TCG a
 * vcpu stalls up to 100 ms while the other runs; a stall inside a switch
 * moves that much, 5 % of a second.)
 */
TEST_F_TIMEOUT(cg, churn, 3600)
{
	const char *env = getenv("CGRSTAT_CHURN");
	long n = env ? atol(env) : 1000, i;
	struct cgrstat_value v[3];
	struct cgrstat_stats st0, st;
	long long usage, classic_ns;
	struct classic classic;
	uint64_t cs, clock;
	char rel[64];
	int tries;

	ASSERT_EQ(0, cg_create("churn"));
	ASSERT_EQ(0, classic_open(&classic, "churn", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK));
	ASSERT_EQ(0, churn_one("churn/warm-up", n > 1000));
	for (tries = 0; tries < 600; tries++) {
		/* the whole hierarchy: every ancestor gets its total */
		ASSERT_EQ(0, cgrstat_read_cgroup(self->s, "", v, 3));
		cgrstat_get_stats(self->s, &st0);
		if (st0.forgotten)
			break;
		usleep(100000);
	}
	for (i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "churn/c%ld", i);
		ASSERT_EQ(0, churn_one(rel, n > 1000)) TH_LOG("%s", rel);
		if (i % 1000 == 999)
			read_counter(_metadata, self->s, "churn", EV_CS);
		if (i % 20000 == 19999)
			TH_LOG("%ld cgroups done", i + 1);
	}
	/* releases are asynchronous: wait for them (60 s at most) */
	for (tries = 0; tries < 600; tries++) {
		read_counter(_metadata, self->s, "churn", EV_CS);
		cgrstat_get_stats(self->s, &st);
		if (st.tracked <= st0.tracked)
			break;
		usleep(100000);
	}
	usage = cg_usage_ns("churn");
	cs = read_counter(_metadata, self->s, "churn", EV_CS);
	clock = read_counter(_metadata, self->s, "churn", EV_CLOCK);
	classic_ns = classic_read(&classic);
	classic_close(&classic);
	TH_LOG("%ld cgroups: %llu tracked after warm-up, %llu now (room for %llu); "
	       "%llu forgotten; churn: %llu switches, cpu-clock %llu ns, classic %lld ns, "
	       "cpu.stat %lld ns", n, (unsigned long long)st0.tracked,
	       (unsigned long long)st.tracked,
	       (unsigned long long)st.max_cgroups, (unsigned long long)st.forgotten,
	       (unsigned long long)cs, (unsigned long long)clock, classic_ns, usage);
	EXPECT_LT(0U, st0.forgotten) TH_LOG("the warm-up cgroup was never forgotten");
	EXPECT_GE(st0.tracked, st.tracked);
	EXPECT_LE((uint64_t)n + 1, st.forgotten);
	EXPECT_EQ(0, cgrstat_check_overflow(self->s)) TH_LOG("%s", last_msg);
	EXPECT_LE((uint64_t)n, cs);
	/* without classic events (6.16) cpu-clock has no reference here */
	if (!classic_clock_broken())
		EXPECT_TRUE(REL_CLOSE(clock, classic_ns, 5)) TH_LOG("churn vs classic perf events");
}

/*
 * cgrstat_open() takes events as perf stat -e does (lib/cgutil): the
 * software PMU's "software/config=3/" is context-switches and
 * "software/config=11/" cgroup-switches, each exact against the worker's
 * own nvcsw + nivcsw.
 */
TEST(pmu_term_events)
{
	struct worker w = { .pid = 0 };
	struct cgrstat_value v[2];
	long long truth;
	char p[4200];
	struct cgrstat *s;

	/* a comma between a PMU's terms does not end the event */
	s = cgrstat_open("software/config=3,config1=0/,software/config=11/", NULL);
	if (!s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, s) TH_LOG("%s", last_msg);
	ASSERT_EQ(2, cgrstat_nr_events(s));
	EXPECT_STREQ("software/config=3,config1=0/", cgrstat_event_name(s, 0));
	EXPECT_STREQ("software/config=11/", cgrstat_event_name(s, 1));
	snprintf(test_root, sizeof(test_root), "%s/cgrstat-pmu-%d", cgrstat_cgroup_root(s),
		 getpid());
	ASSERT_EQ(0, mkdir(test_root, 0755));
	ASSERT_EQ(0, cg_create("w"));
	ASSERT_EQ(0, worker_start(&w, "w"));
	ASSERT_EQ(0, worker_ping(&w, 20));
	truth = worker_quiesce(&w);
	ASSERT_LT(0, truth);
	cg_path(p, sizeof(p), "w");
	ASSERT_EQ(0, cgrstat_read_cgroup(s, p, v, 2)) TH_LOG("%s", last_msg);
	EXPECT_EQ(truth, (long long)v[0].counter);
	EXPECT_EQ(truth, (long long)v[1].counter);
	worker_stop(&w);
	cgrstat_close(s);
	remove_tree(test_root);
}

/* ---- bad input ---- */

/*
 * Options from a program built against an older header (a smaller struct:
 * no cgroup_root) still work; a newer one's fields this library does not
 * know are refused with E2BIG, unless they are zero; a size too small to
 * hold sz is EINVAL.  Every refusal goes through the print callback.  The
 * opens that must fail fail before any BPF: this runs on the host too.
 */
struct opts_from_the_future {
	struct cgrstat_opts known;
	uint64_t unknown;
};

TEST(opts_sizes_old_and_new)
{
	struct opts_from_the_future big = {
		.known = { .sz = sizeof(big), .flush_hook = "cgrstat_no_such_hook" },
	};
	struct cgrstat_opts old = {
		.sz = offsetof(struct cgrstat_opts, cgroup_root),
		.max_cgroups = 64,
		.flush_hook = "cgrstat_no_such_hook",
		.cgroup_root = "/no/such/root",	/* past the old size: not read */
	};
	struct cgrstat *s;

	/* zero tail: accepted, fails later at the hook it asks for */
	EXPECT_EQ(NULL, cgrstat_open("cpu-clock", &big.known));
	EXPECT_NE(NULL, strstr(last_msg, "cgrstat_no_such_hook")) TH_LOG("%s", last_msg);

	big.unknown = 1;
	EXPECT_EQ(NULL, cgrstat_open("cpu-clock", &big.known));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_NE(NULL, strstr(last_msg, "newer header")) TH_LOG("%s", last_msg);

	/* old size: the hook is read, the root past it is not */
	EXPECT_EQ(NULL, cgrstat_open("cpu-clock", &old));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_NE(NULL, strstr(last_msg, "cgrstat_no_such_hook")) TH_LOG("%s", last_msg);

	old.sz = 4;
	EXPECT_EQ(NULL, cgrstat_open("cpu-clock", &old));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(NULL, strstr(last_msg, "cgrstat_opts.sz")) TH_LOG("%s", last_msg);

	/* an old-sized struct opens a working session */
	old = (struct cgrstat_opts){ .sz = offsetof(struct cgrstat_opts, flush_hook),
				     .max_cgroups = 4096, .flush_hook = "cgrstat_no_such_hook" };
	s = cgrstat_open("cpu-clock", &old);
	if (!s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, s) TH_LOG("old size refused: %s", last_msg);
	cgrstat_close(s);
}

TEST(version_matches_header)
{
	char v[32];

	snprintf(v, sizeof(v), "v%d.%d.%d", CGRSTAT_MAJOR_VERSION, CGRSTAT_MINOR_VERSION,
		 CGRSTAT_PATCH_VERSION);
	EXPECT_EQ((uint32_t)CGRSTAT_MAJOR_VERSION, cgrstat_major_version());
	EXPECT_EQ((uint32_t)CGRSTAT_MINOR_VERSION, cgrstat_minor_version());
	EXPECT_STREQ(v, cgrstat_version_string());
}

TEST(unknown_event)
{
	struct cgrstat *s = cgrstat_open("cpu-clock,no-such-event", NULL);

	EXPECT_EQ(NULL, s);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(NULL, strstr(last_msg, "unknown event 'no-such-event'")) TH_LOG("%s", last_msg);
	cgrstat_close(s);
}

/*
 * perf's syntax for a hardware event: its comma is inside the PMU's
 * /terms/, so the list holds two events.  Opened where the cpu PMU exists;
 * elsewhere refused naming the whole event, never a half of it.
 */
TEST(pmu_event_with_comma_is_one_event)
{
	struct cgrstat *s = cgrstat_open("cpu/event=0x3c,umask=0/,cpu-clock", NULL);

	if (s) {
		EXPECT_EQ(2, cgrstat_nr_events(s));
		EXPECT_STREQ("cpu/event=0x3c,umask=0/", cgrstat_event_name(s, 0));
		EXPECT_STREQ("cpu-clock", cgrstat_event_name(s, 1));
		cgrstat_close(s);
		return;
	}
	TH_LOG("%s", last_msg);
	EXPECT_NE(NULL, strstr(last_msg, "'cpu/event=0x3c,umask=0/'"));
	EXPECT_EQ(NULL, strstr(last_msg, "'cpu/event=0x3c'"));
}

/* The BPF program has CGRSTAT_MAX_EVENTS slots: a ninth event is refused
 * before any BPF, saying how many fit. */
TEST(nine_events_refused)
{
	struct cgrstat *s = cgrstat_open("cpu-clock,task-clock,context-switches,"
					 "cpu-migrations,page-faults,minor-faults,"
					 "major-faults,cgroup-switches,cpu-clock:u", NULL);

	EXPECT_EQ(NULL, s);
	EXPECT_EQ(E2BIG, errno);
	EXPECT_NE(NULL, strstr(last_msg, "at most 8")) TH_LOG("%s", last_msg);
	cgrstat_close(s);
}

TEST(missing_cgroup_path)
{
	struct cgrstat_value v[1];
	struct cgrstat *s = cgrstat_open("cpu-clock", NULL);

	if (!s && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	ASSERT_NE(NULL, s) TH_LOG("%s", last_msg);
	/* a cgroup removed before a read is a reader's everyday race: ENOENT,
	 * no warning (the caller says whether it matters) */
	last_msg[0] = '\0';
	EXPECT_EQ(-ENOENT, cgrstat_read_cgroup(s, "no/such/cgroup", v, 1));
	EXPECT_EQ(-ENOENT, cgrstat_read_cgroup_id(s, 0x7fffffffffffULL, v, 1));
	EXPECT_STREQ("", last_msg);
	cgrstat_close(s);
}

/* A kernel without the hook: ask for a symbol that does not exist. */
TEST(kernel_without_hook)
{
	CGRSTAT_OPTS(cgrstat_opts, opts, .flush_hook = "cgrstat_no_such_hook");
	struct cgrstat *s = cgrstat_open("cpu-clock", &opts);

	EXPECT_EQ(NULL, s);
	/* what the kernel lacks is not the caller's input: not EINVAL */
	EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("%s", strerror(errno));
	EXPECT_NE(NULL, strstr(last_msg, "lacks the rstat hook")) TH_LOG("%s", last_msg);
	EXPECT_NE(NULL, strstr(last_msg, "cgrstat_no_such_hook")) TH_LOG("%s", last_msg);
	cgrstat_close(s);
}

/* No hardware PMU here: say so instead of counting zeros. */
TEST(unsupported_event)
{
	struct cgrstat *s = cgrstat_open("cpu-clock,cycles", NULL);

	if (!s && strstr(last_msg, "refused") && getenv("CGRSTAT_SKIP_UNSUPPORTED"))
		SKIP(return, "%s", last_msg);
	if (s) {
		cgrstat_close(s);
		SKIP(return, "this machine has a hardware PMU");
	}
	EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("%s", strerror(errno));
	EXPECT_NE(NULL, strstr(last_msg, "event 'cycles' is not supported")) TH_LOG("%s", last_msg);
}

TEST_HARNESS_MAIN
