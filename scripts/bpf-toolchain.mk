# scripts/bpf-toolchain.mk - the BPF toolchain every component builds with.
# The root Makefile includes it before the components' fragments.
#
# Everything under $(BUILD)/tools, built from the kernel tree:
#   $(LIBBPF_A)      static libbpf from $(KSRC)/tools/lib/bpf; its headers are
#                    installed as $(BUILD)/tools/include/bpf/*.h
#   $(BPFTOOL)       bpftool from $(KSRC)/tools/bpf/bpftool (gen skeleton, btf dump)
#   $(VMLINUX_H)     vmlinux.h dumped from the guest kernel's BTF ($(BUILD)/kbuild/vmlinux,
#                    built by `make kernel`); programs are CO-RE.
#                    VMLINUX_BTF=/sys/kernel/btf/vmlinux overrides the source.
#   LIBBPF_CFLAGS    -I for <bpf/libbpf.h> (user space)
#   LIBBPF_LDLIBS    libraries libbpf needs at link time (after $(LIBBPF_A))
#   BPF_CFLAGS       clang flags for -target bpf (finds vmlinux.h and <bpf/bpf_helpers.h>)
#
# Building BPF programs of a component in mycomp/:
#
#   MYCOMP_OUT := $(BUILD)/mycomp
#   $(eval $(call BPF_SKEL_RULES,mycomp,$(MYCOMP_OUT)))
#       -> mycomp/foo.bpf.c  ->  $(MYCOMP_OUT)/foo.bpf.o  ->  $(MYCOMP_OUT)/foo.skel.h
#          (the .bpf.o also depends on every mycomp/*.h, vmlinux.h and libbpf's headers)
#
#   $(BUILD)/bin/mytool: mycomp/mytool.c $(MYCOMP_OUT)/foo.skel.h $$(LIBBPF_A)
#   	$(CC) $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(MYCOMP_OUT) $< $(LIBBPF_A) $(LIBBPF_LDLIBS) -o $@
#   GUEST_BINS += $(BUILD)/bin/mytool
#
# and `#include "foo.skel.h"` in mytool.c. Target: `make bpf-tools`.
#
# LIBBPF_SYSTEM=1 builds the same rules against the system's libbpf
# (Debian's libbpf-dev: <bpf/libbpf.h> from /usr/include, -lbpf, linked
# dynamically) into $(SRC_BUILD)/libbpf-system, from the kernel headers, BTF
# and bpftool `make` built: debian/rules' build of the packages. The BPF
# programs still include the kernel tree's <bpf/bpf_helpers.h>.

BPF_TOOLS_DIR := $(abspath $(BUILD))/tools
LIBBPF_SRC := $(abspath $(KSRC))/tools/lib/bpf
BPFTOOL_SRC := $(abspath $(KSRC))/tools/bpf/bpftool
ifeq ($(LIBBPF_SYSTEM),1)
BUILD := $(SRC_BUILD)/libbpf-system
KHDR := $(SRC_BUILD)/headers/include
VMLINUX_BTF := $(KOBJ)/vmlinux
LIBBPF_A :=
LIBBPF_HDRS_STAMP := /usr/include/bpf/libbpf.h
LIBBPF_CFLAGS :=
LIBBPF_LDLIBS := -lbpf
BPF_HELPERS_INC := $(SRC_BUILD)/tools/include
else
LIBBPF_A := $(BUILD)/tools/libbpf/libbpf.a
LIBBPF_HDRS_STAMP := $(BUILD)/tools/include/bpf/libbpf.h
LIBBPF_CFLAGS := -I$(BUILD)/tools/include
LIBBPF_LDLIBS := -lelf -lz
BPF_HELPERS_INC := $(BUILD)/tools/include
endif
# the headers the BPF programs include, installed with the tree's libbpf
BPF_HELPERS_STAMP := $(BPF_HELPERS_INC)/bpf/libbpf.h
# the host's bpftool, whatever architecture the programs are for
BPFTOOL := $(SRC_BUILD)/tools/bpftool/bpftool
VMLINUX_BTF ?= $(BUILD)/kbuild/vmlinux
VMLINUX_H := $(BUILD)/vmlinux.h
BPF_CLANG ?= clang
BPF_CFLAGS := -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_TARGET_ARCH) -I$(BUILD) -I$(BPF_HELPERS_INC) \
	-Wall -Wno-unused-function -Wno-compare-distinct-pointer-types $(BPF_EXTRA_CFLAGS)

.PHONY: bpf-tools
bpf-tools: $(LIBBPF_A) $(BPFTOOL) $(VMLINUX_H)

# libbpf: static library + headers, out of the kernel tree (OUTPUT=)
ifneq ($(LIBBPF_SYSTEM),1)
$(LIBBPF_A) $(LIBBPF_HDRS_STAMP) &: $(wildcard $(LIBBPF_SRC)/*.[ch] $(LIBBPF_SRC)/Makefile)
	@mkdir -p $(BPF_TOOLS_DIR)/libbpf $(BPF_TOOLS_DIR)/include
	$(Q)$(MAKE) -s -C $(LIBBPF_SRC) OUTPUT=$(BPF_TOOLS_DIR)/libbpf/ BUILD_STATIC_ONLY=1 \
		EXTRA_CFLAGS='-g -O2 -fPIC' DESTDIR=$(BPF_TOOLS_DIR) prefix= \
		INCLUDEDIR=/include $(BPF_TOOLS_DIR)/libbpf/libbpf.a install_headers
	@touch $(LIBBPF_A) $(LIBBPF_HDRS_STAMP)
endif

# bpftool: built with its own bootstrap libbpf, also out of tree; a host
# program, which a cross build (GUEST_ARCH=arm64) finds already built
ifneq ($(GUEST_ARCH),arm64)
$(BPFTOOL): $(wildcard $(BPFTOOL_SRC)/*.[ch] $(BPFTOOL_SRC)/Makefile)
	@mkdir -p $(abspath $(SRC_BUILD))/tools/bpftool
	$(Q)$(MAKE) -s -C $(BPFTOOL_SRC) OUTPUT=$(abspath $(SRC_BUILD))/tools/bpftool/ \
		EXTRA_CFLAGS='-g -O2' CLANG=$(BPF_CLANG) >/dev/null
	@touch $@
endif

$(VMLINUX_H): $(BPFTOOL) $(VMLINUX_BTF)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

# BPF_SKEL_RULES(srcdir, outdir): srcdir/%.bpf.c -> outdir/%.bpf.o -> outdir/%.skel.h
define BPF_SKEL_RULES
$(2)/%.bpf.o: $(1)/%.bpf.c $(VMLINUX_H) $(BPF_HELPERS_STAMP) $$(wildcard $(1)/*.h)
	@mkdir -p $$(@D)
	$$(BPF_CLANG) $$(BPF_CFLAGS) -I$(1) -c $$< -o $$@

$(2)/%.skel.h: $(2)/%.bpf.o $(BPFTOOL)
	$$(BPFTOOL) gen skeleton $$< name $$(or $$(SKEL_NAME),$$(subst -,_,$$(notdir $$*))) > $$@.tmp && mv $$@.tmp $$@
endef

