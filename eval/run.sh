#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - make eval: record the real workloads (eval/workloads.sh), then
# measure with kcc eval how close each profiling method's k-CCF comes to
# the exact one, and write into $KCC_EVAL_OUT (default build/eval):
#
#	table.tsv, table.txt	program x k x method at the default settings
#	table-calls.*		the same, sampling calls instead of misses
#	table-weighted.*	misses, bursts weighted by calls (--weight-calls)
#	two-events.txt		lbr with one event, lbr-2ev, lbr weighted by
#				calls, side by side (k = 1, 2, 3)
#	period*.tsv, depth.tsv	the sweeps behind the plots
#	*.svg			accuracy versus sampling period and LBR depth
#	exact.txt		period 1, full stack: bit-for-bit check
#	targets.txt		the targets of Documentation/fidelity.rst
#
# Usage: KCC=... KCC_TRACE_RT=... sh eval/run.sh [--quick]
#	--quick: one k, fewer sweep points (a smoke run, about a minute
#		 once the workloads are recorded)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KCC:?set KCC to the kcc binary}"
CACHE=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}
OUT=${KCC_EVAL_OUT:-$top/build/eval}
export KCC_EVAL_CACHE="$CACHE"

ks=1,2,3,5
periods=100,200,500,1000,2000,5000,10000
depths=4,8,16,32,64
if [ "${1:-}" = "--quick" ]; then
	ks=2
	periods=200,1000,5000
	depths=8,32
fi

sh "$top/eval/workloads.sh"
mkdir -p "$OUT"
traces=""
for w in bzip2 lua sqlite tcc lz4; do
	traces="$traces $CACHE/traces/$w.trace"
done

echo "eval: k-CCF accuracy at the default settings (period 1000 calls," \
     "LBR depth 32, burst 16 calls, RR 1/20, miss-rate events)" >&2
# shellcheck disable=SC2086
"$KCC" eval --tsv -k "$ks" $traces >"$OUT/table.tsv"

# The table as text, from the TSV.
totext() {
	awk -F '\t' '
NR == 1 { next }
{
	if (!hdr++)
		printf "%-8s %2s %-9s %8s %8s %9s %10s %8s\n", "program", "k",
		       "method", "overlap", "hot@0.1", "hot@0.05", "replayed%",
		       "samples"
	printf "%-8s %2s %-9s %7.2f%% %7.2f%% %8.2f%% %9.3f%% %8s\n",
	       $1, $2, $3, $8, $9, $10, $11, $12
}' "$1"
}
totext "$OUT/table.tsv" | tee "$OUT/table.txt"

echo "eval: the same with the call as the sampled event" >&2
# shellcheck disable=SC2086
"$KCC" eval --tsv -k "$ks" --miss-rate 0 $traces >"$OUT/table-calls.tsv"
totext "$OUT/table-calls.tsv" >"$OUT/table-calls.txt"

echo "eval: bursts weighted by the calls since the previous sample" >&2
# shellcheck disable=SC2086
"$KCC" eval --tsv -k "$ks" --weight-calls -m static,adaptive,lbr,lbr-join \
	$traces >"$OUT/table-weighted.tsv"
totext "$OUT/table-weighted.tsv" >"$OUT/table-weighted.txt"

# One event, two events, one event weighted by calls: the choice of
# Documentation/fidelity.rst, "Two events".
awk -F '\t' '
FNR == 1 { f++; next }
$2 > 3 || $3 != (f == 1 ? "lbr-2ev" : "lbr") && !(f == 1 && $3 == "lbr") { next }
{
	key = $1 " " $2
	if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	m = f == 2 ? "w" : $3 == "lbr" ? "1" : "2"
	o[key, m] = $8; h[key, m] = $9; r[key, m] = $11
}
END {
	printf "%-8s %2s  %-17s %-17s %-18s %s\n", "program", "k",
	       "lbr (1 event)", "lbr-2ev", "lbr --weight-calls", "replayed% (2ev)"
	printf "%-8s %2s  %-17s %-17s %-17s\n", "", "", "overlap hot@0.1",
	       "overlap hot@0.1", "overlap hot@0.1"
	for (i = 0; i < n; i++) {
		k = order[i]
		split(k, a, " ")
		printf "%-8s %2s  %6.2f%% %7.2f%%  %6.2f%% %7.2f%%  %6.2f%% %7.2f%%  %.3f%%\n",
		       a[1], a[2], o[k, "1"], h[k, "1"], o[k, "2"], h[k, "2"],
		       o[k, "w"], h[k, "w"], r[k, "2"]
	}
}' "$OUT/table.tsv" "$OUT/table-weighted.tsv" | tee "$OUT/two-events.txt"

echo "eval: sweeping the sampling period (k = 3)" >&2
# shellcheck disable=SC2086
"$KCC" eval --tsv -k 3 --sweep period="$periods" $traces >"$OUT/period.tsv"
# shellcheck disable=SC2086
"$KCC" eval --tsv -k 3 --miss-rate 0 --sweep period="$periods" $traces \
	>"$OUT/period-calls.tsv"
echo "eval: sweeping the LBR depth (k = 3)" >&2
# shellcheck disable=SC2086
"$KCC" eval --tsv -k 3 -m lbr,lbr-join,lbr-ab --sweep depth="$depths" \
	$traces >"$OUT/depth.tsv"

plot() {	# plot TSV X Y LOGX XLABEL TITLE OUT
	awk -f "$top/eval/plot.awk" -v x="$2" -v y="$3" -v logx="$4" \
		-v xlabel="$5" -v title="$6" \
		-v ylabel="y: $3 (%) against the exact 3-CCF" "$1" >"$7"
}
plot "$OUT/period.tsv" period overlap 1 "calls per sample (log)" \
	"Degree of overlap vs sampling period, k = 3" "$OUT/overlap-period.svg"
plot "$OUT/period-calls.tsv" period overlap 1 "calls per sample (log)" \
	"Degree of overlap vs sampling period, k = 3, sampling calls" \
	"$OUT/overlap-period-calls.svg"
plot "$OUT/period.tsv" period "hot@0.1" 1 "calls per sample (log)" \
	"Hot-edge coverage (T = 0.1) vs sampling period, k = 3" \
	"$OUT/hot-period.svg"
plot "$OUT/period.tsv" period replayed_pct 1 "calls per sample (log)" \
	"Calls replayed vs sampling period" "$OUT/replayed-period.svg" || true
plot "$OUT/depth.tsv" depth overlap 1 "LBR records per burst (log)" \
	"Degree of overlap vs LBR depth, k = 3, period 1000" \
	"$OUT/overlap-depth.svg"
plot "$OUT/depth.tsv" depth "hot@0.1" 1 "LBR records per burst (log)" \
	"Hot-edge coverage (T = 0.1) vs LBR depth, k = 3, period 1000" \
	"$OUT/hot-depth.svg"

echo "eval: period 1, full stack walks: bit-for-bit check" >&2
# shellcheck disable=SC2086
"$KCC" eval --check-exact -k "$ks" $traces >"$OUT/exact.txt" ||
	echo "eval: the exact check FAILED, see $OUT/exact.txt" >&2

# Targets: k <= 3, at most 2% of calls replayed: overlap >= 95% and
# hot-edge coverage >= 98% at T = 0.1.
targets() {	# targets TSV LABEL
	awk -F '\t' -v label="$2" '
NR == 1 { next }
$2 <= 3 && $11 <= 2 && $3 != "stack" {
	n[$3]++
	if ($8 >= 95) o[$3]++
	if ($9 >= 98) h[$3]++
	if (!($3 in mino) || $8 < mino[$3]) mino[$3] = $8
	if (!($3 in minh) || $9 < minh[$3]) minh[$3] = $9
}
END {
	for (m in n)
		printf "  %-9s overlap >= 95%%: %d/%d (min %.2f%%), hot@0.1 >= 98%%: %d/%d (min %.2f%%)\n",
		       m, o[m], n[m], mino[m], h[m], n[m], minh[m]
}' "$1" | sort | sed "1i targets ($2; k <= 3, <= 2% of calls replayed):"
}
{
	targets "$OUT/table.tsv" "miss-rate events"
	targets "$OUT/table-calls.tsv" "call events"
	targets "$OUT/table-weighted.tsv" "miss-rate events, --weight-calls"
} | tee "$OUT/targets.txt"
echo "eval: results in $OUT" >&2
