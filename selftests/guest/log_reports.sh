# SPDX-License-Identifier: GPL-2.0
#
# log_reports.sh - the kernel reports in a guest's serial log, sourced by
# selftests/guest/run.sh and scripts/guest-progs.sh.
#
# boot_reports LOG: the report lines (numbered as in LOG) printed before
# the guest's init said "kcc-guest: kernel ...", that is during boot,
# before kcc.ko was loaded: the kernel's, its configuration's or QEMU's,
# never kcc's.  They still fail a run (a checker kernel that reports at
# boot cannot vouch for what follows), with that said.
KCC_REPORT_RE='BUG:|WARNING:|Oops|Call Trace|KASAN|UBSAN|possible (circular|recursive) locking|INFO: task .* blocked|Kernel panic'

boot_reports() {
	tr -d '\r' <"$1" | sed -n '/kcc-guest: kernel [0-9]/q; p' |
		grep -a -n -E "$KCC_REPORT_RE" | head -n 10
}
