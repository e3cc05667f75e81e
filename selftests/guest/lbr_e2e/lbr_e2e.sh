# SPDX-License-Identifier: GPL-2.0
#
# lbr_e2e.sh - the end-to-end LBR steps of the guest suite, sourced by
# guest_init.sh (busybox sh; uses its check and dmesg_clean) when
# selftests/kcc/guest.sh packed them into /demo: kcc.ko's lbr source on
# the software LBR PMU kcc_lbr (selftests/lbrpmu, packed in /lbr by
# run.sh), through the kernel's own perf core.
#
# Each run is `kcc record --source lbr -e kcc_lbr/EVENT/` of a program
# built with kcc's tracing runtime, which with KCC_TRACE_LBR=1 feeds the
# PMU's branch records and writes the full trace of the same run.  The
# guest then compares the two with `kcc eval --profile` (names come from
# the program, which only the guest has) and hands back, as blobs, the
# profile (NAME) and the comparison (NAME-eval); selftests/kcc/guest.sh
# judges them on the host.
#
# Runs: lbr-wf-calls and lbr-wf-misses (wordfreq, the well-behaved
# program, on the calls and the misses events); lbr-wf-clock and
# lbr-demo-clock (wordfreq and the demo's workload on the clock, every
# 20 us and 200 us: several samples between two calls of the workload's
# loops, so the LBR windows of consecutive samples overlap);
# lbr-wf-calls-dense, lbr-wf-misses-dense, lbr-demo-calls and
# lbr-demo-misses (the counting events every 5 to 37 events, closer than
# the LBR's records, lbr_dense); these one-
# event runs count calls beside the event (--calls-counter
# kcc_lbr/calls/), but the demo's, which take kcc record's defaults:
# lbr-demo-clock and lbr-demo-misses the hybrid estimate (ABI 1.9),
# lbr-demo-calls the counter (its event is the calls event), and
# lbr-demo-fallback the counter where the PMU cannot sample its calls
# event, and lbr-wf-clock-dflt (wordfreq on the 20 us clock, the
# hybrid at the module's calls period, 10007: about 130 bursts of the
# calls event); lbr-wf-clock-hyb (wordfreq on the 20 us
# clock with the hybrid estimate, --calls-hybrid: the bursts of both
# the clock and kcc_lbr/calls/, the calls the clock's miss spread at
# the calls event's); lbr-wf-sys (wordfreq under a system-wide
# session on the misses event, a calls counter per CPU); lbr-wf-2ev (wordfreq with
# two events: misses sampled without records, the bursts at the samples
# of the calls event, --calls-event); lbr-wf-import, lbr-wf-import-2ev
# and lbr-wf-import-grp (the same without kcc.ko: perf record, then kcc
# import, one event, two, and the misses event reading a calls counter
# in its group at every sample); lbr-adv-calls (the PMU's
# adversarial workload lbr_workload: frameless leaves, PLT calls into a
# frameless library, tail calls, a signal handler, longjmp, recursion,
# threads and fork).  The PMU models Intel's LBR in every run (32
# records, reset at each switch-in) but these: lbr-wf-amd (AMD Zen 4's,
# lbr_amd), and lbr-wf-saved and the dense runs (records kept across
# switches, lbr_saved and lbr_dense).

# lbr_run NAME EVENT PROGRAM [ARGS...]; $lbr_calls: more options of
# kcc record (the calls event), empty for its default; $lbr_period: the
# sample period (events, or ns of kcc_lbr/clock/).
lbr_counter="--calls-counter kcc_lbr/calls/"
lbr_calls=$lbr_counter
lbr_period=1009
# The rounds of wordfreq in the measured runs: 12, about 1.3 million
# calls, 1,290 samples at the period of 1009.  They were 24, which
# doubled the time of these runs; on 6.1 the asserted figures moved by
# at most 0.010 (lbr-wf-2ev's abs_err at k = 3, 0.019 to 0.029, under
# its floor of 0.20).  lbr-amd and lbr-select check flags and
# scheduling, and run 4.
wf_rounds=12
lbr_run() {
	name=$1
	ev=$2
	shift 2
	rm -rf /tmp/lbrtr
	mkdir -p /tmp/lbrtr
	# shellcheck disable=SC2086
	KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/lbrtr /demo/kcc record \
		--source lbr -e "kcc_lbr/$ev/" -c "$lbr_period" $lbr_calls -k 3 \
		-o "/tmp/$name.data" -- "$@" >"/tmp/$name.err" 2>&1
	crc=$?
	sed 's/^/# /' "/tmp/$name.err"
	check $crc "$name: kcc record --source lbr -e kcc_lbr/$ev/ -c $lbr_period ${lbr_calls:+$lbr_calls }-k 3 -- ${1##*/}"
	lbr_eval "$name"
}

# lbr_sys NAME EVENT PERIOD PROGRAM [ARGS...]: kcc record -a (system-
# wide: a calls counter per CPU, its count taken off at every context
# switch) around one run of PROGRAM.  The session runs before PROGRAM
# starts (its line in the sessions file says running) and stops
# (SIGINT) after PROGRAM exited, so PROGRAM's process in the profile
# holds all of its calls; the wait is bounded only against a hang.
lbr_sys() {
	name=$1
	ev=$2
	per=$3
	shift 3
	rm -rf /tmp/lbrtr
	mkdir -p /tmp/lbrtr
	/demo/kcc record -a --source lbr -e "kcc_lbr/$ev/" -c "$per" -k 3 \
		-o "/tmp/$name.data" >"/tmp/$name.err" 2>&1 &
	rec=$!
	n=0
	until grep -q '^[0-9]* 2 all ' /sys/class/misc/kcc/sessions 2>/dev/null ||
	      [ $n -ge 1200 ] || ! kill -0 $rec 2>/dev/null; do
		n=$((n + 1))
		sleep 0.1
	done
	KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/lbrtr "$@" >/dev/null
	kill -INT $rec
	wait $rec
	crc=$?
	sed 's/^/# /' "/tmp/$name.err"
	check $crc "$name: kcc record -a --source lbr -e kcc_lbr/$ev/ -c $per -k 3 around ${1##*/}"
	lbr_eval "$name" "${1##*/}"
}

# lbr_freq: kcc record -F 1000 (ABI 1.3, KCC_CFG_FREQ) on the clock of
# the software PMU, which like cpu-clock turns a frequency into the
# period 10^9 / FREQ ns: the header gives the frequency and every
# sample charged 10^6 ns of clock, so events = 10^6 x samples in every
# process of the report.
# lbr_fallback: kcc record's defaults where the PMU counts retired calls
# but cannot sample them with records (kcc_lbrpmu calls_sample=0): the
# hybrid's calls event falls back to the counter (ABI 1.9), which
# guest.sh finds in the profile's header.
# --calls-period alone sets the default hybrid's period; where the
# default counts (-a), there is none to set, and kcc record says so.
lbr_fallback() {
	echo 0 >/sys/module/kcc_lbrpmu/parameters/calls_sample
	lbr_run lbr-demo-fallback clock /demo/demo_workload_lbr 1 100
	echo 1 >/sys/module/kcc_lbrpmu/parameters/calls_sample
	lbr_refused "lbr-calls-period: kcc record -a --calls-period refused, saying so" \
		'the calls here are counted, not sampled' -a --source lbr \
		-e kcc_lbr/clock/ -c 200000 --calls-period 1009 --duration 1
}

# lbr_refused WHAT MESSAGE ARGS...: kcc record ARGS must fail, write no
# profile and say MESSAGE.
lbr_refused() {
	what=$1
	msg=$2
	shift 2
	/demo/kcc record -o /tmp/refused.data "$@" >/tmp/refused.err 2>&1
	rc=$?
	sed 's/^/# /' /tmp/refused.err
	[ $rc -ne 0 ] && [ ! -e /tmp/refused.data ] &&
		grep -q "$msg" /tmp/refused.err
	check $? "$what (exit $rc)"
	rm -f /tmp/refused.data /tmp/refused.err
}

lbr_freq() {
	/demo/kcc record --source lbr -e kcc_lbr/clock/ -F 1000 -k 2 \
		-o /tmp/freq.data -- /demo/demo_workload_lbr 1 \
		>/tmp/freq.err 2>&1
	crc=$?
	sed 's/^/# /' /tmp/freq.err
	check $crc "lbr-freq: kcc record --source lbr -e kcc_lbr/clock/ -F 1000 -- demo_workload_lbr 1"
	/demo/kcc report /tmp/freq.data >/tmp/freq.rep 2>&1 &&
	grep -q ', sample frequency: 1000 Hz (each sample charged its period)$' \
		/tmp/freq.rep &&
	awk '/^# total: calls / { e += $6; n += $8; t++ }
	     END { printf "# lbr-freq: %d processes, %d samples, %d ns of clock\n", t, n, e
		   exit !(t > 0 && n > 0 && e == n * 1000000) }' /tmp/freq.rep
	check $? "lbr-freq: the header says 1000 Hz, every sample charged 10^6 ns"
	rm -f /tmp/freq.data /tmp/freq.rep /tmp/freq.err
}

# lbr_eval NAME [COMM]: /tmp/NAME.data (its process COMM) against the
# trace in /tmp/lbrtr, both handed back.
lbr_eval() {
	name=$1
	/demo/kcc eval --tsv -k 1,2,3 -T 0.1,0.05 ${2:+--comm "$2"} \
		--profile "/tmp/$name.data" \
		/tmp/lbrtr >"/tmp/$name.eval" 2>"/tmp/$name.everr"
	crc=$?
	sed 's/^/# /' "/tmp/$name.eval" "/tmp/$name.everr"
	check $crc "$name: kcc eval --profile against the run's own trace"
	blob "$name" "/tmp/$name.data"
	blob "$name-eval" "/tmp/$name.eval"
	rm -rf /tmp/lbrtr "/tmp/$name.data"
	dmesg_clean "$name"
}

# lbr_import NAME CALLS-EVENT PERF-OPTIONS...: no kcc.ko: perf record on
# kcc_lbr of wordfreq, kcc import of its perf.data (CALLS-EVENT: the
# --calls-event of a two-event file, or ""), then as lbr_run.
lbr_import() {
	name=$1
	calls=$2
	shift 2
	rm -rf /tmp/lbrtr /tmp/perf.data
	mkdir -p /tmp/lbrtr
	KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/lbrtr /lbr/perf record -N \
		-o /tmp/perf.data "$@" -c 1009 -j any_call,any_ret,u,save_type \
		--call-graph fp -- /demo/wordfreq "$wf_rounds" >"/tmp/$name.err" 2>&1
	crc=$?
	sed 's/^/# /' "/tmp/$name.err"
	check $crc "$name: perf record $* -c 1009 -j any_call,any_ret,u,save_type --call-graph fp -- wordfreq"
	/demo/kcc import -k 3 ${calls:+--calls-event "$calls"} \
		-o "/tmp/$name.data" /tmp/perf.data >"/tmp/$name.err" 2>&1
	crc=$?
	sed 's/^/# /' "/tmp/$name.err"
	check $crc "$name: kcc import -k 3 ${calls:+--calls-event $calls }perf.data"
	rm -f /tmp/perf.data
	lbr_eval "$name"
}

# lbr_watch [SPIN PERIOD]: kcc record --watch on watchwork (see
# watchwork.c), the watch file being every 3-context of a first traced
# run plus one that never runs.  kcc.ko's watched calls (kcc report
# --watched) must equal the k-CCF counts of the same contexts in the
# forests of the same profile (kcc report --format folded, summed over
# the 3-contexts ending with each): the arrays see exactly the calls
# the forests replay.  The tracing runtime's own watched counts
# (KCC_TRACE_WATCH) must equal kcc watch on the trace the run wrote.
# kcc.ko against the trace is printed, not asserted: where every call
# is in some sample's records, the overlapping bursts of consecutive
# samples are joined (--join longest) and a burst stitching had to
# repair is never joined with, so a few calls count twice (or, with
# bursts further apart than the LBR's 32 records, go unseen); that
# depends on where the samples fall.  Then a watch file naming a routine the
# program lacks must fail with a clear error and write no profile.
lbr_watch() {
	ww_spin=${1:-300000}
	ww_period=${2:-500000}
	[ -x /demo/watchwork ] || return 0
	rm -rf /tmp/w1 /tmp/lbrtr /tmp/w.data
	mkdir -p /tmp/w1 /tmp/lbrtr
	KCC_TRACE_DIR=/tmp/w1 /demo/watchwork "$ww_spin" >/dev/null &&
		/demo/kcc ccf -k 3 /tmp/w1 | cut -f2 >/tmp/w.watch &&
		echo 'r4;r4' >>/tmp/w.watch
	check $? "lbr-watch: watch file from a traced run ($(wc -l </tmp/w.watch) contexts)"
	KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/lbrtr KCC_TRACE_WATCH=/tmp/w.watch \
		/demo/kcc record --source lbr -e kcc_lbr/clock/ -c "$ww_period" \
		--join longest -k 3 --watch /tmp/w.watch -o /tmp/w.data -- \
		/demo/watchwork "$ww_spin" >/tmp/w.err 2>&1
	crc=$?
	sed 's/^/# /' /tmp/w.err
	check $crc "lbr-watch: kcc record --source lbr -e kcc_lbr/clock/ -c $ww_period --join longest -k 3 --watch FILE -- watchwork $ww_spin"
	/demo/kcc report /tmp/w.data 2>&1 | sed -n '/^# source:/,/^# total:/p' |
		sed 's/^/# /'
	/demo/kcc report --watched /tmp/w.data >/tmp/w.rep 2>&1
	check $? "lbr-watch: kcc report --watched"
	grep '^#' /tmp/w.rep | sed 's/^/# /'
	/demo/kcc report --k 3 --sort calls --format folded /tmp/w.data \
		>/tmp/w.fold 2>/dev/null &&
		awk -F '\t' 'FNR == NR { n = $0; sub(/.* /, "", n)
				sub(/ [0-9]+$/, ""); c[$0] += n; next }
			/^#/ { next }
			{ s = 0; w = $4; l = length(w)
			  for (p in c)
				if (p == w || substr(p, length(p) - l) == ";" w)
					s += c[p]
			  n++; if (s != $1) { bad++; print "# " w ": " $1 " watched, " s " in the forest" } }
			END { exit bad || n < 100 }' /tmp/w.fold /tmp/w.rep
	check $? "lbr-watch: kcc.ko's watched calls = the k-CCF counts of its forests ($(grep -vc '^#' /tmp/w.rep) contexts)"
	set -- /tmp/lbrtr/*.kft
	/demo/kcc watch -w /tmp/w.watch "$1" >/tmp/w.trace 2>&1
	grep -v '^#' "${1%.kft}.watch" | cmp -s - "$(grep -v '^#' /tmp/w.trace >/tmp/w.tc; echo /tmp/w.tc)"
	check $? "lbr-watch: the runtime's KCC_TRACE_WATCH counts = kcc watch on its trace"
	grep -v '^#' /tmp/w.rep | cut -f1,4 >/tmp/w.kern
	awk -F '\t' 'FNR == NR { t[$2] = $1; tt += $1; next }
		{ n++; kk += $1; if ($1 == t[$2]) eq++ }
		END { printf "# lbr-watch figures: %d of %d contexts equal to the trace; watched calls %d kcc.ko, %d trace\n", eq, n, kk, tt }' \
		/tmp/w.tc /tmp/w.kern
	blob lbr-watch-report /tmp/w.rep
	echo 'r0;no_such_routine' >/tmp/bad.watch
	rm -f /tmp/bad.data
	/demo/kcc record --source lbr -e kcc_lbr/clock/ -c "$ww_period" \
		--watch /tmp/bad.watch -o /tmp/bad.data -- /demo/watchwork 1 \
		>/tmp/bad.err 2>&1
	rc=$?
	sed 's/^/# /' /tmp/bad.err
	[ $rc -ne 0 ] && [ ! -e /tmp/bad.data ] &&
		grep -q "unknown routine 'no_such_routine'" /tmp/bad.err
	check $? "lbr-watch: an unknown routine is refused (exit $rc), no profile"
	rm -rf /tmp/w1 /tmp/lbrtr /tmp/w.* /tmp/bad.*
	dmesg_clean lbr-watch
}

# lbr_dense: samples closer together than the LBR's 32 records on the
# counting events, where the calls since the previous sample always fit
# in the burst and kcc's join counts every call once.  kcc.ko's default
# floor of 1000 events refuses such periods (with kcc record saying
# so); root lowers it at load, period_min=1..1000 (0 and 1001 refused).
# wordfreq 2 (about 216,000 calls) every 11th call and every 37th miss
# (0 to 7 a call, KCC_LBR_MISSES: 10 calls a sample on average); the
# demo's workload (about 5 calls a loop of 2 scans of 262,144 accesses)
# every 5th call and every 7th miss: every loop in some burst, main
# once.  The demo runs at least 100 rounds (about 400 calls; a guest CPU
# starved by the host's load made 28 in its second), so that the calls
# after its last sample (fewer than a period) stay under 2% of the
# trace's.  Samples that come closer than the perf core allows
# (perf_event_max_sample_rate / HZ a tick, which a late tick of a busy
# host's guest exceeds) are throttled until the next tick, and the
# calls of that stretch then fall in no window: the dense runs lift
# that rate to 10^6 and stop its lowering (perf_cpu_time_max_percent
# 0), and put both back after.  A worker that a busy host keeps from
# running lets the rings fill (1,480 of 19,748 samples dropped as
# ring-full in one run, their calls then weighted into the next
# sample's burst): the module is loaded with rings of 4 MiB.  The PMU
# keeps a task's records across its switches here (task_save=1): these
# runs check the join's exactness, which holds while the records since
# the previous sample are in the burst, and a reset at switch-in (the
# Intel model of the other runs) breaks that whenever the task is
# switched out between two samples.  Then kcc weights the burst, as it
# must: in one 6.1 run under the Intel model main's call was in no
# burst (reset away, the likely reading, by a switch before the first
# sample), and main was counted 0 times (400 calls, 15 of them scaled).
lbr_dense() {
	inj=$(cat /sys/module/kcc/parameters/inject)
	rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
	lbr_refused "lbr-dense: -c 11 refused under the default floor, saying so" \
		'period 11 is under kcc.ko.s floor: 1000 events' \
		--source lbr -e kcc_lbr/calls/ -c 11 -k 3 -- /demo/wordfreq 1
	rmmod kcc
	for v in 0 1001 x; do
		! insmod /kcc.ko period_min=$v 2>/dev/null
		check $? "insmod kcc.ko period_min=$v refused"
	done
	insmod /kcc.ko inject="$inj" period_min=5 ring_kb=4096
	check $? "insmod kcc.ko inject=$inj period_min=5 ring_kb=4096"
	echo 1000000 >/proc/sys/kernel/perf_event_max_sample_rate &&
		echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	check $? "lbr-dense: perf_event_max_sample_rate 10^6, perf_cpu_time_max_percent 0"
	echo 1 >/sys/module/kcc_lbrpmu/parameters/task_save
	lbr_period=11
	lbr_run lbr-wf-calls-dense calls /demo/wordfreq 2
	lbr_period=37
	lbr_run lbr-wf-misses-dense misses /demo/wordfreq 2
	# kcc record's defaults: the counter on the calls event itself,
	# the hybrid on the misses event.
	lbr_calls=
	lbr_period=5
	lbr_run lbr-demo-calls calls /demo/demo_workload_lbr 1 100
	lbr_period=7
	lbr_run lbr-demo-misses misses /demo/demo_workload_lbr 1 100
	lbr_calls=$lbr_counter
	lbr_period=1009
	echo 0 >/sys/module/kcc_lbrpmu/parameters/task_save
	echo "$pct" >/proc/sys/kernel/perf_cpu_time_max_percent
	echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
	rmmod kcc
	insmod /kcc.ko inject="$inj"
	check $? "insmod kcc.ko inject=$inj (the default floor again)"
	dmesg_clean lbr-dense
}

# lbr_amd: the PMU as AMD Zen 4's LbrExtV2 (kcc_lbrpmu records=16
# task_save=0 amd_filter=1 wrong_path=5): 16 records, reset at every
# switch-in, branch records without flags and cycles refused, as
# amd_pmu_lbr_setup_filter() does, and wrong-path entries kept, as
# amd_pmu_lbr_read() does (a call that never retired, to
# KCC_LBR_WRONG_TO, on every 5th stack).  kcc record --source lbr must
# still sample branch stacks, asking with the flags, and its stream must
# say so (KCC_HDR_BR_FLAGS); kcc.ko must leave every wrong-path record
# out, count them as the PMU put them (STATUS br_wrong_path, the
# report's header), and no context may reach that address; and the
# profile, lbr-wf-amd, is judged against its trace as the Intel model's
# runs are.  Kernels before 6.1 have no such tag (SKIP).
lbr_amd() {
	wp0=$(cat /sys/module/kcc_lbrpmu/parameters/wrong_paths)
	echo 16 >/sys/module/kcc_lbrpmu/parameters/records
	echo 5 >/sys/module/kcc_lbrpmu/parameters/wrong_path
	echo 1 >/sys/module/kcc_lbrpmu/parameters/amd_filter
	rm -rf /tmp/lbrtr
	mkdir -p /tmp/lbrtr
	KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/lbrtr /demo/kcc record \
		--source lbr -e kcc_lbr/calls/ -c 1009 -k 3 \
		-o /tmp/lbr-wf-amd.data -- /demo/wordfreq "$wf_rounds" \
		>/tmp/lbr-amd.err 2>&1
	crc=$?
	sed 's/^/# /' /tmp/lbr-amd.err
	check $crc "lbr-amd: kcc record --source lbr on the AMD model (16 records, NO_FLAGS/NO_CYCLES refused, wrong paths)"
	/demo/kcc report /tmp/lbr-wf-amd.data >/tmp/lbr-amd.rep 2>&1
	grep '^# source\|^# branch records' /tmp/lbr-amd.rep | sed 's/^/# /'
	grep -q '^# source: lbr' /tmp/lbr-amd.rep &&
		grep -q '^# branch records: with flags' /tmp/lbr-amd.rep
	check $? "lbr-amd: the profile's source is lbr and its header says the records came with flags"
	echo 0 >/sys/module/kcc_lbrpmu/parameters/wrong_path
	wp=$(( $(cat /sys/module/kcc_lbrpmu/parameters/wrong_paths) - wp0 ))
	left=$(sed -n 's/^# branch records: \([0-9]*\) on a wrong path left out.*/\1/p' /tmp/lbr-amd.rep)
	/demo/kcc report --format folded /tmp/lbr-wf-amd.data >/tmp/lbr-amd.fold 2>&1
	reach=$(grep -c '0x1000\]' /tmp/lbr-amd.fold)
	echo "# lbr-amd: wrong-path records: $wp put by the PMU, ${left:-none} left out by kcc.ko; $reach folded stacks reach 0x1000"
	if [ "$wp" -eq 0 ]; then
		ok "lbr-amd: wrong-path records left out # SKIP the kernel's branch entries have no spec (before 6.1)"
	else
		[ "$left" = "$wp" ] && [ "$reach" -eq 0 ] &&
			grep -q '^[a-z_]' /tmp/lbr-amd.fold
		check $? "lbr-amd: all $wp wrong-path records left out and counted, no context reaches them"
	fi
	echo 0 >/sys/module/kcc_lbrpmu/parameters/amd_filter
	echo 32 >/sys/module/kcc_lbrpmu/parameters/records
	rm -f /tmp/lbr-amd.fold /tmp/lbr-amd.rep /tmp/lbr-amd.err
	lbr_eval lbr-wf-amd
}

# lbr_saved: a sparse run on the idealised PMU that keeps a task's
# records across its context switches (task_save=1, which no x86 driver
# does for a call/return filter; the dense runs use it too): kcc's
# joins over the longer windows.
lbr_saved() {
	echo 1 >/sys/module/kcc_lbrpmu/parameters/task_save
	lbr_run lbr-wf-saved calls /demo/wordfreq "$wf_rounds"
	echo 0 >/sys/module/kcc_lbrpmu/parameters/task_save
}

# lbr_select: kcc beside perf record -j any_call,any_ret,u on one
# process, on a PMU that models Intel's shared LBR_SELECT
# (kcc_lbrpmu intel_select=1: branch-stack events with another
# LBR_SELECT are not scheduled while one holds the CPU's).  perf's events
# come first (inherited at the fork of kcc record's workload, before
# kcc's START), so at every switch-in they take the LBR.  By default kcc
# asks for no flags and no cycles, an LBR_SELECT with LBR_NO_INFO, and
# its event must be refused (its running time below its enabled time,
# refusals counted); with lbr_info=1 it asks as perf does, and both run
# the whole time.  Skipped without perf in the guest.
lbr_select() {
	if [ ! -x /lbr/perf ]; then
		for w in "refused beside perf -j any_call,any_ret,u (default)" \
			 "shares the LBR with perf -j any_call,any_ret,u (lbr_info=1)"; do
			ok "lbr-select: $w # SKIP perf not packed (Debian: linux-perf)"
		done
		return 0
	fi
	echo 1 >/sys/module/kcc_lbrpmu/parameters/intel_select
	for info in 0 1; do
		echo $info >/sys/module/kcc/parameters/lbr_info
		r0=$(cat /sys/module/kcc_lbrpmu/parameters/select_refused)
		rm -rf /tmp/lbrtr /tmp/perf.data /tmp/sel.data
		mkdir -p /tmp/lbrtr
		KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/lbrtr /lbr/perf record -N \
			-o /tmp/perf.data -e kcc_lbr/calls/ -c 1009 \
			-j any_call,any_ret,u -- /demo/kcc record --source lbr \
			-e kcc_lbr/calls/ -c 1009 -k 3 -o /tmp/sel.data -- \
			/demo/wordfreq 4 >/tmp/sel.err 2>&1
		crc=$?
		refused=$(( $(cat /sys/module/kcc_lbrpmu/parameters/select_refused) - r0 ))
		/demo/kcc report /tmp/sel.data >/tmp/sel.rep 2>&1
		ev=$(sed -n 's/^# event: .*enabled \([0-9.]*\) s, running \([0-9.]*\) s.*/\1 \2/p' /tmp/sel.rep)
		set -- $ev
		echo "# lbr-select: lbr_info=$info: kcc's event enabled ${1:-?} s, running ${2:-?} s; $refused schedulings refused"
		if [ $crc -ne 0 ] || [ $# -ne 2 ]; then
			sed 's/^/# /' /tmp/sel.err
			grep '^# ' /tmp/sel.rep | head -n 12 | sed 's/^/# /'
		fi
		if [ $info -eq 0 ]; then
			[ $crc -eq 0 ] && [ $# -eq 2 ] && [ "$refused" -gt 0 ] &&
				awk -v e="$1" -v r="$2" 'BEGIN { exit !(r < e) }'
			check $? "lbr-select: refused beside perf -j any_call,any_ret,u (default)"
		else
			[ $crc -eq 0 ] && [ $# -eq 2 ] && [ "$refused" -eq 0 ] &&
				[ "$1" = "$2" ] && grep -q '^# branch records: with flags and cycles (lbr_info=1' /tmp/sel.rep
			check $? "lbr-select: shares the LBR with perf -j any_call,any_ret,u (lbr_info=1)"
		fi
	done
	echo 0 >/sys/module/kcc/parameters/lbr_info
	echo 0 >/sys/module/kcc_lbrpmu/parameters/intel_select
	rm -rf /tmp/lbrtr /tmp/perf.data /tmp/sel.data
	dmesg_clean "lbr-select"
}

# kcc_lbrpmu finds perf_event_overflow with a kprobe; a kernel without
# kprobes (the debug kernels) gives it the address from /proc/kallsyms,
# which it checks.
lbrpmu_load() {
	insmod /lbr/kcc_lbrpmu.ko "$@" 2>/dev/null && return 0
	ovf=$(sed -n 's/^\([0-9a-f]*\) [Tt] perf_event_overflow$/\1/p' /proc/kallsyms)
	[ -n "$ovf" ] && insmod /lbr/kcc_lbrpmu.ko "$@" overflow_addr=0x$ovf
}

if [ ! -f /lbr/kcc_lbrpmu.ko ]; then
	not_ok "lbr end to end: kcc_lbrpmu.ko not packed in /lbr"
elif lbrpmu_load poll_us=250 task_save=0; then
	# Polled 4 times a millisecond: more samples of the short runs.
	# The Intel model: 32 records, reset at every switch-in, as Intel's
	# driver leaves them for a call/return filter (it restores records
	# only in call-stack mode); lbr_amd and lbr_saved change it.
	ok "insmod kcc_lbrpmu.ko poll_us=250 task_save=0 (software LBR PMU kcc_lbr, the Intel model)"
	lbr_run lbr-wf-calls calls /demo/wordfreq "$wf_rounds"
	lbr_amd
	lbr_saved
	lbr_select
	lbr_run lbr-wf-misses misses /demo/wordfreq "$wf_rounds"
	lbr_period=20000
	lbr_run lbr-wf-clock clock /demo/wordfreq "$wf_rounds"
	lbr_calls="--calls-hybrid kcc_lbr/calls/ --calls-period 1009"
	lbr_run lbr-wf-clock-hyb clock /demo/wordfreq "$wf_rounds"
	lbr_calls=
	lbr_run lbr-wf-clock-dflt clock /demo/wordfreq "$wf_rounds"
	lbr_period=200000
	lbr_run lbr-demo-clock clock /demo/demo_workload_lbr 1 100
	lbr_fallback
	lbr_calls=$lbr_counter
	lbr_period=1009
	lbr_dense
	lbr_freq
	lbr_sys lbr-wf-sys misses 1009 /demo/wordfreq "$wf_rounds"
	lbr_calls="--calls-event kcc_lbr/calls/ --calls-period 1009"
	lbr_run lbr-wf-2ev misses /demo/wordfreq "$wf_rounds"
	lbr_calls=$lbr_counter
	lbr_run lbr-adv-calls calls /lbr/lbr_workload 1000
	lbr_watch
	if [ -x /lbr/perf ]; then
		lbr_import lbr-wf-import "" -e kcc_lbr/calls/
		lbr_import lbr-wf-import-2ev kcc_lbr/calls/ \
			-e kcc_lbr/misses/ -e kcc_lbr/calls/
		lbr_import lbr-wf-import-grp kcc_lbr/calls/ --per-thread \
			--no-inherit -e '{kcc_lbr/misses/,kcc_lbr/calls/}:S'
	else
		ok "kcc import # SKIP perf not packed (Debian: linux-perf)"
	fi
	rmmod kcc_lbrpmu
	check $? "rmmod kcc_lbrpmu"
	dmesg_clean "lbr end to end"
else
	not_ok "insmod kcc_lbrpmu.ko poll_us=250 task_save=0 (software LBR PMU kcc_lbr)"
fi
