#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - the main job behind `make demo`: install what is missing,
# build the tools and kcc.ko, show the k-CCF of the k-CCF paper's running
# example for k = 0..3, and boot a QEMU guest (TCG) that loads kcc.ko.
#
# Usage: demo.sh [BUILD_DIR]    (default: build)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
O=${1:-build}
cd "$top"

step() { printf '\n==> %s\n' "$*"; }

step "dependencies (scripts/deps.sh)"
sh scripts/deps.sh

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

step "kcc.ko in a QEMU guest (TCG): build, load, in-kernel self-test"
log=$top/$O/demo-guest.log
if sh selftests/guest/run.sh -l "$log"; then
	echo "guest: pass (serial log: $log)"
else
	rc=$?
	[ "$rc" -eq 4 ] && { echo "guest: skipped (see above)"; exit 0; }
	echo "guest: FAILED (serial log: $log)" >&2
	exit 1
fi
