#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build_module.sh - build kcc.ko (or the test LBR PMU) against a kernel
# header tree in a copy of the sources, so that nothing is written into
# the checkout.
#
# Usage: build_module.sh KDIR DIR [kcc|lbrpmu]
#
# kcc (default): copies Kbuild, kmod/, lbr/ and include/ into DIR;
# lbrpmu: copies selftests/lbrpmu/ (kcc_lbrpmu.ko, test-only).  Runs the
# kernel's external module build there with W=1 (the Kbuild files add
# -Werror when KCC_WERROR=1 is in the environment) and leaves the log
# in DIR/build.log and the module in DIR/kcc.ko or DIR/kcc_lbrpmu.ko.
# Exit status: 0 built, 1 failed, 4 KDIR missing.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)

if [ $# -ne 2 ] && [ $# -ne 3 ]; then
	echo "usage: $0 KDIR DIR [kcc|lbrpmu]" >&2
	exit 2
fi
kdir=$1
dir=$2
what=${3:-kcc}

if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "build_module.sh: no kernel build tree at '${kdir}'" >&2
	exit 4
fi
# kbuild's compiler probes compile /dev/null: as a regular file (a
# program run as root unlinked it) they fail, and flags go missing
# without a word (-mfentry, KASAN's shadow offset).
if [ ! -c /dev/null ]; then
	echo "build_module.sh: /dev/null is not a character device; make it again: rm /dev/null; mknod -m 666 /dev/null c 1 3" >&2
	exit 1
fi
mkdir -p "$dir" || exit 1
case $what in
kcc)
	ko=kcc.ko
	cp -R "$top/Kbuild" "$top/kmod" "$top/lbr" "$top/include" "$dir/" || exit 1
	;;
lbrpmu)
	ko=kcc_lbrpmu.ko
	cp -R "$top/selftests/lbrpmu/Kbuild" "$top/selftests/lbrpmu/kcc_lbrpmu.c" \
		"$top/selftests/lbrpmu/kcc_lbrpmu.h" \
		"$top/selftests/lbrpmu/wrapper" "$dir/" || exit 1
	;;
*)
	echo "build_module.sh: unknown module '$what' (kcc or lbrpmu)" >&2
	exit 2
	;;
esac

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C make -C "$kdir" M="$(cd "$dir" && pwd)" W=1 modules >"$dir/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ ! -f "$dir/$ko" ]; then
	echo "build_module.sh: building $ko against $kdir failed (make: $rc):" >&2
	tail -n 40 "$dir/build.log" >&2
	exit 1
fi
exit 0
