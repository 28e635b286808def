# lib/memcg/memcg.mk - libmemcgstat, memcg statistics without text.
#
#   $(MEMCG_LIB)         libmemcgstat.a: memcg_stat.h API, bpf (kfuncs) + text readers
#   MEMCG_SRCS           its C files (the sanitizer build compiles them itself)
#   $(MEMCG_LIB_SO)      libmemcgstat.so.X.Y.Z (soname libmemcgstat.so.X): exports
#                        what libmemcgstat.map lists, libbpf and cgutil inside
#   MEMCG_CFLAGS / MEMCG_LDLIBS   to build against the static library (tools,
#                        tests, bench)
#
# The conventions are libcgcount's (lib/README.md): hidden symbols but what
# memcg_stat.h marks MEMCG_STAT_API, a version script, the version in the
# header. The BPF program declares the kfuncs itself, so it builds against
# any vmlinux.h. The CLI is tools/memcg-stat.c.
MEMCG_DIR := lib/memcg
MEMCG_OUT := $(BUILD)/memcg
# MEMCG_VERSION (x.y.z from MEMCG_STAT_*_VERSION in the header), _SONAME,
# _MAP, _LIB_SO and its link rule (scripts/library.mk)
$(eval $(call SHARED_LIBRARY,MEMCG,memcgstat,$(MEMCG_DIR)/memcg_stat.h,MEMCG_STAT,$(MEMCG_OUT),\
	$$(LIBBPF_LDLIBS) $$(CGUTIL_LDLIBS)))
MEMCG_LIB := $(MEMCG_OUT)/libmemcgstat.a
MEMCG_CFLAGS := $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(MEMCG_DIR) -I$(MEMCG_OUT)
# = not :=, and $$(CGUTIL_...) in prerequisites: lib/cgutil/cgutil.mk may be read later
MEMCG_LDLIBS = $(MEMCG_LIB) $(CGUTIL_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS) $(CGUTIL_LDLIBS)

$(eval $(call BPF_SKEL_RULES,$(MEMCG_DIR),$(MEMCG_OUT)))

# memcg_stat.c the API, memcg_fields.c the names, one file per reader
MEMCG_NAMES := memcg_stat memcg_fields memcg_kfunc memcg_text
MEMCG_SRCS := $(patsubst %,$(MEMCG_DIR)/%.c,$(MEMCG_NAMES))
MEMCG_HDRS := $(MEMCG_DIR)/memcg_stat.h $(MEMCG_DIR)/memcg_int.h $(MEMCG_DIR)/memcg_stat_abi.h
MEMCG_OBJS := $(patsubst %,$(MEMCG_OUT)/%.o,$(MEMCG_NAMES))

$(MEMCG_OBJS): $(MEMCG_OUT)/%.o: $(MEMCG_DIR)/%.c $(MEMCG_HDRS) $(MEMCG_OUT)/memcg_stat.skel.h \
		$(LIBBPF_HDRS_STAMP) $$(CGUTIL_DIR)/cgutil.h
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) -fPIC -fvisibility=hidden $(CGUTIL_CFLAGS) -c $< -o $@

$(MEMCG_LIB): $(MEMCG_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(MEMCG_LIB_SO): $(MEMCG_OBJS) $$(CGUTIL_LIB) $(LIBBPF_A)

.PHONY: memcg
memcg: $(MEMCG_LIB) $(MEMCG_LIB_SO) $(BUILD)/bin/memcg-stat

GUEST_BINS += $(MEMCG_LIB_SO)
