# tests/kernel/kernel-tests.mk - tests of the multi-cgroup perf event
# ioctls (kernel/) and the kernel tree's own perf_events selftests.
#
#   $(BUILD)/bin/perf_cgroup_*       kselftest-harness programs (KTAP), one
#                                    per tests/kernel/<name>.c, linked
#                                    with $(PCG_LIB_O) (pcg_lib.c: perf
#                                    events, the ioctls) and the tests'
#                                    cgroup library (tests/lib/tests-lib.mk)
#   $(BUILD)/perf-selftests/*        tools/testing/selftests/perf_events,
#                                    built out of tree against $(KHDR)
# Listed in tests/vm-tests.d/20-perf-selftests.list, 30-kernel.list and
# 31-cgroup-enoent.list.

PCG_DIR   := tests/kernel
PCG_NAMES := classic attach lifecycle descendants errors stress scale hotplug enoent
PCG_BINS  := $(addprefix $(BUILD)/bin/perf_cgroup_,$(PCG_NAMES))
PCG_HDRS  = $(PCG_DIR)/pcg_lib.h $(PCG_DIR)/pcg_test.h $(PCG_DIR)/pcg_uapi.h $(CGTEST_HDRS)
PCG_LIB_O := $(BUILD)/tests/kernel/pcg_lib.o
# The patched uapi first; pcg_uapi.h falls back to the agreed numbers.
# The harness's ASSERT_EQ(0, u64) style compares int literals with u64s:
# -Wno-sign-compare (as -Wno-unused-parameter) is for its macros, and so is
# -Wno-clobbered (its setjmp in __TEST_F_IMPL). = not :=, and $$(CGTEST_LIB) as a
# prerequisite: tests/lib/tests-lib.mk may be read later.
PCG_CFLAGS = $(CFLAGS_USER) -Wno-unused-parameter -Wno-sign-compare \
	-Wno-clobbered \
	-isystem $(KHDR) \
	-I$(KSELFTEST_INC) -I$(PCG_DIR) $(CGTEST_CFLAGS)

PERF_SELFTEST_DIR  := $(BUILD)/perf-selftests
PERF_SELFTEST_BINS := $(addprefix $(PERF_SELFTEST_DIR)/,\
	sigtrap_threads remove_on_exec watermark_signal mmap)

$(PCG_LIB_O): $(PCG_DIR)/pcg_lib.c $$(PCG_HDRS) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(PCG_CFLAGS) -c $< -o $@

$(BUILD)/bin/perf_cgroup_%: $(PCG_DIR)/%.c $$(PCG_HDRS) $(PCG_LIB_O) $$(CGTEST_LIB) $$(CGUTIL_LIB)
	@mkdir -p $(@D)
	$(CC) $(PCG_CFLAGS) -o $@ $< $(PCG_LIB_O) $(CGTEST_LDLIBS) -lpthread

.PHONY: perf-cgroup-tests
perf-cgroup-tests: $(PCG_BINS) $(PERF_SELFTEST_BINS)

$(PERF_SELFTEST_BINS) &: $(KHDR)/linux/perf_event.h
	@mkdir -p $(PERF_SELFTEST_DIR)
	@$(MAKE) -s -C $(KSELFTEST_INC)/perf_events \
		OUTPUT=$(abspath $(PERF_SELFTEST_DIR)) \
		KHDR_INCLUDES="-isystem $(abspath $(KHDR))"
	@# their own make does not rebuild for a newer header: mark them current
	@touch $(PERF_SELFTEST_BINS)

GUEST_BINS += $(PCG_BINS) $(PERF_SELFTEST_BINS)

# move_window: a BPF program (move_window.bpf.c) holds task moves inside
# the cgroup core's migration, between CGROUP_TASK_MIGRATING and the commit
PCG_OUT := $(BUILD)/tests/kernel
$(eval $(call BPF_SKEL_RULES,$(PCG_DIR),$(PCG_OUT)))
$(BUILD)/bin/perf_cgroup_move_window: $(PCG_DIR)/move_window.c $(PCG_OUT)/move_window.skel.h \
		$$(PCG_HDRS) $(PCG_LIB_O) $$(CGTEST_LIB) $$(CGUTIL_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(PCG_CFLAGS) $(LIBBPF_CFLAGS) -I$(PCG_OUT) -o $@ $< $(PCG_LIB_O) \
		$(CGTEST_LDLIBS) $(LIBBPF_A) $(LIBBPF_LDLIBS) -lpthread
GUEST_BINS += $(BUILD)/bin/perf_cgroup_move_window
