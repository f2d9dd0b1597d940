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

# Sanitizer runs. mc_san_env VARIANT PREFIX exports the runtime options of
# an asan or tsan build (reports to PREFIX.PID; memcached's exit-time leaks
# and TSan's exit code left out: reports are judged from the files).
# UBSan in GCC's combined ASan+UBSan runtime ignores log_path and writes to
# stderr: its reports are in the server's stderr (the t/ logs, the stress
# run's server.log), which the verdicts read too.
mc_san_env() {
	case $1 in
	asan)
		export ASAN_OPTIONS="detect_leaks=0:log_path=$2"
		export UBSAN_OPTIONS="print_stacktrace=1:log_path=$2:suppressions=$MC_HERE/ubsan.supp" ;;
	tsan)
		export TSAN_OPTIONS="exitcode=0:halt_on_error=0:suppressions=$MC_HERE/tsan.supp:log_path=$2" ;;
	esac
}

# The line that starts a report of a variant's sanitizer: ASan's ERROR,
# UBSan's "runtime error", TSan's WARNING.
mc_san_kind() {
	case $1 in
	asan) echo 'ERROR: AddressSanitizer|runtime error' ;;
	tsan) echo 'WARNING: ThreadSanitizer' ;;
	esac
}

# mc_san_reports KIND all|ours FILE...: print the reports that start with
# a KIND line (each up to the next one or the end of its file, so every
# stack of a TSan report is its own: the access, the previous access, the
# threads' creation); "ours" only those with a frame naming lockbatch
# (lb_, lbi_, liblockbatch) or the port's own functions (lbmc_):
# memcached's own races are not the port's to fix.
mc_san_reports() {
	local kind=$1 which=$2
	shift 2
	[ $# -gt 0 ] || return 0
	awk -v k="$kind" -v w="$which" '
		function flush() {
			if (r != "" && (w == "all" ||
			    r ~ /(lb_|lbi_|lbmc_|liblockbatch)/))
				printf "%s\n", r
			r = ""
		}
		FNR == 1 { flush() }
		$0 ~ k { flush(); r = $0 "\n"; next }
		r != "" { r = r $0 "\n" }
		END { flush() }' "$@"
}

# mc_san_count KIND all|ours FILE...: how many of them.
mc_san_count() {
	mc_san_reports "$@" | grep -E -c "$1" || true
}
