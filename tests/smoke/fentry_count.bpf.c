// SPDX-License-Identifier: GPL-2.0
/* Smoke test: an fentry program counts getpgid() calls of one process. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

int target_tgid;
__u64 calls;

SEC("fentry/__x64_sys_getpgid")
int BPF_PROG(count_getpgid, const struct pt_regs *regs)
{
	if ((bpf_get_current_pid_tgid() >> 32) == target_tgid)
		__sync_fetch_and_add(&calls, 1);
	return 0;
}
