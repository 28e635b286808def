# tests/perf/hw-perf.mk - the workload of the hardware-event tests of
# perf stat --for-each-cgroup (tests/perf/hw-perf.sh, listed in
# tests/vm-tests.d/81-hw-perf.list): arm64 only, the guests with a PMU.
#
#   $(BUILD)/bin/hw-loop   N iterations of a two-instruction loop, run
#                          after the parent moved it into a cgroup
$(BUILD)/bin/hw-loop: tests/perf/hw-loop.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $< -o $@

ARM64_BINS += $(BUILD)/bin/hw-loop
