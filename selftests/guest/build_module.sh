#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build_module.sh - build kcc.ko against a kernel header tree in a copy of
# the sources, so that nothing is written into the checkout.
#
# Usage: build_module.sh KDIR DIR
#
# Copies Kbuild, kmod/, lbr/ and include/ into DIR, runs the kernel's
# external module build there with W=1 (the Kbuild file adds -Werror)
# and leaves the log in DIR/build.log and the module in DIR/kcc.ko.
# Exit status: 0 built, 1 failed, 4 KDIR missing.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)

if [ $# -ne 2 ]; then
	echo "usage: $0 KDIR DIR" >&2
	exit 2
fi
kdir=$1
dir=$2

if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "build_module.sh: no kernel build tree at '${kdir}'" >&2
	exit 4
fi
mkdir -p "$dir" || exit 1
cp -R "$top/Kbuild" "$top/kmod" "$top/lbr" "$top/include" "$dir/" || exit 1

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C make -C "$kdir" M="$(cd "$dir" && pwd)" W=1 modules >"$dir/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ ! -f "$dir/kcc.ko" ]; then
	echo "build_module.sh: building kcc.ko against $kdir failed (make: $rc):" >&2
	tail -n 40 "$dir/build.log" >&2
	exit 1
fi
exit 0
