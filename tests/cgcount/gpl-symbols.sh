#!/bin/bash
# The symbols of the kernel tree's libperf (tools/lib/perf) and libapi
# (tools/lib/api), both GPL-2.0, that FILE... define or need, one
# "FILE: SYMBOL" a line; nothing for a file built without them.
# libcgcount, libcgrstat, libmemcgstat and the tools the packages ship must
# print nothing: they are LGPL-2.1 OR BSD-2-Clause (debian/copyright).
# Needs the files' symbol tables: the build's or `make install`'s files,
# not the packages' (stripped).
#   tests/cgcount/gpl-symbols.sh FILE...
# Exit status: 0 when none of FILE has one, 1 otherwise, 2 when nm fails.
# No set -e: grep finding no symbol (exit 1) is the good case.
set -uo pipefail
# libperf: its object types' methods and libperf_init/print; libapi: its
# file system helpers (fs/fs.h, fd/array.h, fs/tracing_path.h, cpu.h, io.h)
LIBPERF='libperf_[a-z_]+|perf_(cpu_map|thread_map|evsel|evlist|mmap|counts_values)__[a-z_]+'
LIBAPI='(filename|sysfs|procfs|sysctl|fdarray|cgroupfs|debugfs|tracefs|hugetlbfs|cpu|io)__[a-z_]+'
found=0
for f in "$@"; do
	syms=$(nm -A "$f" 2>/dev/null) || { echo "$f: nm failed" >&2; exit 2; }
	hits=$(awk '{ print $NF }' <<<"$syms" | grep -E "^($LIBPERF|$LIBAPI)(@.*)?$" | sort -u)
	[ -z "$hits" ] && continue
	awk -v f="$f" '{ print f ": " $0 }' <<<"$hits"
	found=1
done
exit "$found"
