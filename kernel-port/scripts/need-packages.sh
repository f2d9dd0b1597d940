#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# need-packages.sh WHAT PACKAGE...: make sure the Debian packages are
# installed.  Missing ones are installed with apt-get when running as root
# on a system that has it; otherwise print one line naming them and fail.
# On a system without dpkg, the commands (and static C library) the
# packages provide are checked instead.
set -u

what=$1
shift

installed() {
	dpkg-query -W -f '${Status}\n' "$1" 2>/dev/null |
		grep -q ' installed$'
}

# What a package provides, for systems without dpkg.
provides() {
	case $1 in
	qemu-system-x86) command -v qemu-system-x86_64 ;;
	busybox-static) command -v busybox ;;
	libc6-dev) [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f /usr/lib64/libc.a ] || [ -f /usr/lib/libc.a ] ;;
	libelf-dev) [ -f /usr/include/gelf.h ] ;;
	libssl-dev) [ -f /usr/include/openssl/ssl.h ] ;;
	xz-utils) command -v xz ;;
	dwarves) command -v pahole ;;
	*) command -v "$1" ;;
	esac >/dev/null 2>&1
}

missing() {
	m=""
	for p in "$@"; do
		if command -v dpkg-query >/dev/null 2>&1; then
			installed "$p" || m="$m $p"
		else
			provides "$p" || m="$m $p"
		fi
	done
	echo $m
}

need=$(missing "$@")
[ -z "$need" ] && exit 0

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	echo "kernel-port: $what: installing $need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q $need >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 &&
		  apt-get install -y -q $need >/dev/null 2>&1; }
	need=$(missing "$@")
	[ -z "$need" ] && exit 0
fi
echo "kernel-port: $what needs these packages, which are missing: $need" >&2
exit 1
