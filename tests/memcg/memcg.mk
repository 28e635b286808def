# tests/memcg/memcg.mk - tests of the memcg statistics kfuncs and
# of the memcg-stat reader (lib/memcg). Listed in tests/vm-tests.d/50-memcg.list.
#
#   $(BUILD)/tests/memcg/memcg_stat_test   reader accuracy (kselftest harness)
#   $(BUILD)/tests/memcg/kfunc_test        the kfuncs themselves

MCGT_DIR := tests/memcg
MCGT_OUT := $(BUILD)/tests/memcg
MCGT_CFLAGS = $(MEMCG_CFLAGS) -Wno-unused-parameter -Wno-sign-compare -Wno-clobbered \
	-Itests/lib -I$(KSELFTEST_INC) -I$(MCGT_DIR) -I$(MCGT_OUT)

$(eval $(call BPF_SKEL_RULES,$(MCGT_DIR),$(MCGT_OUT)))
# kfunc_bounds.bpf.c declares the kfuncs with lib/memcg's header
$(MCGT_OUT)/kfunc_bounds.bpf.o: BPF_CFLAGS += -Ilib/memcg
$(MCGT_OUT)/kfunc_bounds.bpf.o: lib/memcg/memcg_kfuncs.bpf.h

$(MCGT_OUT)/memcg_stat_test: $(MCGT_DIR)/memcg_stat_test.c $(MCGT_DIR)/mcg_util.c \
		$(MCGT_DIR)/mcg_util.h $$(CGTEST_HDRS) $$(CGTEST_LIB) $$(MEMCG_LIB) $$(CGUTIL_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MCGT_CFLAGS) $< $(MCGT_DIR)/mcg_util.c $(CGTEST_LIB) $(MEMCG_LDLIBS) -o $@

$(MCGT_OUT)/kfunc_test: $(MCGT_DIR)/kfunc_test.c $(MCGT_DIR)/mcg_util.c \
		$(MCGT_DIR)/mcg_util.h $$(CGTEST_HDRS) $$(CGTEST_LIB) $$(CGUTIL_LIB) \
		$(MCGT_OUT)/kfunc_bounds.skel.h $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MCGT_CFLAGS) $< $(MCGT_DIR)/mcg_util.c $(CGTEST_LDLIBS) $(LIBBPF_A) $(LIBBPF_LDLIBS) -o $@

GUEST_BINS += $(MCGT_OUT)/memcg_stat_test $(MCGT_OUT)/kfunc_test
