#!/bin/bash
# Host test (TAP): every library's public header is valid C and C++, as
# libbpf's tools/testing/selftests/bpf/test_cpp.cpp shows for libbpf's.
# tests/hygiene/headers/<header>_client.c, one client per header that
# declares options with the header's OPTS macro and calls the library, is
# built as C (gcc -std=c99 and -std=gnu11, -pedantic) and as C++ (g++
# -std=c++11 and -std=c++17), each with -Wall -Wextra -Werror, linked against
# the built shared library (libNAME.so, which `make tests` builds) and run.
# No set -e: a failed build or run is a TAP line and the test goes on.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

# header|library (libNAME.so)|build dir
HEADERS=(
	"lib/cgcount/cgcount.h|cgcount|build/cgcount"
	"lib/cgrstat/cgrstat.h|cgrstat|build/cgrstat"
	"lib/memcg/memcg_stat.h|memcgstat|build/memcg"
)
COMPILERS=(
	"gcc -x c -std=c99 -pedantic"
	"gcc -x c -std=gnu11 -pedantic"
	"g++ -x c++ -std=c++11"
	"g++ -x c++ -std=c++17"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# client HEADER LIB DIR COMPILER...: builds and runs the header's client
# shellcheck disable=SC2317 # called through check
client() {
	local header=$1 lib=$2 dir=$3 src out
	shift 3
	src=tests/hygiene/headers/$(basename "$header" .h)_client.c
	out=$tmp/client
	rm -f "$out"
	# shellcheck disable=SC2068 # the compiler and its options, split on purpose
	if ! $@ -Wall -Wextra -Werror -I"$(dirname "$header")" "$src" -L"$dir" -l"$lib" \
		-o "$out" >"$tmp/log" 2>&1; then
		sed 's/^/# /' "$tmp/log" | head -20
		return 1
	fi
	LD_LIBRARY_PATH=$dir "$out" 2>&1 | sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}

echo "TAP version 13"
echo "1..$(( ${#HEADERS[@]} * ${#COMPILERS[@]} ))"
for h in "${HEADERS[@]}"; do
	IFS='|' read -r header lib dir <<<"$h"
	for cc in "${COMPILERS[@]}"; do
		if [ ! -e "$dir/lib$lib.so" ]; then
			not_ok "$header as $cc: $dir/lib$lib.so not built (make tests)"
			continue
		fi
		# shellcheck disable=SC2086 # the compiler and its options
		check "$header as $cc -Wall -Wextra -Werror: its client builds, links lib$lib.so and runs" \
			client "$header" "$lib" "$dir" $cc
	done
done
exit "$fail"
