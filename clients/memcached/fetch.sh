#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Fetch Debian's memcached 1.6.18 source package with apt-get source into
# $MC_BUILD/src (Debian's own patches applied by dpkg-source).
#
# apt-get source needs a deb-src entry. Without one this script stops and
# says so; with --add-deb-src (or CI=true) it writes one,
# /etc/apt/sources.list.d/lockbatch-deb-src.sources, mirroring the
# machine's deb entries, runs apt-get update, and prints both.
set -euo pipefail
. "$(dirname "$0")/common.sh"

add_src=no
for a in "$@"; do
	case $a in
	--add-deb-src) add_src=yes ;;
	-h|--help) sed -n '4,11p' "$0"; exit 0 ;;
	*) mc_die "unknown argument $a" ;;
	esac
done
[ "${CI:-}" = true ] && add_src=yes

if [ -f "$MC_SRC/.fetched" ]; then
	mc_log "source already at $MC_SRC"
	exit 0
fi

# The newest 1.6.18 Debian revision apt knows of (e.g. 1.6.18-1+deb12u1).
# Empty, not a failure, when apt knows none (no deb-src entry yet): under
# pipefail a grep that matches nothing would end the script silently.
src_version() {
	{ apt-cache showsrc memcached 2>/dev/null || true; } |
		sed -n 's/^Version: //p' | { grep "^$MC_VERSION-" || true; } |
		sort -V | tail -n1
}

# deb-src entries mirroring every deb entry: deb822 stanzas into a
# .sources file, one-line entries into a .list file.
write_deb_src() {
	local d=/etc/apt/sources.list.d f
	local out=$d/lockbatch-deb-src.sources list=$d/lockbatch-deb-src.list
	[ "$(id -u)" = 0 ] || mc_die "adding a deb-src entry needs root"
	for f in "$d"/*.sources; do
		[ -f "$f" ] && [ "$f" != "$out" ] || continue
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     /(^|\n)Types:[^\n]*deb([ \n]|$)/ {
			sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
	done > "$out.tmp"
	for f in /etc/apt/sources.list "$d"/*.list; do
		[ -f "$f" ] && [ "$f" != "$list" ] || continue
		awk '$1 == "deb" { $1 = "deb-src"; print }' "$f"
	done > "$list.tmp"
	for f in "$out" "$list"; do
		if [ -s "$f.tmp" ]; then
			mv "$f.tmp" "$f"
			mc_log "wrote $f:"
			cat "$f" >&2
		else
			rm -f "$f.tmp"
		fi
	done
	mc_log "running apt-get update"
	apt-get update -qq
}

ver=$(src_version)
if [ -z "$ver" ]; then
	if [ "$add_src" != yes ]; then
		mc_die "apt knows no memcached $MC_VERSION source package: add a deb-src entry (rerun with --add-deb-src to have this script write one, as root)"
	fi
	write_deb_src
	ver=$(src_version)
	[ -n "$ver" ] || mc_die "still no memcached $MC_VERSION source after adding deb-src"
fi

command -v dpkg-source > /dev/null ||
	mc_die "dpkg-source missing (apt-get install dpkg-dev, or run deps.sh)"
mkdir -p "$MC_BUILD/src"
rm -rf "$MC_SRC"
mc_log "apt-get source memcached=$ver into $MC_BUILD/src"
(cd "$MC_BUILD/src" && apt-get source -q "memcached=$ver" >&2)
[ -f "$MC_SRC/items.c" ] || mc_die "apt-get source left no $MC_SRC"
echo "$ver" > "$MC_SRC/.fetched"
