# tests/adversarial/adversarial.mk - the adversarial suite's programs (the
# suite itself is scripts run from tests/vm-tests.d/66-adversarial.list):
#
#   $(BUILD)/tests/adversarial/churn   a cgroup made and removed at every
#       tick of a period (1 ms by default), on absolute deadlines
ADV_TEST_OUT = $(BUILD)/tests/adversarial

$(ADV_TEST_OUT)/churn: tests/adversarial/churn.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $< -o $@

GUEST_BINS += $(ADV_TEST_OUT)/churn
ARM64_BINS += $(ADV_TEST_OUT)/churn
