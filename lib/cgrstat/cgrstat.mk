# lib/cgrstat/cgrstat.mk - libcgrstat, the BPF rstat backend (no kernel patch).
#
#   $(CGRSTAT_LIB)      libcgrstat.a, API in lib/cgrstat/cgrstat.h; its BPF
#                       program is lib/cgrstat/rstat_counters.bpf.c
#   CGRSTAT_CFLAGS / CGRSTAT_LDLIBS   to build a program against the library
#
#   make cgrstat        the library and its CLI (tools/cgrstat.c)
CGRSTAT_DIR := lib/cgrstat
CGRSTAT_OUT := $(BUILD)/bpf
CGRSTAT_LIB := $(CGRSTAT_OUT)/libcgrstat.a
CGRSTAT_SKEL := $(CGRSTAT_OUT)/rstat_counters.skel.h
CGRSTAT_CFLAGS := $(CFLAGS_USER) $(LIBBPF_CFLAGS) -I$(CGRSTAT_DIR)
CGRSTAT_LDLIBS := $(CGRSTAT_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS)

$(eval $(call BPF_SKEL_RULES,$(CGRSTAT_DIR),$(CGRSTAT_OUT)))
# v3: atomic exchange (the slot's "marked" flag), kernel 5.12+
$(CGRSTAT_OUT)/rstat_counters.bpf.o: BPF_CFLAGS += -mcpu=v3

$(CGRSTAT_OUT)/cgrstat.o: $(CGRSTAT_DIR)/cgrstat.c $(CGRSTAT_DIR)/cgrstat.h $(CGRSTAT_SKEL) \
		$(LIBBPF_HDRS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) -I$(CGRSTAT_OUT) -c $< -o $@

$(CGRSTAT_LIB): $(CGRSTAT_OUT)/cgrstat.o
	$(AR) rcs $@ $^

.PHONY: cgrstat
cgrstat: bpf-tools $(CGRSTAT_LIB) $(BUILD)/bin/cgrstat
