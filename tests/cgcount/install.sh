#!/bin/bash
# Host test (TAP) of libcgcount's installation: `make install` into a
# DESTDIR puts cgcount.h, libcgcount.a, libcgcount.so.X.Y.Z (+ .so.X and .so
# links) and cgcount.pc under PREFIX, the libraries in LIBDIR (here a
# multiarch one, as Debian's packaging passes), cgcount(3) in
# PREFIX/share/man/man3; C and C++ programs built with pkg-config link
# against the shared and the static library, which need no libbpf or
# libperf at run time, and neither libraries nor tools hold anything of the
# kernel tree's libperf or libapi (GPL-2.0); a program built against an
# older header (old-abi/) runs with the new .so; the tools land in
# PREFIX/bin and run from there, their man pages in PREFIX/share/man/man1. `make install` builds nothing:
# with nothing built it stops at once, naming what to build.
# The ABI of the built .so (soname, exports, version
# node, licence) is tests/hygiene/library-abi.sh's.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/cgcount-test
libdir=$prefix/lib/x86_64-linux-gnu
lib=$dest$libdir
n=0
fail=0
check() {
	local what=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $what"; else echo "not ok $n $what"; fail=1; fi
}
header_version() {
	awk '/^#define CGCOUNT_(MAJOR|MINOR|PATCH)_VERSION/ { printf "%s%s", sep, $3; sep = "." }' \
		lib/cgcount/cgcount.h
}

echo "TAP version 13"
echo "1..11"
version=$(header_version)
major=${version%%.*}
make -s install DESTDIR="$dest" PREFIX=$prefix LIBDIR=$libdir >"$dest/make.log" 2>&1
check "make install DESTDIR=... PREFIX=$prefix LIBDIR=$libdir" [ $? -eq 0 ]
mkdir "$dest/empty-build"
make -s install BUILD="$dest/empty-build" DESTDIR="$dest/none" >"$dest/empty.log" 2>&1
check "with nothing built, make install fails naming it and builds nothing" [ $? -ne 0 -a \
	-z "$(ls -A "$dest/empty-build")" -a ! -e "$dest/none" ] && grep -q "is not built: run make" "$dest/empty.log"
check "cgcount.pc: libdir \${prefix}/lib/x86_64-linux-gnu; cgcount(3) in share/man/man3" \
	[ "$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --variable=libdir cgcount)" = "$libdir" -a \
	-f "$dest$prefix/share/man/man3/cgcount.3" ]
check "header, .a, .so.$version, .so.$major -> .so.$version, .so and .pc installed" \
	test -f "$dest$prefix/include/cgcount.h" -a -f "$lib/libcgcount.a" \
	-a -f "$lib/libcgcount.so.$version" -a "$(readlink "$lib/libcgcount.so.$major")" = \
	"libcgcount.so.$version" -a -L "$lib/libcgcount.so" -a -f "$lib/pkgconfig/cgcount.pc"

cat > "$dest/prog.c" <<'PROG'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cgcount.h>

static char msg[512];

static int keep(enum cgcount_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vsnprintf(msg, sizeof(msg), fmt, ap);
}

int main(void)
{
	enum cgcount_backend b;

	cgcount_set_print(keep);
	if (cgcount_parse_backend("rstat", &b) || b != CGCOUNT_RSTAT)
		return 1;
	if (cgcount_open("no-such-event", NULL) || errno != EINVAL)
		return 2;
	return strstr(msg, "unknown event 'no-such-event'") ? 0 : 3;
}
PROG
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
cc -Wall -Werror "$dest/prog.c" $(pkg-config --cflags --libs cgcount) -Wl,-rpath,"$lib" \
	-o "$dest/prog-shared" && "$dest/prog-shared"
check "a program built with pkg-config runs against libcgcount.so" [ $? -eq 0 ]
cp "$dest/prog.c" "$dest/prog.cc"
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
c++ -std=c++11 -Wall -Wextra -Werror "$dest/prog.cc" $(pkg-config --cflags --libs cgcount) \
	-Wl,-rpath,"$lib" -o "$dest/prog-cxx" && "$dest/prog-cxx"
check "the same program in C++ (c++11) built with pkg-config runs against libcgcount.so" [ $? -eq 0 ]
# shellcheck disable=SC2046
cc -Wall -Werror "$dest/prog.c" $(pkg-config --cflags cgcount) \
	$(pkg-config --static --libs cgcount | sed 's/-lcgcount/-l:libcgcount.a/') \
	-o "$dest/prog-static" && "$dest/prog-static"
check "a program built with pkg-config --static runs with libcgcount.a" [ $? -eq 0 ]

check "libcgcount.so needs no libbpf or libperf at run time" \
	bash -c "! ldd '$lib/libcgcount.so.$version' | grep -q 'libbpf\|libperf'"

# a client of an older header (smaller struct cgcount_opts) with the new .so
cc -Wall -Werror -Itests/cgcount/old-abi tests/cgcount/old_client.c -L"$lib" -lcgcount \
	-Wl,-rpath,"$lib" -o "$dest/old-client" && "$dest/old-client"
check "a program built against the older header runs with libcgcount.so.$version" [ $? -eq 0 ]

tools="cgtop cgroup-exporter cgrstat memcg-stat"
missing=""
for t in $tools; do
	[ -x "$dest$prefix/bin/$t" ] && [ -f "$dest$prefix/share/man/man1/$t.1" ] || missing="$missing $t"
done
check "the tools in bin/ and their man pages in share/man/man1/${missing:+; missing:$missing}" \
	[ -z "$missing" ]
wrong=""
for t in $tools; do
	"$dest$prefix/bin/$t" --version 2>/dev/null | grep -qE "^$t \(linux-multicgroup\) [0-9]" ||
		wrong="$wrong $t"
done
check "every installed tool runs (--version)${wrong:+; failed:$wrong}" [ -z "$wrong" ]
bins=()
for t in $tools; do bins+=("$dest$prefix/bin/$t"); done
gpl=$(tests/cgcount/gpl-symbols.sh "$lib/libcgcount.so.$version" "$lib/libcgcount.a" "${bins[@]}" 2>&1)
check "libcgcount.so, libcgcount.a and the tools hold no libperf or libapi symbol${gpl:+: $(head -3 <<<"$gpl" | tr '\n' ' ')...}" \
	[ -z "$gpl" ]

exit $fail
