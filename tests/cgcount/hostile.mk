# tests/cgcount/hostile.mk - hostile_tree: libcgcount (ASan + UBSan) on a
# cgroup tree built to break walks (tests/cgcount/hostile-tree.sh, listed in
# tests/vm-tests.d/60-cgcount.list).
$(BUILD)/cgcount/asan/hostile_tree: tests/cgcount/hostile_tree.c $$(CGC_DIR)/cgcount.h \
		$$(CGC_ASAN_OBJS) $$(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(CGC_SAN) -I$(CGC_DIR) $< $(CGC_ASAN_LIBS) -o $@

GUEST_BINS += $(BUILD)/cgcount/asan/hostile_tree
