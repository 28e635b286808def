# tests/smoke: the guest kernel boots with everything the tests need.
SMOKE_OUT := $(BUILD)/tests/smoke
$(eval $(call BPF_SKEL_RULES,tests/smoke,$(SMOKE_OUT)))

$(SMOKE_OUT)/smoke: tests/smoke/smoke.c tests/lib/cgfile.h $(SMOKE_OUT)/fentry_count.skel.h $(LIBBPF_A)
	$(CC) $(CFLAGS_USER) -Wno-unused-parameter -isystem $(KHDR) -Itests/lib -I$(KSELFTEST_INC) -I$(SMOKE_OUT) \
		$(LIBBPF_CFLAGS) $< $(LIBBPF_A) $(LIBBPF_LDLIBS) -o $@

GUEST_BINS += $(SMOKE_OUT)/smoke
