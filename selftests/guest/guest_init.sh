#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest_init.sh - /init of the kcc test guest (busybox sh).  Packed by
# mkinitramfs.sh with kcc.ko, the static test programs in /t and the
# sample files in /data; prints TAP on the serial console and one line
# "KCC-GUEST-RESULT: pass" or "fail", then powers off.
#
# Plan (kselftest style: each step is one result; the programs print
# their own subtests, indented by nothing, before the step's line):
#   1. insmod kcc.ko selftest=1 (inject off): kcc_abi
#   2. reload with inject=1: kcc_abi -i, kcc_inject, kcc_fp, kcc_inject
#      over /data/*.smp (streams as blobs), every other program in /t
#      that is not a helper (kcc_hold, kcc_bench); kcc_flood again with
#      fixed_seed=1, and with task_budget_us=1 (-b); kcc record of
#      /demo/demo_workload when /demo/kcc is packed (blob "record")
#   2b. the software LBR PMU (lbrpmu.sh, when packed): kcc_lbrpmu.ko,
#      lbr_check of lbr_workload's branch stacks, perf stat and record
#   2c. the lbr source end to end when /demo/lbr_e2e.sh is packed
#   3. rmmod while a session runs and while the device is merely open:
#      refused; rmmod once the holder is gone: succeeds
#   4. insmod autostart=1: the stream of the system-wide session can be
#      read by any opener; rmmod ends it
#   4. kmemleak (when the kernel has it); the kernel log
# After every program the kernel log since the previous check must be
# free of BUG, WARNING, Oops, KASAN, lockdep, UBSAN and leak reports.
#
# Kernel command line: kccmode=bench runs kcc_bench instead of 2-3;
# kccmode=lbr runs only the software LBR PMU's tests (2b) instead;
# kccmode=demo runs /demo/kcc_demo on /demo/demo_workload instead (the
# stream comes back as the blob "demo"), then, when packed, kcc record
# --source lbr of /demo/demo_workload_lbr on the software LBR PMU (the
# profile comes back as the blob "demo-lbr"; scripts/demo.sh);
# kccinjectk=K sets the k of the sample-file injections (default 3);
# kccmode=only kccrun=PROG[,PROG...] runs only those programs of /t
# (inject=1), for working on one test.
export PATH=/bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /tmp
mount -t tmpfs tmpfs /tmp

mode=test
injk=3
only=
for a in $(cat /proc/cmdline); do
	case $a in
	kccmode=*) mode=${a#kccmode=} ;;
	kccinjectk=*) injk=${a#kccinjectk=} ;;
	kccrun=*) only=$(echo "${a#kccrun=}" | tr , ' ') ;;
	esac
done

echo
echo "kcc-guest: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, mode $mode"
echo "TAP version 13"
n=0
failed=0
BAD='BUG:|WARNING:|Oops|KASAN|lockdep|UBSAN|leak|Call Trace|circular locking|soft lockup|blocked for more than'

ok() {
	n=$((n + 1))
	echo "ok $n $*"
}

not_ok() {
	n=$((n + 1))
	echo "not ok $n $*"
	failed=1
}

check() {	# check STATUS DESCRIPTION
	if [ "$1" -eq 0 ]; then ok "$2"; else not_ok "$2"; fi
}

# The kernel log since the last call must be clean.
dmesg_clean() {
	dmesg -c >/tmp/dmesg.part
	cat /tmp/dmesg.part >>/tmp/dmesg.all
	if grep -E "$BAD" /tmp/dmesg.part >/tmp/dmesg.bad; then
		sed 's/^/# /' /tmp/dmesg.bad
		not_ok "kernel log clean after $1"
	else
		ok "kernel log clean after $1"
	fi
}

run() {	# run NAME [ARGS...]: one program, then the log check
	name=$1
	shift
	if [ ! -x "/t/$name" ]; then
		ok "$name # SKIP not built"
		return
	fi
	"/t/$name" "$@"
	rc=$?
	if [ $rc -eq 4 ]; then
		ok "$name $* # SKIP"
	else
		check $rc "$name $*"
	fi
	dmesg_clean "$name"
}

if [ -f /kmemleak.sh ]; then
	. /kmemleak.sh
	kmemleak_begin
fi
# The boot log is not ours to judge: only what follows.
dmesg -c >/tmp/dmesg.boot
: >/tmp/dmesg.all

# The default k stands for a configuration's k = 0: only a k that
# CONFIGURE accepts loads (KCC_K_INF is 4294967295).
for kp in 0 65 4294967294 x; do
	! insmod /kcc.ko k=$kp 2>/dev/null
	check $? "insmod kcc.ko k=$kp refused"
done
if insmod /kcc.ko k=4294967295; then
	[ "$(cat /sys/module/kcc/parameters/k)" = 4294967295 ]
	check $? "insmod kcc.ko k=4294967295 (infinity) loads with that default"
	rmmod kcc
else
	not_ok "insmod kcc.ko k=4294967295 (infinity) loads with that default"
fi
dmesg_clean "module parameter k"

insmod /kcc.ko selftest=1
check $? "insmod kcc.ko selftest=1"
grep -q 'kcc: selftest passed' /tmp/dmesg.all || dmesg | grep -q 'kcc: selftest passed'
check $? "in-kernel self-test of the lbr core passed"
[ -c /dev/kcc ]
check $? "/dev/kcc exists"

if [ "$mode" = bench ]; then
	rmmod kcc
	insmod /kcc.ko inject=1
	run kcc_bench
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = lbr ]; then
	# Only the software LBR PMU (lbrpmu.sh), with kcc.ko loaded.
	. /lbrpmu.sh
	lbrpmu_tests
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = only ]; then
	# Only the programs of kccrun=NAME[,NAME...], with inject=1.
	rmmod kcc
	insmod /kcc.ko inject=1
	check $? "insmod kcc.ko inject=1"
	for p in $only; do
		run "$p"
	done
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = demo ]; then
	rmmod kcc
	insmod /kcc.ko
	check $? "insmod kcc.ko"
	/demo/kcc_demo -k 1 /demo/demo_workload 3
	check $? "kcc_demo -k 1 /demo/demo_workload 3"
	dmesg_clean kcc_demo
	# The lbr source on the software LBR PMU (scripts/demo.sh): the
	# same workload built with the tracing runtime, whose ring feeds
	# kcc_lbr's branch stacks; kcc record's profile is the blob
	# "demo-lbr".
	if [ -x /demo/kcc ] && [ -x /demo/demo_workload_lbr ] &&
	   insmod /lbr/kcc_lbrpmu.ko poll_us=250; then
		mkdir -p /tmp/demotr
		KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/demotr /demo/kcc record \
			--source lbr -e kcc_lbr/clock/ -c 200000 -k 2 \
			-o /tmp/demo-lbr.data -- /demo/demo_workload_lbr 3 \
			>/tmp/demo-lbr.err 2>&1
		check $? "kcc record --source lbr -e kcc_lbr/clock/ -- demo_workload_lbr 3"
		sed 's/^/# /' /tmp/demo-lbr.err
		if [ -s /tmp/demo-lbr.data ]; then
			echo "KCC-BLOB-BEGIN demo-lbr $(wc -c </tmp/demo-lbr.data)"
			busybox base64 /tmp/demo-lbr.data
			echo "KCC-BLOB-END demo-lbr"
		fi
		rm -rf /tmp/demotr
		rmmod kcc_lbrpmu
		check $? "rmmod kcc_lbrpmu"
		dmesg_clean "kcc record --source lbr"
	fi
	rmmod kcc
	check $? "rmmod kcc"
else
	run kcc_abi
	rmmod kcc
	check $? "rmmod kcc"
	insmod /kcc.ko inject=1
	check $? "insmod kcc.ko inject=1"
	run kcc_abi -i
	run kcc_inject
	run kcc_fp
	smp=$(ls /data/*.smp 2>/dev/null)
	if [ -n "$smp" ]; then
		# shellcheck disable=SC2086
		run kcc_inject -k "$injk" $smp
	fi
	for p in /t/*; do
		p=${p#/t/}
		case $p in
		kcc_abi | kcc_inject | kcc_fp | kcc_hold | kcc_bench) continue ;;
		esac
		run "$p"
	done

	# Hostile labels under the fixed seed: the flood the per-forest
	# random seed defeats (kcc_flood above), and the worker time bound.
	rmmod kcc
	if insmod /kcc.ko inject=1 fixed_seed=1; then
		run kcc_flood
		rmmod kcc
	else
		not_ok "insmod kcc.ko inject=1 fixed_seed=1"
	fi
	if insmod /kcc.ko inject=1 fixed_seed=1 task_budget_us=1; then
		run kcc_flood -b -r 2
		rmmod kcc
	else
		not_ok "insmod kcc.ko inject=1 fixed_seed=1 task_budget_us=1"
	fi
	insmod /kcc.ko inject=1
	check $? "insmod kcc.ko inject=1 again"

	# kcc record on a real workload, when packed in /demo (static kcc
	# and demo_workload: selftests/kcc/guest.sh).  The profile comes
	# back as the blob "record" for kcc report on the host.  No -e: the
	# default event, which falls back to cpu-clock in this PMU-less guest.
	if [ -x /demo/kcc ] && [ -x /demo/demo_workload ]; then
		/demo/kcc record -k 2 -o /tmp/rec.data -- \
			/demo/demo_workload 2 >/tmp/rec.err 2>&1
		check $? "kcc record -k 2 -o /tmp/rec.data -- demo_workload 2 (default event)"
		sed 's/^/# /' /tmp/rec.err
		[ "$(head -c 7 /tmp/rec.data 2>/dev/null)" = KCCPROF ]
		check $? "kcc record wrote a kcc profile (magic KCCPROF)"
		if [ -s /tmp/rec.data ]; then
			echo "KCC-BLOB-BEGIN record $(wc -c </tmp/rec.data)"
			busybox base64 /tmp/rec.data
			echo "KCC-BLOB-END record"
		fi
		dmesg_clean "kcc record"
	fi

	if [ -f /lbrpmu.sh ]; then
		. /lbrpmu.sh
		lbrpmu_tests
	fi

	# The lbr source end to end on the software LBR PMU, when packed
	# (selftests/guest/lbr_e2e/lbr_e2e.sh, selftests/kcc/guest.sh).
	if [ -x /demo/kcc ] && [ -f /demo/lbr_e2e.sh ]; then
		. /demo/lbr_e2e.sh
	fi

	# rmmod while a session runs: refused, nothing breaks.
	/t/kcc_hold >/tmp/hold.out 2>&1 &
	hold=$!
	i=0
	while ! grep -q ready /tmp/hold.out && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q ready /tmp/hold.out
	check $? "kcc_hold runs a session"
	sleep 1
	! rmmod kcc 2>/tmp/rmmod.err
	check $? "rmmod refused while a session runs ($(cat /tmp/rmmod.err))"
	kill -9 $hold
	wait $hold 2>/dev/null
	rmmod kcc
	check $? "rmmod once the session's file is closed"
	dmesg_clean "rmmod with a session"

	insmod /kcc.ko
	# A file of its own: the first kcc_hold's "ready" must not answer
	# for this one before it has opened the device.
	: >/tmp/hold-n.out
	/t/kcc_hold -n >/tmp/hold-n.out 2>&1 &
	hold=$!
	i=0
	while ! grep -q ready /tmp/hold-n.out && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q ready /tmp/hold-n.out || sed 's/^/# kcc_hold -n: /' /tmp/hold-n.out
	! rmmod kcc 2>/dev/null
	check $? "rmmod refused while /dev/kcc is open"
	kill -9 $hold
	wait $hold 2>/dev/null
	rmmod kcc
	check $? "rmmod once /dev/kcc is closed"
	dmesg_clean "rmmod with the device open"
fi

# autostart=1: the three-line path (insmod, read /dev/kcc, report).
if insmod /kcc.ko autostart=1; then
	ok "insmod kcc.ko autostart=1"
	dmesg | grep -q "autostart: system-wide session running"
	check $? "autostart session running"
	i=0
	while [ $i -lt 20000 ]; do i=$((i + 1)); done
	cat /dev/kcc >/tmp/auto.kcc
	[ "$(head -c 4 /tmp/auto.kcc)" = KCTS ] &&
		[ "$(wc -c </tmp/auto.kcc)" -gt 256 ]
	check $? "a second opener reads the autostarted session's stream"
	rmmod kcc
	check $? "rmmod ends the autostarted session"
	dmesg_clean "autostart"
else
	not_ok "insmod kcc.ko autostart=1"
fi

# rmmod racing with readers of the stream: each attempt is either
# refused (a reader holds the device) or unloads, and readers then fail
# to open; nothing else may happen.
if insmod /kcc.ko autostart=1; then
	(while :; do cat /dev/kcc >/dev/null 2>&1; done) &
	reader=$!
	j=0
	while [ $j -lt 50 ] && grep -q '^kcc ' /proc/modules; do
		rmmod kcc 2>/dev/null
		j=$((j + 1))
	done
	kill $reader
	wait $reader 2>/dev/null
	grep -q '^kcc ' /proc/modules && rmmod kcc
	! grep -q '^kcc ' /proc/modules
	check $? "rmmod racing with readers of a running session ($j attempts)"
	dmesg_clean "rmmod racing with readers"
else
	not_ok "insmod kcc.ko autostart=1 for the rmmod race"
fi

# 100 load/unload cycles, every other one with a running session; the
# kmemleak scan below sees what they left.
j=0
fails=0
while [ $j -lt 100 ]; do
	if [ $((j % 2)) -eq 0 ]; then
		insmod /kcc.ko autostart=1 || fails=$((fails + 1))
	else
		insmod /kcc.ko || fails=$((fails + 1))
	fi
	rmmod kcc || fails=$((fails + 1))
	j=$((j + 1))
done
[ $fails -eq 0 ]
check $? "100 load/unload cycles, 50 with a session ($fails failures)"
dmesg_clean "load/unload cycles"

if ! command -v kmemleak_check >/dev/null 2>&1; then
	ok "kmemleak: no leak # SKIP kmemleak.sh not packed"
elif ! kmemleak_available; then
	ok "kmemleak: no leak # SKIP kernel without CONFIG_DEBUG_KMEMLEAK"
else
	kmemleak_check
	check $? "kmemleak: no leak"
fi

echo "1..$n"
echo "kcc-guest: kernel log:"
dmesg -c >>/tmp/dmesg.all
cat /tmp/dmesg.all
if [ $failed -eq 0 ]; then
	echo "KCC-GUEST-RESULT: pass"
else
	echo "KCC-GUEST-RESULT: fail"
fi
poweroff -f
