/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the multi-cgroup perf event tests: cgroup v2 management,
 * cpu-wide software perf events, the ATTACH/DETACH/READ ioctls, and worker
 * processes (busy loops, sleepers, pipe ping-pong) placed in cgroups.
 *
 * Functions return 0 (or a count) on success and -errno on failure, so a
 * test can assert the exact error.
 */
#ifndef PCG_LIB_H
#define PCG_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "pcg_uapi.h"

#define PCG_MAX_CPUS	64
#define PCG_PATH_MAX	512
#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

/* ---- cgroups ---- */

/* Mount point of cgroup v2 (CGROUP2_ROOT overrides), or NULL. */
const char *pcg_cgroup_root(void);
/* mkdir parent/name into out (PCG_PATH_MAX bytes). */
int pcg_cg_create(char *out, const char *parent, const char *name);
/* rmdir, retrying briefly while exiting tasks still pin the cgroup. */
int pcg_cg_remove(const char *path);
/* Kill every task below path (cgroup.kill), then remove the whole subtree. */
int pcg_cg_destroy_tree(const char *path);
int pcg_cg_move(const char *path, pid_t pid);
/* The cgroup id (kernfs id, from name_to_handle_at), 0 on error. */
uint64_t pcg_cg_id(const char *path);
/* usage_usec from cpu.stat, or -errno. */
int64_t pcg_cg_usage_usec(const char *path);
/* Number of processes listed in cgroup.procs (not recursive), or -errno. */
int pcg_cg_nr_procs(const char *path);

/* A private test cgroup directly under the cgroup v2 root. */
int pcg_cg_create_test_root(char *out, const char *tag);
/* perf_event on a cgroup v1 hierarchy at a new directory (a v1/v2 hybrid) */
int pcg_perf_event_v1_mount(char *dir);
int pcg_perf_event_v1_umount(const char *dir);

/* ---- perf events ---- */

struct pcg_events {
	int nr;
	int fd[PCG_MAX_CPUS];
};

int pcg_nr_cpus(void);
void pcg_attr_init(struct perf_event_attr *attr, uint64_t config,
		   uint64_t read_format, int disabled);
int pcg_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		  int group_fd, unsigned long flags);
/* One counting software event per online cpu (cpu-wide, pid == -1). */
int pcg_open_cpu_events(struct pcg_events *ev, uint64_t config,
			uint64_t read_format, int disabled);
/* Classic cgroup events: pid = cgroup fd, PERF_FLAG_PID_CGROUP. */
int pcg_open_cgroup_events(struct pcg_events *ev, const char *cg,
			   uint64_t config, uint64_t read_format);
/* Add one sibling per cpu to the group led by leader->fd[cpu]. */
int pcg_open_sibling_events(struct pcg_events *ev,
			    const struct pcg_events *leader, uint64_t config,
			    uint64_t read_format);
void pcg_close_events(struct pcg_events *ev);
int pcg_enable(const struct pcg_events *ev);
int pcg_disable(const struct pcg_events *ev);
/* Sum over cpus of read() values; read_format must be 0. */
int pcg_read_sum(const struct pcg_events *ev, uint64_t *sum);

/* One reading in the non-group read_format layout. */
struct pcg_reading {
	uint64_t value, enabled, running, id;
};

/* Number of u64 words of one non-group reading for read_format. */
size_t pcg_reading_words(uint64_t read_format);
void pcg_parse_reading(const uint64_t *w, uint64_t read_format,
		       struct pcg_reading *r);

/* ---- the multi-cgroup ioctls (return 0/bytes or -errno) ---- */

int pcg_attach(int fd, const uint64_t *ids, uint64_t nr);
int pcg_detach(int fd, const uint64_t *ids, uint64_t nr);
int pcg_attach_all(const struct pcg_events *ev, const uint64_t *ids,
		   uint64_t nr);
int pcg_detach_all(const struct pcg_events *ev, const uint64_t *ids,
		   uint64_t nr);
/* ATTACH_CGROUPS { flags, nr, ids } on @fd. */
int pcg_attach_flags(int fd, uint64_t flags, const uint64_t *ids,
		     uint64_t nr);
/* The same on every cpu's event; stops at the first error. */
int pcg_attach_flags_all(const struct pcg_events *ev, uint64_t flags,
			 const uint64_t *ids, uint64_t nr);
/* READ_CGROUP into out[] (nwords u64s after the 2-word header). */
int pcg_read_cgroup(int fd, uint64_t id, uint64_t *out, size_t nwords);
/* READ_CGROUP on every cpu, non-group layout, values summed. */
int pcg_read_cgroup_sum(const struct pcg_events *ev, uint64_t id,
			uint64_t read_format, struct pcg_reading *sum);
/*
 * READ_CGROUPS with size negotiation: *bufp (malloc'ed, caller frees)
 * receives the whole buffer, records start at (*bufp)[3].
 */
int pcg_read_cgroups(int fd, uint64_t **bufp, size_t *sizep);
/* The same with READ_CGROUPS flags (PERF_READ_CGROUPS_DETACH_REMOVED) */
int pcg_read_cgroups_flags(int fd, uint64_t flags, uint64_t **bufp,
			   size_t *sizep);
/* 1 if the kernel knows PERF_EVENT_IOC_ATTACH_CGROUP, 0 if not. */
int pcg_kernel_has_attach(void);

/* ---- workers ---- */

/* What a worker measured itself, in memory shared with the test. */
struct pcg_worker_stat {
	uint64_t cpu_ns_joined;	/* own cpu time after joining its cgroup */
	uint64_t cpu_ns_moved;	/* ... when it moved to its second cgroup */
	uint64_t cpu_ns_end;	/* ... just before exiting */
	uint64_t csw_joined;	/* own context switches (nvcsw + nivcsw) */
	uint64_t csw_end;
	int ready;
};

/* MAP_SHARED zeroed array of n stats; free with pcg_stats_free. */
struct pcg_worker_stat *pcg_stats_alloc(int n);
void pcg_stats_free(struct pcg_worker_stat *s, int n);

uint64_t pcg_thread_cpu_ns(void);
uint64_t pcg_now_ns(void);
int pcg_pin_self(int cpu);
/* Burn cpu until this thread used ns more cpu time. */
void pcg_burn_ns(uint64_t ns);

/*
 * Child that joins cg, optionally pins itself (cpu >= 0), burns ns of cpu
 * time and exits 0. st (may be NULL) receives its own measurements.
 */
pid_t pcg_spawn_busy(const char *cg, uint64_t ns, int cpu,
		     struct pcg_worker_stat *st);
/*
 * Like pcg_spawn_busy, but moves itself to cg2 after ns1 and burns ns2, then
 * moves to cg2's parent to exit (so the exit is not counted in cg2).
 */
pid_t pcg_spawn_busy_migrating(const char *cg1, uint64_t ns1,
			       const char *cg2, uint64_t ns2, int cpu,
			       struct pcg_worker_stat *st);
/* Child that joins cg and sleeps until killed. */
pid_t pcg_spawn_sleeper(const char *cg);
/*
 * Two children, in cga and cgb, pinned to cpu (if >= 0), that bounce one
 * byte back and forth over pipes iterations times. st[0], st[1] get their
 * measurements. Returns 0 and the pids in pids[2].
 */
int pcg_spawn_pingpong(const char *cga, const char *cgb, int iterations,
		       int cpu, struct pcg_worker_stat *st, pid_t pids[2]);
/* Wait for pid; returns its exit status (or 128 + signal), -errno. */
int pcg_wait(pid_t pid);
/* Wait until a worker reported ready (joined its cgroup). */
int pcg_wait_ready(struct pcg_worker_stat *st, int timeout_ms);

/* |a - b| <= pct% of max(a, b) */
int pcg_within_pct(double a, double b, double pct);

#endif /* PCG_LIB_H */
