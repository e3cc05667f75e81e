#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - per-sample processing cost of kcc.ko: boots each guest
# kernel (scripts/kernels.sh; $KDIR only when set) with kccmode=bench,
# where kcc_bench injects synthetic samples and divides the worker's time
# by the samples it applied.  Prints the figures; asserts nothing but
# that the run completed.  Under TCG the CPU is emulated: the figures
# compare configurations, they are not hardware costs.
#
# Usage: bench.sh		(make bench-guest)
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

if [ -n "${KDIR:-}" ]; then
	rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$KDIR/include/generated/utsrelease.h")
	echo "kdir /boot/vmlinuz-$rel $KDIR" >"$tmp/kernels"
else
	sh "$top/scripts/kernels.sh" list 6.1 6.12 >"$tmp/kernels" || exit 1
fi
rc=0
while read -r name vmlinuz kdir; do
	echo "kcc bench: guest $name ($vmlinuz)"
	if ! sh "$top/selftests/guest/run.sh" -K "$kdir" -k "$vmlinuz" \
		-a kccmode=bench >"$tmp/out" 2>&1; then
		cat "$tmp/out" >&2
		rc=1
	fi
	sed -n 's/^# bench /  /p' "$tmp/out"
done <"$tmp/kernels"
exit $rc
