#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - make bench: bench_ksf on the synthetic trace, then on the real
# traces make eval records (bzip2, Lua, sqlite3: $KCC_EVAL_CACHE/traces),
# then the instruction counts of bench/insns.sh.  Arguments go to every
# bench_ksf run (e.g. -R 1 for a quicker pass).
set -eu

BENCH=${BENCH:-build/opt/bench/bench_ksf}
CACHE=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}
export BENCH KCC_EVAL_CACHE="$CACHE"

"$BENCH" "$@"
found=0
for w in bzip2 lua sqlite; do
	t=$CACHE/traces/$w.trace
	[ -f "$t" ] || continue
	found=$((found + 1))
	echo
	"$BENCH" -t "$t" "$@"
done
if [ $found -eq 0 ]; then
	echo
	echo "bench: no real traces in $CACHE/traces: make eval records them"
fi
echo
if command -v valgrind >/dev/null 2>&1; then
	sh "$(dirname "$0")/insns.sh"
else
	echo "bench: valgrind is not installed: no instruction counts"
fi
