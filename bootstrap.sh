#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Prepare a git checkout for building: install the Debian packages the
# build and the tests need (when apt-get is usable and something is
# missing), regenerate the build system and run ./configure "$@".
#
# ./bootstrap.sh --compare [configure args]: also install the allocators
# `make compare` measures lb_pcp against (jemalloc, TCMalloc, mimalloc).
# The library never needs them. man-db and groff render the man pages in
# make check; gnuplot draws the plots of make demo.
# ./bootstrap.sh --proof [configure args]: also install spin (make model)
# and clang with its sanitizer and libFuzzer runtimes (make fuzz).
# ./bootstrap.sh --deb [configure args]: also install what make deb,
# make abi-check and the packages' checks need (debhelper, lintian,
# abigail-tools, autopkgtest).
# The options may be combined, before the configure arguments.
set -eu

cd "$(dirname "$0")"

pkgs="build-essential autoconf automake libtool pkgconf \
libck-dev liburcu-dev libcriterion-dev valgrind perl man-db groff-base \
gnuplot-nox"
while :; do
	case ${1:-} in
	--compare)
		pkgs="$pkgs libjemalloc-dev libgoogle-perftools-dev \
libmimalloc-dev";;
	--proof)
		pkgs="$pkgs spin clang libclang-rt-14-dev";;
	--deb)
		pkgs="$pkgs debhelper dpkg-dev lintian abigail-tools \
autopkgtest";;
	*) break;;
	esac
	shift
done

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done

if [ -n "$missing" ]; then
	if command -v apt-get >/dev/null 2>&1; then
		sudo=
		[ "$(id -u)" -ne 0 ] && sudo=sudo
		echo "bootstrap: installing$missing"
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
	else
		echo "bootstrap: missing packages:$missing (no apt-get; install them by hand)" >&2
	fi
fi

autoreconf -fi
./configure "$@"
