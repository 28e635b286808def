# tests/cgrstat: kselftest-harness tests of the cgrstat pipeline (lib/cgrstat/)
# and of the rstat example (examples/rstat-vmscan/).
CGRSTAT_TEST_OUT := $(BUILD)/tests/cgrstat

$(CGRSTAT_TEST_OUT)/cgrstat_test: tests/cgrstat/cgrstat_test.c $$(CGRSTAT_DIR)/cgrstat.h \
		$$(CGTEST_HDRS) $$(CGTEST_LIB) $$(CGRSTAT_LIB) $$(CGUTIL_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) -Itests/lib -Wno-unused-parameter -Wno-clobbered -I$(KSELFTEST_INC) $< \
		$(CGTEST_LIB) $(CGRSTAT_LDLIBS) -o $@

GUEST_BINS += $(CGRSTAT_TEST_OUT)/cgrstat_test
ARM64_BINS += $(CGRSTAT_TEST_OUT)/cgrstat_test

# the cgroup2 mount from lib/cgutil
$(CGRSTAT_TEST_OUT)/vmscan_test: tests/cgrstat/vmscan_test.c $$(VMSCAN_OUT)/vmscan.skel.h $(LIBBPF_A) \
		$$(CGUTIL_DIR)/cgutil.h $$(CGUTIL_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -Wno-unused-parameter -Wno-clobbered $(LIBBPF_CFLAGS) -I$(VMSCAN_OUT) \
		$(CGUTIL_CFLAGS) -Itests/lib -I$(KSELFTEST_INC) $< $(CGUTIL_LIB) $(LIBBPF_A) \
		$(LIBBPF_LDLIBS) $(CGUTIL_LDLIBS) -o $@

GUEST_BINS += $(CGRSTAT_TEST_OUT)/vmscan_test

# libcgcount's rstat backend with lib/cgrstat's maps too small for the cgroups
# (built as tests/cgcount/cgcount.mk builds cgcount_test)
$(CGRSTAT_TEST_OUT)/pressure_test: tests/cgrstat/pressure_test.c $$(PCG_HDRS) $$(CGTEST_HDRS) \
		$$(CGC_DIR)/cgcount.h $$(CGC_TEST_LIBS) $$(CGC_LIB_A) $$(CGUTIL_LIB)
	@mkdir -p $(@D)
	$(CC) $(CGC_TEST_CFLAGS) $< $(CGC_TEST_LIBS) $(CGC_LIB_A) $(CGUTIL_LIB) $(CGC_LDLIBS) -o $@

GUEST_BINS += $(CGRSTAT_TEST_OUT)/pressure_test
