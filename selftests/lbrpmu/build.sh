#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build.sh - build the programs of the test LBR PMU's guest test into DIR:
#
#   lbr_check     static: runs a workload under kcc_lbr and checks the
#                 branch stacks against the workload's trace (progs/)
#   lbr_ring      static: checks the stacks read from hand-filled rings
#   lbr_workload  traced (-finstrument-functions, kcc's tracing runtime),
#                 -O2, frame pointers but not in leaves; dynamically
#                 linked to liblbr.so, found next to it ($ORIGIN)
#   liblbr.so     traced, -fomit-frame-pointer, as Debian builds libraries
#
# The module itself is built by selftests/guest/build_module.sh KDIR DIR
# lbrpmu.  The guest needs the C library of the host for lbr_workload
# (mkinitramfs.sh -l copies it with ldd).
# Usage: build.sh DIR
# Exit status: 0 built, 1 failed (selftests/guest/build_progs.sh tells a
# missing static libc apart first).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
src=$top/selftests/lbrpmu/progs
if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
mkdir -p "$dir" || exit 1
CC=${CC:-gcc}
W="-Wall -Wextra -Wno-unused-parameter -Werror"

build() {	# build NAME COMMAND...
	name=$1
	shift
	if ! "$@" 2>"$dir/$name.log"; then
		echo "build.sh: $name failed:" >&2
		cat "$dir/$name.log" >&2
		exit 1
	fi
	rm -f "$dir/$name.log"
}

# shellcheck disable=SC2086
build lbr_check $CC -static -O2 -g -D_GNU_SOURCE $W -o "$dir/lbr_check" \
	"$src/lbr_check.c"
# shellcheck disable=SC2086
build lbr_ring $CC -static -O2 -g -D_GNU_SOURCE $W -o "$dir/lbr_ring" \
	"$src/lbr_ring.c" -lpthread
# shellcheck disable=SC2086
build kcc_trace_rt $CC -std=gnu11 -O2 -g -fPIC $W -c \
	-o "$dir/kcc_trace_rt.o" "$top/tools/kcc-trace/kcc_trace_rt.c"
# shellcheck disable=SC2086
build liblbr $CC -O2 -g -fPIC -shared -fomit-frame-pointer \
	-finstrument-functions $W -o "$dir/liblbr.so" "$src/lbr_lib.c"
# shellcheck disable=SC2086,SC2016 # $ORIGIN is for the linker
build lbr_workload $CC -O2 -g -fno-omit-frame-pointer \
	-momit-leaf-frame-pointer -finstrument-functions $W \
	-o "$dir/lbr_workload" "$src/lbr_workload.c" "$dir/kcc_trace_rt.o" \
	-L"$dir" -llbr -Wl,-rpath,'$ORIGIN' -lpthread
rm -f "$dir/kcc_trace_rt.o"
exit 0
