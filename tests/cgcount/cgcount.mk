# tests/cgcount/cgcount.mk - libcgcount's tests (lib/cgcount), a plain and
# an ASan + UBSan build, and libcgutil's (lib/cgutil, ASan + UBSan) (listed in tests/vm-tests.d/60-cgcount.list and
# tests/host-tests.d/60-cgcount.list).
CGC_TEST_OUT := $(BUILD)/tests/cgcount
CGC_TEST_SRCS := tests/cgcount/cgcount_test.c
CGC_TEST_CFLAGS = $(CFLAGS_USER) -Wno-unused-parameter -Wno-sign-compare -Wno-clobbered \
	-isystem $(KHDR) -I$(KSELFTEST_INC) -Itests/kernel -I$(CGC_DIR) $(CGTEST_CFLAGS)
# the perf event helpers and the tests' cgroup library, built once
# (tests/kernel/kernel-tests.mk, tests/lib/tests-lib.mk)
CGC_TEST_LIBS = $(PCG_LIB_O) $(CGTEST_LIB)
CGC_TEST_DEPS := $(CGC_TEST_SRCS) $$(PCG_HDRS) $$(CGTEST_HDRS) $$(CGC_DIR)/cgcount.h $$(CGC_TEST_LIBS)

# the test libraries call cgutil, whose copy inside libcgcount.a is local: link it again
$(CGC_TEST_OUT)/cgcount_test: $(CGC_TEST_DEPS) $$(CGC_LIB_A) $$(CGUTIL_LIB)
	@mkdir -p $(@D)
	$(CC) $(CGC_TEST_CFLAGS) $(CGC_TEST_SRCS) $(CGC_TEST_LIBS) $(CGC_LIB_A) $(CGUTIL_LIB) \
		$(CGC_LDLIBS) -o $@

$(BUILD)/cgcount/asan/cgcount_test: $(CGC_TEST_DEPS) $$(CGC_ASAN_OBJS) \
		$(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CGC_TEST_CFLAGS) $(CGC_SAN) $(CGC_TEST_SRCS) $(CGC_TEST_LIBS) $(CGC_ASAN_LIBS) -o $@

# lib/cgutil's own test: event strings, the cgroup2 mount, cgroup ids (host)
$(CGC_TEST_OUT)/cgutil_test: tests/cgcount/cgutil_test.c $$(CGUTIL_DIR)/cgutil.h $$(CGUTIL_ASAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(CGC_TEST_CFLAGS) $(CGUTIL_SAN) $(CGUTIL_CFLAGS) $< $(CGUTIL_ASAN_LIB) \
		$(CGUTIL_LDLIBS) -o $@

GUEST_BINS += $(CGC_TEST_OUT)/cgcount_test $(BUILD)/cgcount/asan/cgcount_test \
	$(CGC_TEST_OUT)/cgutil_test
