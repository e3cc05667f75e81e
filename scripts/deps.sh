#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install what kcc needs on Debian 12.  Idempotent: only missing packages
# are installed.
#
# Usage: deps.sh [demo | all]
#   demo  what make demo uses and nothing else: the compiler, the
#         libraries kcc links (make all, make static-kcc), QEMU, busybox,
#         cpio and Debian 12's own kernel and headers for its guests
#   all   (default) everything make check, the CI (.ci/run), make static,
#         make deb, make check-deb, the fuzzers and benchmarks use
#
# Measured against the clean Debian 12 root make check-deb uses (apt-get
# -s with its dpkg status, --no-install-recommends, nothing cached):
# demo 113 packages, 127 MB to download; all 499 packages, 1090 MB.
set -eu

group=${1:-all}
case $group in
demo|all) ;;
*) echo "usage: deps.sh [demo | all]" >&2; exit 2 ;;
esac

# demo: make all, make static-kcc (LDLIBS, STATIC_LDLIBS), the guests of
# selftests/guest/run.sh (QEMU, busybox, cpio, kmod) on Debian 12's
# kernel (scripts/kernels.sh get 6.1) with kcc.ko and kcc_lbrpmu.ko
# built against its headers.
DEMO="make gcc libc6-dev kmod cpio busybox-static qemu-system-x86 \
linux-image-amd64 linux-headers-amd64 \
libdw-dev libelf-dev zlib1g-dev liblzma-dev libbz2-dev libpfm4-dev \
libiberty-dev libdebuginfod-dev libcapstone-dev"

PKGS="$DEMO git python3 \
linux-image-6.12-amd64 linux-headers-6.12-amd64 \
clang golang-go libxml2-utils binutils chromium \
linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64 \
linux-source-6.1 flex bison bc xz-utils perl sparse cppcheck clang-tidy"
PKGS="$PKGS linux-perf"  # perf in the guest, on the software LBR PMU (selftests/guest/lbrpmu.sh)
PKGS="$PKGS valgrind"	# bench/insns.sh: instruction counts (callgrind)
PKGS="$PKGS g++"		# symbols_test's C++ program
PKGS="$PKGS help2man groff-base"	# man pages from --help; install.sh renders them
PKGS="$PKGS linux-source-6.12"	# the debug-6.12 and kcsan kernels (scripts/debug-kernel.sh -v 6.12)
PKGS="$PKGS debhelper dh-dkms dpkg-dev"	# make deb: dpkg-buildpackage of debian/
PKGS="$PKGS lintian"	# make deb: checks the packages
PKGS="$PKGS debootstrap zstd"	# make check-deb: a clean Debian root, cached as .tar.zst

[ "$group" = demo ] && PKGS=$DEMO
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
