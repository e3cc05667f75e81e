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
#      that is not a helper (kcc_hold, kcc_bench, kcc_blob); kcc_flood again with
#      fixed_seed=1, and with task_budget_us=1 (-b); kcc_handoff (the
#      batched hand-off) with ring_kb=16; kcc record of
#      /demo/demo_workload when /demo/kcc is packed (blob "record")
#   2b. the software LBR PMU (lbrpmu.sh, when packed): kcc_lbrpmu.ko,
#      lbr_check of lbr_workload's branch stacks, perf stat and record;
#      kcc_fuzz with kcc_lbrpmu loaded (two-event sessions)
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
# kccmode=cost runs make bench-guest's comparison with perf
# (/demo/bench_cost.sh; kcccost=... its sizes) and kcc_bench instead;
# kccmode=handoff runs only kcc_handoff, kcc_fp and, when packed, the lbr
# end-to-end steps (2c) instead;
# kccmode=lbr runs only the software LBR PMU's tests (2b) instead;
# kccmode=e2e only the lbr end to end (2c, /demo/lbr_e2e.sh);
# kccmode=demo runs /demo/kcc_demo on /demo/demo_workload instead (the
# stream comes back as the blob "demo"), then, when packed, kcc record
# --source lbr of /demo/demo_workload_lbr on the software LBR PMU (the
# profile comes back as the blob "demo-lbr"; scripts/demo.sh), and
# nothing else: no parameter, autostart or unload checks;
# kccinjectk=K sets the k of the sample-file injections (default 3);
# kccmode=storm runs only kcc_storm (kccstorm=, kccstormkcc=, below).
# kccmode=only kccrun=PROG,PROG:ARG... runs only those programs of /t
# (with inject=1 and the parameters of kccko=P=V,P=V), then the autostart,
# unload and log checks: a targeted run.
export PATH=/bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /tmp
mount -t tmpfs tmpfs /tmp

mode=test
only=
onlyko=
injk=3
storms=-n,20
stormkcc=
for a in $(cat /proc/cmdline); do
	case $a in
	kccmode=*) mode=${a#kccmode=} ;;
	kccinjectk=*) injk=${a#kccinjectk=} ;;
	kccstorm=*) storms=${a#kccstorm=} ;;
	kccstormkcc=*) stormkcc=${a#kccstormkcc=} ;;
	kccrun=*) only=$(echo "${a#kccrun=}" | tr , ' ') ;;
	kccko=*) onlyko=$(echo "${a#kccko=}" | tr , ' ') ;;
	kcccost=*) cost_args=${a#kcccost=} ;;
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

# Beside each failure, the guest's memory (its /tmp is in RAM: Shmem),
# so that a test that ran out of it says so in CI's last lines.
not_ok() {
	n=$((n + 1))
	awk '/^(MemAvailable|Shmem):/ { s = s " " $1 " " $2 " kB" }
		END { print "# guest memory:" s }' /proc/meminfo 2>/dev/null
	echo "not ok $n $*"
	failed=1
}

check() {	# check STATUS DESCRIPTION
	if [ "$1" -eq 0 ]; then
		ok "$2"
	else
		echo "# exit status $1"
		not_ok "$2"
	fi
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

# utime_of PID: the user time of PID in clock ticks (0 when it is gone).
utime_of() {
	# shellcheck disable=SC2046
	set -- $(cat "/proc/$1/stat" 2>/dev/null)
	echo "${14:-0}"
}

# ticks_until PID:TICKS...: until each PID has run TICKS ticks in user
# mode (utime) or is gone, 120 s at most in all (a hang).
ticks_until() {
	tu_end=$(($(date +%s) + 120))
	for tu in "$@"; do
		while kill -0 "${tu%%:*}" 2>/dev/null &&
		      [ "$(utime_of "${tu%%:*}")" -lt "${tu#*:}" ] &&
		      [ "$(date +%s)" -lt $tu_end ]; do
			sleep 0.1
		done
	done
}

# record_ticks ERR N PID... -- ARGS...: kcc record -a ARGS from the
# start of its session (sysfs sessions: one system-wide, running) until
# every PID has run N more ticks in user mode, then SIGTERM (a
# background job of this shell ignores SIGINT until kcc record installs
# its handler, which it does before the session runs); its stderr in
# ERR, its exit status.  --duration 120 ends it if nothing else does.
record_ticks() {
	rt_err=$1
	rt_n=$2
	shift 2
	rt_pids=
	while [ "$1" != -- ]; do
		rt_pids="$rt_pids $1"
		shift
	done
	shift
	/demo/kcc record -a --duration 120 "$@" >"$rt_err" 2>&1 &
	rt_rec=$!
	rt_i=0
	until grep -q '^[0-9]* 2 all ' /sys/class/misc/kcc/sessions ||
	      ! kill -0 $rt_rec 2>/dev/null || [ $rt_i -ge 600 ]; do
		rt_i=$((rt_i + 1))
		sleep 0.1
	done
	rt_to=
	for rt_p in $rt_pids; do
		rt_to="$rt_to $rt_p:$(($(utime_of "$rt_p") + rt_n))"
	done
	# shellcheck disable=SC2086
	ticks_until $rt_to
	kill -TERM $rt_rec 2>/dev/null
	wait $rt_rec
}

# blob NAME FILE: FILE back to the host as the blob NAME (nothing when
# FILE is empty or missing), through /t/kcc_blob (run.sh packs it or
# does not boot): QEMU's debug console when the guest has one, else this
# console (progs/kcc_guest.h says why).
blob() {
	[ -s "$2" ] || return 0
	/t/kcc_blob "$1" "$2"
}

run() {	# run NAME [ARGS...]: one program, then the log check
	name=$1
	shift
	if [ ! -x "/t/$name" ]; then
		ok "$name # SKIP not built"
		return
	fi
	t0=$(date +%s)
	"/t/$name" "$@"
	rc=$?
	echo "# $name: $(( $(date +%s) - t0 )) s"
	if [ $rc -eq 4 ]; then
		ok "$name $* # SKIP"
	else
		check $rc "$name $*"
	fi
	dmesg_clean "$name"
}

# The batched hand-off with rings of 16 KiB, so that a short burst fills
# one (kcc_handoff sets flush_ms itself); kcc.ko unloaded before and after.
# wait_ready PID FILE: until the program PID writes "ready" to FILE, or
# exits without it (a hang is the guest's time limit's to catch).
wait_ready() {
	while ! grep -q ready "$2" && kill -0 "$1" 2>/dev/null; do
		sleep 0.1
	done
}

handoff_test() {
	if insmod /kcc.ko ring_kb=16; then
		run kcc_handoff
		rmmod kcc
	else
		not_ok "insmod kcc.ko ring_kb=16"
	fi
}

if [ -f /kmemleak.sh ]; then
	. /kmemleak.sh
	kmemleak_begin
fi
# The boot log is not ours to judge: only what follows.
dmesg -c >/tmp/dmesg.boot
: >/tmp/dmesg.all

# On a KCSAN kernel: races inside the core kernel that kcc.ko only
# reaches through perf's exported API, each explained in
# Documentation/testing.rst (KCSAN), are not reported; the filter is
# KCSAN's own, by the function of either racing access.
# kcckcsanfilter=0 on the kernel command line keeps them reported.
if grep -q 'kcsan: ' /tmp/dmesg.boot &&
   ! grep -q 'kcckcsanfilter=0' /proc/cmdline; then
	mkdir -p /sys/kernel/debug
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	for f in __perf_event_read_value perf_read ktime_get_mono_fast_ns; do
		echo "!$f" >/sys/kernel/debug/kcsan ||
			echo "kcc-guest: cannot filter KCSAN reports in $f"
	done
fi

finish() {
	echo "1..$n"
	# Where local_clock() can stall (an unstable TSC under a loaded
	# host), time-bounded work is measured on this clock instead.
	echo "kcc-guest: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
	echo "kcc-guest: kernel log:"
	dmesg -c >>/tmp/dmesg.all
	cat /tmp/dmesg.all
	if [ $failed -eq 0 ]; then
		echo "KCC-GUEST-RESULT: pass"
	else
		echo "KCC-GUEST-RESULT: fail"
	fi
	poweroff -f
}

# kccmode=storm: only start/stop storms (kcc_storm), for the
# multi-threaded TCG study of Documentation/testing.rst.  kccstorm= lists
# kcc_storm's argument sets, "/" between runs and "," between arguments;
# kccstormkcc= says how kcc.ko is loaded meanwhile: "none" (not at all),
# "notp" (tracepoints=0: no sched tracepoint probes) or, by default,
# plainly.
if [ "$mode" = storm ]; then
	case $stormkcc in
	none) ;;
	notp) insmod /kcc.ko tracepoints=0; check $? "insmod kcc.ko tracepoints=0" ;;
	*) insmod /kcc.ko; check $? "insmod kcc.ko" ;;
	esac
	# On a KCSAN kernel, the detector must be live for a clean log to
	# mean anything: its boot selftest provokes races and counts the
	# ones it caught.
	if grep -q 'kcsan: ' /tmp/dmesg.boot; then
		kt=$(sed -n 's/.*kcsan: selftest: \([0-9]*\)\/\([0-9]*\) tests passed.*/\1 \2/p' /tmp/dmesg.boot)
		set -- $kt
		[ $# -eq 2 ] && [ "$1" -gt 0 ] && [ "$1" = "$2" ]
		check $? "KCSAN's boot selftest passed (${kt:-no result line})"
	fi
	for s in $(echo "$storms" | tr / ' '); do
		# shellcheck disable=SC2046
		run kcc_storm $(echo "$s" | tr , ' ')
	done
	finish
fi

# The default k stands for a configuration's k = 0: only a k that
# CONFIGURE accepts loads (KCC_K_INF is 4294967295).  Not in the demo,
# which shows a profile: these are the suite's checks (make check).
if [ "$mode" != demo ]; then
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
fi

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
elif [ "$mode" = only ]; then
	rmmod kcc
	# shellcheck disable=SC2086
	insmod /kcc.ko inject=1 $onlyko
	check $? "insmod kcc.ko inject=1 $onlyko"
	echo "# maps_hook: $(cat /sys/class/misc/kcc/maps_hook)"
	for p in ${only:-}; do
		# shellcheck disable=SC2086
		run $(echo "$p" | tr : ' ')
	done
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = cost ]; then
	# make bench-guest: kcc against perf (bench_cost.sh, packed in
	# /demo by selftests/guest/bench.sh), then kcc_bench.
	rmmod kcc
	insmod /kcc.ko
	check $? "insmod kcc.ko"
	if [ -f /demo/bench_cost.sh ]; then
		. /demo/bench_cost.sh
		cost_main
		ok "bench_cost.sh ran"
	else
		not_ok "bench_cost.sh not packed in /demo"
	fi
	rmmod kcc
	insmod /kcc.ko inject=1
	run kcc_bench -n 20000
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = handoff ]; then
	# The batched hand-off's test, then the fp and (when packed) lbr
	# sources' tests that go through it: a short boot for the debug
	# kernel.
	rmmod kcc
	handoff_test
	insmod /kcc.ko inject=1
	check $? "insmod kcc.ko inject=1"
	run kcc_fp
	if [ -x /demo/kcc ] && [ -f /demo/lbr_e2e.sh ]; then
		# The debug kernel has no kprobes: kcc_lbrpmu is then given
		# perf_event_overflow's address, which it checks.
		ovf=$(sed -n 's/^\([0-9a-f]*\) [Tt] perf_event_overflow$/\1/p' /proc/kallsyms)
		insmod() {
			case $1 in
			/lbr/kcc_lbrpmu.ko) command insmod "$@" overflow_addr=0x$ovf ;;
			*) command insmod "$@" ;;
			esac
		}
		. /demo/lbr_e2e.sh
		unset -f insmod
	fi
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = lbr ]; then
	# Only the software LBR PMU (lbrpmu.sh), with kcc.ko loaded.
	. /lbrpmu.sh
	lbrpmu_tests
	rmmod kcc
	check $? "rmmod kcc"
elif [ "$mode" = e2e ]; then
	# Only the lbr end to end of /demo/lbr_e2e.sh, with kcc.ko loaded.
	rmmod kcc
	insmod /kcc.ko
	check $? "insmod kcc.ko"
	. /demo/lbr_e2e.sh
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
			blob demo-lbr /tmp/demo-lbr.data
			# The profile's calls against the run's own trace
			# (the tracing runtime's count of every call).
			/demo/kcc eval --tsv -k 1,2 --profile /tmp/demo-lbr.data \
				/tmp/demotr >/tmp/demo-lbr.eval 2>&1
			check $? "kcc eval --profile of the lbr profile against its trace"
			blob demo-lbr-eval /tmp/demo-lbr.eval
		fi
		rm -rf /tmp/demotr
		rmmod kcc_lbrpmu
		check $? "rmmod kcc_lbrpmu"
		dmesg_clean "kcc record --source lbr"
	fi
	rmmod kcc
	check $? "rmmod kcc"
	# The autostart, unload and leak checks below are the suite's.
	dmesg_clean "rmmod kcc"
	finish
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
		kcc_abi | kcc_inject | kcc_fp | kcc_hold | kcc_bench | kcc_blob | \
		kcc_handoff | kcc_cost | kcc_watch | *.so) continue ;;
		esac
		run "$p"
	done

	# Watched counts must equal the exact counts of the samples
	# injected, which holds while the worker applies all of them: with
	# no time bound per task and drain (task_budget_us=0).  Under the
	# default bound a starved guest (5 to 10 times slower than usual
	# beside other jobs) dropped samples as KCC_DROP_BUDGET and the
	# counts came out short (9,589 of 10,003 calls); the bound is
	# kcc_flood -b's test, below.
	rmmod kcc
	if insmod /kcc.ko inject=1 task_budget_us=0; then
		run kcc_watch
		rmmod kcc
	else
		not_ok "insmod kcc.ko inject=1 task_budget_us=0"
	fi
	# Hostile labels under the fixed seed: the flood the per-forest
	# random seed defeats (kcc_flood above), and the worker time bound.
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
	# The mapping probe's fallback (mmap_lock_released), which no
	# kernel here needs: every one has the sys_exit tracepoint.
	if insmod /kcc.ko inject=1 maps_fallback=1; then
		echo "# maps_hook: $(cat /sys/class/misc/kcc/maps_hook)"
		run kcc_mapping
		rmmod kcc
	else
		not_ok "insmod kcc.ko inject=1 maps_fallback=1"
	fi
	# Without the sched probes (tracepoints=0, a test parameter) no
	# exit would end a Valence registration: registering is refused.
	if insmod /kcc.ko tracepoints=0; then
		run kcc_valence
		rmmod kcc
	else
		not_ok "insmod kcc.ko tracepoints=0"
	fi
	# Two sessions sharing a budget of 1 MiB (kcc_sessions -b).
	if insmod /kcc.ko inject=1 max_bytes=1048576; then
		run kcc_sessions -b
		rmmod kcc
	else
		not_ok "insmod kcc.ko inject=1 max_bytes=1048576"
	fi
	handoff_test
	insmod /kcc.ko inject=1
	check $? "insmod kcc.ko inject=1 again"

	# kcc record on a real workload, when packed in /demo (static kcc
	# and demo_workload: selftests/kcc/guest.sh).  The profile comes
	# back as the blob "record" for kcc report on the host.  No -e: the
	# default event, which falls back to cpu-clock in this PMU-less guest.
	# At least 50 rounds of both scans (about 0.2 s of a quiet guest):
	# a guest CPU starved by the host can spend 2 s in main's page
	# faults, and the host's test asks for both scan_* contexts.
	if [ -x /demo/kcc ] && [ -x /demo/demo_workload ]; then
		/demo/kcc record -k 2 -o /tmp/rec.data -- \
			/demo/demo_workload 2 50 >/tmp/rec.err 2>&1
		check $? "kcc record -k 2 -o /tmp/rec.data -- demo_workload 2 50 (default event)"
		sed 's/^/# /' /tmp/rec.err
		[ "$(head -c 7 /tmp/rec.data 2>/dev/null)" = KCCPROF ]
		check $? "kcc record wrote a kcc profile (magic KCCPROF)"
		blob record /tmp/rec.data
		dmesg_clean "kcc record"
	fi
	# kcc serve on kcc.ko (selftests/kcc/serve.sh tests its HTTP layer
	# on the host): a -p session of demo_workload on the guest's
	# loopback, read with busybox wget; the 2-second window comes back
	# as the blob "serve", a pprof for the host, and /metrics as the
	# blob "metrics" for promtool there (selftests/kcc/guest.sh).
	# A kernel without sockets (the debug kernels' tinyconfig has no
	# CONFIG_NET) cannot serve: the checks are skipped, and say so.
	if [ -x /demo/kcc ] && [ -x /demo/demo_workload ] &&
	   ! busybox ifconfig lo 127.0.0.1 up 2>/tmp/lo.err &&
	   grep -q 'Function not implemented' /tmp/lo.err; then
		for w in "kcc serve -p: GET /metrics" \
			 "kcc serve: seconds=-1 refused" \
			 "kcc serve: GET /debug/pprof/profile?seconds=2" \
			 "kcc serve: the session kept counting" \
			 "kcc serve: exit 0 on SIGTERM"; do
			ok "$w # SKIP no sockets (a kernel without CONFIG_NET)"
		done
	elif [ -x /demo/kcc ] && [ -x /demo/demo_workload ]; then
		/demo/demo_workload 8 >/dev/null 2>&1 &
		wpid=$!
		/demo/kcc serve -p $wpid --listen 127.0.0.1:6060 >/tmp/serve.err 2>&1 &
		spid=$!
		i=0
		while [ $i -lt 100 ] && ! grep -q serving /tmp/serve.err; do
			sleep 0.1
			i=$((i + 1))
		done
		u=http://127.0.0.1:6060
		busybox wget -q -O /tmp/m1 $u/metrics
		check $? "kcc serve -p: GET /metrics"
		# For promtool on the host (selftests/kcc/guest.sh).
		blob metrics /tmp/m1
		! busybox wget -q -O /tmp/bad "$u/debug/pprof/profile?seconds=-1" 2>/dev/null
		check $? "kcc serve: seconds=-1 refused"
		busybox wget -q -O /tmp/w.pb.gz "$u/debug/pprof/profile?seconds=2"
		check $? "kcc serve: GET /debug/pprof/profile?seconds=2"
		busybox wget -q -O /tmp/m2 $u/metrics
		s1=$(sed -n 's/^kcc_samples_total{.*} //p' /tmp/m1)
		s2=$(sed -n 's/^kcc_samples_total{.*} //p' /tmp/m2)
		[ "${s2:-0}" -gt "${s1:-0}" ]
		check $? "kcc serve: the session kept counting (samples $s1, then $s2)"
		blob serve /tmp/w.pb.gz
		kill $spid
		wait $spid
		check $? "kcc serve: exit 0 on SIGTERM"
		sed 's/^/# /' /tmp/serve.err
		kill $wpid 2>/dev/null
		wait $wpid
		dmesg_clean "kcc serve"
	fi
	# A library loaded with dlopen() after the start and unloaded
	# before the end (selftests/guest/demo/dl_workload.c): the blob
	# "dlrecord" must name its routines (selftests/kcc/guest.sh).
	if [ -x /demo/kcc ] && [ -x /demo/dl_workload ]; then
		/demo/kcc record -k 2 -o /tmp/dl.data -- \
			/demo/dl_workload /demo/libkccdl.so >/tmp/dl.err 2>&1
		check $? "kcc record -k 2 -- dl_workload (a dlopen()ed library)"
		sed 's/^/# /' /tmp/dl.err
		blob dlrecord /tmp/dl.data
		echo "# maps_hook: $(cat /sys/class/misc/kcc/maps_hook)"
		dmesg_clean "kcc record of dl_workload"
	fi
	# kcc record -a -G (perf -G): demo_workload runs in two cgroups v2
	# side by side; the profile of kcc-a must hold its process and not
	# kcc-b's, name the cgroup, and count kcc-b's samples as left out.
	# Then kcc record -a alone: kcc report --per-cgroup must put each
	# process under its own cgroup.  A kernel without CONFIG_CGROUPS
	# (the debug kernels) skips them.
	if [ -x /demo/kcc ] && [ -x /demo/demo_workload ]; then
		cg=/sys/fs/cgroup
		mkdir -p $cg
		[ -f $cg/cgroup.procs ] ||
			busybox mount -t cgroup2 none $cg 2>/dev/null
		if [ ! -f $cg/cgroup.procs ]; then
			for w in "kcc record -a -G kcc-a" \
				 "kcc record -G kcc-a: its process, not kcc-b's" \
				 "kcc record -G kcc-a: the cgroup named, the other's samples counted" \
				 "kcc record -G nosuch: exit 1, the cgroup named" \
				 "kcc record -a: report --per-cgroup, each process under its cgroup"; do
				ok "$w # SKIP no cgroup2 (a kernel without CONFIG_CGROUPS)"
			done
		else
			mkdir -p $cg/kcc-a $cg/kcc-b
			# The subshell moves itself, then becomes the program,
			# which runs until it is killed below.
			(echo 0 >$cg/kcc-a/cgroup.procs &&
			 exec /demo/demo_workload 3600) >/dev/null 2>&1 &
			apid=$!
			(echo 0 >$cg/kcc-b/cgroup.procs &&
			 exec /demo/demo_workload 3600) >/dev/null 2>&1 &
			bpid=$!
			# Both past their first touch of 64 MiB, which runs in the
			# kernel (page faults) and which the sessions' events, user
			# only, never sample: on a starved guest it can outlast
			# a window of seconds, and kcc-b's process was then never
			# sampled (none left out).  Both have run 25 ticks of user
			# time (/proc/PID/stat utime); the bound is for a hang.
			ticks_until $apid:25 $bpid:25
			# Each session runs until both processes have run 20
			# more ticks in user mode, not for a time: a host busy
			# with other work once gave kcc-a's process 0.08 s of
			# a 2 s window, 1 sample, and kcc-b's none.
			record_ticks /tmp/cg.err 20 $apid $bpid -- \
				-G kcc-a -k 2 -o /tmp/cg.data
			check $? "kcc record -a -G kcc-a"
			balive=$(kill -0 $bpid 2>/dev/null && echo yes || echo no)
			sed 's/^/# /' /tmp/cg.err
			record_ticks /tmp/cga.err 20 $apid $bpid -- \
				-k 2 -o /tmp/cga.data
			rc=$?
			sed 's/^/# /' /tmp/cga.err
			kill -0 $apid 2>/dev/null && kill -0 $bpid 2>/dev/null
			alive=$?
			kill $apid $bpid 2>/dev/null
			wait $apid $bpid
			/demo/kcc report --per-cgroup /tmp/cga.data >/tmp/cga.rep 2>&1
			[ $rc -eq 0 ] &&
				grep -q '^# cgroup: /kcc-a, [0-9]* tasks*, ' /tmp/cga.rep &&
				grep -q '^# cgroup: /kcc-b, [0-9]* tasks*, ' /tmp/cga.rep
			check $? "kcc record -a: report --per-cgroup, each process under its cgroup (both still running at the end: $([ $alive -eq 0 ] && echo yes || echo no))"
			grep '^# cgroup' /tmp/cga.rep | sed 's/^/# /'
			/demo/kcc dump /tmp/cg.data >/tmp/cg.dump 2>&1
			grep -q "^task [0-9]* $apid $apid demo_workload " /tmp/cg.dump &&
				! grep -q "^task [0-9]* [0-9]* $bpid " /tmp/cg.dump &&
				! grep -q "^task [0-9]* [0-9]* [0-9]* kcc " /tmp/cg.dump
			check $? "kcc record -G kcc-a: its process, not kcc-b's (pids $apid, $bpid)"
			grep '^task' /tmp/cg.dump | sed 's/^/# /'
			/demo/kcc report /tmp/cg.data >/tmp/cg.rep 2>&1
			cgo=$(sed -n 's/^# samples of tasks outside the cgroup: \([0-9]*\) .*/\1/p' /tmp/cg.rep)
			grep -qx '# cgroup: /kcc-a' /tmp/cg.rep && [ "${cgo:-0}" -gt 0 ]
			rc=$?
			# Why not, when not: the session's samples, events, drops.
			[ $rc -eq 0 ] || grep -E '^# (samples|event|dropped|drops|lost|cgroup)' \
				/tmp/cg.rep | sed 's/^/# /'
			check $rc "kcc record -G kcc-a: the cgroup named, the other's samples counted (${cgo:-none} left out; kcc-b's process alive at the end: $balive)"
			/demo/kcc record -a -G nosuch --duration 1 -o /tmp/cg2.data \
				>/tmp/cg2.err 2>&1
			[ $? -eq 1 ] && grep -q 'nosuch' /tmp/cg2.err
			check $? "kcc record -G nosuch: exit 1, the cgroup named"
			sed 's/^/# /' /tmp/cg2.err
			rmdir $cg/kcc-a $cg/kcc-b
			dmesg_clean "kcc record -G"
		fi
	fi

	if [ -f /lbrpmu.sh ]; then
		. /lbrpmu.sh
		lbrpmu_tests
		# The fuzzer again with an LBR PMU present: LBR-source and
		# two-event sessions start for real.  (Without kprobes, the
		# debug kernels, the PMU takes perf_event_overflow's address.)
		ovf=$(sed -n 's/^\([0-9a-f]*\) [Tt] perf_event_overflow$/\1/p' /proc/kallsyms)
		if insmod /lbr/kcc_lbrpmu.ko poll_us=250 2>/dev/null ||
		   insmod /lbr/kcc_lbrpmu.ko poll_us=250 overflow_addr=0x$ovf; then
			run kcc_fuzz -s 17 -n 300
			rmmod kcc_lbrpmu
			check $? "rmmod kcc_lbrpmu after kcc_fuzz"
		fi
	fi

	# The lbr source end to end on the software LBR PMU, when packed
	# (selftests/guest/lbr_e2e/lbr_e2e.sh, selftests/kcc/guest.sh).
	if [ -x /demo/kcc ] && [ -f /demo/lbr_e2e.sh ]; then
		. /demo/lbr_e2e.sh
	fi

	# The valence source end to end, when packed
	# (selftests/guest/valence/valence_e2e.sh, selftests/kcc/guest.sh).
	if [ -x /demo/kcc ] && [ -f /demo/valence_e2e.sh ]; then
		. /demo/valence_e2e.sh
	fi

	# rmmod while a session runs: refused, nothing breaks.
	/t/kcc_hold >/tmp/hold.out 2>&1 &
	hold=$!
	wait_ready $hold /tmp/hold.out
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
	wait_ready $hold /tmp/hold-n.out
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
	dmesg | grep -q 'autostart: system-wide session [0-9]* running'
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

# 100 load/unload cycles, every other one with a running session, while
# a shell beside them execs in a loop: under the autostart session
# (system-wide) every exec queues a mapping work, so works are in flight
# as rmmod runs, which kcc_maps_exit() must wait out (their count, then
# an RCU Tasks grace period) before the module text goes.  The works
# queued before each rmmod are summed from maps_hook with the shell's
# builtins only (no exec of ours counts) and must not be 0.  The kmemleak
# scan below sees what the cycles left.
(while :; do /bin/sh -c :; done) &
execs=$!
j=0
fails=0
works=0
while [ $j -lt 100 ]; do
	if [ $((j % 2)) -eq 0 ]; then
		insmod /kcc.ko autostart=1 || fails=$((fails + 1))
		# A spin of builtins, for the loop's execs to come.
		mh_i=0
		while [ $mh_i -lt 300 ]; do mh_i=$((mh_i + 1)); done
		mh_q=0
		# shellcheck disable=SC2034
		read -r mh_tp mh_lost mh_on mh_unrel mh_lk mh_q mh_qd \
			</sys/class/misc/kcc/maps_hook
		works=$((works + mh_q))
	else
		insmod /kcc.ko || fails=$((fails + 1))
	fi
	rmmod kcc || fails=$((fails + 1))
	j=$((j + 1))
done
kill $execs
wait $execs 2>/dev/null
[ $fails -eq 0 ] && [ $works -gt 0 ]
check $? "100 load/unload cycles, 50 with a session, beside an exec loop ($works mapping works queued before rmmod, $fails failures)"
dmesg_clean "load/unload cycles"

if ! command -v kmemleak_check >/dev/null 2>&1; then
	ok "kmemleak: no leak # SKIP kmemleak.sh not packed"
elif ! kmemleak_available; then
	ok "kmemleak: no leak # SKIP kernel without CONFIG_DEBUG_KMEMLEAK"
else
	kmemleak_check
	check $? "kmemleak: no leak"
fi

finish
