# bpf/bpf.mk - the team's BPF toolchain and the bpf-rstat backend.
#
# Toolchain (everything under $(BUILD)/tools, built from the kernel tree):
#   $(LIBBPF_A)      static libbpf from $(KSRC)/tools/lib/bpf; its headers are
#                    installed as $(BUILD)/tools/include/bpf/*.h
#   $(BPFTOOL)       bpftool from $(KSRC)/tools/bpf/bpftool (gen skeleton, btf dump)
#   $(VMLINUX_H)     vmlinux.h dumped from the guest kernel's BTF ($(BUILD)/kbuild/vmlinux,
#                    built by `make kernel`), so programs are CO-RE against our 6.12.
#                    VMLINUX_BTF=/sys/kernel/btf/vmlinux overrides the source.
#   LIBBPF_CFLAGS    -I for <bpf/libbpf.h> (user space)
#   LIBBPF_LDLIBS    libraries libbpf needs at link time (after $(LIBBPF_A))
#   BPF_CFLAGS       clang flags for -target bpf (finds vmlinux.h and <bpf/bpf_helpers.h>)
#
# Using it for your own BPF programs (example: a component in mycomp/):
#
#   MYCOMP_OUT := $(BUILD)/mycomp
#   $(eval $(call BPF_SKEL_RULES,mycomp,$(MYCOMP_OUT)))
#       -> mycomp/foo.bpf.c  ->  $(MYCOMP_OUT)/foo.bpf.o  ->  $(MYCOMP_OUT)/foo.skel.h
#          (the .bpf.o also depends on every mycomp/*.h, vmlinux.h and libbpf's headers)
#
#   $(BUILD)/bin/mytool: mycomp/mytool.c $(MYCOMP_OUT)/foo.skel.h $(LIBBPF_A)
#   	$(CC) $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(MYCOMP_OUT) $< $(LIBBPF_A) $(LIBBPF_LDLIBS) -o $@
#   GUEST_BINS += $(BUILD)/bin/mytool
#
# and `#include "foo.skel.h"` in mytool.c (skeleton struct foo, foo__open_and_load(), ...).  In foo.bpf.c:
#   #include "vmlinux.h"
#   #include <bpf/bpf_helpers.h>
#   #include <bpf/bpf_tracing.h>
#
# Targets: `make bpf-tools` (libbpf + bpftool + vmlinux.h), `make bpf` (all of bpf/).
#
# The cgrstat backend (issue 4), built here too:
#   $(CGRSTAT_LIB)    libcgrstat.a, API in bpf/cgrstat.h (BPF program bpf/rstat_counters.bpf.c)
#   $(BUILD)/bin/cgrstat   the CLI
#   CGRSTAT_CFLAGS / CGRSTAT_LDLIBS   to build a program against the library

BUILD ?= build
KSRC ?= $(BUILD)/linux
CFLAGS_USER ?= -O2 -g -Wall -Wextra -Werror -std=gnu11

BPF_TOOLS_DIR := $(abspath $(BUILD))/tools
LIBBPF_SRC := $(abspath $(KSRC))/tools/lib/bpf
BPFTOOL_SRC := $(abspath $(KSRC))/tools/bpf/bpftool
LIBBPF_A := $(BUILD)/tools/libbpf/libbpf.a
LIBBPF_HDRS_STAMP := $(BUILD)/tools/include/bpf/libbpf.h
LIBBPF_CFLAGS := -I$(BUILD)/tools/include
LIBBPF_LDLIBS := -lelf -lz
BPFTOOL := $(BUILD)/tools/bpftool/bpftool
VMLINUX_BTF ?= $(BUILD)/kbuild/vmlinux
VMLINUX_H := $(BUILD)/vmlinux.h
BPF_CLANG ?= clang
BPF_CFLAGS := -target bpf -O2 -g -D__TARGET_ARCH_x86 -I$(BUILD) -I$(BUILD)/tools/include \
	-Wall -Wno-unused-function -Wno-compare-distinct-pointer-types

.PHONY: bpf-tools
bpf-tools: $(LIBBPF_A) $(BPFTOOL) $(VMLINUX_H)

# libbpf: static library + headers, out of the kernel tree (OUTPUT=)
$(LIBBPF_A) $(LIBBPF_HDRS_STAMP) &: $(wildcard $(LIBBPF_SRC)/*.[ch] $(LIBBPF_SRC)/Makefile)
	@mkdir -p $(BPF_TOOLS_DIR)/libbpf $(BPF_TOOLS_DIR)/include
	$(Q)$(MAKE) -s -C $(LIBBPF_SRC) OUTPUT=$(BPF_TOOLS_DIR)/libbpf/ BUILD_STATIC_ONLY=1 \
		EXTRA_CFLAGS='-g -O2 -fPIC' DESTDIR=$(BPF_TOOLS_DIR) prefix= \
		INCLUDEDIR=/include $(BPF_TOOLS_DIR)/libbpf/libbpf.a install_headers
	@touch $(LIBBPF_A) $(LIBBPF_HDRS_STAMP)

# bpftool: built with its own bootstrap libbpf, also out of tree
$(BPFTOOL): $(wildcard $(BPFTOOL_SRC)/*.[ch] $(BPFTOOL_SRC)/Makefile)
	@mkdir -p $(BPF_TOOLS_DIR)/bpftool
	$(Q)$(MAKE) -s -C $(BPFTOOL_SRC) OUTPUT=$(BPF_TOOLS_DIR)/bpftool/ \
		EXTRA_CFLAGS='-g -O2' CLANG=$(BPF_CLANG) >/dev/null
	@touch $@

$(VMLINUX_H): $(BPFTOOL) $(VMLINUX_BTF)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

# BPF_SKEL_RULES(srcdir, outdir): srcdir/%.bpf.c -> outdir/%.bpf.o -> outdir/%.skel.h
define BPF_SKEL_RULES
$(2)/%.bpf.o: $(1)/%.bpf.c $(VMLINUX_H) $(LIBBPF_HDRS_STAMP) $$(wildcard $(1)/*.h)
	@mkdir -p $$(@D)
	$$(BPF_CLANG) $$(BPF_CFLAGS) -I$(1) -c $$< -o $$@

$(2)/%.skel.h: $(2)/%.bpf.o $(BPFTOOL)
	$$(BPFTOOL) gen skeleton $$< name $$(subst -,_,$$(notdir $$*)) > $$@.tmp && mv $$@.tmp $$@
endef

# ---- cgrstat: the BPF rstat pipeline (issue 4) ----
CGRSTAT_OUT := $(BUILD)/bpf
CGRSTAT_LIB := $(CGRSTAT_OUT)/libcgrstat.a
CGRSTAT_CFLAGS := $(CFLAGS_USER) $(LIBBPF_CFLAGS) -Ibpf
CGRSTAT_LDLIBS := $(CGRSTAT_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS)

$(eval $(call BPF_SKEL_RULES,bpf,$(CGRSTAT_OUT)))

$(CGRSTAT_OUT)/cgrstat.o: bpf/cgrstat.c bpf/cgrstat.h $(CGRSTAT_OUT)/rstat_counters.skel.h \
		$(LIBBPF_HDRS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) -I$(CGRSTAT_OUT) -c $< -o $@

$(CGRSTAT_LIB): $(CGRSTAT_OUT)/cgrstat.o
	$(AR) rcs $@ $^

$(BUILD)/bin/cgrstat: bpf/cgrstat-tool.c bpf/cgrstat.h $(CGRSTAT_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) $< $(CGRSTAT_LDLIBS) -o $@

.PHONY: bpf
bpf: bpf-tools $(CGRSTAT_LIB) $(BUILD)/bin/cgrstat

GUEST_BINS += $(BUILD)/bin/cgrstat

# ---- benchmark programs (bench/bpf-rstat/host.sh; `make bench` covers the guest) ----
BENCH_RSTAT_OUT := $(BUILD)/bench/bpf-rstat

$(BENCH_RSTAT_OUT)/pingpong: bench/bpf-rstat/pingpong.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $< -o $@

GUEST_BINS += $(BENCH_RSTAT_OUT)/pingpong

# trigger: cgroup-switches perf event vs tp_btf/sched_switch as the collector's trigger
$(eval $(call BPF_SKEL_RULES,bench/bpf-rstat,$(BENCH_RSTAT_OUT)))

$(BENCH_RSTAT_OUT)/trigger: bench/bpf-rstat/trigger.c $(BENCH_RSTAT_OUT)/trigger.skel.h \
		$(CGRSTAT_OUT)/rstat_counters.skel.h $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(BENCH_RSTAT_OUT) -I$(CGRSTAT_OUT) $< $(LIBBPF_A) $(LIBBPF_LDLIBS) -o $@

GUEST_BINS += $(BENCH_RSTAT_OUT)/trigger
