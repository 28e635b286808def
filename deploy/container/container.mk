# deploy/container/container.mk - the image of deploy/kubernetes/daemonset.yaml
# (deploy/container/build-image.sh: mmdebstrap, dpkg and umoci, no engine):
#   make image                 build/image/cgroup-exporter-<version>.oci.tar (it
#                              prints the path), from the packages of make's
#                              $(BUILD)/systemd-host/deb (built again only when
#                              what they package changed); the Debian base layer
#                              is fetched once, cached by its recipe
#   $(BUILD)/image/.built      the archive and its OCI runtime bundle
#                              $(BUILD)/image/bundle, which the guest test
#                              tests/deploy/image-run.py runs with crun
## make image         the DaemonSet's image, build/image/cgroup-exporter-<version>.oci.tar
##                    (Debian 12 and the package, no container engine; README.md, Kubernetes)
.PHONY: image
IMAGE_BUILT := $(BUILD)/image/.built
IMAGE_DEB_DIR = $(patsubst %/,%,$(dir $(SYSTEMD_HOST_DEBS)))
GUEST_BINS += $(IMAGE_BUILT)

image: $(IMAGE_BUILT)
	@deploy/container/build-image.sh $(IMAGE_DEB_DIR)

$(IMAGE_BUILT): $$(SYSTEMD_HOST_DEBS) deploy/container/build-image.sh scripts/bookworm-root.sh
	@mkdir -p $(@D)
	@deploy/container/build-image.sh $(IMAGE_DEB_DIR) >/dev/null
	@touch $@
