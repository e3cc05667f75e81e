#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ppp.sh - figures of watched-context counting (Documentation/ppp.rst):
# for each trace make eval recorded ($KCC_EVAL_CACHE/traces) and k = 3, 8,
# the N hottest contexts of the k-CCF (kcc ccf) are watched; printed are
# delta (numbers / contexts), instructions per call of the k-SF pass and
# of the watch pass (callgrind, collection inside each pass only), and
# the bytes a task holds for each.  Nothing is asserted.
#
# Usage: sh bench/ppp.sh [N [TRACE-NAME...]]	(default 300; bzip2 lua tcc)
set -eu

KCC=${KCC:-build/kcc}
BENCH=${BENCH_PPP:-build/opt/bench/bench_ppp}
CACHE=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}
N=${1:-300}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- bzip2 lua tcc
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ir() {	# ir FUNC BENCH-ARGS...: instructions inside FUNC
	f=$1
	shift
	valgrind --tool=callgrind --toggle-collect="$f" \
		--callgrind-out-file=/dev/null "$BENCH" -R 1 "$@" \
		>"$out/stdout" 2>"$out/stderr"
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/stderr"
}

printf '%-8s %2s %6s %7s %7s %9s %9s %10s %10s\n' trace k N numbers delta \
	"ksf-ir" "watch-ir" "ksf-bytes" "watch-bytes"
for w in "$@"; do
	t=$CACHE/traces/$w.trace
	[ -f "$t" ] || continue
	for k in 3 8; do
		"$KCC" ccf -k $k "$t" | sort -rn | head -n "$N" | cut -f2 \
			>"$out/watch"
		"$BENCH" -t "$t" -w "$out/watch" -k $k -R 1 >"$out/fig"
		calls=$(sed -n '1s/.*: \([0-9]*\) calls,.*/\1/p' "$out/fig")
		n=$(sed -n '1s/.* \([0-9]*\) watched contexts.*/\1/p' "$out/fig")
		num=$(sed -n '1s/.* \([0-9]*\) numbers.*/\1/p' "$out/fig")
		kb=$(sed -n 's/.*nodes, \([0-9]*\) bytes.*/\1/p' "$out/fig")
		wb=$(sed -n 's/.*ns\/call, \([0-9]*\) bytes of counters.*/\1/p' "$out/fig")
		ki=0
		wi=0
		if command -v valgrind >/dev/null 2>&1; then
			ki=$(ir pass_ksf -t "$t" -w "$out/watch" -k $k)
			wi=$(ir pass_ppp -t "$t" -w "$out/watch" -k $k)
		fi
		awk -v w="$w" -v k="$k" -v n="$n" -v num="$num" -v c="$calls" \
		    -v ki="$ki" -v wi="$wi" -v kb="$kb" -v wb="$wb" 'BEGIN {
			printf "%-8s %2d %6d %7d %7.3f %9.1f %9.1f %10d %10d\n",
			       w, k, n, num, num / n, ki / c, wi / c, kb, wb }'
	done
done
