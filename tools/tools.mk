# tools/tools.mk - the command-line tools.
#
#   $(BUILD)/bin/cgtop            top-like table of the busiest cgroups   } libcgcount
#   $(BUILD)/bin/cgroup-exporter  Prometheus exporter                     }
#   $(BUILD)/bin/cgrstat          the BPF rstat backend on its own (libcgrstat)
#   $(BUILD)/bin/memcg-stat       memory.stat without text (libmemcgstat)
#   $(BUILD)/cgcount/asan/bin/*   cgtop and cgroup-exporter with ASan + UBSan
#                                 (tests/cgcount/tools.sh runs them)
#
# The sanitizer builds of cgrstat and memcg-stat are in tests/sanitize/.
TOOLS_DIR := tools
CGC_TOOLS := cgtop cgroup-exporter
CGC_TOOL_BINS := $(addprefix $(BUILD)/bin/,$(CGC_TOOLS))
CGC_ASAN_TOOL_BINS := $(addprefix $(BUILD)/cgcount/asan/bin/,$(CGC_TOOLS))

$(CGC_TOOL_BINS): $(BUILD)/bin/%: $(TOOLS_DIR)/%.c $$(CGC_DIR)/cgcount.h $$(CGC_LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -I$(CGC_DIR) $< $(CGC_LIB_A) $(CGC_LDLIBS) -lm -o $@

$(CGC_ASAN_TOOL_BINS): $(BUILD)/cgcount/asan/bin/%: $(TOOLS_DIR)/%.c $$(CGC_DIR)/cgcount.h \
		$$(CGC_ASAN_OBJS) $$(CGC_LIBPERF) $$(CGC_LIBAPI) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(CGC_SAN) -I$(CGC_DIR) $< $(CGC_ASAN_LIBS) -lm -o $@

$(BUILD)/bin/cgrstat: $(TOOLS_DIR)/cgrstat.c $$(CGRSTAT_DIR)/cgrstat.h $$(CGRSTAT_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) $< $(CGRSTAT_LDLIBS) -o $@

$(BUILD)/bin/memcg-stat: $(TOOLS_DIR)/memcg-stat.c $$(MEMCG_DIR)/memcg_stat.h $$(MEMCG_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) $< $(MEMCG_LDLIBS) -o $@

.PHONY: tools
tools: $(CGC_TOOL_BINS) $(BUILD)/bin/cgrstat $(BUILD)/bin/memcg-stat

GUEST_BINS += $(CGC_TOOL_BINS) $(CGC_ASAN_TOOL_BINS) $(BUILD)/bin/cgrstat $(BUILD)/bin/memcg-stat
