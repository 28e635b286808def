# lib/cgutil/cgutil.mk - libcgutil, the internal helpers every library, tool
# and the bench share (lib/cgutil/cgutil.h: cgroup2 mount, cgroup ids, event
# strings, with libpfm4 for PMU event names). Static, position independent,
# symbols hidden: it is linked into libcgcount.so without exporting
# anything, and into executables as is.
#
#   $(CGUTIL_LIB)        build/cgutil/libcgutil.a
#   $(CGUTIL_ASAN_LIB)   the same with ASan + UBSan (the sanitizer test builds)
#   CGUTIL_CFLAGS / CGUTIL_LDLIBS   to build against it
CGUTIL_DIR      := lib/cgutil
CGUTIL_OUT      := $(BUILD)/cgutil
CGUTIL_NAMES    := cgroup cgns cgwalk cpus events perf_open pfm
CGUTIL_LIB      := $(CGUTIL_OUT)/libcgutil.a
CGUTIL_ASAN_LIB := $(CGUTIL_OUT)/asan/libcgutil.a
CGUTIL_INC      := -I$(CGUTIL_DIR) -isystem $(KHDR)
CGUTIL_CFLAGS   := $(CGUTIL_INC)
CGUTIL_LDLIBS   := -lpfm
CGUTIL_BUILD_CFLAGS := $(CFLAGS_USER) -fPIC -fvisibility=hidden $(CGUTIL_INC)
CGUTIL_SAN      := $(SANITIZE_CFLAGS)

$(CGUTIL_OUT)/%.o: $(CGUTIL_DIR)/%.c $(wildcard $(CGUTIL_DIR)/*.h) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CGUTIL_BUILD_CFLAGS) -c $< -o $@

$(CGUTIL_OUT)/asan/%.o: $(CGUTIL_DIR)/%.c $(wildcard $(CGUTIL_DIR)/*.h) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CGUTIL_BUILD_CFLAGS) $(CGUTIL_SAN) -c $< -o $@

$(CGUTIL_LIB): $(patsubst %,$(CGUTIL_OUT)/%.o,$(CGUTIL_NAMES))
	@rm -f $@
	$(AR) rcs $@ $^

$(CGUTIL_ASAN_LIB): $(patsubst %,$(CGUTIL_OUT)/asan/%.o,$(CGUTIL_NAMES))
	@rm -f $@
	$(AR) rcs $@ $^
