#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make installcheck: build the examples and README.md's programs against
# the INSTALLED library, with nothing but `pkg-config lockbatch` (from the
# installed, relocatable lockbatch.pc), linked shared and static, and run
# them.
#
#   installcheck.sh SRCDIR BUILDDIR PKGCONFIGDIR CC
#
# PKGCONFIGDIR is the installed $(pkgconfigdir) (under DESTDIR, if any).
set -eu
src=$1 build=$2 pcdir=$3 cc=$4
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
pc=${PKG_CONFIG:-pkg-config}

cflags=$($pc --cflags lockbatch)
libdir=$($pc --variable=libdir lockbatch)
[ -f "$libdir/liblockbatch.so" ] && [ -f "$libdir/liblockbatch.a" ] || {
	echo "FAIL: no liblockbatch.so and .a in $libdir (from $pcdir/lockbatch.pc)"
	exit 1
}
shared=$($pc --libs lockbatch)
# Static: the same flags, with liblockbatch taken from its archive.
static=$($pc --static --libs lockbatch |
	sed 's/-llockbatch/-Wl,-Bstatic -llockbatch -Wl,-Bdynamic/')

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rb=$build/tests/readme

# name | sources | strict: every warning; lax: unused parameters allowed;
# tool: lax, and calls nothing of lockbatch (pcp-tracegen writes traces) |
# other pkg-config modules it uses | arguments of the run
progs="readme-tour|$rb/block-tour.c|strict||
readme-settle|$src/tests/readme/wrap-settle.c|strict||
readme-pcp|$src/tests/readme/wrap-pcp.c|strict||
readme-lru|$src/tests/readme/wrap-lru.c|strict||
readme-pool|$rb/block-pool.c|strict||
lru-fault|$src/examples/lru-fault.c $src/examples/lru-fault-lru.c $src/examples/lru-fault-run.c $src/examples/lru-fault-report.c $src/examples/lru-fault-split.c $src/examples/lru-fault-plot.c $src/examples/lru-fault-causes.c $src/examples/lru-fault-limit.c|lax|ck|--threads 2 --mem 256K --loops 2 --split-every 3
pcp-replay|$src/examples/pcp-replay.c $src/examples/pcp-replay-model.c $src/examples/pcp-replay-plot.c|lax||--smoke
pcp-tracegen|$src/examples/pcp-tracegen.c|tool||kbuild
pagecache|$src/examples/pagecache.c $src/examples/pagecache-cache.c $src/examples/pagecache-run.c $src/examples/pagecache-order.c|lax|liburcu-memb liburcu-cds|--check --entries 256 --ops 20000 --page-size 64"

n=0
for link in shared static; do
	if [ $link = shared ]; then libs=$shared; else libs=$static; fi
	printf '%s\n' "$progs" | while IFS='|' read -r name srcs mode pkgs args; do
		[ -n "$name" ] || continue
		# The examples leave callback parameters unused, as the
		# library's own build allows; the README programs may not.
		w="-Wall -Wextra -Werror"
		[ "$mode" = strict ] || w="$w -Wno-unused-parameter"
		bin=$tmp/$name-$link
		# shellcheck disable=SC2086 # word splitting is the point
		extra=
		[ -z "$pkgs" ] || extra=$($pc --cflags --libs $pkgs)
		if ! $cc $w -I"$rb" $cflags -o "$bin" $srcs $libs $extra -lm; then
			echo "FAIL: $name ($link) does not build against the installed library"
			exit 1
		fi
		deps=$(ldd "$bin" 2>/dev/null | grep liblockbatch || true)
		if [ $link = static ] && [ -n "$deps" ]; then
			echo "FAIL: $name (static) still needs $deps"; exit 1
		fi
		if [ $link = shared ] && [ "$mode" != tool ] && ! (LD_LIBRARY_PATH=$libdir ldd "$bin" |
			grep -q "=> $libdir/liblockbatch.so"); then
			echo "FAIL: $name (shared) does not load $libdir/liblockbatch.so"
			exit 1
		fi
		# shellcheck disable=SC2086
		if ! LD_LIBRARY_PATH=$libdir "$bin" $args >"$tmp/out" 2>&1 </dev/null; then
			echo "FAIL: $name ($link) exits non-zero:"; cat "$tmp/out"; exit 1
		fi
		echo "ok: $name ($link)"
	done || exit 1
done
echo "installcheck: every example and README program built and ran, shared and static"
