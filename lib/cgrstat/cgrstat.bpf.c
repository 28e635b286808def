// SPDX-License-Identifier: GPL-2.0
/*
 * cgrstat: perf event counts for every cgroup, aggregated up the hierarchy
 * by rstat only when somebody reads them.
 *
 * collector  tp_btf/sched_switch: when the cgroup changes on a cpu, read the
 *            cpu's counters and add the delta since the cpu's previous
 *            reading to the OUTGOING cgroup's per-cpu slot (found by the
 *            cgroup's index), then tell rstat that (cgroup, cpu) changed
 *            (once until the next flush).  O(1): no ancestor walk.
 * flusher    fentry/bpf_rstat_flush: rstat calls it for every updated
 *            (cgroup, cpu), children before parents; fold the cpu's new
 *            counts plus what the children passed up into the cgroup's
 *            total, and pass the same amount to the parent's pending.
 * sync       raw_tp, run by the reader on the cpus its read needs (an
 *            IPI): note what the cpu counted since its last charge and the
 *            ancestry of the cgroup running there.  It charges nothing and
 *            marks nothing.
 * readers    iter.s/cgroup: flush the walk's first cgroup (its whole
 *            subtree), add the cpus' noted tails on top (the overlay), then
 *            for every cgroup visited either print "name value" lines
 *            (dump_text) or store a binary record in the records map
 *            (dump_records, one read for any number of cgroups).
 *
 * Every kernel from 6.1 on: the loader reads the running kernel's BTF and
 * version and sets the read-only flags (cgrstat_maps.bpf.h) before load, so the verifier
 * drops the branches for the other kernels (bpf_ksym_exists() on kfuncs
 * needs 6.4).  The rstat kfuncs are only ever called for the current cpu,
 * with preemption off: from 6.17 css_rstat_updated() is a lock-free per-cpu
 * list insert that must not be done for another cpu from a preemptible
 * reader.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cgrstat_abi.h"
#include "cgrstat_kfuncs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif

#include "cgrstat_maps.bpf.h"

/* 6.2+ (used with cgroup storage only, which 6.1 lacks) */
extern struct cgroup *bpf_cgroup_ancestor(struct cgroup *cgrp, int level) __ksym __weak;

/*
 * A cgroup's entry in cgrp_index: its own index into the cgroup arrays, or,
 * with ENTRY_PROXY set, that of its nearest ancestor with one: a cgroup
 * created while every index is in use has no slot of its own, and its
 * counts go to that ancestor's slot (counted: unplaced), so that every
 * tracked ancestor still holds all that ran below it.
 */
#define ENTRY_PROXY (1U << 31)

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

/* @cgrp's entry (its index, or its proxy's with ENTRY_PROXY), -1 if none */
static __always_inline __s64 cgrp_entry_of(struct cgroup *cgrp)
{
	__u32 *idx;

	if (have_cgrp_storage)
		idx = bpf_cgrp_storage_get(&cgrp_index, cgrp, 0, 0);
	else
		idx = bpf_map_lookup_elem(&cgrp_index_by_id, &(__u64){ cgrp_id(cgrp) });
	return idx ? (__s64)*idx : -1;
}

/* @cgrp's own index in the cgroup arrays, or -1 when it has none. */
static __always_inline __s64 cgrp_index_of(struct cgroup *cgrp)
{
	__s64 entry = cgrp_entry_of(cgrp);

	return entry < 0 || (entry & ENTRY_PROXY) ? -1 : entry;
}

/* The entry of @cgrp's parent, -1 if it has none (or is the root).  Off
 * the scheduler path: at mkdir and in the open walk. */
static __always_inline __s64 parent_entry_of(struct cgroup *cgrp)
{
	struct cgroup *parent;
	__u32 *idx;
	__s64 entry;

	if (cgrp->level <= 0)
		return -1;
	if (!have_cgrp_storage) {
		/* self is the first member: a cgroup's css is the cgroup */
		parent = (struct cgroup *)BPF_CORE_READ(cgrp, self.parent);
		idx = bpf_map_lookup_elem(&cgrp_index_by_id,
					  &(__u64){ BPF_CORE_READ(parent, kn, id) });
		return idx ? (__s64)*idx : -1;
	}
	parent = bpf_cgroup_ancestor(cgrp, cgrp->level - 1);
	if (!parent)
		return -1;
	entry = cgrp_entry_of(parent);
	bpf_cgroup_release(parent);
	return entry;
}

/* Give @cgrp entry @idx: 0, -EEXIST when it has one already, or another
 * error when there is no room for it. */
static __always_inline long set_cgrp_index(struct cgroup *cgrp, __u32 idx)
{
	__u32 *stored;

	if (!have_cgrp_storage)
		return bpf_map_update_elem(&cgrp_index_by_id, &(__u64){ cgrp_id(cgrp) }, &idx,
					   BPF_NOEXIST);
	stored = bpf_cgrp_storage_get(&cgrp_index, cgrp, &idx, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!stored)
		return -ENOMEM;
	return *stored == idx ? 0 : -EEXIST;
}

/* A free index (its slot and total are zero), or -1 when all are in use.
 * Under cgroup_mutex. */
static __always_inline __s64 alloc_index(void)
{
	__u32 last = nr_free - 1, *idx;

	if (nr_free) {
		idx = bpf_map_lookup_elem(&free_indices, &last);
		if (idx) {
			nr_free = last;
			return *idx;
		}
	}
	if (next_index >= max_cgroups)
		return -1;
	return next_index++;
}

/* Give @idx back, its slot and total zero.  Under cgroup_mutex. */
static __always_inline void free_index(__u32 idx)
{
	__u32 *top = bpf_map_lookup_elem(&free_indices, &nr_free);

	if (top) {
		*top = idx;
		nr_free++;
	}
}

static long forget_cgroup(__u32 n, void *ctx);

/*
 * Free the indices of the cgroups released since: under cgroup_mutex
 * (every caller holds it), and the release of each of them flushed it a
 * last time right after cgrstat_release, under the same mutex, so its
 * counts are in its parent already.  Called by every reader, at every
 * mkdir and at every release: cgroups that come and go free their
 * indices without a reader.
 */
static __always_inline void forget_released(void)
{
	bpf_loop(nr_dead, forget_cgroup, NULL, 0);
	nr_dead = 0;
}

/*
 * Give @cgrp an index: its per-cpu slot and its total, zero.  Called off
 * the scheduler path only: when the cgroup is created (cgrstat_mkdir) and,
 * for the cgroups present at open, by the loader's walk (cgrstat_adopt,
 * parents first); both run under cgroup_mutex.  The collector and the
 * flusher only look the entry up.  A cgroup that finds no free index is
 * counted (nr_untracked) and gets its parent's entry as a proxy: its
 * counts go to its nearest ancestor with a slot.  Only one whose parent
 * has no entry either (or whose proxy entry found no room) charges the
 * overflow entry.
 */
static __always_inline void track_cgroup(struct cgroup *cgrp)
{
	__s64 idx, up;
	long err;

	if (cgrp_entry_of(cgrp) >= 0)
		return;
	forget_released();
	idx = alloc_index();
	if (idx >= 0) {
		err = set_cgrp_index(cgrp, idx);
		if (!err) {
			__sync_fetch_and_add(&nr_tracked, 1);
			return;
		}
		free_index(idx);
		if (err == -EEXIST)
			return;
	}
	__sync_fetch_and_add(&nr_untracked, 1);
	up = parent_entry_of(cgrp);
	if (up >= 0)
		set_cgrp_index(cgrp, ((__u32)up & ~ENTRY_PROXY) | ENTRY_PROXY);
}

/* The slot on the current cpu of entry @entry (own or proxy), NULL if none */
static __always_inline struct cgrp_cpu_slot *this_cpu_slot(__s64 entry)
{
	if (entry < 0)
		return NULL;
	return bpf_map_lookup_elem(&cgrp_slots, &(__u32){ (__u32)entry & ~ENTRY_PROXY });
}

/* @cgrp's own total, NULL when it has no index */
static __always_inline struct cgrp_total *cgrp_total(struct cgroup *cgrp)
{
	__s64 idx = cgrp_index_of(cgrp);

	return idx < 0 ? NULL : bpf_map_lookup_elem(&cgrp_totals, &(__u32){ idx });
}

static __always_inline void add_value(struct cgrstat_abi_value *dst, const struct cgrstat_abi_value *src)
{
	dst->counter += src->counter;
	dst->enabled += src->enabled;
	dst->running += src->running;
}

/* @d = @now - @last */
static __always_inline void reading_delta(struct cgrstat_abi_value *d,
					  const struct bpf_perf_event_value *now,
					  const struct cgrstat_abi_value *last)
{
	d->counter = now->counter - last->counter;
	d->enabled = now->enabled - last->enabled;
	d->running = now->running - last->running;
}

/*
 * Event @i's reading on @cpu into @now: its own times, or with
 * software_only those of event 0, already in @now.  0, or an error.
 */
static __always_inline int read_event(__u32 i, __u32 cpu, struct bpf_perf_event_value *now)
{
	__u64 count;

	if (!software_only || i == 0)
		return bpf_perf_event_read_value(&events, i * nr_cpus + cpu, now, sizeof(*now));
	count = bpf_perf_event_read(&events, i * nr_cpus + cpu);
	/* errors come back as -errno in the count */
	if ((__s64)count < 0 && (__s64)count >= -4095)
		return (int)count;
	now->counter = count;
	return 0;
}

static __always_inline struct cgrstat_overflow *this_cpu_overflow(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&overflow, &zero);
}

static __always_inline struct cpu_reading *this_cpu_reading(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_readings, &zero);
}

/*
 * Charge what the cpu counted since its last reading to @cgrp's slot, or
 * when it has none (the maps were full at its creation) to its nearest
 * ancestor's, which holds its subtree anyway (counted in proxy_charges),
 * or to the overflow entry when no ancestor has one either: the cpu's
 * reading always advances, so no cgroup is ever charged another's counts.
 * At a context switch (@at_switch), also the increment the switch is about
 * to add to the events in switch_events.  Returns the slot, NULL if the
 * counts went to the overflow entry.
 */
static __always_inline struct cgrp_cpu_slot *charge(struct cgroup *cgrp, __u32 cpu,
						    bool at_switch)
{
	struct cgrstat_abi_value *dst, delta;
	struct bpf_perf_event_value now = {};
	struct cgrstat_overflow *ovf;
	struct cgrp_cpu_slot *slot;
	struct cpu_reading *prev;
	__s64 entry;
	__u32 i;

	prev = this_cpu_reading();
	if (!prev)
		return NULL;
	entry = cgrp_entry_of(cgrp);
	slot = this_cpu_slot(entry);
	ovf = slot && !(entry & ENTRY_PROXY) ? NULL : this_cpu_overflow();
	if (!slot && !ovf)
		return NULL;
	prev->seq++;		/* odd: a charge is under way */
	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++) {
		if (read_event(i, cpu, &now)) {
			__sync_fetch_and_add(&nr_collect_errors, 1);
			if (software_only && i == 0)
				break;	/* no times for the others */
			continue;
		}
		if (at_switch && (switch_events & (1U << i)))
			now.counter++;
		reading_delta(&delta, &now, &prev->last[i]);
		dst = slot ? &slot->ev[i].state : &ovf->values[i];
		add_value(dst, &delta);
		prev->last[i].counter = now.counter;
		prev->last[i].enabled = now.enabled;
		prev->last[i].running = now.running;
	}
	if (slot && ovf) {
		ovf->proxy_charges++;
	} else if (ovf) {
		ovf->slot_charges++;
		__sync_fetch_and_add(&nr_unattributed, 1);
	}
	return slot;
}

/* The end of a charge: rstat is told once per slot between two flushes.
 * @cgrp is marked even when @slot is a proxy's (an ancestor's): rstat
 * links its ancestors too, the proxy among them, whose flush folds it.
 * The exchange orders the slot's new counts before the test of "marked",
 * against the flusher's exchange before it reads them. */
static __always_inline void charge_done(struct cgroup *cgrp, struct cgrp_cpu_slot *slot,
					__u32 cpu)
{
	struct cpu_reading *prev;

	if (slot && !__sync_lock_test_and_set(&slot->marked, 1))
		mark_updated(cgrp, cpu);
	prev = this_cpu_reading();
	if (prev)
		__sync_fetch_and_add(&prev->seq, 1);	/* even again, after the mark */
}

static __always_inline void collect(struct cgroup *cgrp, __u32 cpu, bool at_switch)
{
	struct cgrp_cpu_slot *slot = charge(cgrp, cpu, at_switch);

	charge_done(cgrp, slot, cpu);
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
 * The cgroup left is read through current, not through the untrusted
 * fentry argument @from: current->cgroups is still @from here.  Runs under
 * css_set_lock with irqs off.  Optional: the loader leaves it out when the
 * kernel inlined the function or refuses the program.
 */
SEC("fentry/css_set_move_task")
int BPF_PROG(cgrstat_migrate, struct task_struct *task, struct css_set *from,
	     struct css_set *to, bool use_mg_tasks)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct cgroup *old;

	if (!from || !to || task->pid != cur->pid)
		return 0;
	old = task_dfl_cgroup(cur);
	if (cgrp_id(old) == BPF_CORE_READ(to, dfl_cgrp, kn, id))
		return 0;
	collect(old, bpf_get_smp_processor_id(), false);
	return 0;
}

/*
 * Run by the reader on each cpu its read needs (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_RUN_ON_CPU, in an IPI, like bperf's trigger_read): note what
 * the cpu counted since its last charge, and the ancestry of the cgroup
 * running there, so that a read includes tasks that have been running
 * since their last switch.  Nothing is charged: the next switch charges
 * the same counts as usual.
 */
SEC("raw_tp")
int cgrstat_sync(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id();
	struct bpf_perf_event_value now = {};
	struct cgroup_subsys_state *css;
	struct cpu_reading *prev;
	struct cpu_tail *tail;
	__u32 i;

	prev = this_cpu_reading();
	tail = bpf_map_lookup_elem(&cpu_tails, &cpu);
	if (!prev || !tail)
		return 0;
	tail->seq = prev->seq;
	tail->gen = read_gen;
	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++) {
		if ((software_only && i > 0 && !now.enabled) || read_event(i, cpu, &now)) {
			tail->delta[i] = (struct cgrstat_abi_value){};
			continue;	/* event 0 failed with software_only: no times */
		}
		reading_delta(&tail->delta[i], &now, &prev->last[i]);
	}
	css = &task_dfl_cgroup(task)->self;
	tail->level = BPF_CORE_READ((struct cgroup *)css, level);
	tail->nr_ids = 0;
	for (i = 0; i < CGRSTAT_MAX_LEVELS && css; i++) {
		/* self is the first member: a cgroup's css is the cgroup */
		tail->ids[i] = BPF_CORE_READ((struct cgroup *)css, kn, id);
		tail->nr_ids = i + 1;
		css = BPF_CORE_READ(css, parent);
	}
	return 0;
}

/* A new cgroup: its entries, in the mkdir that creates it. */
SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cgrstat_mkdir, struct cgroup *cgrp, const char *path)
{
	track_cgroup(cgrp);
	return 0;
}

/* The cgroups present at open, walked once by the loader (after
 * cgrstat_mkdir is attached: none is missed). */
SEC("iter/cgroup")
int cgrstat_adopt(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;

	if (cgrp)
		track_cgroup(cgrp);
	return 0;
}

/*
 * A cgroup is released: its release work flushes it a last time right
 * after this tracepoint, so its counts reach the parent before anything
 * else under cgroup_mutex (held by the release, mkdir and the readers)
 * runs: the next of them frees its index (forget_released()).  Marking it
 * here rather than in the flusher also catches a cgroup with nothing left
 * to flush at release.  A proxy entry holds no index: on 6.1 its hash
 * element goes now (its descendants are all released: none passes counts
 * up through it any more).
 */
SEC("tp_btf/cgroup_release")
int BPF_PROG(cgrstat_release, struct cgroup *cgrp, const char *path)
{
	__s64 entry = cgrp_entry_of(cgrp);
	__u32 n;
	struct dead_cgroup *d;

	forget_released();
	if (entry < 0)
		return 0;
	if (entry & ENTRY_PROXY) {
		if (!have_cgrp_storage)
			bpf_map_delete_elem(&cgrp_index_by_id, &(__u64){ cgrp_id(cgrp) });
		return 0;
	}
	n = nr_dead;
	d = bpf_map_lookup_elem(&dead_cgroups, &n);
	if (!d) {
		__sync_fetch_and_add(&nr_dead_lost, 1);
		return 0;
	}
	d->id = cgrp_id(cgrp);
	d->idx = entry;
	nr_dead = n + 1;
	return 0;
}

static __always_inline void pass_up(struct cgrp_total *up, const struct cgrstat_abi_value *delta)
{
	__u32 i;

	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++)
		add_value(&up->ev[i].pending, &delta[i]);
}

SEC("fentry/bpf_rstat_flush")
int BPF_PROG(cgrstat_flush, struct cgroup *cgrp, struct cgroup *parent, int cpu)
{
	struct cgrstat_abi_value delta[CGRSTAT_ABI_MAX_EVENTS] = {};
	struct cgrp_total *total, *up = NULL;
	struct cgrp_cpu_slot *slot;
	__s64 idx = cgrp_index_of(cgrp), up_entry;
	__u32 i;

	__sync_fetch_and_add(&nr_flush_calls, 1);
	if (idx < 0)
		return 0;	/* not ours: untracked, or an rstat update of
				 * another user (memcg...) */
	slot = bpf_map_lookup_percpu_elem(&cgrp_slots, &(__u32){ idx }, cpu);
	if (!slot)
		return 0;	/* never: idx is below max_entries */
	total = bpf_map_lookup_elem(&cgrp_totals, &(__u32){ idx });
	if (!total)
		return 0;
	__sync_lock_test_and_set(&slot->marked, 0);
	/* a parent without an entry is outside the tree tracked (above the
	 * cgroup namespace's root); one that found no room (a proxy entry)
	 * passes its children's counts on to its nearest ancestor with a
	 * total, counted */
	up_entry = parent ? cgrp_entry_of(parent) : -1;
	if (up_entry >= 0)
		up = bpf_map_lookup_elem(&cgrp_totals, &(__u32){ (__u32)up_entry & ~ENTRY_PROXY });
	if (up && (up_entry & ENTRY_PROXY))
		__sync_fetch_and_add(&nr_unplaced_passups, 1);

	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++) {
		struct slot_event *se = &slot->ev[i];
		struct total_event *te = &total->ev[i];

		delta[i].counter = se->state.counter - se->flushed.counter;
		delta[i].enabled = se->state.enabled - se->flushed.enabled;
		delta[i].running = se->state.running - se->flushed.running;
		add_value(&se->flushed, &delta[i]);
		add_value(&delta[i], &te->pending);
		te->pending = (struct cgrstat_abi_value){};
		add_value(&te->total, &delta[i]);
	}
	if (up)
		pass_up(up, delta);
	return 0;
}

static __always_inline __u32 overlay_bit(__u64 id)
{
	return (id * 0x9E3779B97F4A7C15ull) >> 52;	/* < 64 * OVERLAY_FILTER_WORDS */
}

static __always_inline bool maybe_in_overlay(__u64 id)
{
	__u32 bit = overlay_bit(id);

	return overlay_filter[bit / 64] & (1ull << (bit % 64));
}

static __always_inline void fill_record(struct cgrstat_abi_record *rec, struct cgroup *cgrp)
{
	struct cgrp_total *total;
	struct cgrp_sum *extra;
	__u64 id = cgrp_id(cgrp);
	__u32 i;

	rec->cgroup_id = id;
	rec->level = cgrp->level;
	rec->nr_events = nr_events;
	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS; i++)
		rec->values[i] = (struct cgrstat_abi_value){};
	total = cgrp_total(cgrp);
	if (!total)
		return;	/* no slot: its counts are its nearest tracked ancestor's */
	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++)
		rec->values[i] = total->ev[i].total;
	extra = maybe_in_overlay(id) ? bpf_map_lookup_elem(&overlay, &id) : NULL;
	if (extra)
		for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++)
			add_value(&rec->values[i], &extra->v[i]);
}

/* Zero index *ctx's slot on @cpu. */
static long zero_slot(__u32 cpu, void *ctx)
{
	__u32 idx = *(__u32 *)ctx, i;
	struct cgrp_cpu_slot *slot;

	if (cpu >= nr_cpus)
		return 1;
	slot = bpf_map_lookup_percpu_elem(&cgrp_slots, &idx, cpu);
	if (!slot)
		return 0;
	slot->marked = 0;
	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++)
		slot->ev[i] = (struct slot_event){};
	return 0;
}

/* Released cgroup @n of dead_cgroups, completely flushed: zero its
 * index's slot and total and free the index (the cgroup's storage goes
 * with the cgroup). */
static long forget_cgroup(__u32 n, void *ctx)
{
	struct dead_cgroup *d = bpf_map_lookup_elem(&dead_cgroups, &n);
	struct cgrp_total *total;
	__u32 index, i;

	if (!d)
		return 1;
	index = d->idx;
	bpf_loop(CGRSTAT_MAX_CPUS, zero_slot, &index, 0);
	total = bpf_map_lookup_elem(&cgrp_totals, &index);
	if (total)
		for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++)
			total->ev[i] = (struct total_event){};
	if (!have_cgrp_storage)
		bpf_map_delete_elem(&cgrp_index_by_id, &d->id);
	free_index(index);
	__sync_fetch_and_add(&nr_tracked, -1);
	__sync_fetch_and_add(&nr_gc, 1);
	return 0;
}

/* Delete overlay key @n of overlay_keys. */
static long clear_overlay_key(__u32 n, void *ctx)
{
	__u64 *id = bpf_map_lookup_elem(&overlay_keys, &n);

	if (id)
		bpf_map_delete_elem(&overlay, id);
	return 0;
}

static __always_inline void clear_overlay(void)
{
	__u32 i;

	bpf_loop(nr_overlay_keys, clear_overlay_key, NULL, 0);
	nr_overlay_keys = 0;
	for (i = 0; i < OVERLAY_FILTER_WORDS; i++)
		overlay_filter[i] = 0;
}

/* The overlay entry of cgroup @id, a new zero one if it has none (its key
 * noted for the next clear_overlay()); NULL when the map is full. */
static __always_inline struct cgrp_sum *overlay_entry(__u64 id)
{
	struct cgrp_sum *o = bpf_map_lookup_elem(&overlay, &id);
	struct cgrp_sum zero_sum = {};
	__u32 n = nr_overlay_keys;
	__u64 *key;

	if (o)
		return o;
	key = bpf_map_lookup_elem(&overlay_keys, &n);
	if (!key || bpf_map_update_elem(&overlay, &id, &zero_sum, BPF_NOEXIST))
		return NULL;
	*key = id;
	nr_overlay_keys = n + 1;
	n = overlay_bit(id);
	overlay_filter[n / 64] |= 1ull << (n % 64);
	return bpf_map_lookup_elem(&overlay, &id);
}

static __always_inline __u64 cpu_seq(__u32 cpu)
{
	struct cpu_reading *r;
	__u32 zero = 0;

	r = bpf_map_lookup_percpu_elem(&cpu_readings, &zero, cpu);
	return r ? r->seq : 0;
}

/* A charge takes a microsecond with preemption off: wait for it to end. */
static long wait_even(__u32 i, void *ctx)
{
	__u32 cpu = *(__u32 *)ctx;

	return cpu_seq(cpu) & 1 ? 0 : 1;
}

static __always_inline __u64 stable_seq(__u32 cpu)
{
	bpf_loop(1 << 16, wait_even, &cpu, 0);
	return cpu_seq(cpu);
}

static long note_seq(__u32 cpu, void *ctx)
{
	__u64 *slot = bpf_map_lookup_elem(&read_seqs, &cpu);

	if (cpu >= nr_cpus)
		return 1;
	if (slot)
		*slot = stable_seq(cpu);
	return 0;
}

/* Add cpu @cpu's tail to the overlay of every ancestor of its cgroup, if
 * this read noted it (the others run no cgroup of the subtree read) and
 * its seq did not move since.  When it moved (a charge ran during the
 * flush), set *ctx: the caller flushes again. */
static long add_tail(__u32 cpu, void *ctx)
{
	struct cpu_tail *tail;
	struct cgrp_sum *o;
	__u64 *noted;
	__u32 l, e;

	if (cpu >= nr_cpus)
		return 1;
	noted = bpf_map_lookup_elem(&read_seqs, &cpu);
	tail = bpf_map_lookup_elem(&cpu_tails, &cpu);
	if (!noted || !tail || tail->gen != read_gen)
		return 0;
	if (cpu_seq(cpu) != *noted) {
		*(bool *)ctx = true;
		return 0;
	}
	if (tail->seq != *noted)
		return 0;	/* charged since the sync: the flush has it */
	for (l = 0; l < CGRSTAT_MAX_LEVELS && l < tail->nr_ids; l++) {
		o = overlay_entry(tail->ids[l]);
		if (!o)
			break;
		for (e = 0; e < CGRSTAT_ABI_MAX_EVENTS && e < nr_events; e++)
			add_value(&o->v[e], &tail->delta[e]);
	}
	return 0;
}

/* Flushes a read makes at most when cpus keep charging during its flushes */
#define READ_FLUSHES 4

/*
 * Once per read, on the walk's first cgroup (the root of what it visits):
 * note each cpu's seq, flush, delete released cgroups (readers run under
 * cgroup_mutex, as does the flush of a released cgroup, so they are
 * completely flushed), then add the tails the cpus noted.  A tail whose
 * cpu charged since the sync is in the flushed totals already.  A cpu
 * that charged during the flush may or may not be: note the seqs again,
 * flush again (its charge is complete: seq is even) and rebuild the
 * overlay, leaving its tail out.  The overlay is rebuilt because a tail
 * added before that flush may have been charged during it: it would count
 * twice (the flush has it).  So a read never counts a tail twice; when
 * cpus still charge during the last of READ_FLUSHES flushes, their tails
 * are left out of this read (the next one has them).
 */
static __always_inline void prepare_read(struct bpf_iter_meta *meta, struct cgroup *cgrp)
{
	bool moved = false;
	int i;

	if (meta->seq_num != 0)
		return;
	bpf_loop(CGRSTAT_MAX_CPUS, note_seq, NULL, 0);
	flush_subtree(cgrp);
	forget_released();
	for (i = 0; i < READ_FLUSHES; i++) {
		moved = false;
		clear_overlay();
		bpf_loop(CGRSTAT_MAX_CPUS, add_tail, &moved, 0);
		if (!moved || i == READ_FLUSHES - 1)
			break;
		__sync_fetch_and_add(&nr_reflush, 1);
		bpf_loop(CGRSTAT_MAX_CPUS, note_seq, NULL, 0);
		flush_subtree(cgrp);
	}
}

SEC("iter.s/cgroup")
int cgrstat_dump_records(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct cgrstat_abi_record *rec;
	__u32 idx;

	if (!cgrp)
		return 0;
	prepare_read(ctx->meta, cgrp);
	if (ctx->meta->seq_num == 0)
		nr_records = 0;
	/* the walk's first cgroup always has a record (a read of one cgroup);
	 * below it only those with a slot: the others read 0, and the
	 * records stay within max_cgroups + 1 however many cgroups exist */
	else if (cgrp_index_of(cgrp) < 0)
		return 0;
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
	struct cgrstat_abi_record rec;
	__u32 i;

	if (!cgrp)
		return 0;
	prepare_read(ctx->meta, cgrp);
	fill_record(&rec, cgrp);
	if (ctx->meta->seq_num != 0)
		BPF_SEQ_PRINTF(seq, "\n");
	BPF_SEQ_PRINTF(seq, "cgroup_id %llu\n", rec.cgroup_id);
	for (i = 0; i < CGRSTAT_ABI_MAX_EVENTS && i < nr_events; i++) {
		BPF_SEQ_PRINTF(seq, "%s %llu\n", event_names[i], rec.values[i].counter);
		BPF_SEQ_PRINTF(seq, "%s.time_enabled %llu\n", event_names[i], rec.values[i].enabled);
		BPF_SEQ_PRINTF(seq, "%s.time_running %llu\n", event_names[i], rec.values[i].running);
	}
	return 0;
}
