#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The ABI baseline, abi/liblockbatch.abi: the exported interface of
# liblockbatch.so as libabigail's abidw records it (public headers' types
# only), together with the library's file name liblockbatch.so.M.A.R,
# which is what -version-info C:R:A becomes (M = C - A). So the baseline
# says both what the interface is and which libtool version names it.
#
#   abi.sh check SRCDIR BUILDDIR C:R:A
#	(make abi-check) fail unless the built library has exactly the
#	baseline's interface and file name: an interface change, compatible
#	or not, needs a new baseline, and a new baseline needs the
#	-version-info that goes with it (see README, "ABI"). C:R:A is
#	the configured -version-info; a library linked before it changed
#	is relinked first.
#   abi.sh update [--force] SRCDIR BUILDDIR C:R:A VERSION CC [CPPFLAGS...]
#	(make abi-update) regenerate, from the public headers: the linker
#	version script lib/lockbatch.map, then (after relinking) the Debian
#	symbols file and the baseline. It refuses a baseline whose change
#	from the previous one breaks the libtool rules; --force records
#	the interface as it is: for a first baseline before a release, or
#	a type change judged compatible by hand (a new last enumerator).
#
# Needs abigail-tools (abidw, abidiff). The library must be built with
# debug information (the default -g).
set -eu
cmd=$1
shift
force=
if [ "$cmd" = update ] && [ "${1:-}" = --force ]; then
	force=1
	shift
fi
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) vinfo=$3
base=$src/abi/liblockbatch.abi
node=LOCKBATCH_0.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in abidw abidiff; do
	command -v $t >/dev/null 2>&1 ||
		{ echo "abi.sh: no $t (Debian package abigail-tools)" >&2; exit 1; }
done

# The real file of the built shared library, from libtool's .la.
libfile() {
	set -- $(sed -n "s/^library_names='\(.*\)'$/\1/p" "$build/liblockbatch.la")
	[ -n "${1:-}" ] || { echo "abi.sh: no shared library in $build/liblockbatch.la" >&2; exit 1; }
	echo "$1"
}

# Relink when the library's file name is not what -version-info C:R:A
# ($1) names, liblockbatch.so.(C-A).A.R: a new -version-info changes no
# object, so make alone keeps the old library.
fresh() {
	c=${1%%:*} a=${1##*:} r=${1#*:}
	r=${r%%:*}
	[ "$(libfile)" = "liblockbatch.so.$((c - a)).$a.$r" ] && return 0
	rm -f "$build/liblockbatch.la"
	${LB_MAKE:-make} -C "$build" liblockbatch.la >/dev/null
}

# abidw of the built library, run in .libs so that the corpus path is the
# bare file name.
dump() {
	f=$(libfile)
	(cd "$build/.libs" && abidw --no-comp-dir-path --short-locs \
		--headers-dir "$src/include/lockbatch" \
		--header-file "$build/include/lockbatch/version.h" "$f") >"$1"
}

# "M A R" of the file name an abidw dump records.
version() {
	sed -n "1s/.* path='liblockbatch\.so\.\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)'.*/\1 \2 \3/p" "$1"
}

# same, added (new functions or variables, nothing else changed) or
# changed (anything else abidiff reports: a removed symbol, a struct's
# layout, a signature, an enumerator). abidiff itself flags only removals
# as incompatible (status bit 8); a type change it reports with bit 4
# alone, though it breaks callers as surely, so "changed" takes both.
# The report is left in $tmp/diff.
compare() {
	rc=0
	abidiff "$1" "$2" >"$tmp/diff" || rc=$?
	[ $((rc & 3)) -eq 0 ] || { cat "$tmp/diff"; echo "abi.sh: abidiff failed ($rc)" >&2; exit 1; }
	if [ "$rc" -eq 0 ]; then
		echo same
	elif [ "$rc" -lt 8 ] && abidiff --no-added-syms "$1" "$2" >/dev/null; then
		echo added
	else
		echo changed
	fi
}

if [ "$cmd" = check ]; then
	[ -f "$base" ] || { echo "abi.sh: no baseline $base (make abi-update)" >&2; exit 1; }
	[ -f "$build/liblockbatch.la" ] ||
		{ echo "abi.sh: build the library first" >&2; exit 1; }
	fresh "$vinfo"
	dump "$tmp/built.abi"
	what=$(compare "$base" "$tmp/built.abi")
	old=$(version "$base") new=$(version "$tmp/built.abi")
	cat "$tmp/diff"
	if [ "$what" = changed ]; then
		echo "FAIL: the interface changed against abi/liblockbatch.abi (above), not only by additions."
		echo "Undo it, or give it a new soname: current+1, revision 0, age 0 in"
		echo "configure.ac's LB_LT_VERSION_INFO, then make abi-update."
		exit 1
	elif [ "$what" = added ]; then
		echo "FAIL: the interface grew (above) and the baseline does not say so."
		[ "$old" = "$new" ] &&
			echo "Set current+1, revision 0, age+1 in configure.ac's LB_LT_VERSION_INFO, then"
		echo "make abi-update."
		exit 1
	elif [ "$old" != "$new" ]; then
		echo "FAIL: the library's version (M A R of liblockbatch.so.M.A.R) is $new, the baseline's $old."
		echo "-version-info and the baseline change together: make abi-update."
		exit 1
	fi
	echo "ok: $(libfile) has the interface of abi/liblockbatch.abi ($(grep -c '<elf-symbol ' "$base") symbols)"
	exit 0
fi

[ "$cmd" = update ] || { echo "usage: abi.sh check|update ..." >&2; exit 2; }
ver=$4 cc=$5
shift 5

# 1. The version script: every name the headers declare, nothing else.
names=$(sh "$src/tools/abi-names.sh" "$src" "$build" "$cc" "$@")
{
	echo "/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */"
	echo "/* What liblockbatch.so exports: the functions and variables of"
	echo " * include/lockbatch/*.h, by name, and nothing else. Written by"
	echo " * make abi-update (tools/abi.sh) from the headers; do not edit. */"
	echo "$node {"
	echo "global:"
	for n in $names; do printf '\t%s;\n' "$n"; done
	echo "local:"
	printf '\t*;\n'
	echo "};"
} >"$tmp/map"
cmp -s "$tmp/map" "$src/lib/lockbatch.map" 2>/dev/null ||
	cp "$tmp/map" "$src/lib/lockbatch.map"
${LB_MAKE:-make} -C "$build" liblockbatch.la >/dev/null
fresh "$vinfo"

# 2. The baseline, if the libtool rules allow it.
dump "$tmp/new.abi"
set -- $(version "$tmp/new.abi")
major=$1 age=$2
if [ -f "$base" ] && [ -z "$force" ]; then
	what=$(compare "$base" "$tmp/new.abi")
	set -- $(version "$base")
	omajor=$1 oage=$2
	why=
	if [ "$what" = changed ] && [ "$major" = "$omajor" ]; then
		why="a change other than additions needs a new soname: current+1, revision 0, age 0"
	elif [ "$what" = added ] &&
	     { [ "$major" != "$omajor" ] || [ "$age" -le "$oage" ]; }; then
		why="an addition needs current+1, revision 0, age+1"
	fi
	if [ -n "$why" ]; then
		cat "$tmp/diff"
		echo "abi.sh: not updating abi/liblockbatch.abi: $why in configure.ac's LB_LT_VERSION_INFO" >&2
		echo "(then ./configure or make, and make abi-update again)" >&2
		exit 1
	fi
fi
cp "$tmp/new.abi" "$base"

# 3. The Debian symbols file: a symbol keeps the version that brought it.
pkg=liblockbatch$major
sym=$src/debian/$pkg.symbols
{
	echo "liblockbatch.so.$major $pkg #MINVER#"
	echo "* Build-Depends-Package: liblockbatch-dev"
	for n in $node $names; do
		v=
		[ -f "$sym" ] && v=$(awk -v s="$n@$node" '$1 == s { print $2 }' "$sym")
		printf ' %s@%s %s\n' "$n" "$node" "${v:-$ver}"
	done
} >"$tmp/sym"
cp "$tmp/sym" "$sym"
[ "$major" = 0 ] || echo "abi.sh: soname is now liblockbatch.so.$major: rename the package $pkg in debian/control" >&2
echo "updated: lib/lockbatch.map ($(echo "$names" | wc -w) names), abi/liblockbatch.abi, debian/$pkg.symbols"
