// SPDX-License-Identifier: GPL-2.0
/*
 * hw-loop: a workload of known instruction count for the hardware-event
 * tests of perf stat --for-each-cgroup (tests/perf/hw-perf.sh), arm64 only.
 *
 *   hw-loop N
 *
 * stops itself (SIGSTOP), so that its parent can move it into a cgroup,
 * then, once continued, runs N iterations of a two-instruction loop
 * (subs, b.ne) and exits.  Everything from the return of the stopping
 * syscall to the exit syscall is one asm block without a call, so the
 * user-mode instructions the task retires once continued are the loop's
 * 2 * N plus a handful around it, with no library code: the count an
 * instructions:u event charges the cgroup it was moved to.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __aarch64__
#error "hw-loop counts aarch64 instructions"
#endif

static int parse_iterations(const char *arg, uint64_t *n)
{
	char *end;

	errno = 0;
	*n = strtoull(arg, &end, 0);
	return errno || *end || end == arg || *n == 0 ? -1 : 0;
}

/* kill(pid, SIGSTOP); once continued, N loop iterations; exit_group(0) */
static void __attribute__((noreturn)) stop_loop_exit(pid_t pid, uint64_t n)
{
	register uint64_t x0 __asm__("x0") = (uint64_t)pid;
	register uint64_t x1 __asm__("x1") = SIGSTOP;
	register uint64_t x2 __asm__("x2") = n;
	register uint64_t x8 __asm__("x8") = __NR_kill;

	__asm__ volatile(
		"svc	#0\n\t"
		"mov	x0, x2\n"
		"1:\n\t"
		"subs	x0, x0, #1\n\t"
		"b.ne	1b\n\t"
		"mov	x8, %[exit_group]\n\t"
		"svc	#0\n"
		: "+r"(x0), "+r"(x8)
		: "r"(x1), "r"(x2), [exit_group] "i"(__NR_exit_group)
		: "cc", "memory");
	__builtin_unreachable();
}

int main(int argc, char **argv)
{
	uint64_t n;

	if (argc != 2 || parse_iterations(argv[1], &n)) {
		fprintf(stderr, "usage: %s ITERATIONS (> 0)\n", argv[0]);
		return 2;
	}
	stop_loop_exit(getpid(), n);
}
