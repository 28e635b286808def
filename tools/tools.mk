# tools/tools.mk - the command-line tools.
#
#   $(BUILD)/bin/cgtop            top-like table of the busiest cgroups   } libcgcount
#   $(BUILD)/bin/cgroup-exporter  Prometheus exporter                     }
#   $(BUILD)/bin/cgrstat          the BPF rstat backend on its own (libcgrstat)
#   $(BUILD)/bin/memcg-stat       memory.stat without text (libmemcgstat)
#   $(BUILD)/cgcount/asan/bin/*   cgtop and cgroup-exporter with ASan + UBSan
#                                 (tests/cgcount/tools.sh runs them)
#
# cgtop and cgroup-exporter share cgtool.c (the options choosing what to
# count, the session, the cgroup tree); every tool follows cli.h (--help,
# --version, exit status 2 for a usage error). Man pages: docs/man/*.1.
# cgroup-exporter's sources are in tools/exporter/ (exporter.h says which
# part is where).
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [BINDIR=] [MANDIR=]   also installs
#                      these tools (as built) in BINDIR and their man pages in MANDIR/man1
# The sanitizer builds of cgrstat and memcg-stat are in tests/sanitize/.
TOOLS_DIR := tools
CGC_TOOLS := cgtop cgroup-exporter
CGC_TOOL_BINS := $(addprefix $(BUILD)/bin/,$(CGC_TOOLS))
CGC_ASAN_TOOL_BINS := $(addprefix $(BUILD)/cgcount/asan/bin/,$(CGC_TOOLS))
CGTOOL_SRCS := $(TOOLS_DIR)/cgtool.c $(TOOLS_DIR)/cgroupfs.c
CGTOOL_HDRS := $(TOOLS_DIR)/cgtool.h $(TOOLS_DIR)/cli.h $(TOOLS_DIR)/cgroupfs.h
# each tool's own sources and headers, by its name
TOOL_SRCS_cgtop := $(TOOLS_DIR)/cgtop.c
TOOL_SRCS_cgroup-exporter := $(addprefix $(TOOLS_DIR)/exporter/,main.c metrics.c http.c \
	listen.c textfile.c privileges.c process.c collector.c kubelet.c webconfig.c)
TOOL_HDRS_cgroup-exporter := $(addprefix $(TOOLS_DIR)/exporter/,exporter.h collector.h kubelet.h)
# the exporter's HTTP server, Debian's libmicrohttpd (libmicrohttpd-dev), and
# its seccomp filter, libseccomp (libseccomp-dev); --web.config.file: libyaml
# (libyaml-dev), TLS through libmicrohttpd's gnutls (libgnutls28-dev), bcrypt
# through libxcrypt (libcrypt-dev); gzip answers: zlib (zlib1g-dev)
$(BUILD)/bin/cgroup-exporter $(BUILD)/cgcount/asan/bin/cgroup-exporter: \
	TOOL_LDLIBS := -lmicrohttpd -lseccomp -lyaml -lgnutls -lcrypt -lz

$(CGC_TOOL_BINS): $(BUILD)/bin/%: $$(TOOL_SRCS_$$*) $$(TOOL_HDRS_$$*) $(CGTOOL_SRCS) $(CGTOOL_HDRS) \
		$$(CGC_DIR)/cgcount.h $$(CGC_LIB_A) $$(CGUTIL_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) -I$(CGC_DIR) -I$(TOOLS_DIR) $(CGUTIL_INC) $(TOOL_SRCS_$*) $(CGTOOL_SRCS) $(CGC_LIB_A) $(CGUTIL_LIB) $(CGC_LDLIBS) $(TOOL_LDLIBS) -lm -pthread -o $@

$(CGC_ASAN_TOOL_BINS): $(BUILD)/cgcount/asan/bin/%: $$(TOOL_SRCS_$$*) $$(TOOL_HDRS_$$*) $(CGTOOL_SRCS) $(CGTOOL_HDRS) \
		$$(CGC_DIR)/cgcount.h $$(CGC_ASAN_OBJS) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_USER) $(CGC_SAN) -I$(CGC_DIR) -I$(TOOLS_DIR) $(CGUTIL_INC) $(TOOL_SRCS_$*) $(CGTOOL_SRCS) $(CGC_ASAN_LIBS) $(TOOL_LDLIBS) -lm -pthread -o $@

$(BUILD)/bin/cgrstat: $(TOOLS_DIR)/cgrstat.c $(TOOLS_DIR)/cgroupfs.c $(TOOLS_DIR)/cgroupfs.h $(TOOLS_DIR)/cli.h \
		$$(CGRSTAT_DIR)/cgrstat.h $$(CGRSTAT_LIB) $$(CGUTIL_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(CGRSTAT_CFLAGS) $< $(TOOLS_DIR)/cgroupfs.c $(CGRSTAT_LDLIBS) -o $@

$(BUILD)/bin/memcg-stat: $(TOOLS_DIR)/memcg-stat.c $(TOOLS_DIR)/cgroupfs.c $(TOOLS_DIR)/cgroupfs.h $(TOOLS_DIR)/cli.h \
		$$(MEMCG_DIR)/memcg_stat.h $$(MEMCG_LIB) $$(CGUTIL_LIB) $(LIBBPF_A)
	@mkdir -p $(@D)
	$(CC) $(MEMCG_CFLAGS) $(CGUTIL_CFLAGS) $< $(TOOLS_DIR)/cgroupfs.c $(MEMCG_LDLIBS) -o $@

.PHONY: tools tools-install
TOOLS_INSTALLED := cgtop cgroup-exporter cgrstat memcg-stat
tools: $(addprefix $(BUILD)/bin/,$(TOOLS_INSTALLED))

# what is built, nothing built (the root Makefile's INSTALL_CHECK)
tools-install:
	$(call INSTALL_CHECK,$(addprefix $(BUILD)/bin/,$(TOOLS_INSTALLED)))
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(addprefix $(BUILD)/bin/,$(TOOLS_INSTALLED)) $(DESTDIR)$(BINDIR)/
	install -m 644 $(patsubst %,docs/man/%.1,$(TOOLS_INSTALLED)) $(DESTDIR)$(MANDIR)/man1/

GUEST_BINS += $(CGC_TOOL_BINS) $(CGC_ASAN_TOOL_BINS) $(BUILD)/bin/cgrstat $(BUILD)/bin/memcg-stat
ARM64_BINS += $(addprefix $(BUILD)/bin/,$(TOOLS_INSTALLED))
