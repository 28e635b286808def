# examples/rstat-vmscan - the BPF selftest cgroup_hierarchical_stats pattern
# (per-cgroup per-cpu readings, rstat propagation, cgroup_iter read-out) on
# memcg reclaim; built as a skeleton that tests/cgrstat/vmscan_test.c loads.
VMSCAN_OUT := $(BUILD)/examples/rstat-vmscan
$(eval $(call BPF_SKEL_RULES,examples/rstat-vmscan,$(VMSCAN_OUT)))
# the rstat kfuncs, shared with libcgrstat's program
$(VMSCAN_OUT)/vmscan.bpf.o: BPF_CFLAGS += -Ilib/cgrstat
$(VMSCAN_OUT)/vmscan.bpf.o: lib/cgrstat/cgrstat_kfuncs.bpf.h
