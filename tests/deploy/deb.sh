#!/bin/bash
# Host test (TAP) of the Debian packages (`make deb`, debian/) as an operator
# gets them:
#  - make deb builds libcgcount0, libcgcount-dev, cgcount-tools and
#    cgroup-exporter from what `make` built, rebuilding nothing and
#    building no kernel (build/'s library and tools are not touched);
#  - lintian finds no error and no warning;
#  - libcgcount0 carries the header's version and soname, its symbols file
#    every version node of lib/cgcount/libcgcount.map;
#  - nothing packaged holds or needs the kernel tree's libperf or libapi
#    (GPL-2.0): the .a and the dbgsym packages' symbol tables
#    (tests/cgcount/gpl-symbols.sh), every ELF file's NEEDED;
#  - the library and every tool link Debian's libbpf: libbpf.so.1 NEEDED,
#    libbpf1 in the Depends, no libbpf function of their own (the .a and
#    the dbgsym files' symbol tables);
#  - unpacked into a root, a C and a C++ program built with pkg-config
#    (sysroot) against libcgcount-dev run with the packaged .so;
#  - cgcount(3) renders without a warning and is found by its name;
#  - the unit passes systemd-analyze verify, and systemd-analyze security
#    rates it at most MAX_EXPOSURE with every setting of its sandbox on;
#  - debian/copyright's LGPL-2.1 OR BSD-2-Clause paragraph names only files
#    whose SPDX line says so (the rest is GPL-2.0);
#  - /etc/default/cgroup-exporter's ARGS count on the host's kernel as an
#    unprivileged user holding only the unit's capabilities (events backend:
#    this kernel has no shared ioctls), and the same run without
#    CAP_PERFMON is refused: the capability is what lets it count.
# No set -e: a failed check is a TAP line and the test goes on to the next.
set -u
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/tap.sh
source tests/lib/tap.sh
: "${fail:=0}"	# set by tap.sh
# systemd-analyze security's overall exposure (0 best, 10 worst): 2.1 today,
# what is left being the capabilities and system calls it counts with and
# the network it serves
MAX_EXPOSURE=2.5
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
version=$(awk '/^#define CGCOUNT_(MAJOR|MINOR|PATCH)_VERSION/ { printf "%s%s", sep, $3; sep = "." }' \
	lib/cgcount/cgcount.h)
out=$tmp/deb
root=$tmp/root

echo "TAP version 13"
echo "1..15"
# make's library and tools, and their build against Debian's libbpf that
# make's systemd-host packages made (debian/rules, LIBBPF_SYSTEM=1)
built=
for dir in build build/libbpf-system; do
	built="$built $dir/cgcount/libcgcount.so.$version $dir/cgcount/libcgcount.a $dir/bin/cgtop $dir/bin/cgroup-exporter"
done
# shellcheck disable=SC2086 # a list of files
before=$(stat -c '%n %Y' $built)
make -s deb DEB_OUT="$out" >"$tmp/deb.log" 2>&1
status=$?
# shellcheck disable=SC2086
after=$(stat -c '%n %Y' $built)
pkgs="libcgcount0 libcgcount-dev cgcount-tools cgroup-exporter"
missing=
for p in $pkgs; do
	deb=$(ls "$out/${p}"_*.deb 2>/dev/null) || missing="$missing $p"
	[ -n "$deb" ] && dpkg-deb -x "$deb" "$root"
done
check "make deb: $pkgs in DEB_OUT${missing:+; missing:$missing}" \
	[ "$status" = 0 -a -z "$missing" -a -f "$(ls "$out"/*.changes 2>/dev/null)" ]
[ "$status" = 0 ] || sed 's/^/# /' "$tmp/deb.log" | tail -30
check "make deb rebuilt none of make's library and tools (build/, build/libbpf-system/), built no kernel" \
	[ "$before" = "$after" -a -z "$(grep -E 'build-kernel|deps\.sh|^cc ' "$tmp/deb.log")" ]

lintian --fail-on error,warning "$out"/*.changes >"$tmp/lintian.log" 2>&1
check "lintian: no error, no warning" [ $? = 0 ]
grep -v '^running with root' "$tmp/lintian.log" | sed 's/^/# /'

nodes=$(sed -n 's/^\(CGCOUNT_[0-9.]*\) {$/\1/p' lib/cgcount/libcgcount.map | sort)
symbols=$(dpkg-deb -I "$out/libcgcount0_"*.deb symbols | sed -n 's/^ (symver)\(\S*\) .*/\1/p; s/^ \(CGCOUNT_[0-9.]*\)@\S* .*/\1/p' | sort -u)
pkgversion=$(dpkg-deb -f "$out/libcgcount0_"*.deb Version)
check "libcgcount0 $pkgversion: libcgcount.so.$version, soname link, symbols of every node (${nodes//$'\n'/ })" \
	[ -f "$root/usr/lib/$ma/libcgcount.so.$version" -a \
	"$(readlink "$root/usr/lib/$ma/libcgcount.so.${version%%.*}")" = "libcgcount.so.$version" -a \
	"$nodes" = "$symbols" ] && dpkg --compare-versions "$pkgversion" ge "$version"

# the packaged .a and the debug symbols (dbgsym) of the packaged .so and
# tools: nothing of libperf or libapi (GPL-2.0), nor a library of them needed
for d in "$out"/*-dbgsym_*.deb; do dpkg-deb -x "$d" "$tmp/dbgsym"; done
mapfile -t debug < <(find "$tmp/dbgsym" -name '*.debug' 2>/dev/null)
gpl=$(tests/cgcount/gpl-symbols.sh "$root/usr/lib/$ma/libcgcount.a" "${debug[@]}" 2>&1)
needed=$(find "$root/usr/bin" "$root/usr/lib/$ma" -type f -exec readelf -d {} + 2>/dev/null |
	grep -E 'NEEDED.*lib(perf|api)' || true)
check "the packages hold no libperf or libapi symbol and need no such library (.a and ${#debug[@]} dbgsym files)${gpl:+: $(head -3 <<<"$gpl" | tr '\n' ' ')...}${needed:+ $needed}" \
	[ "${#debug[@]}" -ge 3 -a -z "$gpl" -a -z "$needed" ]

elves=("$root/usr/lib/$ma/libcgcount.so.$version" "$root"/usr/bin/*)
no_libbpf=
for f in "${elves[@]}"; do
	readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*\[libbpf\.so\.1\]' || no_libbpf="$no_libbpf ${f##*/}"
done
no_depends=
for p in libcgcount0 cgcount-tools cgroup-exporter; do
	dpkg-deb -f "$out/${p}"_*.deb Depends | grep -q 'libbpf1 (' || no_depends="$no_depends $p"
done
own=$(nm --defined-only "$root/usr/lib/$ma/libcgcount.a" "${debug[@]}" 2>/dev/null |
	grep -cE ' [TtWw] (bpf_object__|bpf_map__|bpf_program__|btf__|libbpf_set_print)')
check "${#elves[@]} ELF files need libbpf.so.1 and define no libbpf function ($own), their packages Depend on libbpf1${no_libbpf:+; no libbpf.so.1:$no_libbpf}${no_depends:+; no libbpf1:$no_depends}" \
	[ "${#elves[@]}" -ge 5 -a -z "$no_libbpf" -a -z "$no_depends" -a "$own" = 0 ]

cat >"$tmp/prog.c" <<'PROG'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cgcount.h>

int main(void)
{
	CGCOUNT_OPTS(cgcount_opts, opts, .backend = CGCOUNT_RSTAT);
	enum cgcount_backend b;

	cgcount_set_print(NULL);
	if (cgcount_parse_backend("shared", &b) || b != CGCOUNT_SHARED || opts.sz != sizeof(opts))
		return 1;
	if (cgcount_open("no-such-event", &opts) || errno != EINVAL)
		return 2;
	printf("%s\n", cgcount_version_string());
	return 0;
}
PROG
cp "$tmp/prog.c" "$tmp/prog.cc"
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$ma/pkgconfig
for lang in c c++; do
	case $lang in c) cc="cc -std=c99 -pedantic" src=prog.c ;; c++) cc="c++ -std=c++11" src=prog.cc ;; esac
	# shellcheck disable=SC2046,SC2086 # flags
	$cc -Wall -Wextra -Werror "$tmp/$src" $(pkg-config --cflags --libs cgcount) -o "$tmp/prog-$lang" &&
		ran=$(LD_LIBRARY_PATH=$root/usr/lib/$ma "$tmp/prog-$lang") &&
		ldd_lib=$(LD_LIBRARY_PATH=$root/usr/lib/$ma ldd "$tmp/prog-$lang" | awk '/libcgcount/ { print $3 }')
	check "$lang: built with pkg-config against libcgcount-dev, runs with the packaged .so ($ran)" \
		[ $? = 0 -a "$ran" = "v$version" -a "$ldd_lib" = "$root/usr/lib/$ma/libcgcount.so.${version%%.*}" ]
done
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR

page=$root/usr/share/man/man3/cgcount.3.gz
warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
check "cgcount(3) renders without a warning${warnings:+: $warnings}" [ -f "$page" -a -z "$warnings" ]
check "cgcount(3) names cgcount and cgcount_errors (lexgrog)" \
	bash -c "lexgrog '$page' | grep -q '\"cgcount - ' && lexgrog '$page' | grep -q '\"cgcount_errors - '"

# the unit as installed, its binary at the unpacked root's
unit=$tmp/cgroup-exporter.service
sed "s|/usr/bin/cgroup-exporter|$root/usr/bin/cgroup-exporter|" \
	"$root/lib/systemd/system/cgroup-exporter.service" >"$unit"
verify=$(systemd-analyze --man=no verify "$unit" 2>&1)
check "systemd-analyze verify: no finding${verify:+: $verify}" [ $? = 0 -a -z "$verify" ]
systemd-analyze security --offline=yes "$unit" >"$tmp/security" 2>&1
exposure=$(sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p' "$tmp/security")
off=
for setting in NoNewPrivileges= ProtectSystem= ProtectHome= PrivateTmp= PrivateDevices= \
	ProtectKernelTunables= ProtectKernelModules= ProtectControlGroups= MemoryDenyWriteExecute= \
	SystemCallArchitectures= LockPersonality= 'RestrictNamespaces=~user' \
	'RestrictAddressFamilies=~AF_PACKET' 'CapabilityBoundingSet=~CAP_SYS_ADMIN' User=/DynamicUser=; do
	grep -qF "✓ $setting" "$tmp/security" || off="$off $setting"
done
check "systemd-analyze security: exposure $exposure <= $MAX_EXPOSURE${off:+; not on:$off}" \
	awk -v e="${exposure:-99}" -v max=$MAX_EXPOSURE -v off="$off" 'BEGIN { exit !(e <= max && off == "") }'

# the files debian/copyright's second Files: paragraph names, by their SPDX lines
lgpl_files=$(awk 'BEGIN { RS = "" } NR == 3' debian/copyright |
	sed -n '/^Copyright:/q; s/^Files://; p' | tr ' ' '\n' | grep .)
not_lgpl=
# shellcheck disable=SC2086 # the patterns are globs
for f in $lgpl_files; do
	[ -e "$f" ] || continue
	head -3 "$f" | grep -q 'SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause' || not_lgpl="$not_lgpl $f"
done
check "debian/copyright: the $(echo "$lgpl_files" | wc -l) patterns of LGPL-2.1 OR BSD-2-Clause match only such files${not_lgpl:+; not:$not_lgpl}" \
	[ -n "$lgpl_files" -a -z "$not_lgpl" ]

# The default file's ARGS as the unit runs them: nobody, the unit's capabilities
caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_/+/' | paste -sd,)
run_as_service() { # CAPS: the exporter with the default file's ARGS, one text file to stdout
	# shellcheck disable=SC1091,SC2086 # the packaged file; ARGS is a list
	(. "$root/etc/default/cgroup-exporter" &&
		timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,"$1" \
			--ambient-caps="$1" --bounding-set=-all,"$1" \
			"$root/usr/bin/cgroup-exporter" $ARGS --textfile=- --textfile.writes=1)
}
run_as_service "$caps" >"$tmp/metrics" 2>"$tmp/err"
check "ARGS of /etc/default/cgroup-exporter count as nobody with $caps" \
	[ $? = 0 -a -n "$(grep '^perf_cgroup_events_total{cgroup="[^"]*",event="context-switches"} [1-9]' "$tmp/metrics")" ]
sed 's/^/# /' "$tmp/err"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
nocaps=$(echo "$caps" | sed 's/+perfmon,\?//; s/,$//')
run_as_service "$nocaps" >/dev/null 2>"$tmp/err"
check "without CAP_PERFMON ($nocaps, perf_event_paranoid $paranoid) it is refused" \
	[ $? != 0 -a "$paranoid" -ge 1 ]

exit "$fail"
