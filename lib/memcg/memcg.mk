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
# x.y.z from MEMCG_STAT_{MAJOR,MINOR,PATCH}_VERSION in the header
MEMCG_VERSION := $(shell awk '/^\#define MEMCG_STAT_(MAJOR|MINOR|PATCH)_VERSION/ \
		{ printf "%s%s", sep, $$3; sep = "." }' $(MEMCG_DIR)/memcg_stat.h)
MEMCG_SONAME := libmemcgstat.so.$(firstword $(subst ., ,$(MEMCG_VERSION)))
MEMCG_MAP := $(MEMCG_DIR)/libmemcgstat.map
MEMCG_LIB := $(MEMCG_OUT)/libmemcgstat.a
MEMCG_LIB_SO := $(MEMCG_OUT)/libmemcgstat.so.$(MEMCG_VERSION)
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

$(MEMCG_LIB_SO): $(MEMCG_OBJS) $$(CGUTIL_LIB) $(LIBBPF_A) $(MEMCG_MAP)
	$(CC) -shared -Wl,-soname,$(MEMCG_SONAME) -Wl,--version-script=$(MEMCG_MAP) -Wl,-z,defs \
		-o $@ $(MEMCG_OBJS) $(CGUTIL_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS) \
		$(CGUTIL_LDLIBS)
	@ln -sf $(notdir $@) $(MEMCG_OUT)/$(MEMCG_SONAME)

.PHONY: memcg
memcg: $(MEMCG_LIB) $(MEMCG_LIB_SO) $(BUILD)/bin/memcg-stat

GUEST_BINS += $(MEMCG_LIB_SO)
