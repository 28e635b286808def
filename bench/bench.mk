# bench/bench.mk - every counting backend measured side by side (issue 6).
#
#   make bench         the full sweep (G up to 10000, E 1/2/4, depth 1/4/8)
#   make bench-quick   the reduced sweep (< 10 minutes)
#   make bench-smoke   the smoke run `make check` also runs (scripts only, no judging)
#   make bench-profile kernel profile (perf record) of the ping-pong under each backend
#
# All measurements run in one guest boot (bench/run.sh -> bench/guest.sh);
# results land in bench/results/<date>-<mode>/ (CSV, summary.md, PNG plots).
# BENCH_ARGS are passed to bench/run.sh (e.g. BENCH_ARGS='--events cycles,instructions').
BENCH_OUT := $(BUILD)/bench

$(BUILD)/bin/cgbench: bench/cgbench.c bpf/cgrstat.h $(CGRSTAT_LIB) $(LIBBPF_A) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) -isystem $(KHDR) $< $(CGRSTAT_LDLIBS) -o $@

GUEST_BINS += $(BUILD)/bin/cgbench

.PHONY: bench bench-quick bench-smoke bench-profile
bench: tests
	@bench/run.sh --mode full $(BENCH_ARGS)
bench-quick: tests
	@bench/run.sh --mode quick $(BENCH_ARGS)
bench-smoke: tests
	@bench/run.sh --mode smoke $(BENCH_ARGS)
bench-profile: tests
	@bench/run.sh --mode profile $(BENCH_ARGS)
