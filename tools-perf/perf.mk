# perf, built from tools/perf of the patched 6.12 tree (build/linux), with BPF
# skeletons (bperf, --bpf-counters). Installed as build/bin/perf, which is on
# the guest's PATH.
PERF_OUT := $(abspath $(BUILD))/perf
PERF := $(BUILD)/bin/perf
PERF_MAKE_FLAGS := NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JVMTI=1 NO_GTK2=1 NO_LIBBABELTRACE=1 \
	BUILD_BPF_SKEL=1 WERROR=0

.PHONY: perf
perf: $(PERF)

# The tree is re-patched by `make kernel`; perf's own make tracks its sources.
$(PERF): kernel FORCE
	@mkdir -p $(PERF_OUT) $(@D)
	@echo "  PERF    building tools/perf"
	@$(MAKE) -s -C $(KSRC)/tools/perf O=$(PERF_OUT) $(PERF_MAKE_FLAGS) >$(PERF_OUT)/build.log 2>&1 || \
		{ tail -40 $(PERF_OUT)/build.log; echo "error: perf build failed (log: $(PERF_OUT)/build.log)"; exit 1; }
	@cmp -s $(PERF_OUT)/perf $@ || cp $(PERF_OUT)/perf $@

.PHONY: FORCE
FORCE:

GUEST_BINS += $(PERF)
