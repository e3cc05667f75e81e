# SPDX-License-Identifier: GPL-2.0
#
# bench_cost.sh - the guest half of make bench-guest, sourced by
# guest_init.sh (busybox sh; kccmode=cost) with kcc.ko loaded: kcc
# against perf on the same program, at the same period, in this boot.
# It prints one line per run, "# cost run KEY=VALUE ...", which
# selftests/guest/bench.sh turns into the table (medians, spreads and
# ratios); it asserts nothing.
#
# Packed by bench.sh: /demo/kcc (static), /demo/wf (wordfreq with frame
# pointers, THREADS threads), /demo/wft (the same built with kcc's
# tracing runtime, for the software LBR PMU kcc_lbr in /lbr with perf),
# /demo/deep and /demo/deept (bench_deep.c, plain and traced),
# /t/kcc_cost (the clock).  Sizes come from the kernel command line:
#   kcccost=ROUNDS,THREADS,PERIOD_NS,REPS,LROUNDS,LTHREADS,LPERIOD,SWEEP
# (bench.sh picks them; SWEEP=1 runs the scaling sweep).
#
# Per run: the program's wall time (kcc_cost run is the profiled
# command, so the profiler's start and finish are not in it); the bytes
# of the output file and the samples it holds; the time from the
# program's end to a finished report (profiler finish + report command);
# the kernel memory of the profiler (perf: its ring buffers, "mmap size"
# of perf record -v times the CPUs; kcc: its rings, 3 x ring_kb per CPU,
# plus the forests' bytes at the program's end); kcc's worker wakeups and
# worker time.  Handler time per sample comes from separate runs with
# the function_graph tracer on the kernel's overflow entry
# (__perf_event_overflow, which calls perf's output or kcc's handler),
# only that function traced.

cost_now() {
	/t/kcc_cost now
}

cost_kv() {	# cost_kv FILE KEY: the value of KEY=VALUE in FILE
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1
}

cost_setup() {
	ncpu=$(grep -c ^processor /proc/cpuinfo)
	set -- $(echo "${cost_args:-80,2,1000000,5,12,2,1009,1}" | tr , ' ')
	c_curve=
	if [ "$1" = curve ]; then
		# make bench-guest-long (cost_curve):
		# curve,ROUNDS,THREADS,PERIOD_NS,LROUNDS,LTHREADS,LPERIOD,POINTS
		c_curve=$8
		set -- "$2" "$3" "$4" 1 "$5" "$6" "$7" 0
	fi
	c_rounds=$1 c_threads=$2 c_period=$3 c_reps=$4
	c_lrounds=$5 c_lthreads=$6 c_lperiod=$7 c_sweep=$8
	# The emulated CPU is slow: without this the kernel lowers the
	# sample rate of everybody after "perf: interrupt took too long".
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
	echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	mkdir -p /sys/kernel/tracing
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	tr=/sys/kernel/tracing
	cost_fn=
	for f in __perf_event_overflow perf_event_overflow; do
		if grep -q "^$f\$" "$tr"/available_filter_functions 2>/dev/null; then
			cost_fn=$f
			break
		fi
	done
	ring_kb=$(cat /sys/module/kcc/parameters/ring_kb)
	kcc_rings=$((3 * ring_kb * 1024 * ncpu))
	echo "# cost setup ncpu=$ncpu rounds=$c_rounds threads=$c_threads period=$c_period reps=$c_reps lrounds=$c_lrounds lthreads=$c_lthreads lperiod=$c_lperiod traced=${cost_fn:-none} kcc_rings=$kcc_rings kernel=$(uname -r)"
	lbr=
	if [ -f /lbr/kcc_lbrpmu.ko ] && [ -x /demo/wft ]; then
		if insmod /lbr/kcc_lbrpmu.ko poll_us=250 2>/dev/null; then
			lbr=1
		else
			a=$(sed -n 's/^\([0-9a-f]*\) [Tt] perf_event_overflow$/\1/p' /proc/kallsyms)
			insmod /lbr/kcc_lbrpmu.ko poll_us=250 overflow_addr="0x$a" && lbr=1
		fi
	fi
}

cost_trace_on() {
	[ -n "$cost_fn" ] || return 0
	echo 0 >"$tr"/tracing_on
	echo nop >"$tr"/current_tracer
	echo 16384 >"$tr"/buffer_size_kb
	echo "$cost_fn" >"$tr"/set_ftrace_filter
	echo >"$tr"/trace
	echo function_graph >"$tr"/current_tracer
	echo 1 >"$tr"/tracing_on
}

# "CALLS TOTAL_NS MEDIAN_NS" of the traced function since cost_trace_on.
# The median: a call the host preempted QEMU in counts like any other.
cost_trace_off() {
	[ -n "$cost_fn" ] || { echo "0 0 0"; return 0; }
	echo 0 >"$tr"/tracing_on
	awk -v fn="$cost_fn();" '
		index($0, fn) {
			for (i = 2; i <= NF; i++)
				if ($i == "us") {
					v = $(i - 1)
					gsub(/[^0-9.]/, "", v)
					print v * 1000
					break
				}
		}' "$tr"/trace | sort -n >/tmp/hcalls
	n=$(wc -l </tmp/hcalls)
	t=$(awk '{ t += $1 } END { printf "%.0f", t }' /tmp/hcalls)
	m=$(sed -n "$(((n + 1) / 2))p" /tmp/hcalls)
	echo "$n ${t:-0} ${m:-0}"
	rm -f /tmp/hcalls
	echo nop >"$tr"/current_tracer
	echo >"$tr"/set_ftrace_filter
	echo >"$tr"/trace
}

# cost_run GROUP CFG SCALE REP MODE TOOL...: one run.  MODE t: timed,
# with a report; h: under the tracer, no report.  TOOL is perf, kcc or
# none, then its options; the program comes from $cost_prog.
cost_run() {
	g=$1 cfg=$2 sc=$3 rep=$4 mode=$5 tool=$6
	shift 6
	rm -rf /tmp/o.data /tmp/o.data.old /tmp/prog.t /tmp/tr
	mkdir -p /tmp/tr
	w0=$(cat /sys/class/misc/kcc/wakeups 2>/dev/null || echo 0)
	[ "$mode" = h ] && cost_trace_on
	case $tool in
	none) /t/kcc_cost run /tmp/prog.t $cost_prog >/tmp/tool.out 2>&1 ;;
	perf) [ "$mode" = p ] || /lbr/perf record -N -v -o /tmp/o.data "$@" -- \
		/t/kcc_cost run /tmp/prog.t $cost_prog >/tmp/tool.out 2>&1 ;;
	kcc) /demo/kcc record -k 3 -o /tmp/o.data "$@" -- \
		/t/kcc_cost run /tmp/prog.t $cost_prog >/tmp/tool.out 2>&1 ;;
	esac
	rc=$?
	[ "$mode" = p ] && cost_pipe "$@"
	tend=$(cost_now)
	h="0 0 0"
	[ "$mode" = h ] && h=$(cost_trace_off)
	w1=$(cat /sys/class/misc/kcc/wakeups 2>/dev/null || echo 0)
	set -- $(cat /tmp/prog.t 2>/dev/null || echo "0 0 0 0")
	wall=$1 pend=$2 kbytes=$3 workns=$4
	bytes=0 samples=0 report=0 kmem=0 rrc=0
	[ -f /tmp/o.data ] && bytes=$(wc -c </tmp/o.data)
	case $tool in
	perf)
		samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/tool.out | tail -n 1)
		if [ "$mode" = p ]; then
			samples=$(sed -n 's/.*SAMPLE events: *\([0-9]*\).*/\1/p' /tmp/rep.out | head -n 1)
			bytes=$(cat /tmp/o.bytes)
		fi
		m=$(sed -n 's/.*mmap size \([0-9]*\)B.*/\1/p' /tmp/tool.out | head -n 1)
		kmem=$((${m:-0} * ncpu))
		if [ "$mode" = t ] && [ -f /tmp/o.data ]; then
			# --no-inline: the guest has no addr2line to ask.
			/lbr/perf report -i /tmp/o.data --stdio --no-inline \
				>/tmp/rep.out 2>&1
			rrc=$?
			report=$(($(cost_now) - pend))
		fi
		;;
	kcc)
		kmem=$((kcc_rings + kbytes))
		if [ -f /tmp/o.data ]; then
			/demo/kcc report /tmp/o.data >/tmp/rep.out 2>&1
			rrc=$?
			report=$(($(cost_now) - pend))
			samples=$(sed -n 's/^# samples: \([0-9]*\) taken.*/\1/p' /tmp/rep.out)
		fi
		;;
	esac
	[ "$mode" = h ] && report=0
	[ "$rc" -eq 0 ] || sed 's/^/# cost: /' /tmp/tool.out | tail -n 5
	[ "$rrc" -eq 0 ] || sed 's/^/# cost: report: /' /tmp/rep.out | tail -n 5
	[ "$rrc" -eq 0 ] || rc=$((rc + 1000 * rrc))
	echo "# cost run group=$g cfg=$cfg scale=$sc rep=$rep mode=$mode rc=$rc wall=$wall samples=${samples:-0} bytes=$bytes fin=$((tend - pend)) report=$report kmem=$kmem wakeups=$((w1 - w0)) hcalls=$(echo "$h" | cut -d' ' -f1) hns=$(echo "$h" | cut -d' ' -f2) hmed=$(echo "$h" | cut -d' ' -f3) workns=$workns"
	rm -rf /tmp/o.data /tmp/o.data.old /tmp/tr
}

# cost_pipe PERF-OPTIONS...: cost_run's mode p, perf record into a pipe,
# for a file the guest's memory would not hold.  The bytes are counted
# on their way (wc -c) and perf report --stats counts the samples, which
# perf record says only of a file; no report is timed.  The program's
# stdout goes to /dev/null, not into perf's stream, and it runs at nice
# 19: the readers of the pipe share the guest's two CPUs with it, and
# perf's ring would overflow while they wait (the samples perf took and
# lost are in the report's "LOST" records, which cost_curve_took
# prints).
cost_pipe() {
	rm -f /tmp/o.fifo /tmp/o.bytes /tmp/o.rc
	mkfifo /tmp/o.fifo || { rc=1; return 0; }
	wc -c </tmp/o.fifo >/tmp/o.bytes &
	# shellcheck disable=SC2016,SC2086
	{
		/lbr/perf record -N -v -o - "$@" -- \
			sh -c 'renice -n 19 $$ >/dev/null; exec "$@" >/dev/null' sh \
			/t/kcc_cost run /tmp/prog.t $cost_prog 2>/tmp/tool.out
		echo $? >/tmp/o.rc
	} | tee /tmp/o.fifo | /lbr/perf report -i - --stats >/tmp/rep.out 2>&1
	r=$?
	wait
	rc=$(cat /tmp/o.rc 2>/dev/null || echo 1)
	[ "$r" -eq 0 ] || rc=$((rc + 1000 * r))
	rm -f /tmp/o.fifo /tmp/o.rc
}

cost_batch() {	# cost_batch 0|1
	echo "$1" >/sys/module/kcc/parameters/batch
}

# The fp group at scale SC: ROUNDS THREADS PERIOD, REPS timed runs of
# CFGS each (interleaved), then one traced run of each profiled one.
# perf samples cpu-clock:u, as kcc.ko does (exclude_kernel): the same
# samples, not kernel-mode ones too.
cost_fp() {
	sc=$1 rounds=$2 threads=$3 period=$4 reps=$5
	shift 5
	cost_prog="/demo/wf $rounds $threads"
	modes="t h"
	[ "$sc" = 1 ] || modes=t
	for mode in $modes; do
		r=1
		[ "$mode" = h ] && reps=1
		while [ $r -le "$reps" ]; do
			for cfg in "$@"; do
				[ "$mode" = h ] && [ "$cfg" = plain ] && continue
				case $cfg in
				plain) cost_run fp plain "$sc" $r $mode none ;;
				perf-g) cost_run fp perf-g "$sc" $r $mode perf \
					-e cpu-clock:u -c "$period" -g ;;
				perf-dwarf) cost_run fp perf-dwarf "$sc" $r $mode perf \
					-e cpu-clock:u -c "$period" --call-graph dwarf ;;
				kcc-fp) cost_run fp kcc-fp "$sc" $r $mode kcc \
					--source fp -e cpu-clock -c "$period" ;;
				kcc-fp-lean) cost_run fp kcc-fp-lean "$sc" $r $mode kcc \
					--source fp -e cpu-clock -c "$period" \
					--per-process --build-ids ;;
				kcc-fp-b0)
					cost_batch 0
					cost_run fp kcc-fp-b0 "$sc" $r $mode kcc \
						--source fp -e cpu-clock -c "$period"
					cost_batch 1 ;;
				esac
			done
			r=$((r + 1))
		done
	done
}

# The lbr group on kcc_lbr: calls sampled every LPERIOD; the two-event
# configuration samples misses every LPERIOD and calls every 4 x LPERIOD.
cost_lbr() {
	cost_prog="env KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/tr /demo/wft $c_lrounds $c_lthreads"
	p=$c_lperiod
	p4=$((4 * c_lperiod))
	reps=$c_reps
	for mode in t h; do
		r=1
		[ "$mode" = h ] && reps=1
		while [ $r -le $reps ]; do
			[ "$mode" = t ] && cost_run lbr plain 1 $r t none
			cost_run lbr perf-j 1 $r $mode perf -e kcc_lbr/calls/ \
				-c $p -j any_call,any_ret,u
			cost_run lbr kcc-lbr 1 $r $mode kcc --source lbr \
				-e kcc_lbr/calls/ -c $p
			cost_batch 0
			cost_run lbr kcc-lbr-b0 1 $r $mode kcc --source lbr \
				-e kcc_lbr/calls/ -c $p
			cost_batch 1
			cost_run lbr perf-j-2ev 1 $r $mode perf \
				-e kcc_lbr/misses,period=$p/ \
				-e kcc_lbr/calls,period=$p4/ -j any_call,any_ret,u
			cost_run lbr kcc-2ev 1 $r $mode kcc --source lbr \
				-e kcc_lbr/misses/ -c $p \
				--calls-event kcc_lbr/calls/ --calls-period $p4
			r=$((r + 1))
		done
	done
}

# The handler's cost by walk depth (Documentation/benchmark.rst, "The
# handler's budget"): /demo/deep's samples are all 600 frames deep, so
# each walk goes to its cap.  Under the tracer only (handler ns per
# sample), one run each: perf -g at perf_event_max_stack 127 (its
# default) and 512, kcc's fp walk at 32, 127 and 512 frames; on kcc_lbr
# (branch records: the PMU's copy, kcc's, and the walk) perf -g -j and
# kcc's lbr source at the same depths.
cost_depth() {
	p=$c_period
	cost_prog="/demo/deep 600 2000"
	for d in 127 512; do
		echo $d >/proc/sys/kernel/perf_event_max_stack
		[ "$(cat /proc/sys/kernel/perf_event_max_stack)" = $d ] ||
			echo "# cost depth: perf_event_max_stack is $(cat /proc/sys/kernel/perf_event_max_stack), not $d"
		cost_run depth "perf-g-$d" 1 1 h perf -e cpu-clock:u -c "$p" -g
	done
	echo 127 >/proc/sys/kernel/perf_event_max_stack
	for d in 32 127 512; do
		cost_run depth "kcc-fp-$d" 1 1 h kcc --source fp -e cpu-clock \
			-c "$p" --stack-depth $d
	done
	[ -n "$lbr" ] && [ -x /demo/deept ] || return 0
	cost_prog="env KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/tr /demo/deept 600 40"
	cost_run depth perf-gj-127 1 1 h perf -e kcc_lbr/calls/ -c $c_lperiod \
		-g -j any_call,any_ret,u
	for d in 32 127 512; do
		cost_run depth "kcc-lbr-$d" 1 1 h kcc --source lbr \
			-e kcc_lbr/calls/ -c $c_lperiod --stack-depth $d
	done
}

# make bench-guest-long: the bytes, the time to a report and the kernel
# memory of perf and kcc at each point of POINTS (about 10^4, 10^5 and
# 10^6 samples), one run each: the fp group (perf -g, kcc-fp and
# kcc-fp-lean) and the lbr group on kcc_lbr (perf -j, kcc-lbr and
# kcc-lbr-lean, the calls counted explicitly).  The first point runs
# ROUNDS (LROUNDS) rounds; each next one scales the rounds of the point
# before by the point over the fewest samples a tool of the group took
# there, so that every tool lands near (10% above) the point whatever
# the guest's speed.  perf -j records into a pipe (cost_pipe) where, at
# the bytes a sample it took at the point before, its file would pass
# 256 MiB.
cost_curve() {
	p=$c_lperiod
	if [ "$p" -lt 1000 ]; then
		# kcc.ko refuses a counting period below period_min (1000).
		rmmod kcc && insmod /kcc.ko period_min="$p" ||
			echo "# cost: insmod kcc.ko period_min=$p failed"
	fi
	fr=$c_rounds lr=$c_lrounds fmin=0 lmin=0 bps=0 prev=
	for pt in $(echo "$c_curve" | tr : ' '); do
		if [ -n "$prev" ]; then
			# 10% above the point: the fp group's samples move
			# with the host's load from run to run.
			[ "$fmin" -gt 0 ] && fr=$((fr * pt * 11 / (10 * fmin)))
			[ "$lmin" -gt 0 ] && lr=$((lr * pt * 11 / (10 * lmin)))
			[ "$fr" -gt 0 ] || fr=1
			[ "$lr" -gt 0 ] || lr=1
		fi
		prev=$pt
		t0=$(cost_now)
		cost_prog="/demo/wf $fr $c_threads"
		echo "# cost curve point=$pt group=fp rounds=$fr threads=$c_threads period=$c_period"
		fmin=
		for cfg in perf-g kcc-fp kcc-fp-lean; do
			case $cfg in
			perf-g) cost_run fp "$cfg" "$pt" 1 t perf -e cpu-clock:u \
				-c "$c_period" -g ;;
			kcc-fp) cost_run fp "$cfg" "$pt" 1 t kcc --source fp \
				-e cpu-clock -c "$c_period" ;;
			kcc-fp-lean) cost_run fp "$cfg" "$pt" 1 t kcc --source fp \
				-e cpu-clock -c "$c_period" --per-process --build-ids ;;
			esac
			cost_curve_took fp "$cfg"
			[ -z "$fmin" ] || [ "${samples:-0}" -lt "$fmin" ] && fmin=${samples:-0}
		done
		if [ -n "$lbr" ]; then
			cost_prog="env KCC_TRACE_LBR=1 KCC_TRACE_DIR=/tmp/tr /demo/wft $lr $c_lthreads"
			echo "# cost curve point=$pt group=lbr rounds=$lr threads=$c_lthreads period=$p"
			pm=t
			[ $((bps * pt)) -gt 268435456 ] && pm=p
			lmin=
			for cfg in perf-j kcc-lbr kcc-lbr-lean; do
				case $cfg in
				perf-j) cost_run lbr "$cfg" "$pt" 1 "$pm" perf -e kcc_lbr/calls/ \
					-c "$p" -j any_call,any_ret,u
					[ "${samples:-0}" -gt 0 ] && bps=$((bytes / samples)) ;;
				kcc-lbr) cost_run lbr "$cfg" "$pt" 1 t kcc --source lbr \
					-e kcc_lbr/calls/ -c "$p" \
					--calls-counter kcc_lbr/calls/ ;;
				kcc-lbr-lean) cost_run lbr "$cfg" "$pt" 1 t kcc --source lbr \
					-e kcc_lbr/calls/ -c "$p" \
					--calls-counter kcc_lbr/calls/ \
					--per-process --build-ids ;;
				esac
				cost_curve_took lbr "$cfg" "$pm"
				[ -z "$lmin" ] || [ "${samples:-0}" -lt "$lmin" ] && lmin=${samples:-0}
			done
		fi
		echo "# cost curve point=$pt took=$(($(cost_now) - t0))"
	done
}

# After cost_run of a kcc configuration: what its report says it
# dropped (the samples it counts include them); of perf through a pipe:
# the LOST records of its stream (each says how many samples its ring
# lost), which perf report --stats counted.
cost_curve_took() {	# cost_curve_took GROUP CFG MODE
	case $2 in
	kcc*) echo "# cost curve point=$pt group=$1 cfg=$2 dropped=$(sed -n 's/^# samples: .* dropped: *//p' /tmp/rep.out | tr ' ' _)" ;;
	perf*) [ "${3:-t}" = p ] &&
		echo "# cost curve point=$pt group=$1 cfg=$2 dropped=lost_records_$(sed -n 's/^ *LOST events: *\([0-9]*\).*/\1/p' /tmp/rep.out | head -n 1)" ;;
	esac
	return 0
}

cost_main() {
	cost_setup
	if [ -n "$c_curve" ]; then
		cost_curve
		[ -z "$lbr" ] || rmmod kcc_lbrpmu
		return 0
	fi
	cost_fp 1 "$c_rounds" "$c_threads" "$c_period" "$c_reps" \
		plain perf-g perf-dwarf kcc-fp kcc-fp-b0 kcc-fp-lean
	cost_depth
	if [ -n "$lbr" ] && [ -x /lbr/perf ]; then
		cost_lbr
		rmmod kcc_lbrpmu
	else
		echo "# cost skip lbr: kcc_lbrpmu or perf not packed"
	fi
	[ "$c_sweep" = 1 ] || return 0
	# 10x: 5 x the rounds on 2 x the threads; 100x: 5 x the rounds on
	# 4 x the threads at a fifth of the period.  perf --call-graph dwarf
	# is left out: at 8 KiB of stack per sample its file of the 100x run
	# would not fit the guest's memory.
	cost_fp 10 $((5 * c_rounds)) $((2 * c_threads)) "$c_period" 1 \
		plain perf-g kcc-fp kcc-fp-lean
	cost_fp 100 $((5 * c_rounds)) $((4 * c_threads)) $((c_period / 5)) 1 \
		plain perf-g kcc-fp kcc-fp-lean
}
