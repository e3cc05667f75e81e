# SPDX-License-Identifier: GPL-2.0
#
# debroot.sh - commands in a Debian root, for the tests that run on a
# clean Debian 12 root (selftests/deb/clean_root.sh, selftests/demo/).
# Sourced, never run.  The test sets $root (the root), $cache (whose
# archives/ keeps apt's downloads between runs: the root stays clean,
# reruns download less) and $tmp.
#
#	inroot CMD...	CMD in the root, with /proc, /sys and /dev mounted
#			in a mount namespace of its own (nothing is mounted
#			outside it, so an interrupted run leaves no mount
#			behind), and each directory of $root_binds (host
#			paths) bound at its own path; output in $tmp/out
#			and $tmp/err, status in $rc
#	show		the last lines of the last inroot's output, as
#			TAP comments

inroot() {
	unshare --mount --propagation private sh -c '
		r=$1 a=$2 b=$3; shift 3
		mount -t proc proc "$r/proc" && mount -t sysfs sys "$r/sys" &&
		mount --rbind /dev "$r/dev" &&
		mount --bind "$a" "$r/var/cache/apt/archives" || exit 1
		for p in $b; do
			mkdir -p "$r$p" && mount --bind "$p" "$r$p" || exit 1
		done
		exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$root" "$cache/archives" "${root_binds:-}" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

show() {
	tail -n 25 "$tmp/out" "$tmp/err" | sed 's/^/# /'
}

# debroot BASE PACKAGES: $root from the tarball BASE, made first when it
# is missing (debootstrap minbase of $suite from $mirror, then PACKAGES
# installed with apt) and kept for later runs; then resolv.conf, and a
# policy-rc.d that lets no daemon start.  Skips the whole test when the
# root cannot be made or unpacked.
debroot() {
	mkdir -p "$root" "$cache/archives/partial" || exit 1
	start=$(date +%s)
	if [ ! -s "$1" ]; then
		if debootstrap --variant=minbase "$suite" "$root" "$mirror" \
			>"$tmp/debootstrap.log" 2>&1; then
			cp /etc/resolv.conf "$root/etc/resolv.conf"
			inroot sh -c "apt-get update -q &&
				apt-get install -y -q --no-install-recommends $2"
			if [ $rc -eq 0 ]; then
				rm -rf "$root/var/lib/apt/lists/"* &&
				tar -C "$root" -cf - . | zstd -q -T0 -o "$1.tmp" &&
					mv "$1.tmp" "$1"
			else
				show
			fi
		else
			tail -n 20 "$tmp/debootstrap.log" | sed 's/^/# /'
			rc=1
		fi
		echo "# debootstrap and $2: $(( $(date +%s) - start )) s (cached in $1)"
		if [ $rc -ne 0 ]; then
			rm -f "$1.tmp"
			ktap_skip_all "no Debian root: debootstrap or apt failed (archive unreachable?)"
		fi
	else
		zstd -dc "$1" | tar -C "$root" -xf - || {
			rm -f "$1"
			ktap_skip_all "the cached root $1 did not unpack (removed)"
		}
		echo "# cached root unpacked: $(( $(date +%s) - start )) s"
	fi
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
}
