#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install what kcc needs to build and test on Debian 12.  Idempotent: only
# missing packages are installed.  Used by make demo, make deps and .ci/run.
set -eu

PKGS="make gcc libc6-dev git python3 kmod cpio busybox-static \
qemu-system-x86 linux-headers-amd64 linux-image-amd64 \
linux-image-6.12-amd64 linux-headers-6.12-amd64 \
libdw-dev libelf-dev zlib1g-dev liblzma-dev libbz2-dev clang golang-go libxml2-utils binutils chromium \
linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64 \
linux-source-6.1 flex bison bc xz-utils perl sparse cppcheck clang-tidy"
PKGS="$PKGS linux-perf"  # perf in the guest, on the software LBR PMU (selftests/guest/lbrpmu.sh)
PKGS="$PKGS libpfm4-dev"	# kcc record -e: hardware event names (evspec.c)
PKGS="$PKGS valgrind"	# bench/insns.sh: instruction counts (callgrind)
PKGS="$PKGS libiberty-dev"	# C++ and Rust demangling (cplus_demangle)
PKGS="$PKGS g++"		# symbols_test's C++ program
PKGS="$PKGS libdebuginfod-dev"	# debuginfod client (header; the library is dlopen()ed)
PKGS="$PKGS help2man groff-base"	# man pages from --help; install.sh renders them
PKGS="$PKGS libcapstone-dev"	# kcc valence annotate: direct calls of a program
PKGS="$PKGS linux-source-6.12"	# the debug-6.12 and kcsan kernels (scripts/debug-kernel.sh -v 6.12)
PKGS="$PKGS debhelper dh-dkms dpkg-dev"	# make deb: dpkg-buildpackage of debian/
PKGS="$PKGS lintian"	# make deb: checks the packages
PKGS="$PKGS debootstrap zstd"	# make check-deb: a clean Debian root, cached as .tar.zst

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "kcc: missing packages:$missing (run as root or install them)" >&2
	exit 1
fi
echo "kcc: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
