#!/bin/bash
# Install everything the project builds and tests with, from Debian 12's
# archive. Idempotent: quiet and fast when everything is present.
set -euo pipefail

PACKAGES=(
	# kernel source and kernel build
	linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	dwarves ccache cpio xz-utils kmod rsync python3
	# scripts/checkpatch.pl (spdxcheck.py)
	python3-ply python3-git
	# BPF programs: clang/llvm for -target bpf, libbpf's build deps
	clang llvm libbpf-dev zlib1g-dev
	# the test guest (qemu-system-common, a dependency, has virtiofsd);
	# Debian's kernels for the matrix (scripts/fetch-kernels.sh): the
	# archive keys and xz for their modules
	qemu-system-x86 busybox-static debian-archive-keyring
	# the arm64 guests (hardware events on QEMU's PMUv3): QEMU, the cross
	# compiler, mmdebstrap for the arm64 user space (scripts/arm64-rootfs.sh)
	qemu-system-arm gcc-aarch64-linux-gnu mmdebstrap
	# perf from the 6.12 tree (see platform.md)
	libdw-dev libunwind-dev liblzma-dev libzstd-dev libcap-dev libnuma-dev
	libslang2-dev libtraceevent-dev libpfm4-dev
	# benchmarks and plots
	gnuplot-nox
	# user-space checks; every shell and Python script (tests/hygiene)
	valgrind shellcheck pyflakes3
	# the tools' tests: a real Prometheus server and promtool (the exporter),
	# bcrypt hashes for its basic authentication, a terminal for cgtop, man
	# pages rendered with man -l
	prometheus python3-bcrypt tmux man-db
	# cgroup-exporter's HTTP server (with gnutls for TLS) and seccomp filter,
	# its --web.config.file (YAML, bcrypt hashes through libxcrypt)
	libmicrohttpd-dev libgnutls28-dev libseccomp-dev libyaml-dev libcrypt-dev
	# make deb (debian/) and its checks: lintian, systemd-analyze, pkg-config
	debhelper lintian systemd pkgconf
	# make image (deploy/container/build-image.sh), its tests: the OCI image
	# made, inspected, loaded as README.md says and run as the DaemonSet runs it
	umoci skopeo crun containerd podman
)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "  DEPS    installing: ${missing[*]}"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
