/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The layouts shared by cgrstat.bpf.c and its loader: every map value and
 * record both sides read or write, and the limits that size them.  The
 * loader never spells a layout itself: it sizes the maps and reads the
 * records and statistics through these types (cgrstat_int.h checks the
 * public struct cgrstat_value against struct cgrstat_abi_value).
 */
#ifndef CGRSTAT_ABI_H
#define CGRSTAT_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Events a session counts at most: the slots of every per-event array
 * (cgrstat.h's CGRSTAT_MAX_EVENTS) */
#define CGRSTAT_ABI_MAX_EVENTS 8
/* Cpus the readers' loops visit at most */
#define CGRSTAT_MAX_CPUS 1024
/* Ancestors of a cpu's running cgroup the readers' overlay holds */
#define CGRSTAT_MAX_LEVELS 32
/* Bytes of an event's name in the text iterator's output */
#define CGRSTAT_NAME_LEN 32

struct cgrstat_abi_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/* One cgroup, as dump_records writes it into the mmap()ed records map */
struct cgrstat_abi_record {
	__u64 cgroup_id;
	__u32 level;
	__u32 nr_events;
	struct cgrstat_abi_value values[CGRSTAT_ABI_MAX_EVENTS];
};

/*
 * Per (cgroup, cpu): cumulative counts written by the collector on that cpu
 * only, and what the flusher already folded (flusher-owned).  The loader
 * sizes the map's values to the events in use (cgrstat_slot_size()).
 */
struct slot_event {
	struct cgrstat_abi_value state;
	struct cgrstat_abi_value flushed;
};

struct cgrp_cpu_slot {
	__u64 marked;		/* rstat was told; cleared by the flusher */
	struct slot_event ev[CGRSTAT_ABI_MAX_EVENTS];
};

/* Per cgroup: subtree total, and counts passed up by children not yet
 * folded.  Only touched by the flusher, under the rstat lock.  Sized like
 * the slots (cgrstat_total_size()). */
struct total_event {
	struct cgrstat_abi_value total;
	struct cgrstat_abi_value pending;
};

struct cgrp_total {
	struct total_event ev[CGRSTAT_ABI_MAX_EVENTS];
};

/* The bytes of a slot and of a total for @nr_events events */
#define cgrstat_slot_size(nr_events) \
	(sizeof(__u64) + (nr_events) * sizeof(struct slot_event))
#define cgrstat_total_size(nr_events) ((nr_events) * sizeof(struct total_event))

/* Per cpu: the counters at its last charge */
struct cpu_reading {
	struct cgrstat_abi_value last[CGRSTAT_ABI_MAX_EVENTS];
	/* charges on this cpu so far, times two; odd while one is under way
	 * (the reader waits for even and re-flushes when it moved) */
	__u64 seq;
};

/*
 * What the cpu counted since its last charge, noted by cgrstat_sync, with
 * the running cgroup's ancestry: ids[i] is the id of its ancestor i levels
 * up (ids[0] its own).  Valid while the cpu's seq has not moved; gen is
 * the read that noted it (read_gen).  The reader syncs a cpu only when
 * its read needs it: when the cpu charged since its last note, or when
 * the cgroup noted there is in the subtree read.  An array by cpu, which
 * the reader mmap()s.
 */
struct cpu_tail {
	__u64 seq;
	__u64 gen;
	__u32 level;
	__u32 nr_ids;
	__u64 ids[CGRSTAT_MAX_LEVELS];
	struct cgrstat_abi_value delta[CGRSTAT_ABI_MAX_EVENTS];
};

/* Sum of the cpus' tails below a cgroup (the readers' overlay) */
struct cgrp_sum {
	struct cgrstat_abi_value v[CGRSTAT_ABI_MAX_EVENTS];
};

/* Counts charged to a cgroup without an index (none was free when it was
 * created) and without an ancestor that has one: reported as errors, never
 * charged to another cgroup.  Per cpu. */
struct cgrstat_overflow {
	struct cgrstat_abi_value values[CGRSTAT_ABI_MAX_EVENTS];
	__u64 slot_charges;	/* charges with no slot */
	__u64 proxy_charges;	/* charges of a cgroup without an index to its
				 * nearest ancestor's slot */
};

#endif /* CGRSTAT_ABI_H */
