# lib/cgrstat/cgrstat.mk - libcgrstat, the BPF rstat backend (no kernel patch).
#
#   $(CGRSTAT_LIB)      libcgrstat.a, API in lib/cgrstat/cgrstat.h; its BPF
#                       program is lib/cgrstat/cgrstat.bpf.c
#   $(CGRSTAT_LIB_SO)   libcgrstat.so.X.Y.Z (soname libcgrstat.so.X): exports
#                       what libcgrstat.map lists, libbpf and cgutil inside
#                       (libcgcount's convention, lib/README.md)
#   $(CGRSTAT_OBJS)     the library's objects, position independent, hidden
#                       but for CGRSTAT_API: the .a, the .so and libcgcount
#                       are made of them
#   $(CGRSTAT_ASAN_OBJS)  the same with ASan + UBSan (libcgcount's sanitizer
#                       build, tests/sanitize's cgrstat)
#   CGRSTAT_CFLAGS / CGRSTAT_LDLIBS   to build a program against the library
#                       (with lib/cgutil, which parses cgrstat_open()'s events
#                       and finds the cgroup2 mount)
#
#   make cgrstat        the library and its CLI (tools/cgrstat.c)
#
# The loader (cgrstat_load.c, cgrstat_read.c, cgrstat_track.c) is what
# perf's rstat backend compiles too (perf/apply-patches.sh copies it, with
# the lib/cgutil files it calls); cgrstat_events.c, the event strings of
# cgrstat_open(), is the library's alone.
CGRSTAT_DIR := lib/cgrstat
CGRSTAT_OUT := $(BUILD)/cgrstat
CGRSTAT_LIB := $(CGRSTAT_OUT)/libcgrstat.a
# CGRSTAT_VERSION (x.y.z from CGRSTAT_*_VERSION in the header), _SONAME,
# _MAP, _LIB_SO and its link rule (scripts/library.mk)
$(eval $(call SHARED_LIBRARY,CGRSTAT,cgrstat,$(CGRSTAT_DIR)/cgrstat.h,CGRSTAT,$(CGRSTAT_OUT),\
	$$(LIBBPF_LDLIBS) $$(CGUTIL_LDLIBS)))
CGRSTAT_SKEL := $(CGRSTAT_OUT)/cgrstat.skel.h
CGRSTAT_NAMES := cgrstat_load cgrstat_read cgrstat_track cgrstat_events
CGRSTAT_HDRS := $(addprefix $(CGRSTAT_DIR)/,cgrstat.h cgrstat_int.h cgrstat_abi.h) \
	lib/cgutil/cgutil.h
CGRSTAT_CFLAGS := $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(CGRSTAT_DIR) -Ilib/cgutil -isystem $(KHDR)
# (recursive: lib/cgutil/cgutil.mk is read after this fragment)
CGRSTAT_LDLIBS = $(CGRSTAT_LIB) $(CGUTIL_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS) $(CGUTIL_LDLIBS)

$(eval $(call BPF_SKEL_RULES,$(CGRSTAT_DIR),$(CGRSTAT_OUT)))
# v3: atomic exchange (the slot's "marked" flag), kernel 5.12+
$(CGRSTAT_OUT)/cgrstat.bpf.o: BPF_CFLAGS += -mcpu=v3
# struct cgrstat is the session: the skeleton is struct cgrstat_bpf
$(CGRSTAT_OUT)/cgrstat.skel.h: SKEL_NAME := cgrstat_bpf

# Each object once per flavour, here: PIC with hidden symbols (the .a, the
# .so, libcgcount) and its sanitizer twin.
CGRSTAT_OBJS := $(patsubst %,$(CGRSTAT_OUT)/pic/%.o,$(CGRSTAT_NAMES))
CGRSTAT_ASAN_OBJS := $(patsubst %,$(CGRSTAT_OUT)/asan/%.o,$(CGRSTAT_NAMES))
$(CGRSTAT_OBJS): $(CGRSTAT_OUT)/pic/%.o: $(CGRSTAT_DIR)/%.c $(CGRSTAT_HDRS) $(CGRSTAT_SKEL) \
		$(LIBBPF_HDRS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) -fPIC -fvisibility=hidden -I$(CGRSTAT_OUT) -c $< -o $@

$(CGRSTAT_ASAN_OBJS): $(CGRSTAT_OUT)/asan/%.o: $(CGRSTAT_DIR)/%.c $(CGRSTAT_HDRS) $(CGRSTAT_SKEL) \
		$(LIBBPF_HDRS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) $(SANITIZE_CFLAGS) -fPIC -fvisibility=hidden -I$(CGRSTAT_OUT) \
		-c $< -o $@

$(CGRSTAT_LIB): $(CGRSTAT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The shared library: hidden but what cgrstat.h marks CGRSTAT_API, exported
# at the version script's node.
$(CGRSTAT_LIB_SO): $(CGRSTAT_OBJS) $$(CGUTIL_LIB) $(LIBBPF_A)

.PHONY: cgrstat
cgrstat: bpf-tools $(CGRSTAT_LIB) $(CGRSTAT_LIB_SO) $(BUILD)/bin/cgrstat

GUEST_BINS += $(CGRSTAT_LIB_SO)
