# tests/lib/tests-lib.mk - the C tests' cgroup library, tests/lib/cgtest.h
# (cgroup files, cgroups and trees, controllers, cpu.stat and memory.stat
# fields, workers placed in cgroups), built once:
#
#   $(CGTEST_LIB)                  build/tests/lib/libcgtest.a
#   CGTEST_CFLAGS / CGTEST_LDLIBS  to build a test against it (with lib/cgutil,
#                                  which finds the cgroup2 mount and cgroup ids)
#   CGTEST_HDRS                    what a test that includes it depends on
#
# = not :=, and $$(CGUTIL_...) in prerequisites: lib/cgutil/cgutil.mk may be
# read later.
CGTEST_OUT    := $(BUILD)/tests/lib
CGTEST_LIB    := $(CGTEST_OUT)/libcgtest.a
CGTEST_HDRS   := tests/lib/cgtest.h tests/lib/harness.h tests/lib/cgcount_messages.h
CGTEST_CFLAGS = -Itests/lib $(CGUTIL_CFLAGS)
CGTEST_LDLIBS = $(CGTEST_LIB) $(CGUTIL_LIB) $(CGUTIL_LDLIBS)

$(CGTEST_OUT)/cgtest.o: tests/lib/cgtest.c tests/lib/cgtest.h $$(CGUTIL_DIR)/cgutil.h \
		$(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(CGTEST_CFLAGS) -c $< -o $@

$(CGTEST_LIB): $(CGTEST_OUT)/cgtest.o
	@rm -f $@
	$(AR) rcs $@ $^
