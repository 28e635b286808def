# perf/perf.mk - perf, built from tools/perf of the patched kernel tree with
# the perf series (perf/patches/series: perf stat --cgroup-backend) applied
# on top, with BPF skeletons (bperf, --bpf-counters, the rstat backend).
#
# build/perf-src is a git worktree of build/linux's HEAD with the series
# applied (perf/apply-patches.sh; updated when the kernel series or a perf
# patch changes); perf is built from it into
# build/perf and installed as build/bin/perf, which is on the guest's PATH.
# perf test finds the shell tests from build/perf-src/tools/perf.
PERF_SRC := $(SRC_BUILD)/perf-src
PERF_OUT := $(abspath $(BUILD))/perf
PERF := $(BUILD)/bin/perf
PERF_BUILT := $(PERF_OUT)/.built
# NO_LIBLLVM: libLLVM (with libz3, libicu, libxml2) only speeds up perf
# report's source-line lookup, yet loading it cost about 0.5 s of every perf
# start under TCG (perf --version: 0.84 s with it, 0.27 s without); perf
# starts hundreds of times in the tests.
PERF_MAKE_FLAGS := NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JVMTI=1 NO_GTK2=1 NO_LIBBABELTRACE=1 \
	NO_LIBLLVM=1 BUILD_BPF_SKEL=1 WERROR=0 $(PERF_ARCH_FLAGS)
PERF_MAKE_FLAGS := $(strip $(PERF_MAKE_FLAGS))

.PHONY: perf perf-src
perf: $(PERF)

# Two makes (two helpers, make check and a bench) building perf into the
# same tree at once produced a broken link: one at a time.
PERF_LOCK := $(BUILD)/perf.lock

perf-src: kernel-6.12
	@mkdir -p $(BUILD)
	@flock $(PERF_LOCK) perf/apply-patches.sh $(KSRC) $(PERF_SRC)

# perf's own make tracks its sources; it runs when a file of build/perf-src
# changed since its last successful run.
$(PERF): perf-src FORCE
	@mkdir -p $(PERF_OUT) $(@D)
	@# perf's build does not notice changed options: start over when they change
	@echo '$(PERF_MAKE_FLAGS)' | cmp -s - $(PERF_OUT)/make-flags || \
		{ flock $(PERF_LOCK) sh -c 'find $(PERF_OUT) -mindepth 1 -delete' && \
		  echo '$(PERF_MAKE_FLAGS)' >$(PERF_OUT)/make-flags; }
	@# perf's make takes 5 s to find nothing to do: skip it when no file of
	@# build/perf-src is newer than its last successful run
	@[ -f $(PERF_BUILT) ] && [ -z "$$(find $(PERF_SRC) -path $(PERF_SRC)/.git -prune -o \
		-newer $(PERF_BUILT) -type f -print -quit)" ] || \
	{ echo "  PERF    building tools/perf" && flock $(PERF_LOCK) $(MAKE) -s -C $(PERF_SRC)/tools/perf O=$(PERF_OUT) $(PERF_MAKE_FLAGS) \
		>$(PERF_OUT)/build.log 2>&1 && touch $(PERF_BUILT); } || \
		{ tail -40 $(PERF_OUT)/build.log; echo "error: perf build failed (log: $(PERF_OUT)/build.log)"; exit 1; }
	@flock $(PERF_LOCK) sh -c 'cmp -s $(PERF_OUT)/perf $@ || cp $(PERF_OUT)/perf $@'

.PHONY: FORCE
FORCE:

GUEST_BINS += $(PERF)
ARM64_BINS += $(PERF)
