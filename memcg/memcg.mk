# memcg/memcg.mk - memcg statistics reader (issue 7).
#
#   $(MEMCG_LIB)         libmemcgstat.a: memcg_stat.h API, bpf (kfuncs) + text backends
#   $(BUILD)/bin/memcg-stat   the CLI
#   MEMCG_CFLAGS / MEMCG_LDLIBS   to build against the library (tests, bench)
#
# The BPF program is built with bpf/bpf.mk's BPF_SKEL_RULES; it declares
# the kfuncs itself, so it builds against any vmlinux.h.

MEMCG_OUT := $(BUILD)/memcg
MEMCG_LIB := $(MEMCG_OUT)/libmemcgstat.a
MEMCG_CFLAGS := $(CFLAGS_USER) $(LIBBPF_CFLAGS) -Imemcg -I$(MEMCG_OUT)
MEMCG_LDLIBS := $(MEMCG_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS)

$(eval $(call BPF_SKEL_RULES,memcg,$(MEMCG_OUT)))

$(MEMCG_OUT)/memcg_stat.o: memcg/memcg_stat.c memcg/memcg_stat.h \
		memcg/memcg_stat_abi.h $(MEMCG_OUT)/memcg_stat.skel.h $(LIBBPF_HDRS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) -c $< -o $@

$(MEMCG_LIB): $(MEMCG_OUT)/memcg_stat.o
	$(AR) rcs $@ $^

$(BUILD)/bin/memcg-stat: memcg/memcg-stat.c memcg/memcg_stat.h $(MEMCG_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) $< $(MEMCG_LDLIBS) -o $@

.PHONY: memcg
memcg: $(BUILD)/bin/memcg-stat

GUEST_BINS += $(BUILD)/bin/memcg-stat

# The benchmark (bench/memcg-stat/; `make bench` runs it in the guest, bench/guest.sh).
$(BUILD)/bin/memcg_stat_bench: bench/memcg-stat/memcg_stat_bench.c memcg/memcg_stat.h \
		tests/memcg-stat/mcg_util.c tests/memcg-stat/mcg_util.h $(MEMCG_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) -Itests/memcg-stat $< tests/memcg-stat/mcg_util.c $(MEMCG_LDLIBS) -o $@

memcg: $(BUILD)/bin/memcg_stat_bench
GUEST_BINS += $(BUILD)/bin/memcg_stat_bench
