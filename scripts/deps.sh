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
#         make deb, make check-deb, the fuzzers and benchmarks use, and
#         promtool unpacked into /var/cache/kcc/prometheus (below)
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
# selftests/guest/run.sh (QEMU, busybox, cpio) on Debian 12's kernel
# with kcc.ko and kcc_lbrpmu.ko built against its headers (W=1, whose
# kernel-doc check needs perl's Pod::Usage and Encode: perl-modules-5.36
# and libperl5.36, what Debian's perl package adds to perl-base).  The
# kernel itself is not installed: scripts/kernels.sh image 6.1 unpacks
# only its vmlinuz.  selftests/demo/fresh_root.sh checks that the demo
# reads a file of every package named here.
DEMO="make gcc libc6-dev cpio busybox-static qemu-system-x86 \
linux-headers-amd64 perl-modules-5.36 libperl5.36 \
libdw-dev libelf-dev zlib1g-dev liblzma-dev libbz2-dev libpfm4-dev \
libiberty-dev libdebuginfod-dev libcapstone-dev"

PKGS="$DEMO git python3 kmod linux-image-amd64 \
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

# promtool (serve.sh, guest.sh: "promtool check metrics" of kcc serve's
# /metrics) comes in Debian's prometheus package, a server whose
# postinst starts a daemon on port 9090: it is unpacked into the cache
# with dpkg-deb -x, never installed.  Tests find it there
# ($KCC_PROMTOOL) or in PATH.
promtool() {
	d=/var/cache/kcc/prometheus
	[ -x "$d/usr/bin/promtool" ] && return 0
	[ "$(id -u)" -eq 0 ] || {
		echo "kcc: promtool missing (run as root to unpack it into $d)" >&2
		return 1
	}
	echo "kcc: unpacking promtool (Debian's prometheus) into $d" >&2
	rm -rf "$d.tmp" && mkdir -p "$d.tmp" &&
	(cd "$d.tmp" && apt-get download -q prometheus >&2 2>/dev/null ||
		{ apt-get update -q >&2 && apt-get download -q prometheus >&2; }) &&
	dpkg-deb -x "$d.tmp"/prometheus_*.deb "$d.tmp/root" &&
	mkdir -p "$d.tmp/keep/usr/bin" &&
	mv "$d.tmp/root/usr/bin/promtool" "$d.tmp/keep/usr/bin/" &&
	rm -rf "$d" && mv "$d.tmp/keep" "$d" && rm -rf "$d.tmp"
}

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
# What the group needs besides packages.
extras() {
	if [ "$group" = demo ]; then
		sh "$(dirname "$0")/kernels.sh" image 6.1 >/dev/null
	else
		promtool
	fi
}

if [ -z "$missing" ]; then
	extras
	exit
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "kcc: missing packages:$missing (run as root or install them)" >&2
	exit 1
fi
echo "kcc: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
extras
