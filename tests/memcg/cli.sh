#!/bin/bash
# memcg-stat CLI: both backends print the same values for an idle cgroup
# subtree, say which backend they used, and refuse bad input. TAP output.
# A kernel without the bpf_mem_cgroup_* kfuncs (Debian's below 7.0) must
# get the text backend by default, with the reason.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
BIN=${MEMCG_STAT:-build/bin/memcg-stat}
CG=/sys/fs/cgroup/memcg-stat-cli-$$
N=0
FAIL=0
ok() { N=$((N + 1)); if [ "$1" = 0 ]; then echo "ok $N $2"; else echo "not ok $N $2"; FAIL=1; fi; }
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rmdir "$CG"/a/x "$CG"/a "$CG"/b "$CG" 2>/dev/null
}
trap cleanup EXIT

echo "TAP version 13"
echo "1..8"
mkdir -p "$CG" && echo +memory > "$CG"/cgroup.subtree_control && mkdir -p "$CG"/a/x "$CG"/b
# an idle task holding some page cache and anon memory in a/x
bash -c "echo \$\$ > $CG/a/x/cgroup.procs; head -c 4000000 /dev/zero > /dev/null; exec sleep 600" &
PID=$!
sleep 0.5
F=anon,file,kernel,shmem,slab,pgfault,usage,events.oom
$BIN -r -f $F "$CG" > /tmp/cli-bpf.$$ 2> /tmp/cli-bpf-err.$$
ok $? "default backend reads the subtree"
if grep -qw bpf_mem_cgroup_page_state /proc/kallsyms; then
	grep -q "backend bpf" /tmp/cli-bpf-err.$$
	ok $? "reports the bpf backend"
else
	# our patched 6.12 backports the kfuncs, upstream has them from 7.0
	required=0
	[ "${KERNEL_NAME:-}" = patched ] || [ "$(uname -r | cut -d. -f1)" -ge 7 ] && required=1
	[ $required = 0 ] &&
		grep -q "backend text (kernel has no bpf_mem_cgroup_\* kfuncs)" /tmp/cli-bpf-err.$$
	ok $? "no kfuncs in this kernel (required: $required): reports the text backend and why"
fi
$BIN -t -r -f $F "$CG" > /tmp/cli-text.$$ 2> /tmp/cli-text-err.$$
grep -q "backend text (text backend requested)" /tmp/cli-text-err.$$
ok $? "reports the text backend"
# the periodic flusher may move pending counts between two reads: retry
for _ in 1 2 3 4 5; do
	$BIN -r -f $F "$CG" 2>/dev/null | sort > /tmp/cli-bpf-s.$$
	$BIN -t -r -f $F "$CG" 2>/dev/null | sort > /tmp/cli-text-s.$$
	cmp -s /tmp/cli-bpf-s.$$ /tmp/cli-text-s.$$ && break
	sleep 0.2
done
cmp -s /tmp/cli-bpf-s.$$ /tmp/cli-text-s.$$ && [ "$(wc -l < /tmp/cli-bpf-s.$$)" = 4 ]
ok $? "bpf and text print the same 4 cgroups and values"
[ "$FAIL" = 0 ] || { sed 's/^/# bpf:  /' /tmp/cli-bpf-s.$$; sed 's/^/# text: /' /tmp/cli-text-s.$$; }
$BIN -f anon,no_such_stat "$CG" > /tmp/cli-bad.$$ 2>&1
rc=$?
grep -q "no_such_stat: stat not known to the running kernel" /tmp/cli-bad.$$ && [ $rc = 2 ]
ok $? "unknown stat name refused as a usage error (exit $rc)"
$BIN "$CG/no-such-cgroup" > /tmp/cli-missing.$$ 2>&1
rc=$?
grep -q "no-such-cgroup: cannot open it (No such file or directory): give a cgroup directory" \
	/tmp/cli-missing.$$ && [ $rc = 1 ]
ok $? "nonexistent cgroup fails and says so (exit $rc)"
$BIN -t -b "$CG" > /tmp/cli-both.$$ 2>&1
rc=$?
grep -q "MEMCG_STAT_FORCE_TEXT and MEMCG_STAT_FORCE_BPF exclude each other" /tmp/cli-both.$$ &&
	[ $rc = 2 ]
ok $? "-t with -b refused as a usage error (exit $rc)"
$BIN -r -m 3 "$CG" > /tmp/cli-max.$$ 2>&1
rc=$?
grep -q "more than max_cgroups (3) cgroups: raise" /tmp/cli-max.$$ && [ $rc = 1 ]
ok $? "a subtree of 4 cgroups with -m 3 fails and says what to raise (exit $rc)"
rm -f /tmp/cli-*.$$
exit $FAIL
