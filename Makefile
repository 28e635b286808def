# linux-multicgroup: count perf events for thousands of cgroups.
#
# `make help` lists the targets. The two that matter:
#   make demo        boot the patched kernel and show per-cgroup counting
#   make check       build everything, run host and guest tests (T=prefix to pick)
#
# Each component's fragment sits beside its code (kernel/kernel.mk,
# lib/*/*.mk, tools/tools.mk, perf/perf.mk, tests/*/*.mk, bench/bench.mk, ...)
# and appends to:
#   GUEST_BINS  programs and files to build for the tests (`make tests`)
#   HOST_TESTS  host-side test programs (each prints TAP; run by `make check`)
# The fragments are read in no particular order: a prerequisite that names
# another component's variable is written $$(VAR) and expanded after every
# fragment has been read (.SECONDEXPANSION), and a variable built from another
# component's is recursive (=, not :=); tests/hygiene/include-order.sh checks
# it. Only the BPF toolchain
# (scripts/bpf-toolchain.mk), which every component builds with, comes first.
# VM tests are listed in tests/vm-tests.d/*.list, host tests with arguments
# in tests/host-tests.d/*.list (see scripts/run-tests.sh and docs/development.md).

BUILD        := build
# the sources and host tools every architecture's build shares
# (scripts/arm64.mk: `make arm64` builds into build/arm64)
SRC_BUILD    := build
KSRC         := $(SRC_BUILD)/linux
KOBJ         := $(SRC_BUILD)/kbuild
KHDR         := $(BUILD)/headers/include
BZIMAGE      ?= $(BUILD)/bzImage
KSELFTEST_INC := $(KSRC)/tools/testing/selftests
CFLAGS_USER  := -O2 -g -Wall -Wextra -Werror -std=gnu11
OBJCOPY      := objcopy
BPF_TARGET_ARCH := x86
DEPS_STAMP   := $(BUILD)/.deps-installed
# where `make install` puts things (DESTDIR= stages them elsewhere); Debian's
# packaging (debian/rules) passes PREFIX=/usr LIBDIR=/usr/lib/<multiarch>
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man

GUEST_BINS :=
HOST_TESTS :=

.DEFAULT_GOAL := all
.SECONDEXPANSION:
.PHONY: all help deps tests check check-debug install deb demo vm-run vm-shell clean distclean
all: kernel tests

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## make demo          build the patched kernel, boot it, show every backend counting
## make check         build everything, run every host and guest test on every kernel
##                    of tests/kernels.list (T=prefix picks tests, K=stock-6.1,... kernels)
## make check-debug   the same tests on the KASAN + kmemleak + lockdep kernel
## make kernel        build/bzImage (6.12 + kernel/backport-6.12), build/bzImage-7.3 (7.3 + kernel/mainline-7.3)
## make perf          build/bin/perf with the perf series (perf/patches)
## make tools         cgtop, cgroup-exporter, cgrstat, memcg-stat in build/bin
## make install       copy what `make` built: libcgcount (header, .a, .so, pkg-config, cgcount(3)),
##                    the tools and their man pages; builds nothing (PREFIX=, DESTDIR=, LIBDIR=, BINDIR=)
## make deb           Debian packages of what `make` built, in build/deb (debian/, dpkg-buildpackage)
## make bench-quick   every backend side by side, reduced sweep (make bench: full)
## make vm-run CMD=.. one command in the guest;  make vm-shell: a shell there
## make deps          install the build and test dependencies (apt-get)
## make clean         remove test outputs (distclean: all of build/)

# Dependencies: scripts/deps.sh is idempotent; the stamp keeps `make` quiet.
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

include scripts/arm64.mk scripts/bpf-toolchain.mk scripts/library.mk
include $(sort $(filter-out build/% scripts/%,$(wildcard */*.mk */*/*.mk)))

tests: deps kernel $(GUEST_BINS) $(HOST_TESTS) kernel-7.3-wait arm64

# `make install` copies what is built and builds nothing: no kernel, no
# apt-get, nothing written to build/ (so `sudo make install` after `make`
# leaves no root-owned file in the tree). INSTALL_CHECK names what a
# fragment's install copies; it fails, naming the first file missing.
INSTALL_CHECK = @for f in $(1); do [ -e "$$f" ] || { \
	echo "make install: $$f is not built: run make (or make cgcount tools) first" >&2; exit 1; }; done
install: cgcount-install tools-install

# Debian's binary packages (debian/) from what `make` built, into DEB_OUT:
# debian/rules brings the library and tools up to date with make's own rules
# but without the kernel-6.12 and deps targets (no kernel build, no apt-get)
DEB_OUT ?= $(BUILD)/deb
deb:
	@deploy/build-deb.sh $(DEB_OUT)

check: tests
	@HOST_TESTS="$(HOST_TESTS)" scripts/check.sh --kernel $(BZIMAGE) $(if $(K),--kernels $(K)) $(T)

check-debug: tests kernel-debug
	@HOST_TESTS="$(HOST_TESTS)" scripts/check.sh --kernel $(BUILD)/bzImage-debug --kernels patched $(T)

vm-run: tests
	@scripts/vm-run.sh --kernel $(BZIMAGE) -- '$(CMD)'

vm-shell: tests
	@scripts/vm-run.sh --kernel $(BZIMAGE) --shell

demo: deps kernel-6.12 $(BUILD)/bin/perf $$(CGC_TOOL_BINS) $(BUILD)/bin/cgrstat
	@scripts/demo.sh --kernel $(BZIMAGE)

clean:
	rm -rf $(BUILD)/bin $(BUILD)/tests $(BUILD)/check $(BUILD)/vm

distclean:
	rm -rf $(BUILD)
