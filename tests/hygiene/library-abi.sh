#!/bin/bash
# Host test (TAP): the libraries that follow the project's convention
# (lib/README.md, libbpf's) keep it, checked on the built shared objects:
#  - the file is libNAME.so.MAJOR.MINOR.PATCH and its soname libNAME.so.MAJOR,
#    both from the header's *_MAJOR/MINOR/PATCH_VERSION macros;
#  - the functions the header marks with its visibility macro, the version
#    script's global list and the .so's exports are the same set, each at
#    the version node the script lists it under (a release that adds
#    functions adds a node), the newest named after the header's version;
#  - every options struct starts with `size_t sz;` and the header declares
#    its OPTS macro; no public struct holds a fixed-size array;
#  - every C file of the library and of what it bundles (BPF programs
#    aside, which stay GPL) is
#    `LGPL-2.1 OR BSD-2-Clause`, SPDX line first;
#  - the .so and the .a carry and need nothing of the kernel tree's libperf
#    or libapi, GPL-2.0 (tests/cgcount/gpl-symbols.sh).
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh

# name|header|version script|build dir|macro prefix|source dirs (its own and
# what it bundles)
LIBS=(
	"cgcount|lib/cgcount/cgcount.h|lib/cgcount/libcgcount.map|build/cgcount|CGCOUNT|lib/cgcount lib/cgrstat lib/cgutil"
	"memcgstat|lib/memcg/memcg_stat.h|lib/memcg/libmemcgstat.map|build/memcg|MEMCG_STAT|lib/memcg lib/cgutil"
	"cgrstat|lib/cgrstat/cgrstat.h|lib/cgrstat/libcgrstat.map|build/cgrstat|CGRSTAT|lib/cgrstat lib/cgutil"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# version HEADER PREFIX: "x.y.z" from PREFIX_{MAJOR,MINOR,PATCH}_VERSION
version() {
	awk -v p="$2" '$1 == "#define" && $2 ~ "^" p "_(MAJOR|MINOR|PATCH)_VERSION$" \
		{ printf "%s%s", sep, $3; sep = "." }' "$1"
}

# api HEADER PREFIX: the functions declared with PREFIX_API (one per line)
api() {
	grep -vE "^#(define|ifndef) ${2}_API" "$1" | tr '\n' ' ' | grep -oE "${2}_API [^;]*;" |
		sed -E 's/\(.*//; s/.*[ *]([a-z_0-9]+)$/\1/' | sort
}

# same A B: A is not empty and B has the same lines
# shellcheck disable=SC2317 # called through check
same() { [ -s "$1" ] && cmp -s "$1" "$2"; }

# public_struct_arrays HEADER: members of its structs with a [N] array
public_struct_arrays() {
	awk '/^struct [a-z_0-9]+ \{/ { in_struct = 1 } in_struct && /\[[^]]*\];/ { print }
	     /^\};/ { in_struct = 0 }' "$1"
}

# opts_without_sz HEADER: the *_opts structs whose first member is not size_t sz
opts_without_sz() {
	awk '/^struct [a-z_0-9]+_opts \{/ { name = $2; getline; if ($0 !~ /^\tsize_t sz;/) print name }' "$1"
}

# map_nodes MAP: "NODE function" for each function of the version script
map_nodes() {
	awk '/^[A-Z_0-9.]+ \{/ { node = $1 } /^[[:space:]]*[a-z_0-9]+;$/ { sub(/;/, "", $1); print node, $1 }' "$1" |
		sort
}

# so_nodes SO: "NODE function" for each function the shared object defines
so_nodes() {
	objdump -T "$1" | awk '$3 == "DF" && $4 != "*UND*" { print $(NF - 1), $NF }' | sort
}

# wrong_licence DIR...: their C files (BPF programs aside) without the licence first
wrong_licence() {
	local d f
	for d in "$@"; do
		for f in "$d"/*.[ch]; do
			case $f in *.bpf.[ch]) continue ;; esac
			head -1 "$f" | grep -q 'SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause' || echo "$f"
		done
	done
}

echo "TAP version 13"
echo "1..$(( ${#LIBS[@]} * 8 ))"
for l in "${LIBS[@]}"; do
	IFS='|' read -r name header map dir prefix src <<<"$l"
	v=$(version "$header" "$prefix")
	so=$dir/lib$name.so.$v
	if [ ! -f "$so" ]; then
		for _ in 1 2 3 4 5 6 7 8; do not_ok "lib$name: $so not built (make)"; done
		continue
	fi
	soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	check "lib$name.so.$v: soname $soname is lib$name.so.${v%%.*}" [ "$soname" = "lib$name.so.${v%%.*}" ]

	api "$header" "$prefix" >"$tmp/api"
	sed -n 's/^[[:space:]]*\([a-z_0-9]*\);$/\1/p' "$map" | sort >"$tmp/map"
	nm -D --defined-only "$so" | awk '$2 ~ /[TDBRW]/ { sub(/@.*/, "", $3); print $3 }' |
		sort >"$tmp/exported"
	diff "$tmp/api" "$tmp/map" | sed 's/^/# header vs map: /'
	check "lib$name: the ${prefix}_API functions of $header ($(wc -l <"$tmp/api")) are $map's" \
		same "$tmp/api" "$tmp/map"
	diff "$tmp/map" "$tmp/exported" | sed 's/^/# map vs exported: /'
	check "lib$name: the .so exports the map's functions and nothing else" cmp -s "$tmp/map" "$tmp/exported"
	map_nodes "$map" >"$tmp/map-nodes"
	so_nodes "$so" >"$tmp/so-nodes"
	newest=$(awk '/^[A-Z_0-9.]+ \{/ { n = $1 } END { print n }' "$map")
	diff "$tmp/map-nodes" "$tmp/so-nodes" | sed 's/^/# map vs .so version nodes: /'
	nodes_ok=0
	same "$tmp/map-nodes" "$tmp/so-nodes" && [ "$newest" = "${prefix}_$v" ] || nodes_ok=1
	check "lib$name: each function at its version node of $map, the newest ${prefix}_$v (have: $newest)" \
		[ "$nodes_ok" = 0 ]

	bad=$(opts_without_sz "$header")
	grep -q "^#define ${prefix}_OPTS(" "$header" || bad="$bad no ${prefix}_OPTS macro"
	check "lib$name: options structs start with size_t sz, ${prefix}_OPTS declared${bad:+ (not: $bad)}" \
		[ -z "$bad" ]
	bad=$(public_struct_arrays "$header")
	check "lib$name: no fixed-size array in a public struct${bad:+ ($bad)}" [ -z "$bad" ]
	# shellcheck disable=SC2086 # the folders are split on purpose
	bad=$(wrong_licence $src | tr '\n' ' ')
	check "lib$name: LGPL-2.1 OR BSD-2-Clause on every C file of $src${bad:+ (not: $bad)}" [ -z "$bad" ]
	bad=$(tests/cgcount/gpl-symbols.sh "$so" "$dir/lib$name.a" 2>&1)
	gpl=$?
	check "lib$name: its .so and .a hold no libperf or libapi symbol${bad:+ ($(head -3 <<<"$bad" | tr '\n' ' ')...)}" \
		[ "$gpl" = 0 ]
done
exit "$fail"
