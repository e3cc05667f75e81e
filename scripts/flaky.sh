#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# flaky.sh - how often each guest test fails: boot the guest suite
# (selftests/guest/run.sh) RUNS times per kernel flavour, on a quiet
# machine and with two CPU-bound processes beside it (scripts/loaded.sh;
# the runs side by side share the two),
# and print per test the runs in which it failed.  A test that fails in
# any run is a bug to find (Documentation/testing.rst, "Flaky tests").
#
# Usage: flaky.sh [-n RUNS] [-k "FLAVOURS"] [-w plain|loaded|both]
#                 [-a APPEND] [-j JOBS] [-o DIR] [-s]
#
#   -n RUNS      boots per flavour and kind (default 5)
#   -k FLAVOURS  scripts/kernels.sh flavours (default "6.1 6.12 6.12-rt
#                debug")
#   -w KIND      plain, loaded or both (default both)
#   -a APPEND    guest command line, e.g. kccmode=lbr for the software
#                LBR PMU's tests only (selftests/guest/guest_init.sh)
#   -j JOBS      guests side by side (default 2; each is one TCG thread)
#   -o DIR       keep every run's output there (default: a temporary
#                directory, removed)
#   -s           the whole guest suite as make check runs it
#                (selftests/kcc/guest.sh, one flavour a run: kcc record's
#                runs judged on the host against their traces too); needs
#                KCC and KCC_STATIC (make flaky sets them); -a is ignored;
#                the checker kernels (debug*, kcsan) as CI runs them,
#                without kcc record's runs
#
# Output: one line per run ("run FLAVOUR KIND I: pass|FAIL, S s"), then
# the table: flavour, kind, failures/runs, test.  A run that failed as a
# whole (time limit, kernel report, no result) counts as the test
# "(guest run)".  Exit status: 0 when nothing failed, 1 otherwise.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/selftests/guest/limits.sh"
runs=5
flavours="6.1 6.12 6.12-rt debug"
kinds=both
append=
jobs=2
keep=
suite=

while getopts n:k:w:a:j:o:sh opt; do
	case $opt in
	n) runs=$OPTARG ;;
	k) flavours=$OPTARG ;;
	w) kinds=$OPTARG ;;
	a) append=$OPTARG ;;
	j) jobs=$OPTARG ;;
	o) keep=$OPTARG ;;
	s) suite=1 ;;
	h) sed -n '4,34s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-n RUNS] [-k FLAVOURS] [-w plain|loaded|both] [-a APPEND] [-j JOBS] [-o DIR] [-s]" >&2
	   exit 2 ;;
	esac
done
case $kinds in
plain | loaded) ;;
both) kinds="plain loaded" ;;
*) echo "flaky.sh: -w plain, loaded or both" >&2; exit 2 ;;
esac
for v in "$runs" "$jobs"; do
	case $v in
	'' | *[!0-9]* | 0) echo "flaky.sh: -n and -j take a positive count" >&2; exit 2 ;;
	esac
done
# Loaded: the machine carries KCC_LOAD_PROCS (default 2) CPU-bound
# processes in all, as beside make check, whose guest.sh boots two
# guests side by side; the JOBS runs side by side share them (each run
# gets its part, rounded up), rather than each bringing its own.
procs=${KCC_LOAD_PROCS:-2}
case $procs in
'' | *[!0-9]*) echo "flaky.sh: KCC_LOAD_PROCS=$procs is not a count" >&2; exit 2 ;;
esac
per_run=$(( (procs + jobs - 1) / jobs ))

if [ -n "$keep" ]; then
	out=$keep
	mkdir -p "$out" || exit 1
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/kcc-flaky.XXXXXX") || exit 1
	trap 'rm -rf "$out"' EXIT
fi
trap 'exit 130' INT TERM

# one FLAVOUR KIND I VMLINUZ KDIR KO: one boot, its output in
# $out/FLAVOUR.KIND.I.
one() {
	f=$out/$1.$2.$3
	limit=$(guest_limit "$1")
	load=
	[ "$2" = loaded ] &&
		load="env KCC_LOAD_PROCS=$per_run sh $top/scripts/loaded.sh"
	t0=$(date +%s)
	# The checker kernels run the suite as CI's guest-debug stage does:
	# without kcc record's runs (no KCC_STATIC).
	nostatic=
	case $1 in debug* | kcsan) nostatic="-u KCC_STATIC" ;; esac
	if [ -n "$suite" ]; then
		env $nostatic KCC_GUEST_KERNELS=$1 KCC_GUEST_JOBS=1 \
			$load sh "$top/selftests/kcc/guest.sh" >"$f" 2>&1
	else
		$load sh "$top/selftests/guest/run.sh" -K "$5" -k "$4" \
			-m "$6" -t "$limit" ${append:+-a "$append"} >"$f" 2>&1
	fi
	rc=$?
	s=$(( $(date +%s) - t0 ))
	[ $rc -eq 0 ] && r=pass || r=FAIL
	echo "run $1 $2 $3: $r, $s s"
	echo "KCC-FLAKY-RUN $rc $s" >>"$f"
}

for fl in $flavours; do
	pair=$(sh "$top/scripts/kernels.sh" get "$fl") || {
		echo "flaky.sh: flavour $fl absent (scripts/kernels.sh provide $fl)" >&2
		exit 1
	}
	set -- $pair
	vmlinuz=$1 kdir=$2
	if [ -z "$suite" ]; then
		mkdir -p "$out/mod.$fl"
		sh "$top/selftests/guest/build_module.sh" "$kdir" \
			"$out/mod.$fl" || exit 1
	fi
	n=0
	for kind in $kinds; do
		i=1
		while [ "$i" -le "$runs" ]; do
			one "$fl" "$kind" "$i" "$vmlinuz" "$kdir" \
				"$out/mod.$fl/kcc.ko" </dev/null &
			n=$((n + 1))
			[ $((n % jobs)) -eq 0 ] && wait
			i=$((i + 1))
		done
	done
	wait
done

# The table: per flavour and kind, the tests that failed in any run.
echo "# flavour  kind    failed/runs  test"
bad=0
for fl in $flavours; do
	for kind in $kinds; do
		awk -v fl="$fl" -v kind="$kind" -v runs="$runs" '
			FNR == 1 { run++ }
			/^(# )*not ok [0-9]+ / {
				t = $0
				sub(/^(# )*not ok [0-9]+ /, "", t)
				sub(/ # .*/, "", t)
				gsub(/ \([^)]*\)/, "", t)
				gsub(/[0-9]+/, "N", t)
				if (!((run, t) in seen)) { seen[run, t] = 1; f[t]++ }
			}
			/^KCC-FLAKY-RUN / && $2 != 0 { f["(guest run)"]++ }
			END {
				for (t in f) {
					printf "%-9s %-7s %3d/%-3d     %s\n", fl, kind, f[t], runs, t
					n++
				}
				if (!n)
					printf "%-9s %-7s %3d/%-3d     (none failed)\n", fl, kind, 0, runs
				exit n > 0
			}' "$out/$fl.$kind".* || bad=1
	done
done
exit $bad
