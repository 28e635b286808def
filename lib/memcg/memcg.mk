# lib/memcg/memcg.mk - libmemcgstat, memcg statistics without text.
#
#   $(MEMCG_LIB)         libmemcgstat.a: memcg_stat.h API, bpf (kfuncs) + text backends
#   MEMCG_CFLAGS / MEMCG_LDLIBS   to build against the library (tools, tests, bench)
#
# The BPF program declares the kfuncs itself, so it builds against any
# vmlinux.h. The CLI is tools/memcg-stat.c.
MEMCG_DIR := lib/memcg
MEMCG_OUT := $(BUILD)/memcg
MEMCG_LIB := $(MEMCG_OUT)/libmemcgstat.a
MEMCG_CFLAGS := $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(MEMCG_DIR) -I$(MEMCG_OUT)
MEMCG_LDLIBS := $(MEMCG_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS)

$(eval $(call BPF_SKEL_RULES,$(MEMCG_DIR),$(MEMCG_OUT)))

$(MEMCG_OUT)/memcg_stat.o: $(MEMCG_DIR)/memcg_stat.c $(MEMCG_DIR)/memcg_stat.h \
		$(MEMCG_DIR)/memcg_stat_abi.h $(MEMCG_OUT)/memcg_stat.skel.h $(LIBBPF_HDRS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) -c $< -o $@

$(MEMCG_LIB): $(MEMCG_OUT)/memcg_stat.o
	$(AR) rcs $@ $^

.PHONY: memcg
memcg: $(MEMCG_LIB) $(BUILD)/bin/memcg-stat
