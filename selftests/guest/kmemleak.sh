# SPDX-License-Identifier: GPL-2.0
#
# kmemleak.sh - guest-side kmemleak checks, sourced by the guest's /init
# (busybox sh).  Copy it into the initramfs and use it as
#
#	. /kmemleak.sh
#	kmemleak_begin			# before insmod: forget boot-time suspects
#	insmod /kcc.ko ...; ...; rmmod kcc
#	kmemleak_check || result=fail	# after rmmod: scan, report
#
# On a kernel without CONFIG_DEBUG_KMEMLEAK (the stock Debian kernels) both
# print one "kmemleak: unavailable" line and succeed, so the same /init runs
# on every flavour of scripts/kernels.sh.  The kcc debug kernel is built
# with CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=n: nothing scans unless asked here.
#
# Needs the busybox applets mount, cat, date, grep and sleep.
# Output lines start with "kcc-guest: kmemleak:"; the leak report itself is
# printed verbatim (its "unreferenced object" lines are what the host-side
# judge looks for, together with the return status of kmemleak_check).

KMEMLEAK=/sys/kernel/debug/kmemleak

kmemleak_available() {
	[ -e $KMEMLEAK ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	[ -w $KMEMLEAK ] || return 1
	# A kmemleak that turned itself off (out of metadata, "kmemleak=off")
	# refuses writes: treat it as absent rather than as clean.
	echo scan >$KMEMLEAK 2>/dev/null
}

# Forget what is already suspect (boot-time objects), so that a later
# report is about what happened after this call.
kmemleak_begin() {
	if ! kmemleak_available; then
		echo "kcc-guest: kmemleak: unavailable (kernel without CONFIG_DEBUG_KMEMLEAK)"
		return 0
	fi
	echo clear >$KMEMLEAK
	echo "kcc-guest: kmemleak: cleared"
	return 0
}

# Scan and print any report.  Return 1 if an unreferenced object was found.
# kmemleak ignores objects younger than 5 s (jiffies_min_age), hence the
# sleep; two scans, as Documentation/dev-tools/kmemleak.rst advises, so a
# pointer that was in flight during the first does not count.
kmemleak_check() {
	if ! kmemleak_available; then
		echo "kcc-guest: kmemleak: unavailable (kernel without CONFIG_DEBUG_KMEMLEAK)"
		return 0
	fi
	sleep "${KMEMLEAK_AGE:-6}"
	t0=$(date +%s)
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	n=$(grep -c 'unreferenced object' $KMEMLEAK)
	echo "kcc-guest: kmemleak: two scans took $(( $(date +%s) - t0 )) s"
	if [ "$n" -eq 0 ]; then
		echo "kcc-guest: kmemleak: no leak"
		return 0
	fi
	echo "kcc-guest: kmemleak: $n unreferenced object(s):"
	cat $KMEMLEAK
	return 1
}
