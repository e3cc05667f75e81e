#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - the main job behind `make demo`: install what is missing,
# build the tools and kcc.ko, show the k-CCF of the k-CCF paper's running
# example for k = 0..3, boot a QEMU guest (TCG) that loads kcc.ko, runs
# its in-kernel self-test and profiles a bundled workload
# (selftests/guest/demo/) with the fp source and with the lbr source on
# the software LBR PMU, and report it on the host: text, SVG and pprof
# files in BUILD_DIR/demo.  Each step prints its time.  The guest suite
# (the module's other tests) is make check's, not the demo's.
#
# Usage: demo.sh [BUILD_DIR]    (default: build)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
O=${1:-build}
cd "$top"

t0=$(date +%s)
tstep=$t0
# step TITLE: the time of the step before, then the next one's title.
step() {
	now=$(date +%s)
	[ "$now" = "$t0" ] || printf '(%d s)\n' $((now - tstep))
	tstep=$now
	printf '\n==> %s\n' "$*"
}

step "dependencies (scripts/deps.sh demo: what the demo uses)"
sh scripts/deps.sh demo

step "building the tools"
make -s O="$O" all
kcc=$top/$O/kcc

trace=selftests/kcc/data/fig2.trace
step "the k-CCF paper's example (Figure 2): $trace"
grep -v '^#' "$trace" | tr '\n' ' '
echo
for k in 0 1 2 3; do
	printf '\n-- kcc ccf -k %s (activations, then the k-context)\n' "$k"
	"$kcc" ccf -k "$k" "$trace"
done
printf '\n-- kcc ccf -k 2 --format tree --stats\n'
"$kcc" ccf -k 2 --format tree --stats "$trace"

# Debian 12's own kernel (scripts/kernels.sh), whatever else is installed.
set -- $(sh scripts/kernels.sh get 6.1) || true
kopt=${2:+-K $2 -k $1}

step "kcc.ko in a QEMU guest (TCG): load, in-kernel self-test, profile selftests/guest/demo/demo_workload.c"
echo "main -> scan_big -> touch walks a 64 MiB array (misses), main -> scan_small"
echo "-> touch a 16 KiB one (hits): one routine, two k = 1 contexts."
demo=$top/$O/demo
rm -rf "$demo"
mkdir -p "$demo/guest" "$demo/blobs" "$demo/symfs/demo"
for p in demo_workload kcc_demo; do
	gcc -static -O1 -g -D_GNU_SOURCE -fno-omit-frame-pointer \
		-mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls \
		-fno-inline -Wall -Wextra -Werror -Iinclude/uapi \
		-Iselftests/guest/progs -o "$demo/guest/$p" \
		"selftests/guest/demo/$p.c"
done
# kccread finds the guest's /demo/demo_workload under --symfs.
cp "$demo/guest/demo_workload" "$demo/symfs/demo/"
# The lbr source on the software LBR PMU: kcc record (static, the guest
# has no C library) and the workload built with kcc's tracing runtime,
# whose per-thread ring of calls and returns the test PMU kcc_lbr
# (selftests/lbrpmu, packed by run.sh) delivers as branch stacks.
make -s O="$O" static-kcc
cp "$O/static/kcc" "$demo/guest/kcc"
gcc -std=gnu11 -O2 -g -c -o "$demo/rt.o" tools/kcc-trace/kcc_trace_rt.c
gcc -static -O1 -g -D_GNU_SOURCE -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls \
	-fno-inline -finstrument-functions -Wall -Wextra -Werror \
	-o "$demo/guest/demo_workload_lbr" \
	selftests/guest/demo/demo_workload.c "$demo/rt.o" -lpthread
# shellcheck disable=SC2086
if sh selftests/guest/run.sh $kopt -a kccmode=demo -e "$demo/guest" \
	-b "$demo/blobs" -l "$demo/guest.log"; then
	echo "guest: pass (serial log: $demo/guest.log)"
else
	rc=$?
	[ "$rc" -eq 4 ] && { echo "guest: skipped (see above)"; exit 0; }
	echo "guest: FAILED (serial log: $demo/guest.log)" >&2
	exit 1
fi
step "reports on the host"
data=$demo/kcc.data
"$top/$O/kccread" --symfs "$demo/symfs" -o "$data" "$demo/blobs/demo.stream"
echo
echo "The guest has no PMU: kcc sampled cpu-clock with frame-pointer walks"
echo "(the header's source and metrics say so), so the counts below are time"
echo "samples, not cache misses; on a PMU host the default event is cache misses."
printf '\n-- kcc report --k 1 --percent-limit 0.5 %s\n' "$data"
"$kcc" report --k 1 --percent-limit 0.5 "$data"
printf '\n-- kcc report --k 1 --routine touch %s\n' "$data"
"$kcc" report --k 1 --routine touch "$data"
"$kcc" report --k 1 --format svg -o "$demo/kcc.svg" "$data"
"$kcc" report --k 1 --format pprof -o "$demo/kcc.pb.gz" "$data"

lbrdata=$demo/kcc-lbr.data
if [ -s "$demo/blobs/demo-lbr.stream" ]; then
	# run.sh names every blob NAME.stream; this one is kcc record's profile.
	cp "$demo/blobs/demo-lbr.stream" "$lbrdata"
	echo
	echo "The same workload under kcc.ko's lbr source.  The branch stacks come"
	echo "from kcc's SOFTWARE LBR PMU (kcc_lbr, a test module: the program's"
	echo "tracing runtime keeps its last 32 calls and returns, and the PMU"
	echo "hands them to the kernel's perf core as an Intel LBR would); no"
	echo "hardware LBR was involved.  The sampled event is kcc_lbr/clock/"
	echo "(time), every 200 us: many samples per call of touch(), whose LBR"
	echo "windows overlap.  kcc record reads the PMU's retired-calls event"
	echo "(kcc_lbr/calls/) at every sample, so each burst adds only the calls"
	echo "since the previous sample: main is called once, and each scan;touch"
	echo "context as often as the loop ran.  (Its default for a process, the"
	echo "hybrid estimate, also samples that event every 10007 calls, to place"
	echo "the calls a sparse sample's burst cannot hold: here there are none.)"
	printf '\n-- kcc report --k 1 --percent-limit 0.5 %s\n' "$lbrdata"
	"$kcc" report --k 1 --percent-limit 0.5 "$lbrdata"
	printf '\n-- kcc report --k 1 --sort calls --routine touch %s\n' "$lbrdata"
	"$kcc" report --k 1 --sort calls --routine touch "$lbrdata"
	# The guest's kcc eval of the same run against its own trace.
	if [ -s "$demo/blobs/demo-lbr-eval.stream" ]; then
		echo
		echo "The true counts: the tracing runtime also wrote every call of the"
		echo "run to a trace; kcc eval compares the profile's calls with it"
		echo "(calls_profile: kcc's column summed; calls_exact: the trace's)."
		printf '\n-- kcc eval --profile %s TRACE (in the guest)\n' "$lbrdata"
		awk -F '\t' '{ printf "%-8s %3s %8s %14s %12s\n", $1, $2, $3, $6, $7 }' \
			"$demo/blobs/demo-lbr-eval.stream"
	fi
else
	echo "demo guest: no lbr profile came back (serial log: $demo/guest.log)" >&2
	exit 1
fi
echo
echo "profile:     $data (kcc report $data)"
echo "lbr profile: $lbrdata (kcc report $lbrdata)"
echo "flame graph: $demo/kcc.svg"
echo "pprof:       $demo/kcc.pb.gz (go tool pprof -top $demo/kcc.pb.gz)"
now=$(date +%s)
printf '(%d s)\nmake demo: %d s\n' $((now - tstep)) $((now - t0))
