# tests/hw/hw.mk - hardware events per cgroup through libcgcount, on the
# arm64 guests only (the emulated PMUv3; tests/vm-tests.d/80-hw.list):
# hw_cgcount_test counts the aarch64 instructions of $(BUILD)/bin/hw-loop
# (tests/perf/hw-perf.mk), so it is built for arm64 alone (ARM64_BINS).
HW_TEST_OUT := $(BUILD)/tests/hw
HW_TEST_CFLAGS = $(CFLAGS_USER) -Wno-unused-parameter -Wno-sign-compare -isystem $(KHDR) -I$(KSELFTEST_INC) -I$(CGC_DIR) $(CGTEST_CFLAGS)

# the test library calls cgutil, whose copy inside libcgcount.a is local: link it again
$(HW_TEST_OUT)/hw_cgcount_test: tests/hw/hw_cgcount_test.c $$(CGTEST_HDRS) $$(CGC_DIR)/cgcount.h \
		$$(CGTEST_LIB) $$(CGC_LIB_A) $$(CGUTIL_LIB)
	@mkdir -p $(@D)
	$(CC) $(HW_TEST_CFLAGS) $< $(CGTEST_LIB) $(CGC_LIB_A) $(CGUTIL_LIB) $(CGC_LDLIBS) -o $@

ARM64_BINS += $(HW_TEST_OUT)/hw_cgcount_test
