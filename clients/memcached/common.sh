# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Sourced by the scripts of clients/memcached: where things are, and the
# one version of memcached the patch series is written against.

MC_VERSION=1.6.18
MC_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The build directory: MC_BUILD (absolute), else build/ beside the scripts
# of the build tree (top_builddir's clients/memcached/build).
: "${top_builddir:=$MC_HERE/../..}"
top_builddir=$(cd "$top_builddir" && pwd)
: "${MC_BUILD:=$top_builddir/clients/memcached/build}"
MC_SRC=$MC_BUILD/src/memcached-$MC_VERSION

mc_log() { printf 'memcached: %s\n' "$*" >&2; }
mc_die() { printf 'memcached: error: %s\n' "$*" >&2; exit 1; }
