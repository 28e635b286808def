# kernel/kernel.mk - the patched guest kernels, built by scripts/build-kernel.sh
# from Debian's linux-source with a series of kernel/ applied. The script
# tracks the series, the patches and the config fragments (kernel/config/)
# itself and rebuilds only what changed (ccache).
#
#   make kernel        both test kernels (guest.fragment) that make check boots:
#     make kernel-6.12 build/bzImage      6.12 + kernel/backport-6.12, and its
#                                         uapi headers in build/headers
#     make kernel-7.3  build/bzImage-7.3  7.3 + kernel/mainline-7.3 (headers
#                                         in build/headers-7.3)
#   make kernel-debug  build/bzImage-debug: + KASAN, kmemleak, lockdep (debug.fragment)
#   make kernel-bench  build/bzImage-bench: no lock debugging (bench.fragment)
#   make check-7.3     make check's tests on the 7.3 kernel only (T=prefix picks)
#   make check-irqsoff the longest IRQs-off section of an ATTACH and a DETACH
#                      of 1,000,000 cgroups, at most 100 us: 7.3 with
#                      bench.fragment + the irqsoff tracer
#                      (build/bzImage-7.3-irqsoff), one vcpu, exact guest
#                      (1 us = 1,000 instructions); about an hour
BZIMAGE_73 := $(BUILD)/bzImage-7.3
.PHONY: kernel kernel-6.12 kernel-7.3 kernel-7.3-wait kernel-debug kernel-bench check-7.3 \
	check-irqsoff
# One kernel build at a time: on two cores the second would only slow the
# first. When the programs build next (make tests, check, all), the 7.3
# kernel builds in the background meanwhile, and kernel-7.3-wait (the last
# prerequisite of tests) waits for it: the programs' serial compiles and the
# kernel's serial link steps fill each other's idle cpu.
KERNEL_73_MODE := $(if $(filter all tests check check-7.3 check-debug vm-run vm-shell bench bench-quick bench-smoke bench-profile,$(or $(MAKECMDGOALS),all)),--background)
kernel: kernel-6.12
	@scripts/build-kernel.sh --linux 7.3 $(KERNEL_73_MODE) default
kernel-7.3-wait:
	@scripts/build-kernel.sh --linux 7.3 --wait default
kernel-6.12: deps
	@scripts/build-kernel.sh default
kernel-7.3: deps
	@scripts/build-kernel.sh --linux 7.3 default
# what boots or builds against the 6.12 tree needs the 6.12 kernel alone
$(BZIMAGE) $(KHDR)/linux/perf_event.h $(KOBJ)/vmlinux: | kernel-6.12
$(BZIMAGE_73): | kernel-7.3

kernel-debug: deps
	@scripts/build-kernel.sh debug

kernel-bench: deps
	@scripts/build-kernel.sh bench
kernel-arm64-bench: deps ; @scripts/build-kernel.sh --linux 7.3 --arch arm64 bench

## make check-7.3     the guest tests on the patched 7.3 kernel only (T=prefix picks)
check-7.3: tests
	@HOST_TESTS= scripts/check.sh --kernels patched-7.3 --out $(BUILD)/check-7.3 $(T)

## make check-irqsoff  IRQs-off sections of ATTACH/DETACH of 1,000,000 cgroups <= 100 us
IRQSOFF_CGROUPS ?= 1000000
check-irqsoff: tests
	@scripts/build-kernel.sh --linux 7.3 irqsoff
	@scripts/vm-run.sh --exact --cpus 1 --mem 12G --timeout 14400 \
		--kernel $(BUILD)/bzImage-7.3-irqsoff -- \
		'PCG_SCALE_CGROUPS=$(IRQSOFF_CGROUPS) PCG_IRQSOFF_BOUND_US=100 build/bin/perf_cgroup_scale -r irqsoff.attach_irqs_off_bounded'
