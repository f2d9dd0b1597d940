#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# build.sh VARIANT... - build memcached-debug (what t/ runs) for each
# variant, each in a copy of the fetched source under $MC_BUILD/VARIANT:
#   stock    Debian's tree + the series lines marked "stock" (the LRU-lock
#            counter, off by default)
#   patched  Debian's tree + every patch in patches/series, linked against
#            this tree's liblockbatch (top_builddir/.libs)
#   asan     patched, with -fsanitize=address,undefined
#   tsan     patched, with -fsanitize=thread
# Every variant uses the same flags: Debian's (dpkg-buildflags with
# hardening=+all, configure --enable-sasl --enable-tls, as debian/rules),
# plus the sanitizer's. A variant is rebuilt from a fresh copy when its
# patches or flags change, else incrementally.
set -euo pipefail
. "$(dirname "$0")/common.sh"
: "${top_srcdir:=$MC_HERE/../..}"
top_srcdir=$(cd "$top_srcdir" && pwd)
PATCHES=$MC_HERE/patches

[ -f "$MC_SRC/.fetched" ] || mc_die "no source in $MC_SRC: run fetch.sh"

# series: one patch file a line, "#" comments; a second word "stock"
# applies the patch to the stock build too.
series_for() {
	sed 's/#.*//' "$PATCHES/series" | while read -r f tag; do
		[ -n "$f" ] || continue
		if [ "$1" != stock ] || [ "$tag" = stock ]; then
			echo "$f"
		fi
	done
}

build_one() {
	local v=$1 dir=$MC_BUILD/$1 san= cppflags= libs= f
	case $v in
	stock|patched) ;;
	asan) san="-fsanitize=address,undefined -fno-omit-frame-pointer" ;;
	tsan) san="-fsanitize=thread" ;;
	*) mc_die "unknown variant $v" ;;
	esac
	if [ "$v" != stock ]; then
		[ -e "$top_builddir/.libs/liblockbatch.so" ] ||
			mc_die "no $top_builddir/.libs/liblockbatch.so: build lockbatch first"
		cppflags="-I$top_srcdir/include -I$top_builddir/include"
		libs="-L$top_builddir/.libs -Wl,-rpath,$top_builddir/.libs -llockbatch"
	fi
	local cflags ldflags
	cflags="$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS) $san"
	ldflags="$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS) $san"
	local stamp
	stamp=$( { echo "$cflags|$ldflags|$cppflags|$libs|$(cat "$MC_SRC/.fetched")"
		for f in $(series_for "$v"); do cat "$PATCHES/$f"; done; } |
		sha256sum | cut -c1-16)
	if [ "$(cat "$dir/.lb-stamp" 2>/dev/null)" != "$stamp" ]; then
		mc_log "$v: fresh copy of the source"
		rm -rf "$dir"
		cp -a "$MC_SRC" "$dir"
		for f in $(series_for "$v"); do
			mc_log "$v: applying $f"
			patch -d "$dir" -p1 -s -N --no-backup-if-mismatch \
				< "$PATCHES/$f" || mc_die "$v: $f does not apply"
		done
		mc_log "$v: configure"
		(cd "$dir" && ./configure -q --enable-sasl --enable-tls \
			CFLAGS="$cflags" LDFLAGS="$ldflags" CPPFLAGS="$cppflags" \
			LIBS="$libs" > configure.out 2>&1) ||
			{ tail -n 30 "$dir/config.log" >&2; mc_die "$v: configure failed"; }
		echo "$stamp" > "$dir/.lb-stamp"
	fi
	mc_log "$v: make memcached-debug timedrun"
	make -C "$dir" -s -j"${MC_JOBS:-2}" memcached-debug timedrun >&2 ||
		mc_die "$v: build failed"
}

[ $# -gt 0 ] || set -- stock patched
for v in "$@"; do
	build_one "$v"
done
