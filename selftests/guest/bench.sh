#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - what kcc costs beside perf (make bench-guest): one QEMU TCG
# boot (scripts/kernels.sh's 6.1, or $KDIR's kernel) runs the same
# multi-threaded program unprofiled, under perf record -g, perf record
# --call-graph dwarf and kcc record --source fp at the same cpu-clock
# period, and, on the software LBR PMU kcc_lbr, under perf record -j
# any_call,any_ret,u and kcc record --source lbr (one and two events),
# several times each (selftests/guest/bench_cost.sh), then the scaling
# sweep, then kcc_bench (the worker's time per injected sample).  Prints
# the table: medians, spreads (min-max over the repetitions) and ratios
# to perf, the goals beside them.  Asserts nothing but that the runs
# completed.  Under TCG absolute times mean little; the ratios within
# the one boot are the result (Documentation/benchmark.rst).
#
# With --long (make bench-guest-long), the boot runs the curve instead
# (bench_cost.sh's cost_curve): perf -g, kcc-fp and kcc-fp-lean, and on
# kcc_lbr perf -j, kcc-lbr and kcc-lbr-lean, once each at about 10^4,
# 10^5 and 10^6 samples, and prints bytes, time to a report and kernel
# memory at each point (bench_curve.awk), with the goal of kcc's bytes
# at most 1% of perf's from 10^5 samples on.
#
# Environment: KDIR; KCC_STATIC (static kcc, make static-kcc) and
# KCC_TRACE_RT (kcc_trace_rt.o, make trace-rt), both set by make;
# BENCH_COST: the sizes, "ROUNDS,THREADS,PERIOD_NS,REPS,LROUNDS,LTHREADS,
# LPERIOD,SWEEP", with --long "curve,ROUNDS,THREADS,PERIOD_NS,LROUNDS,
# LTHREADS,LPERIOD,POINT:POINT:..." (defaults below); BENCH_LIMIT: the
# guest's time limit in seconds; BENCH_LOG: keep the raw guest output
# there.
#
# Usage: bench.sh [--long]	(make bench-guest, make bench-guest-long)
set -u

long=
case ${1:-} in
--long) long=1 ;;
"") ;;
*) echo "usage: bench.sh [--long]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# wordfreq: 80 rounds on 2 threads at 1 ms of cpu-clock give about
# 1,000 samples in the guest, the sweep 10,000 and 100,000 (the 1000x
# point would take about an hour of TCG: not run).
cost=${BENCH_COST:-80,2,1000000,5,12,2,1009,1}
limit=${BENCH_LIMIT:-2400}
# The curve: wordfreq on 2 threads at 100 us of cpu-clock, 100 rounds
# for the first point (about 10,000 samples); on kcc_lbr a sample every
# 20 calls (kcc.ko loaded with period_min=20), 1 round for the first
# point (2 threads of about 108,000 calls: 10,854 samples).  At 1009
# calls, 10^6 samples would be 10^9 traced calls, whose trace files
# (4.2 bytes a call, written by every run of the group) the guest could
# not hold.  20 calls still span more than the 32 records (about 16
# calls and their returns), so consecutive bursts do not overlap.
if [ -n "$long" ]; then
	cost=${BENCH_COST:-curve,100,2,100000,1,2,20,10000:100000:1000000}
	limit=${BENCH_LIMIT:-5400}
fi

: "${KCC_STATIC:?set KCC_STATIC to a static kcc (make static-kcc)}"
: "${KCC_TRACE_RT:?set KCC_TRACE_RT to kcc_trace_rt.o (make trace-rt)}"
if [ -n "${KDIR:-}" ]; then
	rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$KDIR/include/generated/utsrelease.h")
	vmlinuz=/boot/vmlinuz-$rel kdir=$KDIR
else
	set -- $(sh "$top/scripts/kernels.sh" list 6.1) || exit 1
	[ $# -ge 3 ] || { echo "bench.sh: no 6.1 kernel (scripts/kernels.sh)" >&2; exit 1; }
	vmlinuz=$2 kdir=$3
fi

demo=$tmp/demo
mkdir -p "$demo"
cflags="-static -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
-fno-optimize-sibling-calls -Wall -Wextra -Werror"
wf=$top/selftests/guest/lbr_e2e/wordfreq.c
deep=$top/selftests/guest/bench_deep.c
# shellcheck disable=SC2086
cp "$KCC_STATIC" "$demo/kcc" &&
	cp "$top/selftests/guest/bench_cost.sh" "$demo/" &&
	chmod +x "$demo/bench_cost.sh" &&
	${CC:-gcc} $cflags -o "$demo/wf" "$wf" -lpthread &&
	${CC:-gcc} $cflags -finstrument-functions -o "$demo/wft" "$wf" \
		"$KCC_TRACE_RT" -lpthread &&
	${CC:-gcc} $cflags -o "$demo/deep" "$deep" &&
	${CC:-gcc} $cflags -finstrument-functions -o "$demo/deept" "$deep" \
		"$KCC_TRACE_RT" -lpthread || exit 1

echo "kcc bench: guest $vmlinuz, sizes $cost" >&2
sh "$top/selftests/guest/run.sh" -K "$kdir" -k "$vmlinuz" -e "$demo" \
	-l "$tmp/serial.log" -t "$limit" \
	-a "kccmode=cost kcccost=$cost" >"$tmp/out" 2>&1
rc=$?
[ -n "${BENCH_LOG:-}" ] && cp "$tmp/out" "$BENCH_LOG"
if [ $rc -ne 0 ]; then
	tail -n 40 "$tmp/out" >&2
	echo "bench.sh: the end of the guest's serial log:" >&2
	tr -d '\r' <"$tmp/serial.log" | tail -n 60 >&2
	exit 1
fi

sed -n 's/^# cost setup /setup: /p' "$tmp/out"
if [ -n "$long" ]; then
	sed -n -e 's/^# cost run /run /p' -e 's/^# cost curve /curve /p' \
		"$tmp/out" >"$tmp/runs"
	awk -f "$top/selftests/guest/bench_fmt.awk" \
		-f "$top/selftests/guest/bench_curve.awk" "$tmp/runs"
	exit 0
fi
sed -n 's/^# cost run //p' "$tmp/out" >"$tmp/runs"
awk -f "$top/selftests/guest/bench_fmt.awk" \
	-f "$top/selftests/guest/bench_table.awk" "$tmp/runs"
echo
echo "kcc_bench (worker time per injected sample, kcc.ko alone):"
sed -n 's/^# bench /  /p' "$tmp/out"
exit 0
