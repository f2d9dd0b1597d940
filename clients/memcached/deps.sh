#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Install from Debian what building memcached 1.6.18 and running its t/
# suite needs (its debian/control Build-Depends that matter here, plus
# dpkg-dev for apt-get source). Installs only what is missing; prints what
# it installs. Needs root when something is missing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

pkgs="dpkg-dev pkg-config libevent-dev libsasl2-dev libssl-dev perl
libio-socket-ssl-perl"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -z "$missing" ]; then
	mc_log "build and test dependencies present"
	exit 0
fi
[ "$(id -u)" = 0 ] || mc_die "missing packages:$missing (install them as root)"
mc_log "apt-get install$missing"
export DEBIAN_FRONTEND=noninteractive
# Another apt run may hold the lock for a while: wait for it.
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
	$missing >&2 || {
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -q \
		--no-install-recommends $missing >&2
}
