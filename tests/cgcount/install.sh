#!/bin/bash
# Host test (TAP) of `make install` for libcgcount: into a DESTDIR it puts
# cgcount.h, libcgcount.a, libcgcount.so.0 (+ .so link) and cgcount.pc under
# PREFIX; a program built with pkg-config links against the shared and the
# static library and calls them; the .so exports cgcount_* only and needs
# no libbpf/libperf of the system.
set -u
cd "$(dirname "$0")/../.."
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/cgcount-test
lib=$dest$prefix/lib
n=0
fail=0
check() {
	local what=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $what"; else echo "not ok $n $what"; fail=1; fi
}

echo "TAP version 13"
echo "1..6"
make -s -o kernel install DESTDIR="$dest" PREFIX=$prefix >"$dest/make.log" 2>&1
check "make install DESTDIR=... PREFIX=$prefix" [ $? -eq 0 ]
check "header, .a, .so.0, .so and .pc installed" test -f "$dest$prefix/include/cgcount.h" \
	-a -f "$lib/libcgcount.a" -a -f "$lib/libcgcount.so.0" -a -L "$lib/libcgcount.so" \
	-a -f "$lib/pkgconfig/cgcount.pc"

cat > "$dest/prog.c" <<'PROG'
#include <string.h>
#include <cgcount.h>

int main(void)
{
	enum cgcount_backend b;
	char err[CGCOUNT_ERR_LEN] = "";

	if (cgcount_parse_backend("rstat", &b) || b != CGCOUNT_RSTAT)
		return 1;
	if (cgcount_open("no-such-event", NULL, err, sizeof(err)))
		return 2;
	return strstr(err, "unknown event 'no-such-event'") ? 0 : 3;
}
PROG
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
cc -Wall -Werror "$dest/prog.c" $(pkg-config --cflags --libs cgcount) -Wl,-rpath,"$lib" \
	-o "$dest/prog-shared" && "$dest/prog-shared"
check "a program built with pkg-config runs against libcgcount.so" [ $? -eq 0 ]
cc -Wall -Werror "$dest/prog.c" $(pkg-config --cflags cgcount) \
	$(pkg-config --static --libs cgcount | sed 's/-lcgcount/-l:libcgcount.a/') \
	-o "$dest/prog-static" && "$dest/prog-static"
check "a program built with pkg-config --static runs with libcgcount.a" [ $? -eq 0 ]
bad=$(nm -D --defined-only "$lib/libcgcount.so.0" | awk '$3 !~ /^cgcount_/ {print $3}')
[ -n "$bad" ] && echo "$bad" | sed "s/^/# exported: /"
check "libcgcount.so exports cgcount_* only" [ -z "$bad" ]
check "libcgcount.so needs no libbpf or libperf at run time" \
	bash -c "! ldd '$lib/libcgcount.so.0' | grep -q 'libbpf\|libperf'"
exit $fail
