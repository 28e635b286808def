# tests/systemd-host/systemd-host.mk - what the Debian 12 host with systemd
# as init boots with (tests/vm-tests.d/67-systemd-host.list):
#   $(BUILD)/systemd-host/deb/*.deb  make deb's packages, which the guest installs;
#                                    built again only when what they package changed
#                                    (a directory of their own: make deb replaces build/deb).
#                                    make's library and tools stand for their sources:
#                                    debian/rules builds them again against Debian's
#                                    libbpf, in build/libbpf-system
#   $(BUILD)/systemd-host/image.path the path of the host's disk image
#                                    (scripts/systemd-host-image.sh: built again only
#                                    when its recipe changed, the hash in its name)
SYSTEMD_HOST_DEBS := $(BUILD)/systemd-host/deb/.built
SYSTEMD_HOST_IMAGE := $(BUILD)/systemd-host/image.path
GUEST_BINS += $(SYSTEMD_HOST_IMAGE)

$(SYSTEMD_HOST_DEBS): $$(CGC_LIB_SO) $$(CGC_TOOL_BINS) $$(addprefix $(BUILD)/bin/,$$(TOOLS_INSTALLED)) \
		$(wildcard debian/* deploy/*/* docs/man/*)
	@mkdir -p $(@D)
	@deploy/build-deb.sh $(@D) >$(@D).log 2>&1 || { tail -30 $(@D).log; exit 1; }
	@touch $@

$(SYSTEMD_HOST_IMAGE): $(SYSTEMD_HOST_DEBS) scripts/systemd-host-image.sh scripts/bookworm-root.sh \
		$(shell find tests/systemd-host/image -type f)
	@scripts/systemd-host-image.sh >$@.$$$$ && mv $@.$$$$ $@
