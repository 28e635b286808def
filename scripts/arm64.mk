# scripts/arm64.mk - the arm64 builds: the programs the arm64 guests run
# (QEMU's "virt" machine with the emulated PMUv3: hardware events), cross-built
# with Debian's gcc-aarch64-linux-gnu against the arm64 Debian 12 tree of
# scripts/arm64-rootfs.sh (the sysroot, and the guests' /usr).
#
#   make arm64     build/Image-7.3-arm64 (Linux 7.3 + kernel/mainline-7.3,
#                  kernel/config/arm64.fragment) and every program of
#                  $(ARM64_BINS) for arm64 under build/arm64/
#
# `make arm64` runs this Makefile again with GUEST_ARCH=arm64, in which:
#   BUILD        build/arm64: every output of the fragments' rules lands there
#                (build/arm64/bin/perf, build/arm64/tests/...); the arm64 guest
#                mounts each build/arm64/<dir> over build/<dir>
#                (scripts/guest/init), so the test lists name one path for both
#   SRC_BUILD    build: the sources both builds share (the kernel trees,
#                build/perf-src) and the host's tools (bpftool) stay there
#   KHDR, VMLINUX_BTF  the uapi headers and BTF of build/Image-7.3-arm64
#   CROSS_COMPILE, ARCH  exported: the kernel tree's own makes (libbpf,
#                libperf, libapi, perf) cross-build with them
#   CC, LD, AR, OBJCOPY  the cross tools; CC is a wrapper adding --sysroot
# A fragment lists what the arm64 guests need in ARM64_BINS (recursive,
# in $(BUILD) terms): ARM64_BINS += $(BUILD)/bin/foo.
# The 6.12 backport is not built for arm64: the CI budget holds one more
# kernel, and the mainline series is the one meant for upstream.
ARM64_OUT := $(SRC_BUILD)/arm64
ARM64_ROOTFS := $(ARM64_OUT)/rootfs
ARM64_IMAGE := $(SRC_BUILD)/Image-7.3-arm64
ARM64_BINS =

ifeq ($(GUEST_ARCH),arm64)
BUILD := $(ARM64_OUT)
KHDR := $(SRC_BUILD)/headers-7.3-arm64/include
VMLINUX_BTF := $(SRC_BUILD)/kbuild-7.3-arm64/vmlinux
BPF_TARGET_ARCH := arm64
# Linux 6.19 and later build with -fms-extensions and embed tagged structs
# unnamed (struct ns_common's "struct ns_tree;"): vmlinux.h dumped from
# their BTF has those members, which clang drops (a wrong layout) unless it
# accepts the same extension, as the kernel's own BPF selftests do
BPF_EXTRA_CFLAGS := -fms-extensions -Wno-microsoft-anon-tag
ARM64_TOOLCHAIN := $(abspath $(ARM64_OUT))/toolchain
export CROSS_COMPILE := $(ARM64_TOOLCHAIN)/aarch64-linux-gnu-
export ARCH := arm64
# perf's feature checks ask pkg-config (libtraceevent, libzstd, ...)
export PKG_CONFIG_SYSROOT_DIR := $(abspath $(ARM64_ROOTFS))
export PKG_CONFIG_LIBDIR := $(abspath $(ARM64_ROOTFS))/usr/lib/aarch64-linux-gnu/pkgconfig:$(abspath $(ARM64_ROOTFS))/usr/share/pkgconfig
CC := $(CROSS_COMPILE)gcc
CXX := $(CROSS_COMPILE)g++
LD := $(CROSS_COMPILE)ld
AR := $(CROSS_COMPILE)ar
OBJCOPY := $(CROSS_COMPILE)objcopy
# what perf needs and the arm64 tree lacks: slang's TUI (its -I/usr/include/slang
# would name the host's headers), libunwind (perf uses libdw's unwinder)
PERF_ARCH_FLAGS := NO_SLANG=1 NO_LIBUNWIND=1 NO_LIBCRYPTO=1

.PHONY: arm64-bins
arm64-bins: $$(ARM64_BINS)
else
.PHONY: arm64 kernel-arm64 arm64-rootfs arm64-toolchain
## make arm64         the arm64 kernel and programs (build/Image-7.3-arm64, build/arm64/)
arm64: kernel-arm64 arm64-toolchain bpf-tools perf-src
	@$(MAKE) --no-print-directory GUEST_ARCH=arm64 arm64-bins

kernel-arm64: deps
	@scripts/build-kernel.sh --linux 7.3 --arch arm64 default

arm64-rootfs: deps
	@scripts/arm64-rootfs.sh

# the cross tools under one prefix: gcc and g++ with the sysroot, the
# binutils as they are
arm64-toolchain: arm64-rootfs
	@mkdir -p $(ARM64_OUT)/toolchain
	@for t in gcc g++; do \
		printf '#!/bin/sh\nexec /usr/bin/aarch64-linux-gnu-%s --sysroot=%s "$$@"\n' \
			$$t '$(abspath $(ARM64_ROOTFS))' >$(ARM64_OUT)/toolchain/aarch64-linux-gnu-$$t.tmp; \
		chmod +x $(ARM64_OUT)/toolchain/aarch64-linux-gnu-$$t.tmp; \
		mv $(ARM64_OUT)/toolchain/aarch64-linux-gnu-$$t.tmp $(ARM64_OUT)/toolchain/aarch64-linux-gnu-$$t; \
	done
	@for t in ld ar as nm objcopy objdump strip readelf ranlib; do \
		ln -sf /usr/bin/aarch64-linux-gnu-$$t $(ARM64_OUT)/toolchain/aarch64-linux-gnu-$$t; \
	done
endif
