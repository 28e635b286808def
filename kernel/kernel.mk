# kernel/kernel.mk - the patched guest kernels, built by scripts/build-kernel.sh
# from Debian's linux-source with a series of kernel/ applied. The script
# tracks the series, the patches and the config fragments (kernel/config/)
# itself and rebuilds only what changed (ccache).
#
#   make kernel        build/bzImage: the test kernel (guest.fragment), and
#                      the series' uapi headers in build/headers
#   make kernel-debug  build/bzImage-debug: + KASAN, kmemleak, lockdep (debug.fragment)
#   make kernel-bench  build/bzImage-bench: no lock debugging (bench.fragment)
.PHONY: kernel kernel-debug kernel-bench
kernel: deps
	@scripts/build-kernel.sh default
$(BZIMAGE) $(KHDR)/linux/perf_event.h $(KOBJ)/vmlinux: | kernel

kernel-debug: deps
	@scripts/build-kernel.sh debug

kernel-bench: deps
	@scripts/build-kernel.sh bench
