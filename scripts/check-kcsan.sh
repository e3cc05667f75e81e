#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-kcsan.sh - kcc.ko under the data-race detector: build (once,
# cached) the kcsan flavour of scripts/kernels.sh, run the guest suite on
# it, then boot it once more for session start/stop storms
# (selftests/guest/progs/kcc_storm.c: per-process and system-wide kcc
# sessions and a perf-only storm, with kcc.ko loaded).  Any "BUG: KCSAN"
# line from the tests' start on fails the boot it is in, as any other
# kernel report does; the storm boot also checks that KCSAN's own boot
# selftest passed, so a kernel whose detector is dead cannot pass.
# make check-kcsan runs it (nightly: Documentation/testing.rst says why
# it is not in .ci/run).  Each stage prints its time on stderr.
#
# Usage: check-kcsan.sh [-n STORM_CYCLES]
# Exit status: 0 pass, 1 fail, 4 the kernel cannot be built here.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cycles=300

while getopts n:h opt; do
	case $opt in
	n) cycles=$OPTARG ;;
	h) sed -n '4,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-n STORM_CYCLES]" >&2; exit 2 ;;
	esac
done

stage() {	# stage NAME COMMAND...: run, time, remember a failure
	name=$1
	shift
	start=$(date +%s)
	"$@"
	rc=$?
	echo "check-kcsan: stage $name: $(( $(date +%s) - start )) s, status $rc" >&2
	[ $rc -eq 0 ] || failed="$failed $name"
	return $rc
}

failed=
stage build sh "$top/scripts/kernels.sh" provide kcsan >/dev/null
rc=$?
[ $rc -eq 4 ] && exit 4
[ $rc -eq 0 ] || exit 1
# shellcheck disable=SC2046 # "VMLINUZ KDIR", two words
set -- $(sh "$top/scripts/kernels.sh" get kcsan)
vmlinuz=$1 kdir=$2

stage suite env KCC_GUEST_KERNELS=kcsan sh "$top/selftests/kcc/guest.sh"
storms="-n,$cycles/-t,all,-n,$cycles/-m,perf,-n,$cycles"
stage storm sh "$top/selftests/guest/run.sh" -K "$kdir" -k "$vmlinuz" \
	-t "${KCC_GUEST_DEBUG_LIMIT:-1500}" \
	-a "kccmode=storm kccstorm=$storms"
[ -z "$failed" ] || { echo "check-kcsan: failed:$failed" >&2; exit 1; }
exit 0
