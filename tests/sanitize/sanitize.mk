# tests/sanitize/sanitize.mk - AddressSanitizer + UBSan builds of our tools,
# run in the guest by tests/sanitize/tools.sh (listed in
# tests/vm-tests.d/07-sanitize.list). They replace valgrind there: under
# QEMU TCG valgrind took about 5 minutes for the same cases, these seconds.
#
#   $(SAN_BIN)/cgrstat, $(SAN_BIN)/memcg-stat, $(SAN_BIN)/cgroup-counter
#
# Each is built from the tool's and its library's sources with SAN_CFLAGS
# (libcgrstat's: its sanitizer objects, lib/cgrstat/cgrstat.mk) and
# tests/sanitize/fd_leak_check.c, which fails the program (exit 98) when
# it leaves a file descriptor open at exit. LeakSanitizer reports leaked
# memory (exit 23 by our ASAN_OPTIONS in tools.sh), UBSan aborts on undefined
# behaviour. libbpf itself is linked uninstrumented; its allocations are
# still tracked, as malloc is intercepted.

SAN_OUT := $(BUILD)/sanitize
SAN_BIN := $(SAN_OUT)/bin
SAN_CFLAGS := $(CFLAGS_USER) -O1 $(SANITIZE_CFLAGS)
SAN_FD_CHECK := tests/sanitize/fd_leak_check.c

$(SAN_BIN)/cgrstat: tools/cgrstat.c tools/cgroupfs.c tools/cgroupfs.h lib/cgrstat/cgrstat.h $$(CGRSTAT_ASAN_OBJS) $(SAN_FD_CHECK) \
		$(LIBBPF_A) $$(CGUTIL_ASAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -Ilib/cgrstat $(CGUTIL_CFLAGS) tools/cgrstat.c tools/cgroupfs.c $(CGRSTAT_ASAN_OBJS) \
		$(SAN_FD_CHECK) $(CGUTIL_ASAN_LIB) $(LIBBPF_A) $(LIBBPF_LDLIBS) $(CGUTIL_LDLIBS) -o $@

$(SAN_BIN)/memcg-stat: tools/memcg-stat.c tools/cgroupfs.c tools/cgroupfs.h $$(MEMCG_SRCS) $$(MEMCG_HDRS) \
		$$(MEMCG_OUT)/memcg_stat.skel.h $(SAN_FD_CHECK) $(LIBBPF_A) \
		$$(CGUTIL_ASAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) $(LIBBPF_CFLAGS) -Ilib/memcg -I$(MEMCG_OUT) $(CGUTIL_CFLAGS) \
		tools/memcg-stat.c tools/cgroupfs.c $(MEMCG_SRCS) $(SAN_FD_CHECK) $(CGUTIL_ASAN_LIB) \
		$(LIBBPF_A) $(LIBBPF_LDLIBS) $(CGUTIL_LDLIBS) -o $@

$(SAN_BIN)/cgroup-counter: examples/cgroup-counter/cgroup-counter.c $(SAN_FD_CHECK) \
		$(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -isystem $(KHDR) $< $(SAN_FD_CHECK) -o $@

GUEST_BINS += $(SAN_BIN)/cgrstat $(SAN_BIN)/memcg-stat $(SAN_BIN)/cgroup-counter

# The checks' own test: a clean program and two leaking ones (host).
$(SAN_BIN)/leaky-clean: tests/sanitize/leaky.c $(SAN_FD_CHECK)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) $^ -o $@
$(SAN_BIN)/leaky-fd: tests/sanitize/leaky.c $(SAN_FD_CHECK)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -DLEAK_FD $^ -o $@
$(SAN_BIN)/leaky-mem: tests/sanitize/leaky.c $(SAN_FD_CHECK)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -DLEAK_MEM $^ -o $@

GUEST_BINS += $(SAN_BIN)/leaky-clean $(SAN_BIN)/leaky-fd $(SAN_BIN)/leaky-mem
