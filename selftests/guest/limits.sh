# SPDX-License-Identifier: GPL-2.0
#
# limits.sh - sourced by selftests/kcc/guest.sh and scripts/flaky.sh: the
# time limit of one guest boot of a kernel flavour (scripts/kernels.sh).
# KASAN (or KCSAN) and lockdep under TCG make the checker kernels several
# times slower than the others.  KCC_GUEST_LIMIT and
# KCC_GUEST_DEBUG_LIMIT override the two defaults (seconds).

guest_limit() {	# guest_limit FLAVOUR: prints the limit in seconds
	case $1 in
	debug* | kcsan) echo "${KCC_GUEST_DEBUG_LIMIT:-1500}" ;;
	*) echo "${KCC_GUEST_LIMIT:-600}" ;;
	esac
}
