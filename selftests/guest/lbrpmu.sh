# SPDX-License-Identifier: GPL-2.0
#
# lbrpmu.sh - the guest test of the software LBR PMU (kcc_lbrpmu.ko,
# selftests/lbrpmu), sourced by guest_init.sh, which provides ok, not_ok,
# check and dmesg_clean.  mkinitramfs.sh -l packs the module, lbr_check,
# lbr_workload with liblbr.so and, when found, perf in /lbr.
#
# lbrpmu_tests: insmod; the PMU's sysfs (type, format/, events/);
# lbr_ring (the reader on hand-filled rings, the errors); the branch stacks of lbr_workload under lbr_check for several filters and
# module parameters (stray, skid, task_save), the clock and misses
# events; perf stat and perf record on the same workload; rmmod refused
# while an event is open, then done.  Each lbr_check run prints its own
# checks (TAP) before its line here.

lbr_rounds=1000
lbr_one=

lbrpmu_param() {	# lbrpmu_param NAME VALUE
	echo "$2" >"/sys/module/kcc_lbrpmu/parameters/$1"
}

lbrpmu_run() {	# lbrpmu_run DESCRIPTION LBR_CHECK_ARGS...
	what=$1
	shift
	rm -rf /tmp/lbrtr
	mkdir -p /tmp/lbrtr
	t0=$(date +%s)
	/lbr/lbr_check "$@" -d /tmp/lbrtr -- /lbr/lbr_workload $lbr_rounds \
		${lbr_one:+1}
	check $? "lbr_check $what ($(( $(date +%s) - t0 )) s)"
}

lbrpmu_one() {	# lbrpmu_one DESCRIPTION LBR_CHECK_ARGS...: one thread
	lbr_one=1
	lbrpmu_run "$@"
	lbr_one=
}

lbrpmu_tests() {
	if [ ! -f /lbr/kcc_lbrpmu.ko ]; then
		ok "kcc_lbrpmu # SKIP not packed"
		return
	fi
	# perf_event_overflow() is not exported: the module finds it with a
	# kprobe, or, on kernels without kprobes (the debug kernel), is
	# given its address from kallsyms, which it checks.
	a=$(sed -n 's/^\([0-9a-f]*\) [Tt] perf_event_overflow$/\1/p' /proc/kallsyms)
	b=$(sed -n 's/^\([0-9a-f]*\) [Tt] perf_pmu_register$/\1/p' /proc/kallsyms)
	! insmod /lbr/kcc_lbrpmu.ko overflow_addr=0x${b:-1} 2>/dev/null
	check $? "insmod kcc_lbrpmu.ko refused with overflow_addr of another function"
	if insmod /lbr/kcc_lbrpmu.ko 2>/tmp/insmod.err; then
		ok "insmod kcc_lbrpmu.ko (perf_event_overflow through a kprobe)"
	else
		sed 's/^/# /' /tmp/insmod.err
		insmod /lbr/kcc_lbrpmu.ko overflow_addr=0x$a
		check $? "insmod kcc_lbrpmu.ko overflow_addr=0x$a (no kprobes)"
	fi
	d=/sys/bus/event_source/devices/kcc_lbr
	t=$(cat $d/type 2>/dev/null)
	case $t in
	'' | *[!0-9]*) false ;;
	*) [ "$t" -gt 5 ] ;;	# above the PERF_TYPE_* of the core
	esac
	check $? "PMU kcc_lbr has a dynamic type ($t)"
	[ "$(cat $d/format/event 2>/dev/null)" = config:0-7 ]
	check $? "kcc_lbr format/event is config:0-7"
	[ "$(cat $d/events/clock 2>/dev/null)" = event=0x00 ] &&
		[ "$(cat $d/events/calls 2>/dev/null)" = event=0x01 ] &&
		[ "$(cat $d/events/misses 2>/dev/null)" = event=0x02 ]
	check $? "kcc_lbr events/ has clock, calls and misses"
	[ -c /dev/kcc_lbr ]
	check $? "/dev/kcc_lbr exists"
	/lbr/lbr_ring
	check $? "lbr_ring: stacks of hand-filled rings, errors"

	# The counts are checked exactly, and a throttled counter stops
	# counting (lbr_check.c): lift the sample rate limit, which the
	# core lowers when samples take long (TCG, a busy host), for these
	# runs.  The rate is refused while the limit is off: set it first.
	rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
	echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate &&
		echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	check $? "perf sample rate limit lifted (was $rate/s, $pct% of CPU time)"

	lbrpmu_run "calls, any_call,any_ret,u" -e calls -c 499 \
		-j any_call,any_ret,u -k 0
	lbrpmu_run "calls, any_call,u (no returns)" -e calls -c 499 \
		-j any_call,u
	lbrpmu_run "calls, any_ret,u,save_type (no calls)" -e calls -c 499 \
		-j any_ret,u,save_type
	lbrpmu_run "misses, any,u" -e misses -c 1999 -j any,u -k 0
	lbrpmu_run "clock 1 ms, any_call,any_ret,u" -e clock -c 1000000 \
		-j any_call,any_ret,u
	# Precise overflow (precise=1): a calls or misses event samples
	# at the call that reaches its period, where the runtime stops in
	# the PMU, as a hardware counter's interrupt comes at the
	# overflowing instruction; on one thread no stale trap leaves a
	# sample to a poll.  With precise=0 the same checks must fail.
	lbrpmu_one "-P calls: every sample at its period's call" -P \
		-e calls -c 499 -j any_call,any_ret,u
	lbrpmu_one "-P misses: every sample at its period's call" -P \
		-e misses -c 1999 -j any,u
	lbrpmu_param precise 0
	rm -rf /tmp/lbrtr
	mkdir -p /tmp/lbrtr
	/lbr/lbr_check -P -e calls -c 499 -d /tmp/lbrtr -- \
		/lbr/lbr_workload $lbr_rounds 1 >/tmp/lbr.out 2>&1
	[ $? -eq 1 ] &&
		grep -q '^not ok .* -P: every stack has the overflowing call on top' /tmp/lbr.out
	check $? "precise=0: lbr_check -P fails, the samples come at polls, after other records"
	lbrpmu_param precise 1
	lbrpmu_param stray 3
	lbrpmu_run "stray=3: a far branch on every 3rd stack" -e calls \
		-c 499 -j any_call,any_ret,u -x 3
	lbrpmu_param stray 0
	lbrpmu_param skid 3
	lbrpmu_run "skid=3" -e calls -c 499 -j any_call,any_ret,u -k 3
	lbrpmu_param skid 0
	lbrpmu_param task_save 0
	lbrpmu_run "task_save=0 (wiped at context switches)" -e calls \
		-c 499 -j any_call,any_ret,u
	lbrpmu_param task_save 1
	# The depth: AMD Zen 4 has 16 records; 0 and 33 are refused.
	for v in 0 33 x; do
		! lbrpmu_param records $v 2>/dev/null
		check $? "kcc_lbrpmu records=$v refused"
	done
	lbrpmu_param records 16
	lbrpmu_run "records=16 (AMD Zen 4's depth)" -e calls -c 499 \
		-j any_call,any_ret,u -k 0 -r 16
	lbrpmu_param records 32
	# System-wide, each CPU's event counts the thread running there:
	# a thread's calls are counted once only if every switch-out,
	# also after exit_mm(), moves the point its next stay counts from.
	# release_ms makes the workload's last thread sleep in exit, after
	# exit_mm(), whatever the machine's load.
	lbrpmu_param release_ms 20
	lbrpmu_run "system-wide (-a), wiped at context switches, a sleep in exit" \
		-a -e calls -c 499 -j any_call,any_ret,u
	lbrpmu_run "system-wide (-a) misses, a sleep in exit" -a -e misses \
		-c 1999 -j any,u
	lbrpmu_param release_ms 0
	dmesg_clean "kcc_lbr with lbr_check"

	if [ -x /lbr/perf ]; then
		rm -rf /tmp/lbrtr
		mkdir -p /tmp/lbrtr
		/lbr/perf stat -x, -o /tmp/perf.stat -e kcc_lbr/calls/ -- \
			env KCC_TRACE_DIR=/tmp/lbrtr KCC_TRACE_LBR=1 \
			/lbr/lbr_workload $lbr_rounds >/tmp/perf.err 2>&1
		check $? "perf stat -e kcc_lbr/calls/ lbr_workload"
		sed 's/^/# /' /tmp/perf.err /tmp/perf.stat
		echo "# kcc_lbrpmu: $(cat /sys/module/kcc_lbrpmu/parameters/unread) switch-outs with the ring unread since load"
		counted=$(sed -n 's/^\([0-9][0-9]*\),.*kcc_lbr\/calls\/.*/\1/p' /tmp/perf.stat)
		traced=$(/lbr/lbr_check -n -d /tmp/lbrtr)
		[ -n "$counted" ] && [ "$counted" = "$traced" ]
		check $? "perf stat counts the calls of the trace ($counted counted, $traced traced)"

		rm -rf /tmp/lbrtr
		mkdir -p /tmp/lbrtr
		/lbr/perf record -N -o /tmp/perf.data -e kcc_lbr/calls/ -c 499 \
			-j any_call,any_ret,u -- \
			env KCC_TRACE_DIR=/tmp/lbrtr KCC_TRACE_LBR=1 \
			/lbr/lbr_workload $lbr_rounds >/tmp/perf.err 2>&1
		check $? "perf record -e kcc_lbr/calls/ -j any_call,any_ret,u lbr_workload"
		sed 's/^/# /' /tmp/perf.err
		/lbr/perf script -i /tmp/perf.data -F pid,tid,brstack \
			>/tmp/perf.txt 2>/tmp/perf.err
		check $? "perf script -F pid,tid,brstack"
		head -n 3 /tmp/perf.err | sed 's/^/# /'
		/lbr/lbr_check -S /tmp/perf.txt -j any_call,any_ret,u -d /tmp/lbrtr
		check $? "perf sees the branch stacks of the trace"
		dmesg_clean "perf on kcc_lbr"
	else
		ok "perf on kcc_lbr # SKIP perf not packed (Debian: linux-perf)"
	fi

	echo "$pct" >/proc/sys/kernel/perf_cpu_time_max_percent &&
		echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
	check $? "perf sample rate limit restored"

	# An open event holds the module.
	rm -rf /tmp/lbrtr
	mkdir -p /tmp/lbrtr
	/lbr/lbr_check -e calls -c 499 -d /tmp/lbrtr -- /bin/sh -c \
		'rmmod kcc_lbrpmu 2>/dev/null && exit 1; exec /lbr/lbr_workload 20' \
		>/tmp/lbr.out 2>&1
	[ $? -ne 2 ] && grep -q '^kcc_lbrpmu ' /proc/modules
	check $? "rmmod kcc_lbrpmu refused while an event is open"
	rmmod kcc_lbrpmu
	check $? "rmmod kcc_lbrpmu"
	dmesg_clean "rmmod kcc_lbrpmu"
}
