# tests/tools/tools-tests.mk - the tools' tests that are programs (the rest
# are scripts run from tests/vm-tests.d/65-tools.list and
# tests/host-tests.d/65-tools.list):
#
#   $(BUILD)/tests/tools/exporter_seccomp_test   cgroup-exporter's privilege
#       drop (tools/exporter/privileges.c) against the calls it must refuse
#   $(BUILD)/tests/tools/kubelet_test   the kubelet's cgroup names
#       (tools/exporter/kubelet.c), under ASan and UBSan (host)
TOOLS_TEST_OUT = $(BUILD)/tests/tools

$(TOOLS_TEST_OUT)/exporter_seccomp_test: tests/tools/exporter_seccomp_test.c \
		$$(TOOLS_DIR)/exporter/privileges.c $$(TOOL_HDRS_cgroup-exporter) $$(CGTEST_HDRS) \
		$$(CGC_DIR)/cgcount.h $$(CGC_TEST_LIBS) $$(CGC_LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CGC_TEST_CFLAGS) -Itools -Itools/exporter $< \
		tools/exporter/privileges.c $(CGC_TEST_LIBS) $(CGC_LIB_A) $(CGUTIL_LIB) $(CGC_LDLIBS) -lseccomp -pthread -o $@

$(TOOLS_TEST_OUT)/kubelet_test: tests/tools/kubelet_test.c $$(TOOLS_DIR)/exporter/kubelet.c \
		$$(TOOLS_DIR)/exporter/kubelet.h $$(CGTEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CGC_TEST_CFLAGS) $(SANITIZE_CFLAGS) -Itools/exporter $< tools/exporter/kubelet.c -o $@

GUEST_BINS += $(TOOLS_TEST_OUT)/exporter_seccomp_test $(TOOLS_TEST_OUT)/kubelet_test
ARM64_BINS += $(TOOLS_TEST_OUT)/exporter_seccomp_test
