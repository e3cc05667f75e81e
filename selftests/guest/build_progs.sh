#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build_progs.sh - build the guest test programs (progs/*.c) as static
# binaries with frame pointers, for the busybox initramfs that has no C
# library of its own.
#
# Usage: build_progs.sh DIR
#
# Every progs/*.c is one program; they include <linux/kcc.h> from
# include/uapi.  The workload of kcc_fp needs frame pointers, in leaf
# functions too, and no tail calls to be walked by the fp source; the other programs get the same
# flags so that any of them can serve as a workload.
# Exit status: 0 built, 1 a program failed to build, 4 no static libc.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
mkdir -p "$dir" || exit 1
CC=${CC:-gcc}
CFLAGS="-static -O1 -g -D_GNU_SOURCE -fno-omit-frame-pointer \
-mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -Wno-unused-parameter -Werror \
-I$top/include/uapi -I$top/selftests/guest/progs"

probe="$dir/.probe"
if ! printf 'int main(void){return 0;}\n' |
	$CC -static -x c -o "$probe" - >/dev/null 2>&1; then
	echo "build_progs.sh: cannot link static programs (Debian: libc6-dev)" >&2
	exit 4
fi
rm -f "$probe"

rc=0
for src in "$top"/selftests/guest/progs/*.c; do
	[ -f "$src" ] || continue
	name=$(basename "$src" .c)
	# shellcheck disable=SC2086
	if ! $CC $CFLAGS -o "$dir/$name" "$src" -lpthread 2>"$dir/$name.log"; then
		echo "build_progs.sh: $name failed:" >&2
		cat "$dir/$name.log" >&2
		rc=1
	fi
	rm -f "$dir/$name.log"
done
# The library kcc_mapping loads with dlopen() (no dependencies).
if ! $CC -O1 -g -fPIC -shared -nostdlib -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -Wall -Wextra -Werror \
	-o "$dir/libkccdl.so" "$top/selftests/guest/demo/libkccdl.c"; then
	echo "build_progs.sh: libkccdl.so failed" >&2
	rc=1
fi
exit $rc
