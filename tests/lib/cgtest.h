/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgtest: the cgroup helpers of the C tests, one library
 * (tests/lib/tests-lib.mk builds build/tests/lib/libcgtest.a once; link it
 * with $(CGTEST_LDLIBS)): cgroup files, cgroups and trees of them, their
 * controllers and statistics, and worker processes placed in them.
 *
 * Functions return 0 (or a count, a length, a value) on success and -errno
 * on failure, so a test can assert the exact error.
 */
#ifndef TESTS_CGTEST_H
#define TESTS_CGTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGTEST_PATH_MAX	512
#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

/* ---- files ---- */

/* At most size - 1 bytes of path, NUL-terminated: the length, or -errno. */
int cgtest_read(const char *path, char *buf, size_t size);
/* text in one write(2), as cgroup files want it: 0, or -errno (-EIO short). */
int cgtest_write(const char *path, const char *text);
/* cgtest_read() of the file cg/file. */
int cgtest_read_file(const char *cg, const char *file, char *buf, size_t size);

/* ---- cgroups ---- */

/* $CGROUP2_ROOT, else cgroup2's mount point (lib/cgutil), else NULL. */
const char *cgtest_root(void);
/* mkdir(2) of path; an existing cgroup is fine. */
int cgtest_mkdir(const char *path);
/* parent/name into out (CGTEST_PATH_MAX bytes), created. */
int cgtest_create(char *out, const char *parent, const char *name);
/* A private test cgroup directly under the root: <root>/cgtest-<tag>-<pid>. */
int cgtest_create_test_root(char *out, const char *tag);
/* rmdir(2), waiting out EBUSY (a killed task not yet gone) up to 5 s: 0 when
 * the cgroup is gone. */
int cgtest_rmdir(const char *path);
/* Kill the tasks of path and its descendants (cgroup.kill), then remove
 * them, children first: 0 or the first -errno. */
int cgtest_destroy_tree(const char *path);
/* Wait until no cgroup below path is dying (every removed one released,
 * its last rstat flush done): 0, or -ETIMEDOUT after 20 s. */
int cgtest_wait_released(const char *path);
/* Write controllers ("+cpu +memory") to path's cgroup.subtree_control. */
int cgtest_enable_controllers(const char *path, const char *controllers);
/* Move process pid (0: the caller) into path. */
int cgtest_move(const char *path, pid_t pid);
/* The cgroup id (kernfs id, lib/cgutil's file handle), 0 on error. */
uint64_t cgtest_id(const char *path);
/* Number of processes in cg's cgroup.procs (not recursive), or -errno. */
int cgtest_nr_procs(const char *cg);

/* ---- statistics ---- */

/* The value of "key value" line key of cg/file (cpu.stat, memory.stat, ...):
 * the value, -ENODATA when the file has no such line, or -errno. */
int64_t cgtest_stat_field(const char *cg, const char *file, const char *key);
/* usage_usec of cg's cpu.stat, or -errno. */
int64_t cgtest_usage_usec(const char *cg);
/* A file of one number (memory.current): the number, or -errno. */
int64_t cgtest_read_u64(const char *cg, const char *file);

/* ---- time and cpus ---- */

uint64_t cgtest_thread_cpu_ns(void);
uint64_t cgtest_now_ns(void);
/* Pin the calling thread to cpu (nothing for cpu < 0). */
int cgtest_pin_self(int cpu);
/* Burn cpu until this thread used ns more cpu time. */
void cgtest_burn_ns(uint64_t ns);
/*
 * Run once on every cpu we may use: a cpu that runs us has switched out,
 * for good, any task that had already exited there. waitpid() and waitid()
 * return at the child's exit_notify(), before its last context switch, so
 * the tail of its exit still runs (and is counted) in its cgroup until then.
 */
void cgtest_settle_exited_tasks(void);
/* |a - b| <= pct% of max(a, b) */
int cgtest_within_pct(double a, double b, double pct);

/* ---- workers ---- */

/* What a worker measured itself, in memory shared with the test. */
struct cgtest_worker_stat {
	uint64_t cpu_ns_joined;	/* own cpu time after joining its cgroup */
	uint64_t cpu_ns_moved;	/* ... when it moved to its second cgroup */
	uint64_t cpu_ns_end;	/* ... just before exiting */
	uint64_t csw_joined;	/* own context switches (nvcsw + nivcsw) */
	uint64_t csw_end;
	int ready;
};

/* MAP_SHARED zeroed array of n stats; free with cgtest_stats_free. */
struct cgtest_worker_stat *cgtest_stats_alloc(int n);
void cgtest_stats_free(struct cgtest_worker_stat *s, int n);

/*
 * Child that joins cg, optionally pins itself (cpu >= 0), burns ns of cpu
 * time and exits 0. st (may be NULL) receives its own measurements.
 */
pid_t cgtest_spawn_busy(const char *cg, uint64_t ns, int cpu,
			struct cgtest_worker_stat *st);
/*
 * Like cgtest_spawn_busy, but moves itself to cg2 after ns1 and burns ns2,
 * then moves to cg2's parent to exit (so the exit is not counted in cg2).
 */
pid_t cgtest_spawn_busy_migrating(const char *cg1, uint64_t ns1,
				  const char *cg2, uint64_t ns2, int cpu,
				  struct cgtest_worker_stat *st);
/* Child that joins cg and sleeps until killed. */
pid_t cgtest_spawn_sleeper(const char *cg);
/*
 * Two children, in cga and cgb, pinned to cpu (if >= 0), that bounce one
 * byte back and forth over pipes iterations times. st[0], st[1] get their
 * measurements. Returns 0 and the pids in pids[2].
 */
int cgtest_spawn_pingpong(const char *cga, const char *cgb, int iterations,
			  int cpu, struct cgtest_worker_stat *st, pid_t pids[2]);
/* Wait for pid, then cgtest_settle_exited_tasks(): its exit status (or 128
 * + signal), or -errno. */
int cgtest_wait(pid_t pid);
/* Wait until a worker reported ready (joined its cgroup). */
int cgtest_wait_ready(struct cgtest_worker_stat *st, int timeout_ms);

#endif /* TESTS_CGTEST_H */
