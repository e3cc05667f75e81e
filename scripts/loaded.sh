#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# loaded.sh - run a command on a busy machine: N CPU-bound processes
# (default 2, KCC_LOAD_PROCS) spin beside it for as long as it runs, as
# other work does on a shared CI machine.  Each is a shell loop under
# nice 0, the command's own priority, so neither side is favoured.
#
# Usage: loaded.sh COMMAND [ARGS...]
# Exit status: the command's.  Prints the load average before and after
# on stderr.
set -u

if [ $# -eq 0 ]; then
	echo "usage: $0 COMMAND [ARGS...]" >&2
	exit 2
fi
n=${KCC_LOAD_PROCS:-2}
case $n in
'' | *[!0-9]*) echo "loaded.sh: KCC_LOAD_PROCS=$n is not a count" >&2; exit 2 ;;
esac

pids=
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill $pids 2>/dev/null
	pids=
}
trap cleanup EXIT
trap 'exit 130' INT TERM

i=0
while [ "$i" -lt "$n" ]; do
	sh -c 'while :; do :; done' &
	pids="$pids $!"
	i=$((i + 1))
done
echo "loaded.sh: $n CPU-bound processes beside '$*'; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$@"
rc=$?
echo "loaded.sh: done (status $rc); load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit $rc
