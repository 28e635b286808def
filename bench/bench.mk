# bench/bench.mk - every counting backend measured side by side.
#
#   make bench         the full sweep (G 1 to 10000 x E 1, 2, 4 x depth 1, 4, 8)
#   make bench-quick   the reduced sweep (< 15 minutes: G 2 and 1000, depth 1 and 8, E = 2)
#   make bench-smoke   the smoke run `make check` also runs (scripts only, no judging)
#   make bench-profile kernel profile (perf record) of the ping-pong under each backend
#   make bench-arm64   hardware events on the arm64 guest's emulated PMUv3: G 2 and 1000
#                      x depth 1 and 8 x E 2 and 8 (multiplexed), every backend, the
#                      PMU register writes of each (bench/README.md, "arm64")
#
# All measurements run in one guest boot (bench/run.sh -> bench/guest.sh);
# results land in bench/results/<date>-<mode>/ (CSV, summary.md, PNG plots).
# They boot the benchmark kernel (make kernel-bench: no lock or sleep
# debugging) in an instruction-exact guest (scripts/vm-run.sh --exact).
# BENCH_ARGS are passed to bench/run.sh (e.g. BENCH_ARGS='--wall' for the
# wall clock, '--events cycles,instructions', or '--kernel build/bzImage').
BENCH_OUT := $(BUILD)/bench
BENCH_KERNEL := --kernel $(BUILD)/bzImage-bench

BENCH_SKEL_OUT := $(BUILD)/bench/skel

# switch_read.bpf.c: cgbench's floor-read backend
$(eval $(call BPF_SKEL_RULES,bench,$(BENCH_SKEL_OUT)))

# cgbench measures libcgcount as programs link it; floor-read loads its own
# BPF program with the program's own libbpf (libcgcount.a keeps its copy local)
$(BUILD)/bin/cgbench: bench/cgbench.c $$(CGC_DIR)/cgcount.h tools/cli.h $$(CGC_LIB_A) $$(CGUTIL_LIB) \
		$(LIBBPF_A) $(KHDR)/linux/perf_event.h $(BENCH_SKEL_OUT)/switch_read.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -I$(CGC_DIR) $(CGUTIL_CFLAGS) $(LIBBPF_CFLAGS) -isystem $(KHDR) \
		-Itools -I$(BENCH_SKEL_OUT) $< $(CGC_LIB_A) $(CGUTIL_LIB) $(LIBBPF_A) $(CGC_LDLIBS) \
		$(LIBBPF_LDLIBS) -o $@

GUEST_BINS += $(BUILD)/bin/cgbench
ARM64_BINS += $(BUILD)/bin/cgbench

.PHONY: bench bench-quick bench-smoke bench-profile bench-arm64
bench: tests kernel-bench
	@bench/run.sh --mode full $(BENCH_KERNEL) $(BENCH_ARGS)
bench-quick: tests kernel-bench
	@bench/run.sh --mode quick $(BENCH_KERNEL) $(BENCH_ARGS)
bench-smoke: tests kernel-bench
	@bench/run.sh --mode smoke $(BENCH_KERNEL) $(BENCH_ARGS)
bench-profile: tests kernel-bench
	@bench/run.sh --mode profile $(BENCH_KERNEL) $(BENCH_ARGS)
# the arm64 guest's default event pool is hardware events (bench/guest.sh)
BENCH_ARM64_CONFIGS := 2 2 1;2 2 8;1000 2 1;1000 2 8;2 8 1;2 8 8;1000 8 1;1000 8 8
bench-arm64: arm64 kernel-arm64-bench
	@BENCH_DRIVER=cgbench BENCH_COST=0 bench/run.sh --mode quick --kernel $(BUILD)/Image-7.3-arm64-bench \
		--configs '$(BENCH_ARM64_CONFIGS)' $(BENCH_ARGS)

# ---- bench/cgrstat: the collector's per-switch cost on the host (host.sh) ----
BENCH_CGRSTAT_OUT := $(BUILD)/bench/cgrstat

$(BENCH_CGRSTAT_OUT)/pingpong: bench/cgrstat/pingpong.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $< -o $@

GUEST_BINS += $(BENCH_CGRSTAT_OUT)/pingpong

# trigger: cgroup-switches perf event vs tp_btf/sched_switch as the collector's trigger
$(eval $(call BPF_SKEL_RULES,bench/cgrstat,$(BENCH_CGRSTAT_OUT)))

$(BENCH_CGRSTAT_OUT)/trigger: bench/cgrstat/trigger.c $(BENCH_CGRSTAT_OUT)/trigger.skel.h \
		$$(CGRSTAT_SKEL) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(BENCH_CGRSTAT_OUT) -I$(CGRSTAT_OUT) $< $(LIBBPF_A) \
		$(LIBBPF_LDLIBS) -o $@

GUEST_BINS += $(BENCH_CGRSTAT_OUT)/trigger

# ---- bench/memcg-stat: memory.stat against the BPF reader ----
$(BUILD)/bin/memcg_stat_bench: bench/memcg-stat/memcg_stat_bench.c $$(MEMCG_DIR)/memcg_stat.h tools/cli.h \
		tests/memcg/mcg_util.c tests/memcg/mcg_util.h $$(CGTEST_HDRS) $$(CGTEST_LIB) $$(MEMCG_LIB) \
		$$(CGUTIL_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) -Itools -Itests/memcg -Itests/lib $< tests/memcg/mcg_util.c $(CGTEST_LIB) \
		$(MEMCG_LDLIBS) -o $@

GUEST_BINS += $(BUILD)/bin/memcg_stat_bench
