// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware events per cgroup through libcgcount (lib/cgcount/cgcount.h), on
 * the arm64 guests (QEMU's virt machine, PMUv3: 6 general counters and the
 * cycle counter; instruction-exact, -icount shift=0: the guest clock
 * advances 1 ns per guest instruction and the cycle counter follows it),
 * on each backend, against truths that do not come from the library:
 *
 *   - instructions:u of a cgroup is the number of user-mode instructions
 *     its tasks retired: hw-loop, stopped before a loop of 2 instructions
 *     per iteration, is moved into the cgroup, continued, runs N iterations
 *     and exits.  Counted: 2N + LOOP_EXTRA, exactly.
 *   - cycles of a cgroup is the virtual time its tasks ran: its cpu-clock;
 *     cycles:u its instructions:u, exactly.
 *   - multiplexed events, scaled by enabled / running, read the same truth.
 *
 * One vcpu: QEMU (7.2) derives each vcpu's instruction counter from the
 * global instruction count, so under single-threaded TCG a vcpu's counter
 * also counts what the other vcpus ran while it was counting (on two vcpus,
 * 163,011 of 4.56e9 instructions:u came from the idle vcpu's wakeups).
 *
 * HW_BACKENDS (default "events,shared,rstat") names the backends the kernel
 * must offer: the others are skipped (Debian's kernels lack shared, and
 * rstat's fentry programs attach on arm64 from Linux 6.4 on).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "harness.h"
#include "cgtest.h"
#include "cgcount.h"
#include "cgcount_messages.h"
#include "cgutil.h"

/*
 * The user-mode instructions hw-loop retires besides 2 per iteration once
 * continued: "mov x0, x2" after the stopping syscall returns, then "mov x8"
 * and the exit svc.  Measured on one vcpu, every arm64 kernel and backend, for
 * 1e6 to 2.3e9 iterations: exactly 3.
 */
#define LOOP_EXTRA	3
#define MAX_VALUES	8	/* the rstat backend counts at most 8 events */
#define MUX_EVENTS	8	/* > the 6 general counters instructions can use */

/*
 * Run n loop iterations in a child of cgroup cg: hw-loop (tests/perf/hw-loop.c,
 * build/bin, $HW_LOOP to name another) stops itself, is moved, continued,
 * loops and exits.  0 once it exited 0.
 */
static int run_loop_in(const char *cg, uint64_t n)
{
	const char *loop = getenv("HW_LOOP") ? getenv("HW_LOOP") : "build/bin/hw-loop";
	char iterations[32];
	int status, ret;
	pid_t pid;

	snprintf(iterations, sizeof(iterations), "%" PRIu64, n);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl(loop, loop, iterations, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fprintf(stderr, "%s did not stop itself (status %#x)\n", loop, status);
		return -ECHILD;
	}
	ret = cgtest_move(cg, pid);
	kill(pid, ret ? SIGKILL : SIGCONT);
	return ret ? ret : cgtest_wait(pid);
}

/* The counts are exact on one vcpu only (see the top of this file). */
static void require_one_cpu(struct __test_metadata *_metadata)
{
	ASSERT_EQ(1, sysconf(_SC_NPROCESSORS_ONLN))
		TH_LOG("run on one vcpu: another vcpu's instructions count too");
}

#define NR_GENERAL_COUNTERS	6	/* PMUv3 on QEMU's virt machine */
#define PROBE_EVENTS		(1 + NR_GENERAL_COUNTERS)

/*
 * Do cycles and 6 instructions:u, one group of this task, get every counter
 * of the PMU (running == enabled)?  Not while another event holds one.
 */
static bool counters_free(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE, .size = sizeof(attr),
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
		.exclude_kernel = 1,
	};
	uint64_t buf[3 + PROBE_EVENTS] = { 0 };
	int fds[PROBE_EVENTS], i, n;
	volatile int spin;
	bool all_ran;

	for (n = 0; n < PROBE_EVENTS; n++) {
		attr.config = n ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_HW_CPU_CYCLES;
		fds[n] = cgutil_perf_open(&attr, 0, -1, n ? fds[0] : -1, 0);
		if (fds[n] < 0)
			break;
	}
	for (spin = 0; n == PROBE_EVENTS && spin < 100000; spin++)
		;
	all_ran = n == PROBE_EVENTS && read(fds[0], buf, sizeof(buf)) == sizeof(buf) &&
		  buf[1] > 0 && buf[1] == buf[2];
	for (i = 0; i < n; i++)
		close(fds[i]);
	return all_ran;
}

/*
 * Wait until no event holds a counter: the events of a session closed by
 * the test before can outlive it (rstat's are freed with its BPF map, after
 * RCU grace periods), and would multiplex with the next test's.  Up to 5 s.
 */
static int wait_counters_free(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (counters_free())
			return 0;
		usleep(50000);
	}
	return -EBUSY;
}

/* Is backend b among those HW_BACKENDS says this kernel has? */
static bool backend_expected(enum cgcount_backend b)
{
	const char *list = getenv("HW_BACKENDS");
	const char *name = cgcount_backend_name(b);
	size_t len = strlen(name);
	const char *p;

	if (!list)
		return true;
	for (p = list; (p = strstr(p, name)); p += len)
		if ((p == list || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
	return false;
}

static struct cgcount *open_backend(enum cgcount_backend b, const char *events)
{
	CGCOUNT_OPTS(cgcount_opts, opts, .backend = b);

	last_msg[0] = '\0';
	return cgcount_open(events, &opts);
}

/*
 * The harness's time-out runs on the guest's clock, which under -icount
 * sleep=off jumps to the next timer whenever the vcpu idles: the rstat
 * variant of group_counts_per_cgroup ran past the default 30 s of guest
 * time once on Debian's 7.3, in a run of a few host seconds. A hang is
 * caught by the host's time-out of the whole guest (scripts/check.sh).
 */
#define HW_TEST_TIMEOUT 3600

FIXTURE(hw) {
	struct cgcount *s;
	char root[CGTEST_PATH_MAX], a[CGTEST_PATH_MAX], b[CGTEST_PATH_MAX];
	char c[CGTEST_PATH_MAX], idle[CGTEST_PATH_MAX];
};

FIXTURE_VARIANT(hw) {
	enum cgcount_backend backend;
};

FIXTURE_VARIANT_ADD(hw, events) { .backend = CGCOUNT_EVENTS };
FIXTURE_VARIANT_ADD(hw, shared) { .backend = CGCOUNT_SHARED };
FIXTURE_VARIANT_ADD(hw, rstat) { .backend = CGCOUNT_RSTAT };

/* a, a/b, a/c, idle below a private test root; each test opens its session */
FIXTURE_SETUP(hw)
{
	if (!backend_expected(variant->backend))
		SKIP(return, "%s: not in HW_BACKENDS", cgcount_backend_name(variant->backend));
	require_one_cpu(_metadata);
	ASSERT_EQ(0, cgtest_create_test_root(self->root, "hw"));
	ASSERT_EQ(0, cgtest_create(self->a, self->root, "a"));
	ASSERT_EQ(0, cgtest_create(self->b, self->a, "b"));
	ASSERT_EQ(0, cgtest_create(self->c, self->a, "c"));
	ASSERT_EQ(0, cgtest_create(self->idle, self->root, "idle"));
}

FIXTURE_TEARDOWN(hw)
{
	cgcount_close(self->s);
	if (self->root[0])
		cgtest_destroy_tree(self->root);
}

static void open_session(struct __test_metadata *_metadata, FIXTURE_DATA(hw) *self,
			 enum cgcount_backend b, const char *events)
{
	ASSERT_EQ(0, wait_counters_free()) TH_LOG("the PMU's counters stay taken");
	self->s = open_backend(b, events);
	ASSERT_NE(NULL, self->s) TH_LOG("%s", last_msg);
	ASSERT_EQ(b, cgcount_backend(self->s));
}

static void add(struct __test_metadata *_metadata, struct cgcount *s, const char *cg)
{
	ASSERT_EQ(0, cgcount_add_path(s, cg)) TH_LOG("%s: %s", cg, last_msg);
}

static void read_cg(struct __test_metadata *_metadata, struct cgcount *s, const char *cg,
		    struct cgcount_value *v)
{
	ASSERT_EQ(0, cgcount_read_path(s, cg, v, MAX_VALUES)) TH_LOG("%s: %s", cg, last_msg);
}

static void expect_loop_count(struct __test_metadata *_metadata, const char *what,
			      uint64_t counted, uint64_t iterations)
{
	EXPECT_EQ(2 * iterations + LOOP_EXTRA, counted)
		TH_LOG("%s: instructions:u %" PRIu64 " for %" PRIu64 " iterations (2N%+" PRId64 ")",
		       what, counted, iterations, (int64_t)(counted - 2 * iterations));
}

/*
 * The virtual clock advances 1 ns per guest instruction and the cycle
 * counter with it: a cgroup's cycles are its tasks' run time in ns.  They
 * differ by what runs between the two reads at each cgroup switch (a few
 * hundred instructions of the switch path) and by the clock's granularity
 * (the generic timer's 16 ns at 62.5 MHz).  cycles - cpu-clock measured on
 * 6.1, 6.12 and 7.3: -1 to -25 us for 6-12 ms of loops (events backend
 * -6 to -25 us, shared -0.1 to -0.3 us, rstat -1 to -12 ns), -49 to -117
 * us for 4.57 s (25 ppm).  0.5 % + 50 us bounds it with a margin of 4 and
 * more.
 */
#define CYCLES_SLACK_NS		50000
#define CYCLES_SLACK_PCT	0.5

static void expect_cycles_match_clock(struct __test_metadata *_metadata, const char *what,
				      const struct cgcount_value *cycles,
				      const struct cgcount_value *clock)
{
	double diff = (double)cycles->value - (double)clock->value;
	double bound = CYCLES_SLACK_NS + clock->value * CYCLES_SLACK_PCT / 100;

	EXPECT_LT(0, clock->value);
	EXPECT_GE(bound, diff < 0 ? -diff : diff)
		TH_LOG("%s: cycles %" PRIu64 ", cpu-clock %" PRIu64 " ns (%+.0f)", what,
		       cycles->value, clock->value, diff);
	TH_LOG("%s: cycles - cpu-clock = %+.0f", what, diff);
}

/* the loops run in a, a/b and a/c, each added first: N_A, N_B, N_C iterations */
#define N_A	1000000
#define N_B	3000000
#define N_C	2000000

static void loops_in_a_b_c(struct __test_metadata *_metadata, FIXTURE_DATA(hw) *self,
			   struct cgcount_value *va, struct cgcount_value *vb,
			   struct cgcount_value *vc)
{
	add(_metadata, self->s, self->a);
	add(_metadata, self->s, self->b);
	add(_metadata, self->s, self->c);
	ASSERT_EQ(0, run_loop_in(self->a, N_A));
	ASSERT_EQ(0, run_loop_in(self->b, N_B));
	ASSERT_EQ(0, run_loop_in(self->c, N_C));
	read_cg(_metadata, self->s, self->a, va);
	read_cg(_metadata, self->s, self->b, vb);
	read_cg(_metadata, self->s, self->c, vc);
}

#define EV_INSN		0
#define EV_CYCLES	1
#define EV_CLOCK	2
#define EV_CYCLES_U	3

/*
 * Exact instructions:u per cgroup, the parent's the sum of its own tasks'
 * and its children's; cycles:u the same number (one cycle per instruction);
 * cycles the cgroup's cpu-clock; a second read the same counts; a counted
 * cgroup where nothing ran reads as not counted (running 0, scaled 0).
 */
TEST_F_TIMEOUT(hw, instructions_exact_parent_sums_children, HW_TEST_TIMEOUT)
{
	const uint64_t n_a = N_A, n_b = N_B, n_c = N_C;
	struct cgcount_value va[MAX_VALUES], vb[MAX_VALUES], vc[MAX_VALUES], vi[MAX_VALUES];
	int e;

	open_session(_metadata, self, variant->backend, "instructions:u,cycles,cpu-clock,cycles:u");
	add(_metadata, self->s, self->idle);
	loops_in_a_b_c(_metadata, self, va, vb, vc);

	/* reading disturbs nothing: nothing ran since, the same counts */
	read_cg(_metadata, self->s, self->b, vi);
	EXPECT_EQ(0, memcmp(vb, vi, 4 * sizeof(vb[0])))
		TH_LOG("a/b read twice: instructions:u %" PRIu64 ", then %" PRIu64,
		       vb[EV_INSN].value, vi[EV_INSN].value);
	read_cg(_metadata, self->s, self->idle, vi);
	/* -icount shift=0: one cycle per instruction, in user mode too */
	EXPECT_EQ(vb[EV_INSN].value, vb[EV_CYCLES_U].value);
	EXPECT_EQ(vc[EV_INSN].value, vc[EV_CYCLES_U].value);
	EXPECT_EQ(va[EV_INSN].value, va[EV_CYCLES_U].value);
	expect_loop_count(_metadata, "a/b", vb[EV_INSN].value, n_b);
	expect_loop_count(_metadata, "a/c", vc[EV_INSN].value, n_c);
	/* a's own task, then a == own + b + c, exactly */
	expect_loop_count(_metadata, "a without a/b and a/c",
			  va[EV_INSN].value - vb[EV_INSN].value - vc[EV_INSN].value, n_a);
	expect_cycles_match_clock(_metadata, "a/b", &vb[EV_CYCLES], &vb[EV_CLOCK]);
	expect_cycles_match_clock(_metadata, "a/c", &vc[EV_CYCLES], &vc[EV_CLOCK]);
	expect_cycles_match_clock(_metadata, "a", &va[EV_CYCLES], &va[EV_CLOCK]);
	for (e = 0; e < 4; e++) {
		/*
		 * 6 hardware events (a's and a/b's) for 7 counters: never
		 * multiplexed (cpu-clock's times differ by a few us on 6.1)
		 */
		EXPECT_TRUE(e == EV_CLOCK || vb[e].enabled == vb[e].running)
			TH_LOG("a/b event %d multiplexed", e);
		EXPECT_TRUE(e == EV_CLOCK || va[e].enabled == va[e].running)
			TH_LOG("a event %d multiplexed", e);
		EXPECT_EQ(0, vi[e].value);
		EXPECT_EQ(0, vi[e].running);
		EXPECT_EQ(0, cgcount_scaled(&vi[e]));
	}
}

/* a/b's event @e, multiplexed, counted a loop of @n: scaled 2N within 5 % */
static void expect_multiplexed_loop(struct __test_metadata *_metadata, int e,
				    const struct cgcount_value *v, uint64_t n)
{
	TH_LOG("event %d: %" PRIu64 " running %" PRIu64 " of %" PRIu64 " ns, scaled %.0f",
	       e, v->value, v->running, v->enabled, cgcount_scaled(v));
	EXPECT_LT(0, v->running);
	EXPECT_GT(v->enabled, v->running);
	EXPECT_TRUE(cgtest_within_pct(cgcount_scaled(v), 2.0 * n, 5))
		TH_LOG("a/b event %d scaled %.0f, truth %" PRIu64, e, cgcount_scaled(v), 2 * n);
}

/*
 * More instructions:u events than the general counters: each is
 * multiplexed (running < enabled), and scaled by enabled / running reads
 * the loop's 2N within 5 %.  N = 100,000,000: 200 ms of guest time, about
 * 50 rotations at the PMU's 4 ms perf_event_mux_interval_ms.
 */
TEST_F_TIMEOUT(hw, multiplexed_events_scale_to_the_truth, HW_TEST_TIMEOUT)
{
	const uint64_t n = 100000000;
	struct cgcount_value vb[MAX_VALUES], va[MAX_VALUES];
	char events[MUX_EVENTS * sizeof("instructions:u,")] = "";
	int e;

	for (e = 0; e < MUX_EVENTS; e++)
		strcat(strcat(events, e ? "," : ""), "instructions:u");
	open_session(_metadata, self, variant->backend, events);
	add(_metadata, self->s, self->a);
	add(_metadata, self->s, self->b);
	ASSERT_EQ(0, run_loop_in(self->b, n));
	read_cg(_metadata, self->s, self->b, vb);
	read_cg(_metadata, self->s, self->a, va);
	for (e = 0; e < MUX_EVENTS; e++) {
		expect_multiplexed_loop(_metadata, e, &vb[e], n);
		EXPECT_TRUE(cgtest_within_pct(cgcount_scaled(&va[e]), 2.0 * n, 5))
			TH_LOG("a event %d scaled %.0f, truth %" PRIu64,
			       e, cgcount_scaled(&va[e]), 2 * n);
	}
}

/* members [first, first + n) of a group: one enabled and one running time */
static void expect_one_time(struct __test_metadata *_metadata, const char *what,
			    const struct cgcount_value *v, int first, int n)
{
	int e;

	for (e = first + 1; e < first + n; e++) {
		EXPECT_EQ(v[first].enabled, v[e].enabled)
			TH_LOG("%s: member %d enabled %" PRIu64 ", the leader %" PRIu64, what,
			       e - first, v[e].enabled, v[first].enabled);
		EXPECT_EQ(v[first].running, v[e].running)
			TH_LOG("%s: member %d running %" PRIu64 ", the leader %" PRIu64, what,
			       e - first, v[e].running, v[first].running);
	}
}

#define GR_INSN		0
#define GR_CYCLES_U	1
#define GR_CLOCK	2
#define GR_CYCLES	3

/*
 * A group of the event list beside events alone: {instructions:u,cycles:u}
 * counts each cgroup's loops exactly (2N + 3, cycles:u the same number),
 * its members with one enabled and one running time, never multiplexed
 * (3 hardware events per cgroup, 6 of the 7 counters while a/b runs); the
 * parent a the sum of its own task's and its children's; cycles alone the
 * cgroup's cpu-clock.
 */
TEST_F_TIMEOUT(hw, group_counts_per_cgroup, HW_TEST_TIMEOUT)
{
	const uint64_t n_a = N_A, n_b = N_B, n_c = N_C;
	struct cgcount_value va[MAX_VALUES], vb[MAX_VALUES], vc[MAX_VALUES];

	open_session(_metadata, self, variant->backend, "{instructions:u,cycles:u},cpu-clock,cycles");
	ASSERT_EQ(4, cgcount_nr_events(self->s));
	EXPECT_STREQ("cycles:u", cgcount_event_name(self->s, GR_CYCLES_U));
	loops_in_a_b_c(_metadata, self, va, vb, vc);
	TH_LOG("a/b: instructions:u %" PRIu64 " cycles:u %" PRIu64 ", enabled %" PRIu64
	       " running %" PRIu64 " and %" PRIu64 " %" PRIu64, vb[GR_INSN].value,
	       vb[GR_CYCLES_U].value, vb[GR_INSN].enabled, vb[GR_INSN].running,
	       vb[GR_CYCLES_U].enabled, vb[GR_CYCLES_U].running);
	expect_loop_count(_metadata, "a/b", vb[GR_INSN].value, n_b);
	expect_loop_count(_metadata, "a/c", vc[GR_INSN].value, n_c);
	expect_loop_count(_metadata, "a without a/b and a/c",
			  va[GR_INSN].value - vb[GR_INSN].value - vc[GR_INSN].value, n_a);
	EXPECT_EQ(vb[GR_INSN].value, vb[GR_CYCLES_U].value);
	EXPECT_EQ(vc[GR_INSN].value, vc[GR_CYCLES_U].value);
	EXPECT_EQ(va[GR_INSN].value, va[GR_CYCLES_U].value);
	expect_one_time(_metadata, "a/b", vb, GR_INSN, 2);
	expect_one_time(_metadata, "a/c", vc, GR_INSN, 2);
	expect_one_time(_metadata, "a", va, GR_INSN, 2);
	EXPECT_EQ(vb[GR_INSN].enabled, vb[GR_INSN].running);
	EXPECT_EQ(va[GR_INSN].enabled, va[GR_INSN].running);
	expect_cycles_match_clock(_metadata, "a/b", &vb[GR_CYCLES], &vb[GR_CLOCK]);
	expect_cycles_match_clock(_metadata, "a", &va[GR_CYCLES], &va[GR_CLOCK]);
}

#define MUX_GROUPS	4	/* 4 x {instructions:u,cycles:u}: 8 events, 7 counters */

/*
 * Groups multiplexed with each other: 4 groups of 2 for 7 counters, 3 of
 * them at a time.  Each member ran (running > 0) less than it was enabled,
 * a group's members for the same times, and each scaled by enabled /
 * running reads the loop's 2N within 5 % (cycles:u: one per instruction).
 */
TEST_F_TIMEOUT(hw, groups_multiplexed_scale_to_the_truth, HW_TEST_TIMEOUT)
{
	const uint64_t n = 100000000;
	struct cgcount_value vb[MAX_VALUES];
	char events[MUX_GROUPS * sizeof("{instructions:u,cycles:u},")] = "";
	int g, e;

	for (g = 0; g < MUX_GROUPS; g++)
		strcat(strcat(events, g ? "," : ""), "{instructions:u,cycles:u}");
	open_session(_metadata, self, variant->backend, events);
	ASSERT_EQ(2 * MUX_GROUPS, cgcount_nr_events(self->s));
	add(_metadata, self->s, self->b);
	ASSERT_EQ(0, run_loop_in(self->b, n));
	read_cg(_metadata, self->s, self->b, vb);
	for (e = 0; e < 2 * MUX_GROUPS; e++)
		expect_multiplexed_loop(_metadata, e, &vb[e], n);
	for (g = 0; g < MUX_GROUPS; g++)
		expect_one_time(_metadata, "a/b", vb, 2 * g, 2);
}

#define BIG_GROUP	(1 + NR_GENERAL_COUNTERS)	/* cycles + 6 instructions:u */

/* "{cycles,instructions:u,...}" with @n instructions:u */
static void big_group(char *buf, size_t len, int n)
{
	int i;

	snprintf(buf, len, "{cycles");
	for (i = 0; i < n; i++)
		strncat(buf, ",instructions:u", len - strlen(buf) - 1);
	strncat(buf, "}", len - strlen(buf) - 1);
}

/*
 * A group the PMU can never hold, cycles and 7 instructions:u for the cycle
 * counter and 6 general counters, is refused when opened (the arm PMU driver checks that a group fits, on
 * every kernel: EINVAL), the message naming the group.  A group that fits
 * the PMU but never gets it, cycles and 6 instructions:u while a pinned
 * event of this test holds a general counter, reads as not counted:
 * running 0, value 0, scaled 0, for every member, while it was enabled;
 * the event alone beside it counts.
 */
TEST_F_TIMEOUT(hw, unschedulable_group_is_not_counted, HW_TEST_TIMEOUT)
{
	struct perf_event_attr pin = {
		.type = PERF_TYPE_HARDWARE, .size = sizeof(pin),
		.config = PERF_COUNT_HW_INSTRUCTIONS, .exclude_kernel = 1, .pinned = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	char events[(BIG_GROUP + 2) * sizeof(",instructions:u") + sizeof(",cpu-clock")];
	struct cgcount_value vb[MAX_VALUES];
	uint64_t pinned[3] = { 0 };
	int e, fd;

	ASSERT_EQ(0, wait_counters_free()) TH_LOG("the PMU's counters stay taken");
	big_group(events, sizeof(events), NR_GENERAL_COUNTERS + 1);
	self->s = open_backend(variant->backend, events);
	EXPECT_EQ(NULL, self->s);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(NULL, strstr(last_msg, "{cycles,instructions:u,")) TH_LOG("%s", last_msg);
	TH_LOG("%s", last_msg);

	fd = cgutil_perf_open(&pin, -1, 0, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("pinned instructions:u: %s", strerror(-fd));
	big_group(events, sizeof(events), NR_GENERAL_COUNTERS);
	strcat(events, ",cpu-clock");
	self->s = open_backend(variant->backend, events);
	ASSERT_NE(NULL, self->s) TH_LOG("%s", last_msg);
	add(_metadata, self->s, self->b);
	ASSERT_EQ(0, run_loop_in(self->b, 1000000));
	read_cg(_metadata, self->s, self->b, vb);
	ASSERT_EQ(sizeof(pinned), read(fd, pinned, sizeof(pinned)));
	close(fd);
	/* the pinned event had its counter all along */
	EXPECT_LT(2000000, pinned[0]);
	EXPECT_EQ(pinned[1], pinned[2]);
	for (e = 0; e < BIG_GROUP; e++) {
		TH_LOG("member %d: %" PRIu64 ", running %" PRIu64 " of %" PRIu64 " ns", e,
		       vb[e].value, vb[e].running, vb[e].enabled);
		EXPECT_LT(0, vb[e].enabled);
		EXPECT_EQ(0, vb[e].running);
		EXPECT_EQ(0, vb[e].value);
		EXPECT_EQ(0, cgcount_scaled(&vb[e]));
	}
	EXPECT_LT(0, vb[BIG_GROUP].value);
	EXPECT_LT(0, vb[BIG_GROUP].running);
}

/*
 * Counting across 2^32.  QEMU's -cpu max implements PMUv3p5: the driver
 * sets PMCR_EL0.LP and the event counters are 64 bits wide (a group of four
 * config1 "long" events counts, which chained in pairs would need 8 of the
 * 6 counters).  An event without "long" is still 32 bits wide for the
 * driver (arm_pmu_event_max_period()): it biases the counter's upper half
 * so that it overflows after 2^32 (armv8pmu_bias_long_counter()), and
 * reprograms it at each overflow interrupt, every 2^31 counts (the half
 * period), accumulating into the event's 64-bit count.  4.56e9
 * instructions cross 2^32 and take two such interrupts per counter; the
 * counts stay exact.  (QEMU's -cpu cortex-a72, a PMUv3 without v3p5,
 * has 32-bit counters, where "long" events chain pairs of counters: this
 * test passes there too.)  Every backend the kernel has counts the same run
 * at once (3 instruction counters, no multiplexing): the guest runs the
 * loop once (15 s of host time).
 */
TEST(overflow_counts_exactly_across_2_32)
{
	static const enum cgcount_backend backends[] = {
		CGCOUNT_EVENTS, CGCOUNT_SHARED, CGCOUNT_RSTAT,
	};
	const uint64_t n = (1ULL << 31) + (1ULL << 27);
	struct cgcount *s[3] = { NULL };
	struct cgcount_value v[MAX_VALUES];
	char root[CGTEST_PATH_MAX], cg[CGTEST_PATH_MAX];
	size_t i;

	require_one_cpu(_metadata);
	ASSERT_EQ(0, cgtest_create_test_root(root, "hw-wrap"));
	ASSERT_EQ(0, cgtest_create(cg, root, "loop"));
	ASSERT_EQ(0, wait_counters_free()) TH_LOG("the PMU's counters stay taken");
	for (i = 0; i < 3; i++) {
		if (!backend_expected(backends[i]))
			continue;
		s[i] = open_backend(backends[i], "instructions:u,cycles,cpu-clock");
		ASSERT_NE(NULL, s[i]) TH_LOG("%s", last_msg);
		add(_metadata, s[i], cg);
	}
	ASSERT_EQ(0, run_loop_in(cg, n));
	for (i = 0; i < 3; i++) {
		if (!s[i])
			continue;
		read_cg(_metadata, s[i], cg, v);
		TH_LOG("%s: instructions:u %" PRIu64 " cycles %" PRIu64 " cpu-clock %" PRIu64,
		       cgcount_backend_name(backends[i]), v[EV_INSN].value,
		       v[EV_CYCLES].value, v[EV_CLOCK].value);
		expect_loop_count(_metadata, cgcount_backend_name(backends[i]),
				  v[EV_INSN].value, n);
		expect_cycles_match_clock(_metadata, cgcount_backend_name(backends[i]),
					  &v[EV_CYCLES], &v[EV_CLOCK]);
		cgcount_close(s[i]);
	}
	cgtest_destroy_tree(root);
}

TEST_HARNESS_MAIN
