#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make check: the library as a client sees it, without a real install.
# `make install DESTDIR=STAGE` into a temporary directory, then with only
# that tree and `pkg-config lockbatch` (the installed .pc is relocatable):
#
# 1. the flags: --cflags are -I only (a dependency's .pc must not hand
#    clients macro definitions such as Debian ck.pc's -D__x86_64__), and
#    neither --libs nor --static --libs names ck, which the library does
#    not link;
# 2. every installed header compiles alone, C11 and C++17, -pedantic
#    -Werror;
# 3. the clients of tests/client/ build with -std=c11 -pedantic -Werror
#    and run: each counts its objects in and out; one is linked again
#    with README.md's static recipe and must not need liblockbatch.so;
# 4. man finds a function's page, a struct's page and the overview.
#
# make installcheck does the same for the examples after a real install.
# Environment (mk/readme.am): LB_MAKE, LB_CC, LB_CXX, LB_SAN_CFLAGS,
# LB_PKGCONFIGDIR, LB_MANDIR, LB_INCLUDEDIR, LB_SRCDIR, top_builddir.
set -eu
b=${top_builddir:-.}
src=${LB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cc=${LB_CC:-cc} cxx=${LB_CXX:-c++} san=${LB_SAN_CFLAGS:-}
pc=${PKG_CONFIG:-pkg-config}
command -v "$pc" >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if ! ${LB_MAKE:-make} -C "$b" install DESTDIR="$stage" >"$stage/install.log" 2>&1; then
	echo "FAIL: make install DESTDIR=$stage"; tail -20 "$stage/install.log"; exit 1
fi
PKG_CONFIG_PATH=$stage$LB_PKGCONFIGDIR${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
bad=0
fail() { echo "FAIL: $*"; bad=$((bad + 1)); }

# 1. flags
cflags=$($pc --cflags lockbatch) libs=$($pc --libs lockbatch)
slibs=$($pc --static --libs lockbatch)
for f in $cflags; do
	case $f in -I*) ;; *) fail "pkg-config --cflags lockbatch hands out '$f'" ;; esac
done
case " $libs $slibs " in *" -lck "*) fail "pkg-config --libs lockbatch names -lck: $slibs" ;; esac
libdir=$($pc --variable=libdir lockbatch)
[ -f "$libdir/liblockbatch.so" ] || fail "no liblockbatch.so in $libdir"
echo "ok: --cflags '$cflags' --static --libs '$slibs'"

# 2. headers, from the staged include directory only
n=0
for h in "$stage$LB_INCLUDEDIR"/lockbatch/*.h; do
	hdr=lockbatch/$(basename "$h")
	# shellcheck disable=SC2086 # word splitting is the point
	printf '#include <%s>\nint lb_probe;\n' "$hdr" |
		$cc -std=c11 -pedantic -Wall -Wextra -Werror $cflags \
			-fsyntax-only -x c - || fail "$hdr alone as C11"
	# shellcheck disable=SC2086
	printf '#include <%s>\nint lb_probe;\n' "$hdr" |
		$cxx -std=c++17 -pedantic -Wall -Wextra -Werror $cflags \
			-fsyntax-only -x c++ - || fail "$hdr alone as C++17"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n headers installed in $stage$LB_INCLUDEDIR"
echo "ok: $n installed headers compile alone (C11, C++17)"

# 3. clients
for c in cpubatch-list pool-cache; do
	# shellcheck disable=SC2086
	if ! $cc -std=c11 -pedantic -Wall -Wextra -Werror $san $cflags \
		-o "$stage/$c" "$src/tests/client/$c.c" $libs -lpthread \
		-Wl,-rpath,"$libdir"; then
		fail "tests/client/$c.c does not build against the staged install"
		continue
	fi
	if out=$("$stage/$c" 2>&1); then
		echo "ok: $c: $out"
	else
		fail "$c exits non-zero: $out"
	fi
done

# README's static recipe: liblockbatch from its archive, the rest shared.
# shellcheck disable=SC2086
if $cc -std=c11 $san $cflags -o "$stage/static" \
	"$src/tests/client/cpubatch-list.c" \
	$(echo "$slibs" | sed 's/-llockbatch/-l:liblockbatch.a/') -lpthread; then
	if ldd "$stage/static" 2>/dev/null | grep -q liblockbatch; then
		fail "README's static recipe still links liblockbatch.so"
	elif ! out=$("$stage/static" 2>&1); then
		fail "cpubatch-list (static) exits non-zero: $out"
	else
		echo "ok: cpubatch-list (static): $out"
	fi
else
	fail "README's static recipe does not build"
fi

# 4. man pages
if command -v man >/dev/null 2>&1; then
	for p in lockbatch lb_cpubatch_settle lb_pcp_conf lb_backend_ops; do
		man -M "$stage$LB_MANDIR" -w "$p" >/dev/null 2>&1 ||
			fail "man $p: no page in $stage$LB_MANDIR"
	done
fi
[ "$bad" -eq 0 ] && echo "staged install: usable by a client" || exit 1
