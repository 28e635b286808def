# scripts/library.mk - what every library's fragment builds with, written
# once (the root Makefile includes it right after scripts/bpf-toolchain.mk,
# before the fragments, so := works with it):
#
#   SANITIZE_CFLAGS   AddressSanitizer + UBSan, the first error fatal: the
#                     sanitizer builds of the libraries, tools and tests
#   $(call LIBRARY_VERSION,HEADER,PREFIX)
#                     "x.y.z" from PREFIX_{MAJOR,MINOR,PATCH}_VERSION in HEADER
#   $(eval $(call SHARED_LIBRARY,VAR,NAME,HEADER,PREFIX,OUTDIR,LDLIBS))
#                     libNAME.so by lib/README.md's convention: defines
#                     VAR_VERSION (from HEADER), VAR_SONAME (libNAME.so.MAJOR),
#                     VAR_REALNAME (libNAME.so.MAJOR.MINOR.PATCH), VAR_MAP
#                     (libNAME.map beside HEADER), VAR_LIB_SO (OUTDIR/REALNAME)
#                     and the rule that links VAR_LIB_SO from its other
#                     prerequisites, in their order, then LDLIBS: with the
#                     soname, the version script, -z defs (no undefined
#                     symbol left), and the links SONAME and libNAME.so.
#                     The fragment names the objects and archives in a rule
#                     of its own, `$(VAR_LIB_SO): objects...`; LDLIBS that
#                     name another fragment's variable are written $$(VAR).

SANITIZE_CFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIBRARY_VERSION = $(shell awk '/^\#define $(2)_(MAJOR|MINOR|PATCH)_VERSION/ \
	{ printf "%s%s", sep, $$3; sep = "." }' $(1))

define SHARED_LIBRARY
$(1)_VERSION := $$(call LIBRARY_VERSION,$(3),$(4))
$(1)_SONAME := lib$(2).so.$$(firstword $$(subst ., ,$$($(1)_VERSION)))
$(1)_REALNAME := lib$(2).so.$$($(1)_VERSION)
$(1)_MAP := $(dir $(3))lib$(2).map
$(1)_LIB_SO := $(5)/$$($(1)_REALNAME)
$$($(1)_LIB_SO): $$($(1)_MAP)
	$$(CC) -shared -Wl,-soname,$$($(1)_SONAME) -Wl,--version-script=$$($(1)_MAP) \
		-Wl,-z,defs -o $$@ $$(filter-out $$($(1)_MAP),$$^) $(6)
	@ln -sf $$($(1)_REALNAME) $(5)/$$($(1)_SONAME)
	@ln -sf $$($(1)_SONAME) $(5)/lib$(2).so
endef
