# examples/cgroup-counter/cgroup-counter.mk - an example program of the
# multi-cgroup perf event ioctls of the kernel series (kernel/).
#
#   $(BUILD)/bin/cgroup-counter   count a software event for many cgroups
#                                 with one event per CPU (READ_CGROUPS)
#
# Built against the series' uapi headers ($(KHDR)); when they lack the
# ioctls the program is skipped with a message, so `make` works.
# EXAMPLES_KHDR=DIR builds it against another tree's installed headers.
EXAMPLES_DIR  := examples/cgroup-counter
EXAMPLES_KHDR ?= $(KHDR)
CGCOUNTER     := $(BUILD)/bin/cgroup-counter

$(CGCOUNTER): $(EXAMPLES_DIR)/cgroup-counter.c $(EXAMPLES_KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	@if grep -q PERF_EVENT_IOC_ATTACH_CGROUP $(EXAMPLES_KHDR)/linux/perf_event.h; then \
		echo "  CC      $@"; \
		$(CC) $(CFLAGS_USER) -isystem $(EXAMPLES_KHDR) -o $@ $<; \
	else \
		echo "  SKIP    $@: $(EXAMPLES_KHDR)/linux/perf_event.h has no PERF_EVENT_IOC_ATTACH_CGROUP"; \
	fi

.PHONY: examples
examples: $(CGCOUNTER)

GUEST_BINS += $(CGCOUNTER)
