# lib/cgcount/cgcount.mk - libcgcount (lib/cgcount/cgcount.h): one C API over
# the cgroup counting backends (per-cgroup perf events, the shared-event
# ioctls, BPF rstat); tools/ and tests/cgcount/ build on it.
#
#   $(CGC_LIB_A)         build/cgcount/libcgcount.a        } libbpf, cgrstat and
#   $(CGC_LIB_SO)        build/cgcount/libcgcount.so.X.Y.Z } cgutil inside;
#                        (soname libcgcount.so.X)          } libcgcount.map exports
#   $(CGC_ASAN_OBJS)     the library's objects with ASan + UBSan ($(CGC_ASAN_LIBS)
#                        to link a program against them)
#
#   make cgcount                  library + tools
#   make install [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=] [INCLUDEDIR=] [MANDIR=]
#                       header, .a, .so, cgcount.pc, cgcount(3) (lib/cgcount/cgcount.3),
#                       with the tools (tools/tools.mk); what is built, nothing built
#
# libbpf comes from scripts/bpf-toolchain.mk, cgrstat from
# lib/cgrstat/cgrstat.mk. Nothing of the kernel tree's libperf or libapi
# (GPL-2.0) goes in: the online cpus are lib/cgutil's, the scaling ours.
CGC_DIR     := lib/cgcount
CGC_OUT     := $(BUILD)/cgcount
CGC_LIB_A   := $(CGC_OUT)/libcgcount.a
# CGC_VERSION (x.y.z from CGCOUNT_*_VERSION in the header), CGC_SONAME,
# CGC_REALNAME, CGC_MAP, CGC_LIB_SO and its link rule
$(eval $(call SHARED_LIBRARY,CGC,cgcount,$(CGC_DIR)/cgcount.h,CGCOUNT,$(CGC_OUT),$$(CGC_LDLIBS)))
CGC_PC      := $(CGC_OUT)/cgcount.pc
CGC_NAMES   := cgcount cgset subtree cgtree errors events backend_events backend_shared backend_rstat
CGC_HDRS    := $(CGC_DIR)/cgcount.h $(CGC_DIR)/cgcount_int.h $(CGC_DIR)/cgset.h lib/cgrstat/cgrstat.h lib/cgutil/cgutil.h \
	$(LIBBPF_HDRS_STAMP)
CGC_LDLIBS  := -lpfm $(LIBBPF_LDLIBS) -lpthread
CGC_INC     := -I$(CGC_DIR) -Ilib/cgrstat -Ilib/cgutil $(LIBBPF_CFLAGS) -isystem $(KHDR)
# hidden by default: only what cgcount.h marks CGCOUNT_API is exported
CGC_CFLAGS  := $(CFLAGS_USER) -fPIC -fvisibility=hidden $(CGC_INC)
CGC_SAN     := $(SANITIZE_CFLAGS)

$(CGC_OUT)/pic/%.o: $(CGC_DIR)/%.c $(CGC_HDRS) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CGC_CFLAGS) -c $< -o $@

# (recursive: cgrstat's objects are lib/cgrstat/cgrstat.mk's)
CGC_OBJS = $(patsubst %,$(CGC_OUT)/pic/%.o,$(CGC_NAMES)) $(CGRSTAT_OBJS)

# The static library: one relocatable object with everything it needs. An
# archive has no version script, so the symbols the script does not export
# (ours and the bundled libbpf ones, which would clash with a
# program's own libbpf) are made local with the script's own list.
$(CGC_OUT)/cgcount.syms: $(CGC_MAP)
	@mkdir -p $(@D)
	sed -n 's/^[[:space:]]*\(cgcount_[a-z_]*\);$$/\1/p' $< > $@

$(CGC_OUT)/cgcount-all.o: $$(CGC_OBJS) $$(CGUTIL_LIB) $(LIBBPF_A) \
		$(CGC_OUT)/cgcount.syms
	$(LD) -r -o $@.tmp $(CGC_OBJS) $(CGUTIL_LIB) $(LIBBPF_A)
	$(OBJCOPY) --keep-global-symbols=$(CGC_OUT)/cgcount.syms $@.tmp $@
	@rm -f $@.tmp

$(CGC_LIB_A): $(CGC_OUT)/cgcount-all.o
	@rm -f $@
	$(AR) rcs $@ $^

# The shared library (scripts/library.mk): exports what the version script
# lists (CGCOUNT_x.y.z nodes, as libbpf.map), soname libcgcount.so.MAJOR.
$(CGC_LIB_SO): $$(CGC_OBJS) $$(CGUTIL_LIB) $(LIBBPF_A)

# cgcount.pc for PREFIX, LIBDIR and INCLUDEDIR (the root Makefile's), the
# directories under PREFIX written relative to ${prefix}
CGC_PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	-e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	-e 's|@VERSION@|$(CGC_VERSION)|' -e 's|@LDLIBS@|$(CGC_LDLIBS)|' $(CGC_DIR)/cgcount.pc.in
$(CGC_PC): $(CGC_DIR)/cgcount.pc.in $(CGC_DIR)/cgcount.mk
	@mkdir -p $(@D)
	$(CGC_PC_SED) > $@

# ---- the ASan + UBSan variant of the library objects (tests link them) ----
$(CGC_OUT)/asan/%.o: $(CGC_DIR)/%.c $(CGC_HDRS) $(KHDR)/linux/perf_event.h
	@mkdir -p $(@D)
	$(CC) $(CGC_CFLAGS) $(CGC_SAN) -c $< -o $@

# (recursive: lib/cgutil/cgutil.mk may be read after this fragment)
CGC_ASAN_OBJS = $(patsubst %,$(CGC_OUT)/asan/%.o,$(CGC_NAMES)) $(CGRSTAT_ASAN_OBJS) \
	$(CGUTIL_ASAN_LIB)
CGC_ASAN_LIBS = $(CGC_ASAN_OBJS) $(LIBBPF_A) $(CGC_LDLIBS)

.PHONY: cgcount cgcount-install
cgcount: $(CGC_LIB_A) $(CGC_LIB_SO) $(CGC_PC) $$(CGC_TOOL_BINS)

# what is built, nothing built (the root Makefile's INSTALL_CHECK)
cgcount-install:
	$(call INSTALL_CHECK,$(CGC_LIB_A) $(CGC_LIB_SO))
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(CGC_DIR)/cgcount.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(CGC_LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(CGC_LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(CGC_REALNAME) $(DESTDIR)$(LIBDIR)/$(CGC_SONAME)
	ln -sf $(CGC_SONAME) $(DESTDIR)$(LIBDIR)/libcgcount.so
	$(CGC_PC_SED) > $(DESTDIR)$(LIBDIR)/pkgconfig/cgcount.pc
	install -m 644 $(CGC_DIR)/cgcount.3 $(DESTDIR)$(MANDIR)/man3/

GUEST_BINS += $(CGC_LIB_A) $(CGC_LIB_SO)
ARM64_BINS += $(CGC_LIB_A) $(CGC_LIB_SO)
