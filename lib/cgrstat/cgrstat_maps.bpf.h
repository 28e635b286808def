/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgrstat.bpf.c's state: the read-only flags the loader sets before load,
 * the maps (their value layouts are cgrstat_abi.h's) and the global
 * counters the loader reads through the skeleton.  Included once, by
 * cgrstat.bpf.c.
 */
#ifndef CGRSTAT_MAPS_BPF_H
#define CGRSTAT_MAPS_BPF_H

/* Set by the loader before load. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 1;
const volatile char event_names[CGRSTAT_ABI_MAX_EVENTS][CGRSTAT_NAME_LEN];
/* Bit i: event i counts the context switch itself (context-switches,
 * cgroup-switches).  perf counts it in perf_event_task_sched_out(), after
 * the sched_switch tracepoint, and charges it to the outgoing cgroup (as
 * perf stat -G does); we do the same by charging that +1 here. */
const volatile __u32 switch_events;
/* Every event is a software one (cpu-clock, context-switches...): none of
 * them ever multiplexes, and their enabled and running times advance by
 * the same amount between two reads of the cpu, so the times are read once
 * per charge, with the first event (bpf_perf_event_read_value()), and the
 * other events' counts alone (bpf_perf_event_read()). */
const volatile bool software_only;
/* have_css_rstat, kfunc_args_trusted: cgrstat_kfuncs.bpf.h */
/* 6.2+: a cgroup finds its index in cgroup local storage (cgrp_index);
 * 6.1 has none and keeps a hash map from cgroup id to index. */
const volatile bool have_cgrp_storage;
/* Entries of the slot and total arrays (the cgroups that can be tracked) */
const volatile __u32 max_cgroups = 1;

/* key = event * nr_cpus + cpu, value = perf event fd (cpu-wide counter) */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_reading);
} cpu_readings SEC(".maps");

/* cpu -> its tail; mmap()ed by the reader, which reads the notes to pick
 * the cpus to sync.  Sized by the loader (nr_cpus). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_tail);
} cpu_tails SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgrstat_overflow);
} overflow SEC(".maps");

/*
 * A tracked cgroup owns one index into the two cgroup arrays: its per-cpu
 * slot and its total.  Indices are handed out when a cgroup is created (or
 * found at open), off the scheduler path, and return to free_indices at
 * the next mkdir, release or read after its release (forget_released());
 * a free index's slot and total are zero on every cpu.  A cgroup created
 * while none is free holds its nearest tracked ancestor's index as a
 * proxy entry (ENTRY_PROXY, cgrstat.bpf.c).  The collector and the flusher look the
 * index up (cgroup storage, or the id hash on 6.1) and then index an array:
 * no hash lookup on 6.2+, and a context switch never allocates.  The
 * loader sets max_entries (max_cgroups) and the arrays' value sizes, which
 * it shrinks to the events in use: the values are given by size, without
 * BTF, which the smaller size would contradict.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} cgrp_index SEC(".maps");

/* 6.1: cgroup id -> entry.  Preallocated: elements are created in mkdir
 * and in the open walk only, but under cgroup_mutex with no room to sleep
 * for memory either way.  Sized by the loader for the indices and as many
 * proxy entries (cgroups created while every index was in use). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
} cgrp_index_by_id SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgrp_cpu_slot));
} cgrp_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgrp_total));
} cgrp_totals SEC(".maps");

/* Indices given back by forgotten cgroups: free_indices[0 .. nr_free)
 * (those never handed out are next_index and above).  Only used under
 * cgroup_mutex: by mkdir, the open walk and the readers.  (An array, not a
 * queue map: 6.1 lets sleepable programs use arrays and hashes only.) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} free_indices SEC(".maps");

/* The readers' overlay: cgroup id -> sum of the cpus' tails below it.
 * Rebuilt by every read (readers hold cgroup_mutex), which deletes the
 * keys the previous build added, listed in overlay_keys[0 ..
 * nr_overlay_keys): a read costs the cpus' ancestries, not the size of
 * the map.  Both sized by the loader (nr_cpus * CGRSTAT_MAX_LEVELS). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct cgrp_sum);
} overlay SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} overlay_keys SEC(".maps");

/* Each cpu's seq as the reader found it before flushing (sized nr_cpus). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} read_seqs SEC(".maps");

/* Output of dump_records: records[0..nr_records), mmap()ed by user space */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct cgrstat_abi_record);
} records SEC(".maps");

/* A released cgroup whose index the next reader frees. */
struct dead_cgroup {
	__u64 id;
	__u32 idx;
	__u32 pad;
};

/* The cgroups released and not yet forgotten: dead_cgroups[0 .. nr_dead).
 * Their counts went to the parent by the time anything else holds
 * cgroup_mutex.  Pushed by the release and emptied by the next release,
 * mkdir or read, all under cgroup_mutex: it holds one cgroup at most
 * between two of them.  Sized by the loader like the cgroup arrays. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dead_cgroup);
} dead_cgroups SEC(".maps");

__u32 nr_records;
__u64 read_gen;		/* the read under way: set by the reader before it syncs */
__u32 records_dropped;
/* statistics for tests and diagnostics */
__u64 nr_collect_errors;
__u64 nr_flush_calls;
__u64 nr_gc;
__u64 nr_dead_lost;	/* released cgroups that did not fit dead_cgroups */
__u64 nr_reflush;	/* reads that flushed twice (a charge raced the flush) */
__u64 nr_untracked;	/* cgroups that found no room in the cgroup maps */
__u64 nr_unattributed;	/* charges to the overflow entry (a read checks it) */
/* flushes that passed a cgroup's counts past a parent without a slot
 * (a proxy entry) to the nearest ancestor with one */
__u64 nr_unplaced_passups;
__u64 nr_tracked;	/* cgroups holding an index now */
__u32 next_index;	/* indices below it were handed out once */
__u32 nr_free;		/* entries of free_indices */
__u32 nr_dead;		/* entries of dead_cgroups */
__u32 nr_overlay_keys;	/* entries of overlay_keys */
/* Bit overlay_bit(id) is set for every key of the overlay: a cgroup whose
 * bit is clear has no entry, and the reader skips the lookup. */
#define OVERLAY_FILTER_WORDS 64
__u64 overlay_filter[OVERLAY_FILTER_WORDS];

#endif /* CGRSTAT_MAPS_BPF_H */
