#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - boot a QEMU guest (TCG, never KVM, 2 CPUs) that loads kcc.ko
# and runs the guest tests (guest_init.sh), and judge the serial log.
#
# Usage: run.sh [-K KDIR] [-m KCC_KO] [-k VMLINUZ] [-l LOG] [-t SECONDS]
#               [-d DATADIR] [-e DEMODIR] [-b BLOBDIR] [-a APPEND]
#
#   -K KDIR     kernel headers to build kcc.ko against (default: $KDIR, or
#               the newest /usr/src/linux-headers-*-amd64)
#   -m KCC_KO   use this module instead of building one (it must have been
#               built against the headers of the guest kernel)
#   -k VMLINUZ  guest kernel (default: /boot/vmlinuz-<release of KDIR>)
#   -l LOG      serial log (default: a file in a temporary directory,
#               kept and named on failure)
#   -t SECONDS  boot time limit (default 300)
#   -d DATADIR  sample files (*.smp) the guest injects (kcc_inject)
#   -e DEMODIR  static programs copied to /demo (with -a kccmode=demo)
#   -b BLOBDIR  where the streams the guest prints go, one file per blob
#   -a APPEND   more kernel command line (kccmode=bench, kccinjectk=K)
#
# Every boot also packs the test LBR PMU (kcc_lbrpmu.ko, its programs
# and perf; selftests/guest/lbrpmu.sh, Documentation/lbrpmu.rst);
# -a kccmode=lbr runs only its tests.
# The guest's TAP lines are copied to stdout.  It passes when its log has
# "KCC-GUEST-RESULT: pass", no "not ok" line and, from the moment the
# tests start, no line (outside the test output) with "BUG:",
# "WARNING:", "Oops", "KASAN", "lockdep", "UBSAN", "leak" or "Call
# Trace".
# Exit status: 0 pass, 1 fail, 4 something needed is missing (skip).
#
# Example:
#   sh selftests/guest/run.sh -l /tmp/kcc-guest.log
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/selftests/guest
. "$here/log_reports.sh"

kdir=${KDIR:-}
ko=
kernel=
log=
limit=300
data=
demo=
blobs=
append=

while getopts K:m:k:l:t:d:e:b:a:h opt; do
	case $opt in
	K) kdir=$OPTARG ;;
	m) ko=$OPTARG ;;
	k) kernel=$OPTARG ;;
	l) log=$OPTARG ;;
	t) limit=$OPTARG ;;
	d) data=$OPTARG ;;
	e) demo=$OPTARG ;;
	b) blobs=$OPTARG ;;
	a) append=$OPTARG ;;
	h) sed -n '4,34s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-K KDIR] [-m KCC_KO] [-k VMLINUZ] [-l LOG] [-t SECONDS] [-d DATADIR] [-e DEMODIR] [-b BLOBDIR] [-a APPEND]" >&2
	   exit 2 ;;
	esac
done

skip() {
	echo "run.sh: SKIP: $*" >&2
	exit 4
}

if [ -z "$kdir" ]; then
	for d in /usr/src/linux-headers-*-amd64; do
		[ -f "$d/Makefile" ] && kdir=$d
	done
fi
if [ -z "$kdir" ] || [ ! -f "$kdir/include/generated/utsrelease.h" ]; then
	skip "no kernel headers (set KDIR; Debian: linux-headers-amd64)"
fi
release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
	"$kdir/include/generated/utsrelease.h")
[ -n "$kernel" ] || kernel=/boot/vmlinuz-$release
[ -r "$kernel" ] ||
	skip "no readable guest kernel $kernel for headers $release (Debian: linux-image-amd64)"
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	skip "qemu-system-x86_64 not found (Debian: qemu-system-x86)"
command -v timeout >/dev/null 2>&1 || skip "timeout not found (coreutils)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-guest.XXXXXX") || exit 1
keep_log=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -n "$keep_log" ] && [ "$log" = "$tmp/serial.log" ] &&
		cp "$tmp/serial.log" "${TMPDIR:-/tmp}/kcc-guest-serial.log" &&
		echo "run.sh: serial log kept in ${TMPDIR:-/tmp}/kcc-guest-serial.log" >&2
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -n "$log" ] || log=$tmp/serial.log

if [ -z "$ko" ]; then
	sh "$here/build_module.sh" "$kdir" "$tmp/mod"
	rc=$?
	[ $rc -eq 4 ] && skip "cannot build against $kdir"
	[ $rc -ne 0 ] && exit 1
	ko=$tmp/mod/kcc.ko
fi

sh "$here/build_progs.sh" "$tmp/progs"
rc=$?
[ $rc -eq 4 ] && skip "cannot build static test programs (Debian: libc6-dev)"
[ $rc -ne 0 ] && exit 1

# The test LBR PMU and its programs for lbrpmu.sh, with perf when the
# host has it (Debian: linux-perf; /usr/bin/perf may be a wrapper script
# of the versioned binaries).
sh "$here/build_module.sh" "$kdir" "$tmp/lbrmod" lbrpmu || exit 1
sh "$top/selftests/lbrpmu/build.sh" "$tmp/lbr" || exit 1
cp "$tmp/lbrmod/kcc_lbrpmu.ko" "$tmp/lbr/" || exit 1
for p in /usr/bin/perf /usr/bin/perf_*; do
	if [ -f "$p" ] && [ "$(head -c 4 "$p" | tr -d '\177')" = ELF ]; then
		cp "$p" "$tmp/lbr/perf" || exit 1
		break
	fi
done

msg=$(sh "$here/mkinitramfs.sh" -p "$tmp/progs" -l "$tmp/lbr" ${data:+-d "$data"} ${demo:+-e "$demo"} "$ko" "$tmp/initrd.gz" 2>&1)
rc=$?
[ $rc -eq 4 ] && skip "${msg#mkinitramfs.sh: }"
if [ $rc -ne 0 ]; then
	echo "$msg" >&2
	exit 1
fi

# One TCG thread for both vCPUs.  With a thread per vCPU, 6.12 guests
# oops on an int3 in __schedule() when perf's scheduler jump labels are
# patched while the other vCPU runs them, with kcc.ko not even loaded
# (kccmode=storm, kccstormkcc=none; Documentation/testing.rst,
# "Multi-threaded TCG").  Override with KCC_QEMU_ACCEL (e.g. tcg).
accel=${KCC_QEMU_ACCEL:-tcg,thread=single}
# The CPU model: QEMU's max without CMPXCHG16B.  With it, loaded hosts
# saw 6.12 guests stop on a double fault right after SLUB's cmpxchg16b
# with an RFLAGS no CPU can hold (3 of 4 suites on 2026-12-04, 0 of 3
# without it: Documentation/testing.rst, "Boot reports"); without it
# SLUB takes its locked path.  KCC_QEMU_CPU overrides it (e.g. max).
cpu=${KCC_QEMU_CPU:-max,-cx16}
# noirqdebug: the suite's output and blobs go through the emulated 8250
# of ttyS0.  On 6.12-rt (every handler threaded), with a second TCG
# guest beside it on two cores, the kernel once counted 99,900 of
# 100,000 of its interrupts unhandled ("irq 4: nobody cared",
# serial8250_interrupt behind irq_default_primary_handler) and disabled
# IRQ 4; the blob it printed next came back cut mid-line, failing a
# check that had passed in the guest.  The console is the harness's,
# not kcc's (kcc.ko requests no interrupt), so its spurious-interrupt
# detector is off (Documentation/testing.rst, "Boot reports").
echo "run.sh: booting $kernel ($accel, -cpu $cpu) with $ko, limit ${limit}s" >&2
timeout "$limit" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m 1024 -smp 2 \
	-nographic -no-reboot \
	-chardev file,id=kccblob,path="$tmp/blobs.log" \
	-device isa-debugcon,iobase=0xe9,chardev=kccblob \
	-kernel "$kernel" -initrd "$tmp/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet oops=panic noirqdebug $append" </dev/null >"$log" 2>&1
rc=$?
tr -d '\r' <"$log" >"$tmp/clean.log"
# Blobs come on the debug console (progs/kcc_guest.h), or on the serial
# console where a program could not use it.
touch "$tmp/blobs.log"

why=
if [ $rc -eq 124 ]; then
	why="guest still running after ${limit}s"
elif [ $rc -ne 0 ]; then
	why="qemu exited with status $rc"
fi
# Kernel problems from the start of the tests on; the test programs'
# own lines (TAP, diagnostics, blobs) are not kernel messages.
# (The console may prefix the first guest line with escape sequences.)
bad=$(sed -n '/kcc-guest: kernel [0-9]/,$p' "$tmp/clean.log" |
	grep -v -E '^(ok |not ok |# |kcc-guest:|KCC-BLOB-|[A-Za-z0-9+/=]{76}$)' |
	grep -n -E 'BUG:|WARNING:|Oops|KASAN|lockdep|UBSAN|leak|Call Trace' |
	head -n 10)
if [ -n "$bad" ]; then
	why="${why:+$why; }kernel problems in the log:
$bad"
fi
boot=$(boot_reports "$tmp/clean.log")
if [ -n "$boot" ]; then
	why="${why:+$why; }kernel report during boot, before kcc.ko was loaded (the kernel's or QEMU's, not kcc's; Documentation/testing.rst, \"Boot reports\"):
$boot"
fi
if grep -q '^not ok' "$tmp/clean.log"; then
	why="${why:+$why; }$(grep -c '^not ok' "$tmp/clean.log") failed test lines"
fi
if ! grep -q '^KCC-GUEST-RESULT: pass' "$tmp/clean.log"; then
	marker=$(grep -a 'KCC-GUEST-RESULT:' "$tmp/clean.log" | head -n 1)
	why="${why:+$why; }${marker:-no KCC-GUEST-RESULT line}"
fi

# The guest's test output, then its blobs.
sed -n '/kcc-guest: kernel [0-9]/,/^kcc-guest: kernel log:/p' "$tmp/clean.log" |
	grep -a -v -E '^(KCC-BLOB-|[A-Za-z0-9+/=]{1,76}$)'
if [ -n "$blobs" ]; then
	mkdir -p "$blobs" || exit 1
	awk -v dir="$blobs" '
		FNR == 1 { name = "" }
		/^KCC-BLOB-BEGIN / { name = $2; file = dir "/" name ".b64"; printf "" > file; next }
		/^KCC-BLOB-END / { close(file); name = ""; next }
		name != "" { print >> file }
	' "$tmp/clean.log" "$tmp/blobs.log"
	for f in "$blobs"/*.b64; do
		[ -f "$f" ] || continue
		base64 -d "$f" >"${f%.b64}.stream" && rm -f "$f"
	done
	echo "# run.sh: blobs: $(grep -c '^KCC-BLOB-BEGIN ' "$tmp/blobs.log") on the debug console, $(grep -c '^KCC-BLOB-BEGIN ' "$tmp/clean.log") on the serial console"
	# Each blob's BEGIN line gives its size: one cut or garbled on the
	# console is named here, not left to look like a test's own failure.
	sed -n 's/^KCC-BLOB-BEGIN \([^ ]*\) \([0-9][0-9]*\)$/\1 \2/p' "$tmp/clean.log" "$tmp/blobs.log" |
	while read -r name size; do
		got=$( { wc -c <"$blobs/$name.stream"; } 2>/dev/null || echo 0)
		[ "$got" -eq "$size" ] ||
			echo "# run.sh: blob $name: $got of $size bytes came back (cut or garbled on the console)"
	done
fi
# A guest program killed by a signal (a fault, the OOM killer) shows in
# the kernel log only, at KERN_INFO: the tests then see missing output.
sed -n '/^kcc-guest: kernel log:/,$p' "$tmp/clean.log" |
	grep -a -E 'traps: |segfault at |Killed process|invoked oom-killer' |
	head -n 10 | sed 's/^/# kernel log: /'
if [ -n "$why" ]; then
	echo "run.sh: FAIL: $why" >&2
	keep_log=1
	exit 1
fi
echo "run.sh: guest passed" >&2
exit 0
