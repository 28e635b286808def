// SPDX-License-Identifier: GPL-2.0
/*
 * cgrstat: perf event counts for every cgroup, aggregated up the hierarchy
 * by rstat only when somebody reads them.
 *
 * collector  tp_btf/sched_switch: when the cgroup changes on a cpu, read the
 *            cpu's counters and add the delta since the cpu's previous
 *            reading to the OUTGOING cgroup's per-cpu slot, then tell rstat
 *            that (cgroup, cpu) changed.  O(1): no ancestor walk.
 * flusher    fentry/bpf_rstat_flush: rstat calls it for every updated
 *            (cgroup, cpu), children before parents; fold the cpu's new
 *            counts plus what the children passed up into the cgroup's
 *            total, and pass the same amount to the parent's pending.
 * readers    iter.s/cgroup: flush the walk's first cgroup (its whole
 *            subtree), then for every cgroup visited either print
 *            "name value" lines (dump_text) or store a binary record in the
 *            records map (dump_records, one read for any number of cgroups).
 *
 * Self-contained: only vmlinux.h and libbpf's headers.  Runs on 6.1+; the
 * rstat kfuncs were renamed in 6.16 (css_rstat_*): both are declared weak
 * and picked with bpf_ksym_exists().
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define CGRSTAT_MAX_EVENTS 8
#define CGRSTAT_MAX_CPUS 1024
#define CGRSTAT_NAME_LEN 32

struct cgrstat_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/* Binary record handed to user space (layout mirrored in cgrstat.h). */
struct cgrstat_record {
	__u64 cgroup_id;
	__u32 level;
	__u32 nr_events;
	struct cgrstat_value values[CGRSTAT_MAX_EVENTS];
};

/* Per (cgroup, cpu): cumulative counts written by the collector on that cpu
 * only, and what the flusher already folded (flusher-owned). */
struct cgrp_cpu_slot {
	struct cgrstat_value state[CGRSTAT_MAX_EVENTS];
	struct cgrstat_value flushed[CGRSTAT_MAX_EVENTS];
};

/* Per cgroup: subtree total, and counts passed up by children not yet
 * folded.  Only touched under the rstat lock. */
struct cgrp_total {
	struct cgrstat_value total[CGRSTAT_MAX_EVENTS];
	struct cgrstat_value pending[CGRSTAT_MAX_EVENTS];
};

struct cpu_reading {
	struct cgrstat_value last[CGRSTAT_MAX_EVENTS];
	__u64 charged;		/* switches charged on this cpu (statistics) */
};

/* Set by the loader before load. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_events = 1;
const volatile char event_names[CGRSTAT_MAX_EVENTS][CGRSTAT_NAME_LEN];
/* Bit i: event i counts the context switch itself (context-switches,
 * cgroup-switches).  perf counts it in perf_event_task_sched_out(), after
 * the sched_switch tracepoint, and charges it to the outgoing cgroup (as
 * perf stat -G does); we do the same by charging that +1 here. */
const volatile __u32 switch_events;

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

/*
 * max_entries of the two cgroup maps are set by the loader.  Both are
 * preallocated: elements are created at a context switch and under the
 * rstat lock with irqs off, where BPF_F_NO_PREALLOC maps fail with
 * -ENOMEM once their small per-cpu cache is empty (measured: the first
 * parent totals created in the flusher were lost that way).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct cgrp_cpu_slot);
} cgrp_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct cgrp_total);
} cgrp_totals SEC(".maps");

/* Output of dump_records: records[0..nr_records), mmap()ed by user space */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct cgrstat_record);
} records SEC(".maps");

/* Released cgroups, whose entries the next reader deletes (kernfs ids are
 * never reused).  Their counts already went to the parent by then. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} dead_cgroups SEC(".maps");

/*
 * Per cpu: the cgroup that cgrstat_sync last charged on that cpu outside a
 * cgroup switch, which the next reader marks updated before flushing
 * (the sync program cannot call the rstat kfuncs).  Sized by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} synced_cgroup SEC(".maps");

__u32 nr_records;
__u32 records_dropped;
/* statistics for tests and diagnostics */
__u64 nr_collect_errors;
__u64 nr_slot_full;
__u64 nr_flush_calls;
__u64 nr_gc;

/* 6.1 .. 6.15 */
extern void cgroup_rstat_updated(struct cgroup *cgrp, int cpu) __ksym __weak;
extern void cgroup_rstat_flush(struct cgroup *cgrp) __ksym __weak;
/* 6.2+: to mark the cgroups cgrstat_sync charged */
extern struct cgroup *bpf_cgroup_from_id(__u64 cgid) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;
/* 6.16+ */
extern void css_rstat_updated(struct cgroup_subsys_state *css, int cpu) __ksym __weak;
extern void css_rstat_flush(struct cgroup_subsys_state *css) __ksym __weak;

/* Direct (BTF) loads: cheaper than BPF_CORE_READ's probe_read calls. */
static __always_inline __u64 cgrp_id(struct cgroup *cgrp)
{
	return cgrp->kn->id;
}

/* Direct access (not BPF_CORE_READ) keeps a BTF pointer the kfuncs accept. */
static __always_inline struct cgroup *task_dfl_cgroup(struct task_struct *task)
{
	return task->cgroups->dfl_cgrp;
}

static __always_inline void mark_updated(struct cgroup *cgrp, int cpu)
{
	if (bpf_ksym_exists(cgroup_rstat_updated))
		cgroup_rstat_updated(cgrp, cpu);
	else if (bpf_ksym_exists(css_rstat_updated))
		css_rstat_updated(&cgrp->self, cpu);
}

static __always_inline void flush_subtree(struct cgroup *cgrp)
{
	if (bpf_ksym_exists(cgroup_rstat_flush))
		cgroup_rstat_flush(cgrp);
	else if (bpf_ksym_exists(css_rstat_flush))
		css_rstat_flush(&cgrp->self);
}

static struct cgrp_cpu_slot *get_slot(__u64 id)
{
	static const struct cgrp_cpu_slot zero;
	struct cgrp_cpu_slot *slot;

	slot = bpf_map_lookup_elem(&cgrp_slots, &id);
	if (slot)
		return slot;
	/* percpu: creates a zeroed slot on every cpu */
	if (bpf_map_update_elem(&cgrp_slots, &id, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&cgrp_slots, &id)) {
		__sync_fetch_and_add(&nr_slot_full, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&cgrp_slots, &id);
}

static struct cgrp_total *get_total(__u64 id)
{
	static const struct cgrp_total zero;
	struct cgrp_total *t;

	t = bpf_map_lookup_elem(&cgrp_totals, &id);
	if (t)
		return t;
	bpf_map_update_elem(&cgrp_totals, &id, &zero, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&cgrp_totals, &id);
	if (!t)
		__sync_fetch_and_add(&nr_slot_full, 1);
	return t;
}

/* Charge what the cpu counted since its last reading to @cgrp.  At a context
 * switch (@at_switch), also the increment the switch is about to add to the
 * events in switch_events.  Returns the slot's cgroup id, 0 if nothing was
 * charged; the caller marks (cgroup, cpu) updated for rstat. */
static __always_inline __u64 charge(struct cgroup *cgrp, __u32 cpu, bool at_switch)
{
	struct bpf_perf_event_value now;
	struct cgrp_cpu_slot *slot;
	struct cpu_reading *prev;
	__u32 zero = 0, i;

	prev = bpf_map_lookup_elem(&cpu_readings, &zero);
	slot = get_slot(cgrp_id(cgrp));
	if (!prev || !slot)
		return 0;

	for (i = 0; i < CGRSTAT_MAX_EVENTS && i < nr_events; i++) {
		if (bpf_perf_event_read_value(&events, i * nr_cpus + cpu, &now, sizeof(now))) {
			__sync_fetch_and_add(&nr_collect_errors, 1);
			continue;
		}
		if (at_switch && (switch_events & (1U << i)))
			now.counter++;
		slot->state[i].counter += now.counter - prev->last[i].counter;
		slot->state[i].enabled += now.enabled - prev->last[i].enabled;
		slot->state[i].running += now.running - prev->last[i].running;
		prev->last[i].counter = now.counter;
		prev->last[i].enabled = now.enabled;
		prev->last[i].running = now.running;
	}
	prev->charged++;
	return cgrp_id(cgrp);
}

static __always_inline void collect(struct cgroup *cgrp, __u32 cpu, bool at_switch)
{
	if (charge(cgrp, cpu, at_switch))
		mark_updated(cgrp, cpu);
}

/*
 * Run by the reader on every cpu (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_RUN_ON_CPU, in an IPI, like bperf's trigger_read): charge what
 * the cpu counted since its last cgroup switch to the cgroup running there,
 * so that a read includes tasks that have been running since then.  The
 * reader marks the cgroup updated (see mark_synced) before it flushes.
 */
SEC("raw_tp")
int cgrstat_sync(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 id, *synced;

	id = charge(task_dfl_cgroup(task), cpu, false);
	synced = bpf_map_lookup_elem(&synced_cgroup, &cpu);
	if (id && synced)
		*synced = id;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cgrstat_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cgroup *out = task_dfl_cgroup(prev);

	if (out == task_dfl_cgroup(next))
		return 0;
	collect(out, bpf_get_smp_processor_id(), true);
	return 0;
}

/*
 * A running task that moves itself to another cgroup (echo $$ >
 * cgroup.procs) changes the cpu's cgroup without a context switch: charge
 * what it ran so far to the cgroup it leaves.  (A task running on another
 * cpu while it is moved is charged to its new cgroup from its last switch.)
 * Optional: the loader disables it if the kernel inlined the function.
 */
SEC("fentry/css_set_move_task")
int BPF_PROG(cgrstat_migrate, struct task_struct *task, struct css_set *from,
	     struct css_set *to, bool use_mg_tasks)
{
	struct cgroup *old;

	if (!from || !to || task->pid != (__u32)bpf_get_current_pid_tgid())
		return 0;
	old = from->dfl_cgrp;
	if (old == to->dfl_cgrp)
		return 0;
	collect(old, bpf_get_smp_processor_id(), false);
	return 0;
}

/*
 * A cgroup is released: its release work, under cgroup_mutex, flushes it a
 * last time right after this tracepoint, so its counts reach the parent
 * before any reader (also under cgroup_mutex) runs. The next reader deletes
 * its entries. Marking it here rather than in the flusher also catches a
 * cgroup with nothing left to flush at release, whose entries the flusher
 * would never see again.
 */
SEC("tp_btf/cgroup_release")
int BPF_PROG(cgrstat_release, struct cgroup *cgrp, const char *path)
{
	__u64 id = cgrp_id(cgrp);
	__u8 one = 1;

	if (bpf_map_lookup_elem(&cgrp_totals, &id) || bpf_map_lookup_elem(&cgrp_slots, &id))
		bpf_map_update_elem(&dead_cgroups, &id, &one, BPF_ANY);
	return 0;
}

static __always_inline void add_value(struct cgrstat_value *dst, const struct cgrstat_value *src)
{
	dst->counter += src->counter;
	dst->enabled += src->enabled;
	dst->running += src->running;
}

SEC("fentry/bpf_rstat_flush")
int BPF_PROG(cgrstat_flush, struct cgroup *cgrp, struct cgroup *parent, int cpu)
{
	struct cgrstat_value delta[CGRSTAT_MAX_EVENTS] = {};
	struct cgrp_total *total, *up;
	struct cgrp_cpu_slot *slot;
	__u64 id = cgrp_id(cgrp);
	__u32 i;

	__sync_fetch_and_add(&nr_flush_calls, 1);
	slot = bpf_map_lookup_percpu_elem(&cgrp_slots, &id, cpu);
	if (slot)
		total = get_total(id);
	else	/* nothing from this cpu; maybe pending from children, or an
		 * rstat update that is not ours (memcg...) */
		total = bpf_map_lookup_elem(&cgrp_totals, &id);
	if (!total)
		return 0;

	for (i = 0; i < CGRSTAT_MAX_EVENTS && i < nr_events; i++) {
		if (slot) {
			delta[i].counter = slot->state[i].counter - slot->flushed[i].counter;
			delta[i].enabled = slot->state[i].enabled - slot->flushed[i].enabled;
			delta[i].running = slot->state[i].running - slot->flushed[i].running;
			add_value(&slot->flushed[i], &delta[i]);
		}
		add_value(&delta[i], &total->pending[i]);
		total->pending[i] = (struct cgrstat_value){};
		add_value(&total->total[i], &delta[i]);
	}

	if (!parent)
		return 0;
	up = get_total(cgrp_id(parent));
	if (!up)
		return 0;
	for (i = 0; i < CGRSTAT_MAX_EVENTS && i < nr_events; i++)
		add_value(&up->pending[i], &delta[i]);
	return 0;
}

static __always_inline void fill_record(struct cgrstat_record *rec, struct cgroup *cgrp)
{
	struct cgrp_total *total;
	__u64 id = cgrp_id(cgrp);
	__u32 i;

	rec->cgroup_id = id;
	rec->level = BPF_CORE_READ(cgrp, level);
	rec->nr_events = nr_events;
	total = bpf_map_lookup_elem(&cgrp_totals, &id);
	for (i = 0; i < CGRSTAT_MAX_EVENTS; i++)
		rec->values[i] = total && i < nr_events ? total->total[i] : (struct cgrstat_value){};
}

static long forget_cgroup(struct bpf_map *map, __u64 *id, __u8 *val, void *ctx)
{
	bpf_map_delete_elem(&cgrp_slots, id);
	bpf_map_delete_elem(&cgrp_totals, id);
	bpf_map_delete_elem(map, id);
	__sync_fetch_and_add(&nr_gc, 1);
	return 0;
}

/*
 * Flush once per read: the walk's first cgroup is the root of what it
 * visits.  Readers run under cgroup_mutex, as does the flush of a released
 * cgroup, so released cgroups are completely flushed here: forget them.
 */
/* Mark what cgrstat_sync charged on each cpu updated, so the flush takes it. */
static __always_inline void mark_synced(void)
{
	struct cgroup *cgrp;
	__u64 *synced;
	__u32 i, key;

	if (!bpf_ksym_exists(bpf_cgroup_from_id))
		return;
	/* the index stays in a register (the key's address is taken) */
	for (i = 0; i < CGRSTAT_MAX_CPUS && i < nr_cpus; i++) {
		key = i;
		synced = bpf_map_lookup_elem(&synced_cgroup, &key);
		if (!synced || !*synced)
			continue;
		cgrp = bpf_cgroup_from_id(*synced);
		*synced = 0;
		if (!cgrp)
			continue;	/* released: marked when its last task left */
		mark_updated(cgrp, i);
		bpf_cgroup_release(cgrp);
	}
}

static __always_inline void flush_if_first(struct bpf_iter_meta *meta, struct cgroup *cgrp)
{
	if (meta->seq_num != 0)
		return;
	mark_synced();
	flush_subtree(cgrp);
	bpf_for_each_map_elem(&dead_cgroups, forget_cgroup, NULL, 0);
}

SEC("iter.s/cgroup")
int cgrstat_dump_records(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct cgrstat_record *rec;
	__u32 idx;

	if (!cgrp)
		return 0;
	flush_if_first(ctx->meta, cgrp);
	if (ctx->meta->seq_num == 0)
		nr_records = 0;
	idx = nr_records;
	rec = bpf_map_lookup_elem(&records, &idx);
	if (!rec) {
		records_dropped = 1;
		return 1;	/* stop the walk: user space sees records_dropped */
	}
	fill_record(rec, cgrp);
	nr_records = idx + 1;
	return 0;
}

SEC("iter.s/cgroup")
int cgrstat_dump_text(struct bpf_iter__cgroup *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct cgroup *cgrp = ctx->cgroup;
	struct cgrstat_record rec;
	__u32 i;

	if (!cgrp)
		return 0;
	flush_if_first(ctx->meta, cgrp);
	fill_record(&rec, cgrp);
	if (ctx->meta->seq_num != 0)
		BPF_SEQ_PRINTF(seq, "\n");
	BPF_SEQ_PRINTF(seq, "cgroup_id %llu\n", rec.cgroup_id);
	for (i = 0; i < CGRSTAT_MAX_EVENTS && i < nr_events; i++) {
		BPF_SEQ_PRINTF(seq, "%s %llu\n", event_names[i], rec.values[i].counter);
		BPF_SEQ_PRINTF(seq, "%s.time_enabled %llu\n", event_names[i], rec.values[i].enabled);
		BPF_SEQ_PRINTF(seq, "%s.time_running %llu\n", event_names[i], rec.values[i].running);
	}
	return 0;
}
