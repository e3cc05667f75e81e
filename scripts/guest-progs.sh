#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-progs.sh - run programs of selftests/guest/progs (the /dev/kcc
# fuzzer, the adversarial workloads) inside a QEMU guest (TCG) with kcc.ko
# loaded, then unload it, scan for leaks, and judge the serial log.
#
# Usage: guest-progs.sh [-f FLAVOUR | -K KDIR -k VMLINUZ] [-m KCC_KO]
#                       [-o INSMOD_ARGS] [-c CPUS] [-M MEM_MB] [-t SECONDS]
#                       [-l LOG] PROG[:ARGS]...
#
#   -f FLAVOUR  kernel flavour of scripts/kernels.sh (default: debug)
#   -K, -k      or an explicit header tree and guest kernel image
#   -m KCC_KO   prebuilt module (default: built against KDIR)
#   -o ARGS     module parameters (default "inject=1")
#   -c CPUS     guest CPUs (default 2), -M guest memory (default 1024 MB)
#   -t SECONDS  time limit of the whole guest run (default 900)
#   -l LOG      keep the serial log here
#   PROG:ARGS   a program name (selftests/guest/progs/PROG.c) and its
#               arguments, separated by commas: "kcc_fuzz:-s,1,-n,20000"
#
# Prints TAP: one test per program (its own TAP is shown as comments),
# one for the kmemleak scan after rmmod, one for the kernel log (no BUG,
# WARNING, KASAN, UBSAN, lockdep or hung-task report).  This is a stop-gap
# runner: once selftests/guest/run.sh can run programs, the Makefile
# targets switch to it (see Documentation/testing.rst).
# Exit status: 0 pass, 1 fail, 4 skip (no kernel, qemu or device).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/selftests/guest/log_reports.sh"
flavour=debug
kdir=
kernel=
ko=
modargs="inject=1"
cpus=2
mem=1024
limit=900
log=

while getopts f:K:k:m:o:c:M:t:l:h opt; do
	case $opt in
	f) flavour=$OPTARG ;;
	K) kdir=$OPTARG ;;
	k) kernel=$OPTARG ;;
	m) ko=$OPTARG ;;
	o) modargs=$OPTARG ;;
	c) cpus=$OPTARG ;;
	M) mem=$OPTARG ;;
	t) limit=$OPTARG ;;
	l) log=$OPTARG ;;
	h) sed -n '4,28s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-f FLAVOUR | -K KDIR -k VMLINUZ] [-m KO] [-o ARGS] [-c CPUS] [-M MB] [-t S] [-l LOG] PROG[:ARGS]..." >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))

echo "TAP version 13"
skip() {
	echo "1..0 # SKIP $*"
	exit 4
}
[ $# -gt 0 ] || { echo "guest-progs.sh: no program given" >&2; exit 2; }

if [ -z "$kdir" ] || [ -z "$kernel" ]; then
	pair=$(sh "$top/scripts/kernels.sh" get "$flavour" 2>/dev/null) ||
		skip "kernel flavour $flavour absent (scripts/kernels.sh provide $flavour)"
	kernel=${pair% *}
	kdir=${pair#* }
fi
for tool in qemu-system-x86_64 timeout cpio gzip; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
busybox=${BUSYBOX:-$(command -v busybox || echo /bin/busybox)}
[ -x "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 ||
	skip "no static busybox (Debian: busybox-static)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-guest-progs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
[ -n "$log" ] || log=$tmp/serial.log

if [ -z "$ko" ]; then
	sh "$top/selftests/guest/build_module.sh" "$kdir" "$tmp/mod" >&2
	rc=$?
	[ $rc -eq 4 ] && skip "cannot build kcc.ko against $kdir"
	[ $rc -ne 0 ] && { echo "1..0 # kcc.ko does not build against $kdir"; exit 1; }
	ko=$tmp/mod/kcc.ko
fi

root=$tmp/root
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/progs" || exit 1
cp "$busybox" "$root/bin/busybox" && cp "$ko" "$root/kcc.ko" &&
	cp "$top/selftests/guest/kmemleak.sh" "$root/kmemleak.sh" || exit 1
for a in sh mount insmod rmmod dmesg grep cat echo poweroff uname sleep wc \
	 date true tr sed; do
	ln -s busybox "$root/bin/$a" || exit 1
done

# The programs, static and with frame pointers, as the guest suite
# builds them: the guest has no C library.
sh "$top/selftests/guest/build_progs.sh" "$tmp/progs" >&2
rc=$?
[ $rc -eq 4 ] && skip "cannot link static programs (Debian: libc6-dev)"
[ $rc -ne 0 ] && { echo "1..0 # the guest programs do not build"; exit 1; }
list=
for spec in "$@"; do
	prog=${spec%%:*}
	if [ ! -x "$tmp/progs/$prog" ]; then
		echo "guest-progs.sh: no program $prog in selftests/guest/progs" >&2
		exit 2
	fi
	cp "$tmp/progs/$prog" "$root/progs/" || exit 1
	list="$list $spec"
done

# The exit status of each program goes through a file: in a pipeline
# busybox sh reports the status of sed.
cat >"$root/init" <<INIT
#!/bin/sh
export PATH=/bin:/progs
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
. /kmemleak.sh
echo "kcc-guest: kernel \$(uname -r), \$(grep -c ^processor /proc/cpuinfo) CPUs"
kmemleak_begin
insmod /kcc.ko $modargs
echo "KCC-PROG-RESULT insmod \$?"
i=0
for spec in $list; do
	prog=\${spec%%:*}
	i=\$((i + 1))
	args=
	[ "\$prog" = "\$spec" ] || args=\$(echo "\${spec#*:}" | tr , ' ')
	echo "KCC-PROG-BEGIN \$prog#\$i \$args"
	start=\$(date +%s)
	{ /progs/\$prog \$args 2>&1; echo \$? >/tmp/rc; } | sed 's/^/KCC-PROG-OUT /'
	echo "KCC-PROG-RESULT \$prog#\$i \$(cat /tmp/rc) \$(( \$(date +%s) - start ))"
done
rmmod kcc
echo "KCC-PROG-RESULT rmmod \$?"
kmemleak_check
echo "KCC-PROG-RESULT kmemleak \$?"
echo "KCC-PROG-DONE"
poweroff -f
INIT
chmod 0755 "$root/init" || exit 1
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
	gzip -1 >"$tmp/initrd.gz" || exit 1

# One TCG thread for all vCPUs, as selftests/guest/run.sh: QEMU's
# default for this host is a thread per vCPU, under which 6.12 oopses
# on int3 at patched jump labels (Documentation/testing.rst,
# "Multi-threaded TCG").  KCC_QEMU_ACCEL overrides it.
accel=${KCC_QEMU_ACCEL:-tcg,thread=single}
# The CPU model of selftests/guest/run.sh (max without CMPXCHG16B);
# KCC_QEMU_CPU overrides it.
cpu=${KCC_QEMU_CPU:-max,-cx16}
echo "guest-progs.sh: booting $kernel ($accel, -cpu $cpu, $cpus CPUs, ${mem} MB) with $ko $modargs:$list" >&2
start=$(date +%s)
timeout "$limit" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m "$mem" -smp "$cpus" \
	-nographic -no-reboot -kernel "$kernel" -initrd "$tmp/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet" </dev/null >"$log" 2>&1
qrc=$?
echo "guest-progs.sh: guest ran $(( $(date +%s) - start )) s (qemu status $qrc)" >&2

# TAP: insmod, each program, rmmod, kmemleak, kernel log.
n=0
fail=0
res() {	# res OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fail=1
	fi
}
result() {	# the status the guest printed for $1, or "missing"
	tr -d '\r' <"$log" | sed -n "s/^KCC-PROG-RESULT $1 \([0-9]*\).*/\1/p" | head -n 1
}
echo "1..$(( $# + 4 ))"
tr -d '\r' <"$log" | grep -a -E '^kcc-guest:' | sed 's/^/# /'
r=$(result insmod)
res "${r:-1}" "insmod kcc.ko $modargs"
i=0
for spec in $list; do
	# The i-th program run (one program may run more than once): its
	# own TAP, between its BEGIN and RESULT lines.
	i=$((i + 1))
	prog=${spec%%:*}#$i
	tr -d '\r' <"$log" | awk -v p="$prog" '
		$1 == "KCC-PROG-BEGIN" && $2 == p { on = 1; next }
		$1 == "KCC-PROG-RESULT" && $2 == p { if (on) exit }
		on && /^KCC-PROG-OUT / { sub(/^KCC-PROG-OUT /, "# "); print }'
	line=$(tr -d '\r' <"$log" | grep -a "^KCC-PROG-RESULT $prog " | head -n 1)
	set -- $line
	if [ -z "$line" ]; then
		res 1 "$spec (no result: the guest died or timed out)"
	elif [ "$3" = 4 ]; then
		n=$((n + 1))
		echo "ok $n $spec # SKIP (the program skipped; see its output)"
	else
		res "$3" "$spec (exit $3, ${4:-?} s)"
	fi
done
r=$(result rmmod)
res "${r:-1}" "rmmod kcc"
r=$(result kmemleak)
res "${r:-1}" "kmemleak: no unreferenced object after rmmod"
bad=$(tr -d '\r' <"$log" | grep -a -n -E \
	"$KCC_REPORT_RE|lockdep|unreferenced object" | head -n 10)
boot=$(boot_reports "$log")
if [ -z "$bad" ] && tr -d '\r' <"$log" | grep -q '^KCC-PROG-DONE'; then
	res 0 "kernel log clean, guest finished"
else
	[ -n "$boot" ] &&
		echo "# kernel report during boot, before kcc.ko was loaded (the kernel's or QEMU's, not kcc's; Documentation/testing.rst, \"Boot reports\")"
	echo "$bad" | sed 's/^/# /'
	[ $qrc -eq 124 ] && echo "# guest still running after ${limit}s"
	res 1 "kernel log clean, guest finished"
fi
if [ $fail -ne 0 ]; then
	keep=${TMPDIR:-/tmp}/kcc-guest-progs-serial.log
	[ "$log" = "$tmp/serial.log" ] && cp "$log" "$keep" &&
		echo "# serial log kept in $keep"
fi
exit $fail
