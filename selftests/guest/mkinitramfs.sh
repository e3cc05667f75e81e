#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh - a busybox initramfs that runs the kcc guest tests
# (guest_init.sh) and reports on the serial console.
#
# Usage: mkinitramfs.sh [-p PROGDIR] [-d DATADIR] [-e DEMODIR] [-l LBRDIR]
#                       KCC_KO OUT.cpio.gz
#
#   -p PROGDIR  static test programs (build_progs.sh), copied to /t
#   -d DATADIR  sample files (*.smp) for kcc_inject, copied to /data
#   -e DEMODIR  static programs copied to /demo (kccmode=demo runs them)
#   -l LBRDIR   the test LBR PMU (kcc_lbrpmu.ko, its programs, perf),
#               copied to /lbr, with the shared libraries the dynamically
#               linked ones need (ldd) at their paths; lbrpmu.sh runs them
#
# The guest's /init is guest_init.sh: it mounts proc, sys and devtmpfs,
# loads /kcc.ko, runs the programs, prints TAP, the kernel log and one
# line "KCC-GUEST-RESULT: pass" or "fail", then powers off.  Needs a
# static busybox (Debian: busybox-static), cpio and gzip; no root: the
# console is opened from devtmpfs, not from a device node in the archive.
# Exit status: 0 written, 1 error, 4 a tool is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
progs=
data=
demo=
lbr=
usage="usage: $0 [-p PROGDIR] [-d DATADIR] [-e DEMODIR] [-l LBRDIR] KCC_KO OUT.cpio.gz"
while getopts p:d:e:l: opt; do
	case $opt in
	p) progs=$OPTARG ;;
	d) data=$OPTARG ;;
	e) demo=$OPTARG ;;
	l) lbr=$OPTARG ;;
	*) echo "$usage" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 2 ]; then
	echo "$usage" >&2
	exit 2
fi
ko=$1
out=$2

busybox=${BUSYBOX:-$(command -v busybox || echo /bin/busybox)}
if [ ! -x "$busybox" ]; then
	echo "mkinitramfs.sh: busybox not found (Debian: busybox-static)" >&2
	exit 4
fi
# The initramfs has no C library: a dynamically linked busybox cannot run.
if ldd "$busybox" >/dev/null 2>&1; then
	echo "mkinitramfs.sh: $busybox is dynamically linked (Debian: busybox-static)" >&2
	exit 4
fi
for tool in cpio gzip; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "mkinitramfs.sh: $tool not found" >&2
		exit 4
	fi
done
if [ ! -f "$ko" ]; then
	echo "mkinitramfs.sh: $ko: no such module" >&2
	exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/kcc-initramfs.XXXXXX") || exit 1
trap 'rm -rf "$root"' EXIT
trap 'exit 130' INT TERM

# mktemp made it 0700: the guest's root directory must be searchable
# by the unprivileged users of the tests.
chmod 0755 "$root" &&
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" \
	"$root/t" "$root/data" &&
cp "$busybox" "$root/bin/busybox" &&
cp "$ko" "$root/kcc.ko" &&
cp "$here/guest_init.sh" "$root/init" || exit 1
chmod 0755 "$root/init" || exit 1
for f in kmemleak.sh lbrpmu.sh; do
	if [ -f "$here/$f" ]; then
		cp "$here/$f" "$root/$f" || exit 1
	fi
done
for applet in sh mount insmod rmmod dmesg grep cat echo poweroff uname \
	      sleep kill ls sed mkdir wc head tail tr true false test [ \
	      env rm; do
	ln -s busybox "$root/bin/$applet" || exit 1
done
if [ -n "$progs" ]; then
	for p in "$progs"/*; do
		[ -f "$p" ] && [ -x "$p" ] && { cp "$p" "$root/t/" || exit 1; }
	done
fi
if [ -n "$demo" ]; then
	mkdir -p "$root/demo" || exit 1
	for p in "$demo"/*; do
		[ -f "$p" ] && [ -x "$p" ] && { cp "$p" "$root/demo/" || exit 1; }
	done
fi
if [ -n "$lbr" ]; then
	mkdir -p "$root/lbr" || exit 1
	for f in "$lbr"/*; do
		[ -f "$f" ] || continue
		cp "$f" "$root/lbr/" || exit 1
		# The libraries of a dynamically linked file, at their paths
		# (the interpreter too); those in LBRDIR are found by $ORIGIN.
		ldd "$f" 2>/dev/null |
			sed -n 's/.*[[:space:]]\(\/[^[:space:]]*\)[[:space:]](0x.*/\1/p;
				s/^[[:space:]]*\(\/[^[:space:]]*\)[[:space:]](0x.*/\1/p' |
			while read -r lib; do
				case $lib in "$lbr"/*) continue ;; esac
				[ -e "$root$lib" ] && continue
				mkdir -p "$root$(dirname "$lib")" &&
					cp -L "$lib" "$root$lib" || exit 1
			done || exit 1
	done
fi
if [ -n "$data" ]; then
	for f in "$data"/*.smp; do
		[ -f "$f" ] && { cp "$f" "$root/data/" || exit 1; }
	done
fi

if ! (cd "$root" && find . | LC_ALL=C sort |
	cpio -o -H newc --quiet -R 0:0) | gzip -9 >"$out.tmp" ||
   ! mv "$out.tmp" "$out"; then
	rm -f "$out.tmp"
	echo "mkinitramfs.sh: cannot write $out" >&2
	exit 1
fi
exit 0
