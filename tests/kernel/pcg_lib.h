/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the multi-cgroup perf event tests: cpu-wide and per-cgroup
 * software perf events and the ATTACH/DETACH/READ ioctls. The cgroups and
 * the workers placed in them are tests/lib/cgtest.h's, included here.
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

#include "cgtest.h"
#include "pcg_uapi.h"

#define PCG_MAX_CPUS	64

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
/*
 * 1 on our patched kernels, which must have every ioctl of kernel/'s
 * series: KERNEL_PATCHED=1, which scripts/run-tests.sh sets from the
 * kernel's set of tests in tests/kernels.list (all, hw). 0 elsewhere,
 * where a test of the series may skip.
 */
int pcg_kernel_patched(void);
/* $KERNEL_NAME (tests/kernels.list), or "this kernel" */
const char *pcg_kernel_name(void);

#endif /* PCG_LIB_H */
