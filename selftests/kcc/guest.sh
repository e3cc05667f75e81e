#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh - build kcc.ko against $KDIR, boot the matching Debian kernel
# in QEMU (TCG: no KVM needed or used) with a busybox initramfs, load the
# module with selftest=1 and require the in-kernel self-test to pass
# without any kernel warning.  Skips when qemu, a static busybox, the
# kernel image or the headers are missing.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)

echo "TAP version 13"
for tool in qemu-system-x86_64 cpio gzip timeout; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not installed"
		exit 4
	fi
done
if [ -n "${KDIR:-}" ] && [ ! -f "$KDIR/Makefile" ]; then
	echo "1..0 # SKIP KDIR=$KDIR is not a kernel build tree"
	exit 4
fi

out=$(mktemp "${TMPDIR:-/tmp}/kcc-guest-test.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM

sh "$top/selftests/guest/run.sh" ${KDIR:+-K "$KDIR"} >"$out" 2>&1
rc=$?
if [ $rc -eq 4 ]; then
	reason=$(sed -n 's/^run.sh: SKIP: //p' "$out" | head -n 1)
	sed -n '/^run.sh: SKIP: /!s/^/# /p' "$out"
	echo "1..0 # SKIP ${reason:-guest cannot be run here}"
	exit 4
fi
sed 's/^/# /' "$out"
echo "1..1"
if [ $rc -eq 0 ]; then
	echo "ok 1 guest loads kcc.ko, its self-test passes, no kernel warning"
	exit 0
fi
echo "not ok 1 guest loads kcc.ko, its self-test passes, no kernel warning"
exit 1
