#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# insns.sh - instructions, counted by callgrind, that the lbr/ core spends
# per call (CCT and 3-SF, one call per event and kcc_ksf_replay()) and per
# LBR sample (kcc_stitch_sample() at k = 3 on a 32-record burst).  Wall
# clock on a shared machine moves with the load; instruction counts do
# not, so they are what Documentation/benchmark.rst compares.
#
# Each figure is one timed pass of bench_ksf, run under callgrind with
# collection on inside that pass only (--toggle-collect), divided by the
# calls or samples of the pass.  A call's figure includes its return.
#
# Usage: sh bench/insns.sh [TRACE...]
#	no TRACE: the synthetic trace (2 M events, default shape) and, when
#	make eval has recorded them, its traces ($KCC_EVAL_CACHE/traces).
set -eu

BENCH=${BENCH:-build/opt/bench/bench_ksf}
CACHE=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}
command -v valgrind >/dev/null 2>&1 || {
	echo "insns.sh: valgrind is not installed" >&2
	exit 1
}
[ -x "$BENCH" ] || {
	echo "insns.sh: $BENCH missing (make bench)" >&2
	exit 1
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# ir FUNC ARGS...: instructions inside FUNC during one run of the bench.
ir() {
	f=$1
	shift
	valgrind --tool=callgrind --toggle-collect="$f" --toggle-collect="$f.*" \
		--callgrind-out-file=/dev/null "$BENCH" -R 1 "$@" \
		>"$out/stdout" 2>"$out/stderr" || {
		cat "$out/stderr" >&2
		exit 1
	}
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/stderr"
}

# calls: from the bench's first line; samples: the sample table's row.
calls() {
	sed -n '1s/.* \([0-9]*\) calls,.*/\1/p' "$out/stdout"
}

per() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else printf "-" }'
}

one() {	# one NAME BENCH-ARGS...
	name=$1
	shift
	line="$name"
	for k in inf 3; do
		e=$(ir pass_events "$@" -o build -K $k)
		n=$(calls)
		r=$(ir pass_replay "$@" -o build -K $k)
		line="$line $(per "$e" "$n") $(per "$r" "$n")"
	done
	s=$(ir pass_samples "$@" -o sample)
	ns=$(awk 'f && NF == 6 { print $1; exit } /ns\/sample/ { f = 1 }' "$out/stdout")
	depth=$(awk 'f && NF == 6 { print $2; exit } /ns\/sample/ { f = 1 }' "$out/stdout")
	line="$line $(per "$s" "$ns") $depth"
	echo "$line" | awk '{ printf "%-10s %9s %9s %9s %9s %11s %7s\n", $1, $2, $3, $4, $5, $6, $7 }'
}

echo "instructions (callgrind) per call incl. its return, and per LBR sample at k = 3"
printf "%-10s %9s %9s %9s %9s %11s %7s\n" trace "CCT/call" "replay" \
	"3-SF/call" "replay" "insn/sample" "stack"
if [ $# -eq 0 ]; then
	one synthetic -n 2000000
	for w in bzip2 lua sqlite; do
		if [ -f "$CACHE/traces/$w.trace" ]; then
			one "$w" -t "$CACHE/traces/$w.trace"
		else
			printf "%-10s (no trace: make eval records it)\n" "$w"
		fi
	done
else
	for t in "$@"; do
		one "$(basename "$t" .trace)" -t "$t"
	done
fi
# Samples that carry their calls (a calls counter): every burst at period
# 1000 is weighted and keeps its variance (Documentation/benchmark.rst).
s=$(ir pass_samples -n 2000000 -o sample -C)
ns=$(awk 'f && NF == 6 { print $1; exit } /ns\/sample/ { f = 1 }' "$out/stdout")
echo "synthetic, counted samples (bursts weighted, variance kept): $(per "$s" "$ns") insn/sample"
