# bench/bench.mk - every counting backend measured side by side (issue 6).
#
#   make bench         the full sweep (G up to 10000, E 1/2/4, depth 1/4/8)
#   make bench-quick   the reduced sweep (< 10 minutes)
#   make bench-smoke   the smoke run `make check` also runs (scripts only, no judging)
#   make bench-profile kernel profile (perf record) of the ping-pong under each backend
#
# All measurements run in one guest boot (bench/run.sh -> bench/guest.sh);
# results land in bench/results/<date>-<mode>/ (CSV, summary.md, PNG plots).
# They boot the benchmark kernel (make kernel-bench: no lock or sleep
# debugging). BENCH_ARGS are passed to bench/run.sh (e.g.
# BENCH_ARGS='--events cycles,instructions', or '--kernel build/bzImage').
BENCH_OUT := $(BUILD)/bench
BENCH_KERNEL := --kernel $(BUILD)/bzImage-bench

$(BUILD)/bin/cgbench: bench/cgbench.c bpf/cgrstat.h $(CGRSTAT_LIB) $(LIBBPF_A) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) -isystem $(KHDR) $< $(CGRSTAT_LDLIBS) -o $@

GUEST_BINS += $(BUILD)/bin/cgbench

.PHONY: bench bench-quick bench-smoke bench-profile
bench: tests kernel-bench
	@bench/run.sh --mode full $(BENCH_KERNEL) $(BENCH_ARGS)
bench-quick: tests kernel-bench
	@bench/run.sh --mode quick $(BENCH_KERNEL) $(BENCH_ARGS)
bench-smoke: tests kernel-bench
	@bench/run.sh --mode smoke $(BENCH_KERNEL) $(BENCH_ARGS)
bench-profile: tests kernel-bench
	@bench/run.sh --mode profile $(BENCH_KERNEL) $(BENCH_ARGS)
