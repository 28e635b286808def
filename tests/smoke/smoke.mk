# tests/smoke: the guest kernel boots with everything the tests need.
SMOKE_OUT := $(BUILD)/tests/smoke
$(eval $(call BPF_SKEL_RULES,tests/smoke,$(SMOKE_OUT)))

$(SMOKE_OUT)/smoke: tests/smoke/smoke.c $$(CGTEST_HDRS) $(SMOKE_OUT)/fentry_count.skel.h $(LIBBPF_A) \
		$$(CGTEST_LIB) $$(CGUTIL_LIB)
	$(CC) $(CFLAGS_USER) -Wno-unused-parameter -isystem $(KHDR) $(CGTEST_CFLAGS) -I$(KSELFTEST_INC) \
		-I$(SMOKE_OUT) $(LIBBPF_CFLAGS) $< $(CGTEST_LDLIBS) $(LIBBPF_A) $(LIBBPF_LDLIBS) -o $@

GUEST_BINS += $(SMOKE_OUT)/smoke
