# linux-multicgroup: count perf events for thousands of cgroups.
#
#   make demo        boot the patched kernel and show per-cgroup counting
#   make check       build everything, run host and guest tests (T=prefix to pick)
#   make check-debug the same on a KASAN + kmemleak + lockdep kernel
#   make vm-run CMD='...'   run one command in the guest (BZIMAGE= to pick a kernel)
#   make vm-shell    interactive guest
#   make kernel      build/bzImage from kernel-patches/series
#   make deps        install the build and test dependencies (apt-get)
#
# Components add themselves through Makefile fragments (*/*.mk, tests/*/*.mk),
# which append to:
#   GUEST_BINS  programs and files to build for the tests (`make tests`)
#   HOST_TESTS  host-side test programs (each prints TAP; run by `make check`)
# and may use the variables below. VM tests are listed in tests/vm-tests.d/*.list,
# host tests with arguments in tests/host-tests.d/*.list (see scripts/run-tests.sh).

BUILD        := build
KSRC         := $(BUILD)/linux
KOBJ         := $(BUILD)/kbuild
KHDR         := $(BUILD)/headers/include
BZIMAGE      ?= $(BUILD)/bzImage
KSELFTEST_INC := $(KSRC)/tools/testing/selftests
CFLAGS_USER  := -O2 -g -Wall -Wextra -Werror -std=gnu11
DEPS_STAMP   := $(BUILD)/.deps-installed

GUEST_BINS :=
HOST_TESTS :=

.PHONY: all deps kernel kernel-debug kernel-bench tests check check-debug demo vm-run vm-shell clean distclean
all: kernel tests

# Dependencies: scripts/deps.sh is idempotent; the stamp keeps `make` quiet.
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

# The kernel: the script tracks the series, the patches and the config
# fragments itself and rebuilds only what changed.
kernel: deps
	@scripts/build-kernel.sh default
$(BZIMAGE) $(KHDR)/linux/perf_event.h $(KOBJ)/vmlinux: | kernel

kernel-debug: deps
	@scripts/build-kernel.sh debug

# Without lock debugging, for benchmarks (kernel-patches/config-bench.fragment).
kernel-bench: deps
	@scripts/build-kernel.sh bench

# Fragments of the components. A rule's prerequisites are expanded when make
# reads it, so a fragment must come after the fragments whose variables it
# names there: the BPF toolchain (bpf/bpf.mk) first, the tests last.
include bpf/bpf.mk
include $(sort $(filter-out bpf/bpf.mk,$(wildcard */*.mk)))
include $(sort $(wildcard tests/*/*.mk))

tests: deps kernel $(GUEST_BINS) $(HOST_TESTS)

check: tests
	@HOST_TESTS="$(HOST_TESTS)" scripts/check.sh --kernel $(BZIMAGE) $(T)

check-debug: tests kernel-debug
	@HOST_TESTS="$(HOST_TESTS)" scripts/check.sh --kernel $(BUILD)/bzImage-debug $(T)

vm-run: tests
	@scripts/vm-run.sh --kernel $(BZIMAGE) -- '$(CMD)'

vm-shell: tests
	@scripts/vm-run.sh --kernel $(BZIMAGE) --shell

demo: tests
	@scripts/demo.sh --kernel $(BZIMAGE)

clean:
	rm -rf $(BUILD)/bin $(BUILD)/tests $(BUILD)/check $(BUILD)/vm

distclean:
	rm -rf $(BUILD)
