#!/bin/bash
# Download Debian's packaged kernels for the stock-kernel matrix and unpack
# them under build/stock/<name>/, without installing anything.
#
#   scripts/fetch-kernels.sh [--update] [--list] [NAME...]
#   scripts/fetch-kernels.sh --download PACKAGE DIR
#
# NAMEs are the "deb:" kernels of tests/kernels.list (default: all of them).
# Each line there names a package glob; the newest package matching it
# (version order) is fetched with its modules (linux-modules-* for 7.x)
# and unpacked with dpkg-deb -x into build/stock/<name>/root, and
# build/stock/<name>/ gets:
#   vmlinuz   the kernel image (a symlink into root/)
#   release   its uname -r;  package: the package names fetched
#   modules   root/lib/modules/<release> (absent when Debian ships none)
# A kernel already unpacked is not fetched again: a warm run touches neither
# the network nor apt. --update refreshes the package indexes and moves
# every named kernel to the newest package now in the archive.
# --list prints "name release package" for every unpacked kernel.
# --download puts the .deb of PACKAGE (newest in the suites below) in DIR
# and prints its path; one already there is not fetched again
# (scripts/build-kernel.sh fetches linux-source-7.3 this way).
#
# apt runs with a private configuration under build/apt (sources list, lists,
# cache, an empty dpkg status): the host's apt sources and its package state
# are never read nor changed, and no package is installed. The suites:
# bookworm and bookworm-security (6.1, 6.12) and trixie-backports (6.16 and
# later), for amd64 and arm64 (the stock-*-arm64 kernels). Their Release files are checked against the host's Debian archive
# keyring (debian-archive-keyring, which on Debian 12 carries the trixie keys
# too), so nothing is trusted unsigned.
set -euo pipefail
cd "$(dirname "$0")/.."
KERNELS_LIST=${KERNELS_LIST:-tests/kernels.list}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# the archives the host's apt uses (DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR override)
MIRROR=$(scripts/debian-archive.sh main)
SECURITY_MIRROR=$(scripts/debian-archive.sh security)
APT_DIR=$PWD/build/apt
STOCK=build/stock
UPDATE=0
LIST=0
DOWNLOAD=
while [ $# -gt 0 ]; do
	case $1 in
	--update) UPDATE=1; shift ;;
	--list) LIST=1; shift ;;
	--download) [ $# -ge 3 ] || { echo "fetch-kernels: --download PACKAGE DIR" >&2; exit 2; }
		DOWNLOAD=$2; DOWNLOAD_DIR=$3; shift 3 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "fetch-kernels: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done

say() { echo "  FETCH   $*" >&2; }
die() { echo "fetch-kernels: $*" >&2; exit 1; }

if [ $LIST = 1 ]; then
	for d in "$STOCK"/*/; do
		[ -f "$d/release" ] && printf '%s %s %s\n' "$(basename "$d")" "$(cat "$d/release")" "$(head -1 "$d/package")"
	done
	exit 0
fi

# deb_kernels: "name glob" for each deb: line of the kernel list
deb_kernels() {
	awk '!/^[[:space:]]*(#|$)/ && $2 ~ /^deb:/ { sub(/^deb:/, "", $2); print $1, $2 }' "$KERNELS_LIST"
}

APT_OPTS=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o Dir::Etc::sourceparts=/dev/null
	-o "Dir::Etc::preferences=/dev/null" -o "Dir::Etc::preferencesparts=/dev/null"
	-o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache"
	-o "Dir::State::status=$APT_DIR/status" -o "Debug::NoLocking=1"
	-o "APT::Get::List-Cleanup=0" -o "Acquire::Languages=none"
	-o "APT::Sandbox::User=root"
	-o "APT::Architecture=amd64" -o "APT::Architectures::=amd64" -o "APT::Architectures::=arm64")

apt_setup() {
	[ -f "$KEYRING" ] || die "no $KEYRING (apt-get install debian-archive-keyring)"
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	: >"$APT_DIR/status"
	cat >"$APT_DIR/sources.list.new" <<-EOF
	deb [arch=amd64,arm64 signed-by=$KEYRING] $MIRROR bookworm main
	deb [arch=amd64,arm64 signed-by=$KEYRING] $SECURITY_MIRROR bookworm-security main
	deb [arch=amd64,arm64 signed-by=$KEYRING] $MIRROR trixie-backports main
	EOF
	if ! cmp -s "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"; then
		mv "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"
		rm -f "$APT_DIR/lists.stamp"
	else
		rm "$APT_DIR/sources.list.new"
	fi
	if [ $UPDATE = 1 ] || [ ! -f "$APT_DIR/lists.stamp" ]; then
		say "package indexes (bookworm, bookworm-security, trixie-backports)"
		apt-get "${APT_OPTS[@]}" -qq update >&2 || die "apt-get update failed"
		touch "$APT_DIR/lists.stamp"
	fi
}

# newest GLOB: the newest package name matching GLOB (by its version)
newest() {
	local glob=$1 p
	apt-cache "${APT_OPTS[@]}" pkgnames "${glob%%\**}" |
		while read -r p; do
			# shellcheck disable=SC2053 # the glob is meant to match
			if [[ $p == $glob ]] && [[ $p != *-unsigned ]] && [[ $p != *-dbg ]]; then
				echo "$p"
			fi
		done | sort -V | tail -1
}

# has_package NAME: the indexes know NAME (with a version to download)
has_package() {
	apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" 2>/dev/null | grep '^Version: ' >/dev/null
}

# packages_for IMAGE-PACKAGE: the packages holding the kernel and its
# modules. 6.19 and later split linux-image-* into a meta package,
# linux-binary-* (the vmlinuz) and linux-modules-*.
packages_for() {
	local image=$1 binary modules
	binary=${image/linux-image-/linux-binary-}
	modules=${image/linux-image-/linux-modules-}
	if has_package "$binary"; then
		echo "$binary"
		if has_package "$modules"; then
			echo "$modules"
		else
			say "$modules is not in the archive: booting without its modules"
		fi
	else
		echo "$image"
	fi
}

# deb_file PACKAGE: where apt-get download puts the index's version of it
# (the kernels of both architectures: Debian names them ...-amd64, ...-arm64)
deb_file() {
	local version arch=amd64
	version=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" | sed -n 's/^Version: //p' | head -1)
	version=${version//:/%3a}
	case $1 in *-arm64|*-arm64-*) arch=arm64 ;; esac
	echo "$APT_DIR/cache/archives/${1}_${version}_$arch.deb"
}

fetch_one() {
	local name=$1 glob=$2 dir=$STOCK/$1 image pkgs deb release tmp
	if [ $UPDATE = 0 ] && [ -f "$dir/release" ] && [ -e "$dir/vmlinuz" ]; then
		return 0
	fi
	apt_setup
	image=$(newest "$glob")
	[ -n "$image" ] || die "$name: no package matches $glob"
	if [ -f "$dir/package" ] && [ "$(head -1 "$dir/package")" = "$image" ] && [ -e "$dir/vmlinuz" ]; then
		return 0
	fi
	mapfile -t pkgs < <(packages_for "$image")
	say "$name: ${pkgs[*]}"
	tmp=$(mktemp -d "$STOCK/.$name.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/root"
	for p in "${pkgs[@]}"; do
		deb=$(deb_file "$p")
		if [ ! -f "$deb" ]; then
			(cd "$APT_DIR/cache/archives" && apt-get "${APT_OPTS[@]}" -qq download "$p" >&2) ||
				die "$name: apt-get download $p failed"
		fi
		[ -f "$deb" ] || die "$name: $p downloaded but $deb is missing"
		dpkg-deb -x "$deb" "$tmp/root"
	done
	# the image: boot/vmlinuz-<release> (6.1 .. 6.18) or
	# usr/lib/modules/<release>/vmlinuz (linux-binary-*)
	local vmlinuz="" f
	for f in "$tmp"/root/boot/vmlinuz-* "$tmp"/root/usr/lib/modules/*/vmlinuz "$tmp"/root/lib/modules/*/vmlinuz; do
		[ -f "$f" ] && vmlinuz=${f#"$tmp/root/"} && break
	done
	[ -n "$vmlinuz" ] || die "$name: no vmlinuz in ${pkgs[*]}"
	case $vmlinuz in
	boot/vmlinuz-*) release=${vmlinuz#boot/vmlinuz-} ;;
	*) release=$(basename "$(dirname "$vmlinuz")") ;;
	esac
	ln -s "root/$vmlinuz" "$tmp/vmlinuz"
	for m in usr/lib/modules lib/modules; do
		if [ -d "$tmp/root/$m/$release/kernel" ]; then
			ln -s "root/$m/$release" "$tmp/modules"
			break
		fi
	done
	echo "$release" >"$tmp/release"
	printf '%s\n' "$image" "${pkgs[@]}" | awk '!seen[$0]++' >"$tmp/package"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
	say "$name: $release in $dir"
}

# download_package PACKAGE DIR: the package's .deb in DIR, printed
download_package() {
	local pkg=$1 dir=$2 deb
	deb=$(find "$dir" -maxdepth 1 -name "${pkg}_*.deb" -print -quit 2>/dev/null || true)
	if [ -z "$deb" ]; then
		apt_setup
		has_package "$pkg" || die "$pkg is not in the archive"
		mkdir -p "$dir"
		say "$pkg"
		(cd "$dir" && apt-get "${APT_OPTS[@]}" -qq download "$pkg" >&2) ||
			die "apt-get download $pkg failed"
		deb=$(find "$dir" -maxdepth 1 -name "${pkg}_*.deb" -print -quit)
		[ -n "$deb" ] || die "$pkg downloaded but no .deb in $dir"
	fi
	echo "$deb"
}

if [ -n "$DOWNLOAD" ]; then
	download_package "$DOWNLOAD" "$DOWNLOAD_DIR"
	exit 0
fi

mkdir -p "$STOCK"
want=("$@")
found=0
while read -r name glob; do
	if [ ${#want[@]} -gt 0 ]; then
		case " ${want[*]} " in *" $name "*) ;; *) continue ;; esac
	fi
	found=$((found + 1))
	fetch_one "$name" "$glob"
done < <(deb_kernels)
[ ${#want[@]} -eq 0 ] || [ $found = ${#want[@]} ] ||
	die "unknown kernel name among: ${want[*]} (the deb: lines of $KERNELS_LIST)"
