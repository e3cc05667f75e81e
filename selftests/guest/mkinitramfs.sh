#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh - a busybox initramfs that loads kcc.ko with its
# self-test and reports on the serial console.
#
# Usage: mkinitramfs.sh KCC_KO OUT.cpio.gz
#
# The guest's /init mounts proc, sys and devtmpfs, loads /kcc.ko with
# selftest=1, unloads it, prints the kernel log written since the load
# (so that warnings below the console loglevel of a "quiet" boot reach
# the serial log too) and one line "KCC-GUEST-RESULT: pass" or "fail",
# then powers off.  Needs a static busybox (Debian: busybox-static), cpio
# and gzip; no root: the console is opened from devtmpfs, not from a
# device node in the archive.
# Exit status: 0 written, 1 error, 4 a tool is missing.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 KCC_KO OUT.cpio.gz" >&2
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

mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" &&
cp "$busybox" "$root/bin/busybox" &&
cp "$ko" "$root/kcc.ko" || exit 1
for applet in sh mount insmod rmmod dmesg grep cat echo poweroff uname; do
	ln -s busybox "$root/bin/$applet" || exit 1
done

cat >"$root/init" <<'INIT'
#!/bin/sh
export PATH=/bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

echo "kcc-guest: kernel $(uname -r)"
result=pass
dmesg -c >/dev/null
if ! insmod /kcc.ko selftest=1; then
	echo "kcc-guest: insmod /kcc.ko selftest=1 failed"
	result=fail
fi
if ! dmesg | grep -q 'kcc: selftest passed'; then
	echo "kcc-guest: no 'kcc: selftest passed' in the kernel log"
	result=fail
fi
if [ $result = pass ] && ! rmmod kcc; then
	echo "kcc-guest: rmmod kcc failed"
	result=fail
fi
echo "kcc-guest: kcc lines of the kernel log:"
dmesg | grep 'kcc'
echo "kcc-guest: kernel log since insmod:"
dmesg
echo "KCC-GUEST-RESULT: $result"
poweroff -f
INIT
chmod 0755 "$root/init" || exit 1

if ! (cd "$root" && find . | LC_ALL=C sort |
	cpio -o -H newc --quiet -R 0:0) | gzip -9 >"$out.tmp" ||
   ! mv "$out.tmp" "$out"; then
	rm -f "$out.tmp"
	echo "mkinitramfs.sh: cannot write $out" >&2
	exit 1
fi
exit 0
