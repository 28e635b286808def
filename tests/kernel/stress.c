// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized stress of the multi-cgroup perf event ioctls.
 *
 * NR_THREADS threads each pick one of NR_SLOTS shared event slots at random
 * and, holding the slot's lock, open an event there (cpu-clock on a random
 * cpu; half of the time a group with a context-switches sibling; a random
 * read_format; sometimes left disabled) or run a random operation on it:
 * ATTACH or DETACH of a random number of ids (live, attached, removed and
 * never-existing ones, duplicates, a bad nr), READ_CGROUP and READ_CGROUPS
 * with random buffer sizes (too small: ENOSPC with the size needed, then the
 * retry with that size), RESET, ENABLE, DISABLE (alone or with
 * PERF_IOC_FLAG_GROUP), closing the sibling, closing the event. One more
 * thread keeps an event of its own attached with PERF_ATTACH_CGROUPS_DESCENDANTS
 * to the root or a random cgroup (or a removed one: ENOENT), reads it
 * (detaching removed cgroups), detaches the root and closes the event; after
 * each attach of the root, every cgroup of the tree must be listed. Meanwhile
 * NR_HOPPERS processes hop between the cgroups of a 4-level tree and between
 * the cpus, busy or asleep; one thread removes and creates the cgroups, one
 * takes cpu1 offline and back online.
 *
 * Each slot keeps a model of its event (the ids attached, since when, the
 * values last read), so most outcomes are exact: DETACH succeeds iff every
 * id is attached; ATTACH of a removed or never-existing id fails; a read
 * fails iff its buffer is too small and then reports the size needed; the
 * kernel writes nothing past what it returns; READ_CGROUPS lists exactly
 * the attached ids; values and times never go back (RESET leaves the cgroup
 * counts alone), cpu-clock never exceeds the time since the ATTACH. Every
 * other call must succeed or fail with an errno the race explains (each is
 * documented where it is allowed). The first unexpected outcome fails the
 * test; the runner fails it on any kernel splat (lockdep, KASAN, WARN) and
 * its kmemleak test reports leaks. Afterwards one more event must still count
 * a busy cgroup right.
 *
 * PCG_STRESS_SECONDS sets the duration (default 20); the harness's limit
 * follows it. Every random choice comes from one seed, printed at the start
 * ("seed N"): PCG_STRESS_SEED=N makes each thread and process make the same
 * choices again (the interleaving of the threads, and so the outcomes of
 * the races, is the scheduler's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtest.h"
#include "harness.h"
#include "pcg_test.h"

#define NR_CGROUPS	100	/* c0..c3 under the root, c<i> under c<i/4-1> */
#define NR_SLOTS	8
#define NR_THREADS	4
#define NR_HOPPERS	4
#define MAX_ATTACHED	96	/* ids one slot's event has attached at most */
#define MAX_REQUEST	24	/* ids in one ATTACH or DETACH */
#define NR_DEAD		32	/* ids of removed cgroups remembered */
#define MAX_MEMBERS	2	/* cpu-clock leader + context-switches sibling */
#define MAX_WORDS	(1 + 2 + 2 * MAX_MEMBERS)	/* one cgroup's values */
#define READ_CAP	(3 + MAX_ATTACHED * (1 + MAX_WORDS) + 16)
#define HOT_CPU		1
#define HOT_CPU_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define BOGUS_ID	0xdead000000000000ULL	/* never a cgroup id */
#define CANARY		0xa5
#define SLACK_SECONDS	180	/* setup, the final check and teardown */

enum op {
	OP_OPEN, OP_OPEN_SIBLING, OP_ATTACH, OP_DETACH, OP_READ, OP_READ_ALL,
	OP_RESET, OP_ENABLE, OP_DISABLE, OP_CLOSE_SIBLING, OP_CLOSE,
	OP_RMDIR, OP_MKDIR, OP_MOVE, OP_AFFINITY, OP_OFFLINE, OP_ONLINE,
	OP_WATCH, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"open", "open sibling", "attach", "detach", "read_cgroup",
	"read_cgroups", "reset", "enable", "disable", "close sibling", "close",
	"rmdir", "mkdir", "move task", "set affinity", "cpu1 offline",
	"cpu1 online", "attach descendants",
};

enum res { RES_OK, RES_ENOENT, RES_ENOSPC, RES_EINVAL, RES_EBUSY, RES_ENODEV, RES_OTHER, NR_RES };

static const int res_errno[NR_RES] = { 0, ENOENT, ENOSPC, EINVAL, EBUSY, ENODEV, 0 };
static const char *const res_name[NR_RES] = {
	"ok", "ENOENT", "ENOSPC", "EINVAL", "EBUSY", "ENODEV", "other",
};

#define ALLOW(r)	(1u << (r))

/* One cgroup's values, parsed from the read_format layout. */
struct values {
	uint64_t nr, enabled, running;
	uint64_t value[MAX_MEMBERS], id[MAX_MEMBERS];
};

struct attached {
	uint64_t id;
	uint64_t since;		/* cgtest_now_ns() before its first ATTACH */
	struct values last;	/* as last read */
};

/* An event slot and the model of its event; all under lock. */
struct slot {
	pthread_mutex_t lock;
	int fd, sib;		/* -1 when closed */
	int cpu;
	uint64_t read_format;
	uint64_t event_id[MAX_MEMBERS];	/* PERF_EVENT_IOC_ID */
	bool attached_once;	/* the group layout is fixed */
	int layout_max;		/* members at the first ATTACH */
	int members;		/* the layout's, 0 until a read tells */
	int nr;
	struct attached att[MAX_ATTACHED];
};

struct stress {
	char root[CGTEST_PATH_MAX];
	uint64_t root_id;
	uint64_t ids[NR_CGROUPS];	/* current id of c<i>, 0 while absent */
	uint64_t dead[NR_DEAD];		/* ids of removed cgroups, a ring */
	unsigned int nr_dead;
	uint64_t deadline;
	int nr_cpus;
	bool hotplug;			/* cpu1 can go offline */
	uint64_t count[NR_OPS][NR_RES];
	struct slot slots[NR_SLOTS];
	/* every random choice derives from it (PCG_STRESS_SEED replays it) */
	unsigned int seed;
	unsigned int event_threads;	/* started: each its own stream */
	/* the first unexpected outcome */
	int bad;
	char bad_what[256];
};

static void __attribute__((format(printf, 2, 3)))
unexpected(struct stress *s, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&s->bad, 1, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(s->bad_what, sizeof(s->bad_what), fmt, ap);
	va_end(ap);
}

static enum res res_of(int ret)
{
	int r;

	if (ret >= 0)
		return RES_OK;
	for (r = RES_ENOENT; r < RES_OTHER; r++) {
		if (-ret == res_errno[r])
			return r;
	}
	return RES_OTHER;
}

/*
 * Count the outcome of a call (ret: >= 0 or -errno); one not in allowed is
 * unexpected. what says what the model expected.
 */
static enum res outcome(struct stress *s, enum op op, int ret,
			unsigned int allowed, const char *what)
{
	enum res r = res_of(ret);

	__atomic_add_fetch(&s->count[op][r], 1, __ATOMIC_RELAXED);
	if (!(allowed & ALLOW(r)))
		unexpected(s, "%s%s: %s", op_name[op], what,
			   ret < 0 ? strerrorname_np(-ret) : "succeeded");
	return r;
}

static bool done(struct stress *s)
{
	return __atomic_load_n(&s->bad, __ATOMIC_RELAXED) ||
	       cgtest_now_ns() >= s->deadline;
}

static uint64_t stress_seconds(void)
{
	const char *env = getenv("PCG_STRESS_SECONDS");

	return env ? strtoull(env, NULL, 10) : 20;
}

/* PCG_STRESS_SEED, or a new seed: printed, so that a failed run replays */
static unsigned int stress_seed(void)
{
	const char *env = getenv("PCG_STRESS_SEED");

	if (env && *env)
		return strtoul(env, NULL, 0);
	return cgtest_now_ns() ^ getpid();
}

/* The seed of one thread or process of the test: @stream names it */
enum stream { STREAM_CHURN = 1, STREAM_WATCH, STREAM_HOTPLUG, STREAM_HOPPER,
	      STREAM_EVENTS = STREAM_HOPPER + NR_HOPPERS };

static unsigned int stream_seed(const struct stress *s, unsigned int stream)
{
	return s->seed ^ (stream * 0x9e3779b9u);
}

/* ---- the cgroup tree ---- */

static int cg_parent(int i)
{
	return i < 4 ? -1 : i / 4 - 1;
}

static void cg_path(const struct stress *s, int i, char *out)
{
	char parent[CGTEST_PATH_MAX];

	if (cg_parent(i) < 0) {
		snprintf(out, CGTEST_PATH_MAX, "%.400s/c%d", s->root, i);
		return;
	}
	cg_path(s, cg_parent(i), parent);
	snprintf(out, CGTEST_PATH_MAX, "%.450s/c%d", parent, i);
}

static uint64_t cg_id(struct stress *s, int i)
{
	return __atomic_load_n(&s->ids[i], __ATOMIC_ACQUIRE);
}

static uint64_t live_id(struct stress *s, unsigned int *seed)
{
	int tries;

	for (tries = 0; tries < 8; tries++) {
		uint64_t id = cg_id(s, rand_r(seed) % NR_CGROUPS);

		if (id)
			return id;
	}
	return s->root_id;
}

/* The id of a removed cgroup (surely not live), else a never-existing one. */
static uint64_t dead_id(struct stress *s, unsigned int *seed)
{
	unsigned int n = __atomic_load_n(&s->nr_dead, __ATOMIC_ACQUIRE);

	if (!n || !(rand_r(seed) % 4))
		return BOGUS_ID | rand_r(seed);
	n = n < NR_DEAD ? n : NR_DEAD;
	return __atomic_load_n(&s->dead[rand_r(seed) % n], __ATOMIC_RELAXED);
}

static void remember_dead(struct stress *s, uint64_t id)
{
	unsigned int n = __atomic_load_n(&s->nr_dead, __ATOMIC_RELAXED);

	__atomic_store_n(&s->dead[n % NR_DEAD], id, __ATOMIC_RELAXED);
	__atomic_store_n(&s->nr_dead, n + 1, __ATOMIC_RELEASE);
}

/* ---- the model of a slot's event ---- */

static struct attached *find_attached(struct slot *sl, uint64_t id)
{
	int i;

	for (i = 0; i < sl->nr; i++) {
		if (sl->att[i].id == id)
			return &sl->att[i];
	}
	return NULL;
}

static void model_attach(struct slot *sl, const uint64_t *ids, int n,
			 uint64_t since)
{
	int i;

	for (i = 0; i < n; i++) {
		if (find_attached(sl, ids[i]))
			continue;
		memset(&sl->att[sl->nr], 0, sizeof(sl->att[0]));
		sl->att[sl->nr].id = ids[i];
		sl->att[sl->nr++].since = since;
	}
	if (!sl->attached_once) {
		sl->attached_once = true;
		sl->layout_max = sl->sib >= 0 ? 2 : 1;
	}
}

static void model_detach(struct slot *sl, const uint64_t *ids, int n)
{
	struct attached *a;
	int i;

	for (i = 0; i < n; i++) {
		a = find_attached(sl, ids[i]);
		if (a)
			*a = sl->att[--sl->nr];
	}
}

/*
 * A live id not attached, a removed one (a removed cgroup stays attached
 * until detached: not one of this event's) or a never-existing one.
 */
static uint64_t unattached_id(struct stress *s, struct slot *sl,
			      unsigned int *seed)
{
	uint64_t id;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		id = rand_r(seed) % 2 ? live_id(s, seed) : dead_id(s, seed);
		if (!find_attached(sl, id))
			return id;
	}
	return BOGUS_ID;
}

static bool is_group(const struct slot *sl)
{
	return sl->read_format & PERF_FORMAT_GROUP;
}

/* u64s of one cgroup's values for a layout of members. */
static int values_words(uint64_t read_format, int members)
{
	int per = 1 + !!(read_format & PERF_FORMAT_ID);
	int words = read_format & PERF_FORMAT_GROUP ? 1 + members * per : per;

	return words + !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
	       !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
}

/* The words expected, or a guess (the largest layout) before a read told. */
static int expected_words(const struct slot *sl)
{
	return values_words(sl->read_format,
			    sl->members ? sl->members : MAX_MEMBERS);
}

/*
 * A read's size tells the group layout: 1 or 2 members (a group broken by
 * cpu1 going offline before its first ATTACH has one). Later reads must
 * agree.
 */
static bool learn_layout(struct stress *s, struct slot *sl, int words,
			 const char *what)
{
	int m;

	if (sl->members) {
		if (words == values_words(sl->read_format, sl->members))
			return true;
	} else {
		for (m = 1; m <= sl->layout_max; m++) {
			if (words == values_words(sl->read_format, m)) {
				sl->members = m;
				return true;
			}
		}
	}
	unexpected(s, "%s: %d words for read_format %#llx, %d members", what,
		   words, (unsigned long long)sl->read_format, sl->members);
	return false;
}

static void parse_values(const struct slot *sl, const uint64_t *w,
			 struct values *v)
{
	uint64_t rf = sl->read_format;
	int m;

	memset(v, 0, sizeof(*v));
	if (is_group(sl))
		v->nr = *w++;
	else
		v->value[0] = *w++;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		v->enabled = *w++;
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		v->running = *w++;
	if (!is_group(sl)) {
		if (rf & PERF_FORMAT_ID)
			v->id[0] = *w;
		return;
	}
	for (m = 0; m < sl->members; m++) {
		v->value[m] = *w++;
		if (rf & PERF_FORMAT_ID)
			v->id[m] = *w++;
	}
}

static bool went_back(struct stress *s, const char *what, uint64_t id,
		      const char *field, uint64_t was, uint64_t now)
{
	if (now >= was)
		return false;
	unexpected(s, "%s: cgroup %llu's %s went back from %llu to %llu", what,
		   (unsigned long long)id, field, (unsigned long long)was,
		   (unsigned long long)now);
	return true;
}

/*
 * Values and times only grow; cpu-clock (member 0) and time_enabled never
 * exceed the time since the ATTACH (10% + 50 ms for the two clocks).
 */
static void check_counts(struct stress *s, const struct slot *sl,
			 const struct attached *a, const struct values *v,
			 const char *what)
{
	uint64_t elapsed = cgtest_now_ns() - a->since;
	uint64_t bound = elapsed + elapsed / 10 + 50 * NSEC_PER_MSEC;
	int m, members = is_group(sl) ? sl->members : 1;

	for (m = 0; m < members; m++) {
		if (went_back(s, what, a->id, "value", a->last.value[m],
			      v->value[m]))
			return;
	}
	if (went_back(s, what, a->id, "time_enabled", a->last.enabled,
		      v->enabled) ||
	    went_back(s, what, a->id, "time_running", a->last.running,
		      v->running))
		return;
	if (v->running > v->enabled &&
	    (sl->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
	    (sl->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING))
		unexpected(s, "%s: cgroup %llu ran %llu ns, enabled %llu", what,
			   (unsigned long long)a->id,
			   (unsigned long long)v->running,
			   (unsigned long long)v->enabled);
	else if (v->value[0] > bound || v->enabled > bound)
		unexpected(s, "%s: cgroup %llu counted %llu ns (enabled %llu) in %llu ns",
			   what, (unsigned long long)a->id,
			   (unsigned long long)v->value[0],
			   (unsigned long long)v->enabled,
			   (unsigned long long)elapsed);
}

/* nr is the layout's, and each member's id that of its event. */
static void check_ids(struct stress *s, const struct slot *sl,
		      const struct values *v, const char *what)
{
	int m, members = is_group(sl) ? sl->members : 1;

	if (is_group(sl) && v->nr != (uint64_t)sl->members)
		unexpected(s, "%s: nr %llu in a layout of %d", what,
			   (unsigned long long)v->nr, sl->members);
	if (!(sl->read_format & PERF_FORMAT_ID))
		return;
	for (m = 0; m < members; m++) {
		if (v->id[m] != sl->event_id[m])
			unexpected(s, "%s: member %d's id %llu, its event's %llu",
				   what, m, (unsigned long long)v->id[m],
				   (unsigned long long)sl->event_id[m]);
	}
}

static void check_values(struct stress *s, const struct slot *sl,
			 struct attached *a, const uint64_t *w,
			 const char *what)
{
	struct values v;

	parse_values(sl, w, &v);
	check_ids(s, sl, &v, what);
	check_counts(s, sl, a, &v, what);
	a->last = v;
}

/* ---- the ioctls, with a canary behind what the kernel may write ---- */

/* A random buffer size around need: below 16, too small, or enough. */
static size_t random_size(unsigned int *seed, size_t need)
{
	switch (rand_r(seed) % 8) {
	case 0:
		return rand_r(seed) % 16;
	case 1:
	case 2:
		return 16 + rand_r(seed) % (need - 16);
	default:
		return need + rand_r(seed) % 64;
	}
}


/* The ioctl's return value or -errno; the buffer is all canary past arg. */
static int read_ioctl(int fd, unsigned long cmd, uint64_t *buf, size_t size,
		      uint64_t arg)
{
	int ret;

	memset(buf, CANARY, READ_CAP * sizeof(*buf));
	buf[0] = size;
	buf[1] = arg;
	ret = ioctl(fd, cmd, buf);
	return ret < 0 ? -errno : ret;
}

/* Nothing written from byte from on (the kernel returned from - 16 bytes). */
static void check_canary(struct stress *s, const uint64_t *buf, size_t from,
			 const char *what)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t i;

	for (i = from; i < READ_CAP * sizeof(*buf); i++) {
		if (b[i] != CANARY) {
			unexpected(s, "%s: byte %zu written, %zu returned", what,
				   i, from - 16);
			return;
		}
	}
}

/* The bytes of a READ_CGROUP (values) tell the layout. */
static bool values_layout(struct stress *s, struct slot *sl, size_t bytes,
			  const char *what)
{
	if (bytes % 8) {
		unexpected(s, "%s: %zu bytes", what, bytes);
		return false;
	}
	return learn_layout(s, sl, bytes / 8, what);
}

/* The bytes of a READ_CGROUPS (nr, records) tell the layout. */
static bool records_layout(struct stress *s, struct slot *sl, size_t bytes,
			   const char *what)
{
	size_t nr = sl->nr;

	if (bytes < 8 || (bytes - 8) % 8 || (nr && (bytes - 8) % (8 * nr)) ||
	    (!nr && bytes != 8)) {
		unexpected(s, "%s: %zu bytes for %zu cgroups", what, bytes, nr);
		return false;
	}
	return !nr || learn_layout(s, sl, (bytes - 8) / (8 * nr) - 1, what);
}

/*
 * After a read: ENOSPC must report a larger size, a success must fit the
 * buffer; either tells the layout. Returns the bytes written (0 for
 * ENOSPC), -1 when the call failed otherwise or broke a rule.
 */
static int read_result(struct stress *s, struct slot *sl, enum op op,
		       const uint64_t *buf, size_t size, int ret)
{
	const char *what = op_name[op];
	bool (*layout)(struct stress *, struct slot *, size_t, const char *) =
		op == OP_READ ? values_layout : records_layout;
	enum res r = outcome(s, op, ret, ALLOW(RES_OK) | ALLOW(RES_ENOSPC),
			     " of attached ids");

	if (r == RES_ENOSPC) {
		check_canary(s, buf, 16, what);
		if (buf[0] <= size) {
			unexpected(s, "%s: ENOSPC asks %llu bytes, %zu given",
				   what, (unsigned long long)buf[0], size);
			return -1;
		}
		return layout(s, sl, buf[0] - 16, what) ? 0 : -1;
	}
	if (r != RES_OK)
		return -1;
	if (16 + (size_t)ret > size) {
		unexpected(s, "%s: %d bytes written into %zu", what, ret, size);
		return -1;
	}
	check_canary(s, buf, 16 + ret, what);
	return layout(s, sl, ret, what) ? ret : -1;
}

/*
 * READ_CGROUP with a random size, then the retry with the size ENOSPC
 * asked, which must succeed (nothing else uses this event meanwhile: the
 * slot is locked).
 */
static void read_attached(struct stress *s, struct slot *sl,
			  struct attached *a, uint64_t *buf, size_t size,
			  int ret)
{
	ret = read_result(s, sl, OP_READ, buf, size, ret);
	if (!ret) {
		size = buf[0];
		ret = read_ioctl(sl->fd, PERF_EVENT_IOC_READ_CGROUP, buf, size,
				 a->id);
		if (outcome(s, OP_READ, ret, ALLOW(RES_OK),
			    " with the size ENOSPC asked") != RES_OK)
			return;
		ret = read_result(s, sl, OP_READ, buf, size, ret);
	}
	if (ret > 0)
		check_values(s, sl, a, buf + 2, op_name[OP_READ]);
}

/*
 * READ_CGROUP of an attached id (three times in four) or of one not
 * attached. Exact: EINVAL iff size < 16, else ENOENT iff the id is not
 * attached, else ENOSPC iff the buffer is too small.
 */
static void op_read(struct stress *s, struct slot *sl, unsigned int *seed)
{
	uint64_t buf[READ_CAP], id;
	struct attached *a = NULL;
	size_t size;
	int ret;

	if (sl->nr && rand_r(seed) % 4) {
		a = &sl->att[rand_r(seed) % sl->nr];
		id = a->id;
	} else {
		id = unattached_id(s, sl, seed);
	}
	size = random_size(seed, 16 + 8 * expected_words(sl));
	ret = read_ioctl(sl->fd, PERF_EVENT_IOC_READ_CGROUP, buf, size, id);
	if (size < 16)
		outcome(s, OP_READ, ret, ALLOW(RES_EINVAL), " with size < 16");
	else if (!a)
		outcome(s, OP_READ, ret, ALLOW(RES_ENOENT),
			" of an id not attached");
	else
		read_attached(s, sl, a, buf, size, ret);
}

/* READ_CGROUPS lists exactly the attached ids, each once. */
static void check_records(struct stress *s, struct slot *sl,
			  const uint64_t *w, const char *what)
{
	int words = values_words(sl->read_format, sl->members), i;
	bool seen[MAX_ATTACHED] = { false };
	struct attached *a;

	if (*w++ != (uint64_t)sl->nr) {
		unexpected(s, "%s: nr %llu, %d attached", what,
			   (unsigned long long)w[-1], sl->nr);
		return;
	}
	for (i = 0; i < sl->nr; i++, w += 1 + words) {
		a = find_attached(sl, w[0]);
		if (!a || seen[a - sl->att]) {
			unexpected(s, "%s: cgroup %llu listed, not attached or twice",
				   what, (unsigned long long)w[0]);
			return;
		}
		seen[a - sl->att] = true;
		check_values(s, sl, a, w + 1, what);
	}
}

/*
 * READ_CGROUPS with a random size (now and then flags 2, a flag that does
 * not exist: bit 0, PERF_READ_CGROUPS_DETACH_REMOVED, would detach removed
 * cgroups behind the model's back). Exact: EINVAL iff size < 16 or flags,
 * else ENOSPC iff the buffer is too small; then the retry with the size
 * ENOSPC asked must succeed.
 */
static void op_read_all(struct stress *s, struct slot *sl, unsigned int *seed)
{
	const char *what = op_name[OP_READ_ALL];
	uint64_t buf[READ_CAP], flags = rand_r(seed) % 64 ? 0 : 2;
	size_t size = random_size(seed, 24 + 8 * sl->nr *
					(1 + expected_words(sl)));
	int ret;

	ret = read_ioctl(sl->fd, PERF_EVENT_IOC_READ_CGROUPS, buf, size, flags);
	if (size < 16 || flags) {
		outcome(s, OP_READ_ALL, ret, ALLOW(RES_EINVAL),
			" with size < 16 or flags");
		return;
	}
	ret = read_result(s, sl, OP_READ_ALL, buf, size, ret);
	if (!ret) {
		size = buf[0];
		ret = read_ioctl(sl->fd, PERF_EVENT_IOC_READ_CGROUPS, buf, size, 0);
		if (outcome(s, OP_READ_ALL, ret, ALLOW(RES_OK),
			    " with the size ENOSPC asked") != RES_OK)
			return;
		ret = read_result(s, sl, OP_READ_ALL, buf, size, ret);
	}
	if (ret > 0)
		check_records(s, sl, buf + 2, what);
}

/* nr 0 or PERF_CGROUP_ATTACH_MAX_NR + 1: EINVAL, before the ids are read. */
static void bad_nr(struct stress *s, struct slot *sl, unsigned int *seed,
		   enum op op, unsigned long cmd)
{
	uint64_t buf[2] = { rand_r(seed) % 2 ? 0 : PERF_CGROUP_ATTACH_MAX_NR + 1ULL,
			    s->root_id };

	outcome(s, op, ioctl(sl->fd, cmd, buf) ? -errno : 0, ALLOW(RES_EINVAL),
		" with nr 0 or above the maximum");
}

/* Mostly a few ids, sometimes up to MAX_REQUEST. */
static int request_size(unsigned int *seed)
{
	return 1 + rand_r(seed) % (rand_r(seed) % 2 ? 4 : MAX_REQUEST);
}

/*
 * Live ids, attached ones, duplicates, the test root; in one request in
 * five, one removed or never-existing id (returns true).
 */
static bool attach_ids(struct stress *s, struct slot *sl, unsigned int *seed,
		       uint64_t *ids, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		switch (rand_r(seed) % 16) {
		case 0:
			ids[i] = s->root_id;
			break;
		case 1:
		case 2:
			ids[i] = sl->nr ? sl->att[rand_r(seed) % sl->nr].id :
					  live_id(s, seed);
			break;
		case 3:
			ids[i] = i ? ids[rand_r(seed) % i] : live_id(s, seed);
			break;
		default:
			ids[i] = live_id(s, seed);
		}
	}
	if (rand_r(seed) % 5)
		return false;
	ids[rand_r(seed) % n] = dead_id(s, seed);
	return true;
}

static void detach_ids(struct stress *s, struct slot *sl, const uint64_t *ids,
		       int n, bool all_attached)
{
	int ret = pcg_detach(sl->fd, ids, n);

	if (!all_attached)
		outcome(s, OP_DETACH, ret, ALLOW(RES_ENOENT),
			" of an id not attached");
	else if (outcome(s, OP_DETACH, ret, ALLOW(RES_OK),
			 " of attached ids") == RES_OK)
		model_detach(sl, ids, n);
}

/* DETACH of every attached id in one call: must succeed. */
static void op_detach_all(struct stress *s, struct slot *sl,
			  unsigned int *seed)
{
	uint64_t ids[MAX_ATTACHED];
	int i;

	if (!sl->nr)
		return;
	for (i = 0; i < sl->nr; i++)
		ids[i] = sl->att[i].id;
	detach_ids(s, sl, ids, sl->nr, true);
}

/*
 * ATTACH of 1..MAX_REQUEST ids. With a removed or never-existing id it
 * must fail with ENOENT (and change nothing). Otherwise allowed: ENOENT (a
 * live id's cgroup removed meanwhile), EBUSY (the id table busy growing,
 * documented: retry). A bad nr must fail with EINVAL.
 */
static void op_attach(struct stress *s, struct slot *sl, unsigned int *seed)
{
	int n = request_size(seed), room = MAX_ATTACHED - sl->nr, ret;
	uint64_t ids[MAX_REQUEST], since;
	bool poisoned;

	if (!(rand_r(seed) % 64)) {
		bad_nr(s, sl, seed, OP_ATTACH, PERF_EVENT_IOC_ATTACH_CGROUP);
		return;
	}
	if (room <= 0) {
		op_detach_all(s, sl, seed);
		return;
	}
	n = n < room ? n : room;
	poisoned = attach_ids(s, sl, seed, ids, n);
	since = cgtest_now_ns();
	ret = pcg_attach(sl->fd, ids, n);
	if (poisoned)
		outcome(s, OP_ATTACH, ret, ALLOW(RES_ENOENT),
			" with a removed or never-existing id");
	else if (outcome(s, OP_ATTACH, ret,
			 ALLOW(RES_OK) | ALLOW(RES_ENOENT) | ALLOW(RES_EBUSY),
			 "") == RES_OK)
		model_attach(sl, ids, n, since);
}

/*
 * DETACH of 1..MAX_REQUEST attached ids (duplicates too); in one request in
 * five, one id not attached. Exact: it succeeds iff every id is attached
 * (removed cgroups included), else fails with ENOENT and detaches nothing.
 * A bad nr must fail with EINVAL.
 */
static void op_detach(struct stress *s, struct slot *sl, unsigned int *seed)
{
	int n = request_size(seed), i;
	uint64_t ids[MAX_REQUEST];
	bool all_attached = true;

	if (!(rand_r(seed) % 64)) {
		bad_nr(s, sl, seed, OP_DETACH, PERF_EVENT_IOC_DETACH_CGROUP);
		return;
	}
	for (i = 0; i < n; i++)
		ids[i] = sl->nr ? sl->att[rand_r(seed) % sl->nr].id :
				  unattached_id(s, sl, seed);
	if (!(rand_r(seed) % 5))
		ids[rand_r(seed) % n] = unattached_id(s, sl, seed);
	for (i = 0; i < n; i++)
		all_attached &= find_attached(sl, ids[i]) != NULL;
	detach_ids(s, sl, ids, n, all_attached);
}

/* RESET, ENABLE, DISABLE, alone or with PERF_IOC_FLAG_GROUP: never fail. */
static void flag_ioctl(struct stress *s, struct slot *sl, unsigned int *seed,
		       enum op op, unsigned long cmd)
{
	unsigned long flag = rand_r(seed) % 2 ? PERF_IOC_FLAG_GROUP : 0;

	outcome(s, op, ioctl(sl->fd, cmd, flag) ? -errno : 0, ALLOW(RES_OK), "");
}

/* The cgroup counts go on (checked by the next reads): RESET is the event's. */
static void op_reset(struct stress *s, struct slot *sl, unsigned int *seed)
{
	flag_ioctl(s, sl, seed, OP_RESET, PERF_EVENT_IOC_RESET);
}

static void op_enable(struct stress *s, struct slot *sl, unsigned int *seed)
{
	flag_ioctl(s, sl, seed, OP_ENABLE, PERF_EVENT_IOC_ENABLE);
}

static void op_disable(struct stress *s, struct slot *sl, unsigned int *seed)
{
	flag_ioctl(s, sl, seed, OP_DISABLE, PERF_EVENT_IOC_DISABLE);
}

/* The sibling leaves the group; it keeps its place in the layout. */
static void op_close_sibling(struct stress *s, struct slot *sl,
			     unsigned int *seed)
{
	if (sl->sib < 0)
		return;
	outcome(s, OP_CLOSE_SIBLING, close(sl->sib) ? -errno : 0, ALLOW(RES_OK), "");
	sl->sib = -1;
}

/* Closing frees every count, attached cgroups or not. */
static void op_close(struct stress *s, struct slot *sl, unsigned int *seed)
{
	op_close_sibling(s, sl, seed);
	outcome(s, OP_CLOSE, close(sl->fd) ? -errno : 0, ALLOW(RES_OK), "");
	sl->fd = -1;
	sl->nr = 0;
}

static void event_id(struct stress *s, int fd, uint64_t *id)
{
	if (ioctl(fd, PERF_EVENT_IOC_ID, id))
		unexpected(s, "PERF_EVENT_IOC_ID: %s", strerrorname_np(errno));
}

/* A context-switches sibling, before the leader is enabled. */
static void open_sibling(struct stress *s, struct slot *sl,
			 struct perf_event_attr *attr, unsigned int allowed)
{
	int fd;

	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->disabled = 0;
	fd = pcg_perf_open(attr, -1, sl->cpu, sl->fd, 0);
	if (outcome(s, OP_OPEN_SIBLING, fd, allowed, "") != RES_OK)
		return;
	sl->sib = fd;
	event_id(s, fd, &sl->event_id[1]);
}

static void slot_reset(struct slot *sl, int fd, int cpu, uint64_t read_format)
{
	sl->fd = fd;
	sl->sib = -1;
	sl->cpu = cpu;
	sl->read_format = read_format;
	sl->attached_once = false;
	sl->layout_max = 1;
	sl->members = read_format & PERF_FORMAT_GROUP ? 0 : 1;
	sl->nr = 0;
}

/*
 * A cpu-clock event on a random cpu, half of the time the leader of a group
 * with a context-switches sibling, a random read_format (PERF_FORMAT_LOST
 * is not supported), left disabled one time in four. Allowed: ENODEV on
 * cpu1 while it is offline.
 */
static void slot_open(struct stress *s, struct slot *sl, unsigned int *seed)
{
	uint64_t rf = rand_r(seed) & (PERF_FORMAT_TOTAL_TIME_ENABLED |
				      PERF_FORMAT_TOTAL_TIME_RUNNING |
				      PERF_FORMAT_ID);
	bool group = rand_r(seed) % 2, enable = rand_r(seed) % 4;
	int cpu = rand_r(seed) % s->nr_cpus, fd;
	unsigned int allowed = ALLOW(RES_OK) |
		(cpu == HOT_CPU && s->hotplug ? ALLOW(RES_ENODEV) : 0);
	struct perf_event_attr attr;

	if (group)
		rf |= PERF_FORMAT_GROUP;
	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, rf, group || !enable);
	fd = pcg_perf_open(&attr, -1, cpu, -1, 0);
	if (outcome(s, OP_OPEN, fd, allowed, "") != RES_OK)
		return;
	slot_reset(sl, fd, cpu, rf);
	event_id(s, fd, &sl->event_id[0]);
	if (!group)
		return;
	open_sibling(s, sl, &attr, allowed);
	if (enable)
		outcome(s, OP_ENABLE, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : 0,
			ALLOW(RES_OK), "");
}

static const struct {
	int weight;
	void (*run)(struct stress *s, struct slot *sl, unsigned int *seed);
} slot_ops[] = {
	{ 24, op_attach }, { 14, op_detach }, { 2, op_detach_all },
	{ 20, op_read }, { 14, op_read_all }, { 5, op_reset },
	{ 5, op_enable }, { 5, op_disable }, { 2, op_close_sibling },
	{ 3, op_close },
};

static void slot_random_op(struct stress *s, struct slot *sl,
			   unsigned int *seed)
{
	int total = 0, pick;
	size_t i;

	for (i = 0; i < sizeof(slot_ops) / sizeof(slot_ops[0]); i++)
		total += slot_ops[i].weight;
	pick = rand_r(seed) % total;
	for (i = 0; pick >= slot_ops[i].weight; i++)
		pick -= slot_ops[i].weight;
	slot_ops[i].run(s, sl, seed);
}

static void *event_thread(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = stream_seed(s, STREAM_EVENTS +
					__atomic_fetch_add(&s->event_threads, 1, __ATOMIC_RELAXED));

	while (!done(s)) {
		struct slot *sl = &s->slots[rand_r(&seed) % NR_SLOTS];

		pthread_mutex_lock(&sl->lock);
		if (sl->fd < 0)
			slot_open(s, sl, &seed);
		else
			slot_random_op(s, sl, &seed);
		pthread_mutex_unlock(&sl->lock);
	}
	return NULL;
}

/*
 * Remove a random present cgroup (one time in two) or create an absent one.
 * rmdir: EBUSY while a hopper or a child cgroup is in it. mkdir: ENOENT
 * while its parent is absent.
 */
static void churn_step(struct stress *s, unsigned int *seed)
{
	int i = rand_r(seed) % NR_CGROUPS;
	char path[CGTEST_PATH_MAX];
	uint64_t id = cg_id(s, i);

	cg_path(s, i, path);
	if (id && rand_r(seed) % 2) {
		/* absent from before the rmdir: never listed once removed */
		__atomic_store_n(&s->ids[i], 0, __ATOMIC_RELEASE);
		if (outcome(s, OP_RMDIR, rmdir(path) ? -errno : 0,
			    ALLOW(RES_OK) | ALLOW(RES_EBUSY), "") != RES_OK) {
			__atomic_store_n(&s->ids[i], id, __ATOMIC_RELEASE);
			return;
		}
		remember_dead(s, id);
	} else if (!id) {
		if (outcome(s, OP_MKDIR, mkdir(path, 0755) ? -errno : 0,
			    ALLOW(RES_OK) | ALLOW(RES_ENOENT), "") != RES_OK)
			return;
		id = cgtest_id(path);
		if (!id)
			unexpected(s, "no id for %s", path);
		__atomic_store_n(&s->ids[i], id, __ATOMIC_RELEASE);
	}
}

static void *churn_thread(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = stream_seed(s, STREAM_CHURN);

	while (!done(s)) {
		churn_step(s, &seed);
		usleep(rand_r(&seed) % 2000);
	}
	return NULL;
}

/* ---- an event attached with its descendants ---- */

/* The records of one READ_CGROUPS of @fd (plain event: { id, value }). */
static uint64_t *watch_read(struct stress *s, int fd, uint64_t flags)
{
	uint64_t *buf = NULL;
	size_t size;
	int ret = pcg_read_cgroups_flags(fd, flags, &buf, &size);

	if (outcome(s, OP_READ_ALL, ret, ALLOW(RES_OK), " (descendants)") !=
	    RES_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool listed(const uint64_t *buf, uint64_t id)
{
	uint64_t i;

	for (i = 0; i < buf[2]; i++) {
		if (buf[3 + 2 * i] == id)
			return true;
	}
	return false;
}

/*
 * After the root was attached with its descendants: every cgroup that the
 * tree held at some time since is listed (those removed since stay attached
 * until read with PERF_READ_CGROUPS_DETACH_REMOVED; the churn thread notes a
 * cgroup absent before its rmdir).
 */
static void check_watched(struct stress *s, int fd)
{
	uint64_t before[NR_CGROUPS], *buf;
	char path[CGTEST_PATH_MAX];
	int i;

	for (i = 0; i < NR_CGROUPS; i++)
		before[i] = cg_id(s, i);
	buf = watch_read(s, fd, 0);
	if (!buf)
		return;
	for (i = 0; i < NR_CGROUPS; i++) {
		if (!before[i] || listed(buf, before[i]))
			continue;
		cg_path(s, i, path);
		unexpected(s, "c%d (id %llu, now %llu, %s) not attached with the root's descendants",
			   i, (unsigned long long)before[i],
			   (unsigned long long)cg_id(s, i),
			   access(path, F_OK) ? "gone" : "present");
	}
	free(buf);
}

static void watch_attach(struct stress *s, int fd, unsigned int *seed)
{
	uint64_t id;
	int pick = rand_r(seed) % 4, ret;

	id = pick < 2 ? s->root_id : pick == 2 ? live_id(s, seed) :
	     dead_id(s, seed);
	ret = pcg_attach_flags(fd, PERF_ATTACH_CGROUPS_DESCENDANTS, &id, 1);
	/* a random cgroup may be removed meanwhile, the root never is */
	if (outcome(s, OP_WATCH, ret,
		    id == s->root_id ? ALLOW(RES_OK) :
		    pick == 2 ? ALLOW(RES_OK) | ALLOW(RES_ENOENT) :
		    ALLOW(RES_ENOENT), "") == RES_OK && id == s->root_id)
		check_watched(s, fd);
}

/*
 * One event on a random cpu (ENODEV: the hot cpu is offline), attached with
 * descendants, read, its root detached (ENOENT: not attached now), closed.
 */
static void *watch_thread(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = stream_seed(s, STREAM_WATCH);
	struct perf_event_attr attr;
	int fd = -1, cpu, pick;

	pcg_attr_init(&attr, PERF_COUNT_SW_CPU_CLOCK, 0, 0);
	while (!done(s)) {
		if (fd < 0) {
			cpu = rand_r(&seed) % s->nr_cpus;
			fd = pcg_perf_open(&attr, -1, cpu, -1, 0);
			outcome(s, OP_OPEN, fd, ALLOW(RES_OK) |
				(cpu == HOT_CPU && s->hotplug ? ALLOW(RES_ENODEV) : 0),
				" (descendants)");
			continue;
		}
		pick = rand_r(&seed) % 10;
		if (pick < 5) {
			watch_attach(s, fd, &seed);
		} else if (pick < 8) {
			free(watch_read(s, fd, PERF_READ_CGROUPS_DETACH_REMOVED));
		} else if (pick < 9) {
			outcome(s, OP_DETACH, pcg_detach(fd, &s->root_id, 1),
				ALLOW(RES_OK) | ALLOW(RES_ENOENT), " (descendants)");
		} else {
			outcome(s, OP_CLOSE, close(fd) ? -errno : 0, ALLOW(RES_OK),
				" (descendants)");
			fd = -1;
		}
		usleep(rand_r(&seed) % 2000);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int set_hot_cpu_online(int online)
{
	return cgtest_write(HOT_CPU_ONLINE, online ? "1" : "0");
}

/* cpu1 offline and back online at random times; no errno is allowed. */
static void *hotplug_thread(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = stream_seed(s, STREAM_HOTPLUG);

	while (!done(s)) {
		usleep(rand_r(&seed) % 200000);
		outcome(s, OP_OFFLINE, set_hot_cpu_online(0), ALLOW(RES_OK), "");
		usleep(rand_r(&seed) % 200000);
		outcome(s, OP_ONLINE, set_hot_cpu_online(1), ALLOW(RES_OK), "");
	}
	return NULL;
}

/* cpu 0, cpu1 or both. EINVAL: cpu1 alone while it is offline. */
static void migrate(struct stress *s, unsigned int *seed)
{
	int which = rand_r(seed) % 3;
	cpu_set_t set;

	CPU_ZERO(&set);
	if (which != 1)
		CPU_SET(0, &set);
	if (which != 0)
		CPU_SET(HOT_CPU, &set);
	outcome(s, OP_AFFINITY,
		sched_setaffinity(0, sizeof(set), &set) ? -errno : 0,
		ALLOW(RES_OK) | (which == 1 && s->hotplug ? ALLOW(RES_EINVAL) : 0),
		"");
}

/*
 * A task hopping between the cgroups and the cpus, busy or asleep, until
 * killed. The move: ENOENT when the cgroup (or an ancestor) is removed,
 * ENODEV while it is being removed.
 */
static pid_t spawn_hopper(struct stress *s, int k)
{
	unsigned int seed = stream_seed(s, STREAM_HOPPER + k);
	char path[CGTEST_PATH_MAX];
	pid_t pid = fork();

	if (pid)
		return pid;
	for (;;) {
		cg_path(s, rand_r(&seed) % NR_CGROUPS, path);
		outcome(s, OP_MOVE, cgtest_move(path, getpid()),
			ALLOW(RES_OK) | ALLOW(RES_ENOENT) | ALLOW(RES_ENODEV), "");
		if (s->nr_cpus > HOT_CPU && !(rand_r(&seed) % 4))
			migrate(s, &seed);
		if (rand_r(&seed) & 1)
			cgtest_burn_ns(200000);
		else
			usleep(200);
	}
}

static void close_slots(struct stress *s)
{
	int i;

	for (i = 0; i < NR_SLOTS; i++) {
		if (s->slots[i].fd >= 0)
			op_close(s, &s->slots[i], NULL);
	}
}

/* One line per operation: "attach: 812 ok, 131 ENOENT". */
static void counts_line(const struct stress *s, enum op op, char *out,
			size_t size)
{
	int r, len = snprintf(out, size, "%s:", op_name[op]);

	for (r = 0; r < NR_RES; r++) {
		if (s->count[op][r] && len < (int)size)
			len += snprintf(out + len, size - len, "%s %llu %s",
					len > (int)strlen(op_name[op]) + 1 ? "," : "",
					(unsigned long long)s->count[op][r],
					res_name[r]);
	}
}

/* What a run must have done at least once (or it tested less than it says). */
struct seen {
	enum op op;
	enum res res;
};

static const struct seen must_see[] = {
	{ OP_OPEN, RES_OK }, { OP_ATTACH, RES_OK }, { OP_ATTACH, RES_ENOENT },
	{ OP_DETACH, RES_OK }, { OP_DETACH, RES_ENOENT }, { OP_READ, RES_OK },
	{ OP_READ, RES_ENOENT }, { OP_READ, RES_ENOSPC }, { OP_READ, RES_EINVAL },
	{ OP_READ_ALL, RES_OK }, { OP_READ_ALL, RES_ENOSPC }, { OP_RESET, RES_OK },
	{ OP_ENABLE, RES_OK }, { OP_DISABLE, RES_OK }, { OP_CLOSE, RES_OK },
	{ OP_RMDIR, RES_OK }, { OP_RMDIR, RES_EBUSY }, { OP_MKDIR, RES_OK },
	{ OP_MOVE, RES_OK }, { OP_WATCH, RES_OK }, { OP_WATCH, RES_ENOENT },
};

static const struct seen must_see_hotplug[] = {
	{ OP_AFFINITY, RES_OK }, { OP_OFFLINE, RES_OK }, { OP_ONLINE, RES_OK },
};

/* The entries of list never seen, logged; returns how many. */
static int never_seen(struct __test_metadata *_metadata, const struct stress *s,
		      const struct seen *list, size_t n)
{
	int missing = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		if (s->count[list[k].op][list[k].res])
			continue;
		TH_LOG("never seen: %s %s", op_name[list[k].op],
		       res_name[list[k].res]);
		missing++;
	}
	return missing;
}

FIXTURE(stress) {
	struct stress *s;
	pid_t hoppers[NR_HOPPERS];
};

FIXTURE_SETUP(stress)
{
	char path[CGTEST_PATH_MAX];
	int i;

	PCG_REQUIRE_ATTACH();
	self->s = mmap(NULL, sizeof(*self->s), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->s);
	ASSERT_EQ(0, cgtest_create_test_root(self->s->root, "stress"));
	self->s->root_id = cgtest_id(self->s->root);
	for (i = 0; i < NR_CGROUPS; i++) {
		cg_path(self->s, i, path);
		ASSERT_EQ(0, mkdir(path, 0755));
		self->s->ids[i] = cgtest_id(path);
		ASSERT_NE(0, self->s->ids[i]);
	}
	for (i = 0; i < NR_SLOTS; i++) {
		ASSERT_EQ(0, pthread_mutex_init(&self->s->slots[i].lock, NULL));
		self->s->slots[i].fd = -1;
	}
	self->s->nr_cpus = pcg_nr_cpus();
	self->s->hotplug = self->s->nr_cpus > HOT_CPU &&
			   !access(HOT_CPU_ONLINE, W_OK);
	for (i = 0; i < NR_HOPPERS; i++)
		self->hoppers[i] = 0;
}

FIXTURE_TEARDOWN(stress)
{
	int i;

	for (i = 0; i < NR_HOPPERS; i++) {
		if (self->hoppers[i] > 0) {
			kill(self->hoppers[i], SIGKILL);
			cgtest_wait(self->hoppers[i]);
		}
	}
	if (self->s->hotplug)
		EXPECT_EQ(0, set_hot_cpu_online(1));
	close_slots(self->s);
	EXPECT_EQ(0, cgtest_destroy_tree(self->s->root));
	munmap(self->s, sizeof(*self->s));
}

TEST_F(stress, randomized)
{
	struct stress *s = self->s;
	pthread_t th[NR_THREADS + 3];
	struct pcg_events ev;
	struct pcg_reading r;
	char a[CGTEST_PATH_MAX], line[256];
	int i, nth = 0;
	uint64_t ida;
	int64_t used;

	if (!s->hotplug)
		TH_LOG("cpu%d cannot go offline: no hotplug", HOT_CPU);
	s->seed = stress_seed();
	TH_LOG("seed %u: PCG_STRESS_SEED=%u replays its random choices", s->seed, s->seed);
	s->deadline = cgtest_now_ns() + stress_seconds() * NSEC_PER_SEC;
	for (i = 0; i < NR_HOPPERS; i++) {
		self->hoppers[i] = spawn_hopper(s, i);
		ASSERT_LT(0, self->hoppers[i]);
	}
	for (i = 0; i < NR_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[nth++], NULL, event_thread, s));
	ASSERT_EQ(0, pthread_create(&th[nth++], NULL, churn_thread, s));
	ASSERT_EQ(0, pthread_create(&th[nth++], NULL, watch_thread, s));
	if (s->hotplug)
		ASSERT_EQ(0, pthread_create(&th[nth++], NULL, hotplug_thread, s));
	for (i = 0; i < nth; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	for (i = 0; i < NR_HOPPERS; i++) {
		kill(self->hoppers[i], SIGKILL);
		ASSERT_EQ(128 + SIGKILL, cgtest_wait(self->hoppers[i]));
		self->hoppers[i] = 0;
	}
	close_slots(s);

	for (i = 0; i < NR_OPS; i++) {
		counts_line(s, i, line, sizeof(line));
		TH_LOG("%s", line);
	}
	if (s->bad)
		TH_LOG("unexpected: %s", s->bad_what);
	ASSERT_EQ(0, s->bad);
	EXPECT_EQ(0, never_seen(_metadata, s, must_see,
				sizeof(must_see) / sizeof(must_see[0])));
	if (s->hotplug)
		EXPECT_EQ(0, never_seen(_metadata, s, must_see_hotplug,
					sizeof(must_see_hotplug) /
					sizeof(must_see_hotplug[0])));

	/* the machinery still counts right afterwards */
	ASSERT_EQ(0, cgtest_create(a, s->root, "after"));
	ida = cgtest_id(a);
	ASSERT_EQ(0, pcg_open_cpu_events(&ev, PERF_COUNT_SW_CPU_CLOCK, 0, 0));
	ASSERT_EQ(0, pcg_attach_all(&ev, &ida, 1));
	used = usage_ns(a);
	ASSERT_WORKER(cgtest_spawn_busy(a, BUSY_NS / 2, -1, NULL));
	used = usage_ns(a) - used;
	ASSERT_EQ(0, pcg_read_cgroup_sum(&ev, ida, 0, &r));
	pcg_close_events(&ev);
	TH_LOG("after the stress: node %lu, cpu.stat %ld", r.value, used);
	EXPECT_TRUE(cgtest_within_pct(r.value, used, 5));
}

/*
 * The harness's limit (read when the test starts) follows the duration:
 * set after the test registered (KSELFTEST_PRIO_TEST), as XFAIL_ADD does.
 */
static void __attribute__((constructor(KSELFTEST_PRIO_XFAIL)))
stress_follow_duration(void)
{
	_stress_randomized_object->timeout = stress_seconds() + SLACK_SECONDS;
}

TEST_HARNESS_MAIN
