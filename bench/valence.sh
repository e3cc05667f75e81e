#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# valence.sh - cost of kcc's Valence runtime on the eval programs: each
# program is built three ways from the sources make eval fetched (plain
# -O2; -finstrument-functions with the full tracing runtime writing its
# trace; -finstrument-functions with kcc_valence_rt.o applying the table
# of kcc valence annotate), run REPS times, and the least user CPU time
# of each is printed, with the ratio to the plain build.  A check run
# then decodes the samples of the Valence build against its true stacks:
# exactness and words per sample, Valence against PCCE.  Prints figures,
# asserts nothing.
#
# Usage: KCC=build/kcc sh bench/valence.sh [bzip2|lua]...
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}
KCC=${KCC:-$top/build/kcc}
CC=${CC:-gcc}
REPS=${REPS:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/kcc-valence-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT

$CC -std=gnu11 -O2 -fPIC -I"$top/include/uapi" -I"$top/user/lib" -c \
	-o "$out/valence_rt.o" "$top/tools/kcc-trace/kcc_valence_rt.c"
$CC -std=gnu11 -O2 -fPIC -c -o "$out/trace_rt.o" \
	"$top/tools/kcc-trace/kcc_trace_rt.c"

# usertime CMD...: user CPU seconds of one run
usertime() {
	/usr/bin/env time -f %U -o "$out/t" "$@" >/dev/null 2>&1
	cat "$out/t"
}

best() {
	b=""
	i=0
	while [ $i -lt "$REPS" ]; do
		t=$(usertime "$@")
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then
			b=$t
		fi
		i=$((i + 1))
	done
	echo "$b"
}

# build NAME SRCDIR FILES...: $out/NAME.{plain,trace,valence}
build() {
	name=$1 dir=$2
	shift 2
	(cd "$dir" && $CC -O2 -w -o "$out/$name.plain" "$@" -lm) &&
	(cd "$dir" && $CC -O2 -w -finstrument-functions -o "$out/$name.trace" \
		"$@" "$out/trace_rt.o" -lm -lpthread) &&
	(cd "$dir" && $CC -O2 -w -finstrument-functions \
		-o "$out/$name.valence" "$@" "$out/valence_rt.o" -lm) &&
	"$KCC" valence annotate -o "$out/$name.table" "$out/$name.valence"
}

# measure NAME ARGS...
measure() {
	name=$1
	shift
	p=$(best "$out/$name.plain" "$@")
	mkdir -p "$out/tr"
	t=$(KCC_TRACE_DIR=$out/tr best "$out/$name.trace" "$@")
	# the tracing runtime must have written its trace, or it measured nothing
	[ -n "$(ls "$out/tr")" ] || { echo "valence.sh: no trace written" >&2; exit 1; }
	v=$(KCC_VALENCE_TABLE=$out/$name.table best "$out/$name.valence" "$@")
	printf '%-6s plain %6ss  tracing %6ss (x%s)  valence %6ss (x%s)\n' \
		"$name" "$p" "$t" "$(echo "scale=2; $t / $p" | bc)" \
		"$v" "$(echo "scale=2; $v / $p" | bc)"
	rm -rf "$out/tr"
	KCC_VALENCE_TABLE=$out/$name.table KCC_VALENCE_CHECK=$out/$name.chk \
		KCC_VALENCE_HZ=1000 "$out/$name.valence" "$@" >/dev/null 2>&1
	printf '%-6s ' "$name"
	"$KCC" valence check "$out/$name.table" "$out/$name.chk" | tr '\n' ' '
	echo
}

[ $# -gt 0 ] || set -- bzip2 lua
for w in "$@"; do
	case $w in
	bzip2)
		d=$CACHE/src/bzip2/src
		build bzip2 "$d" blocksort.c huffman.c crctable.c randtable.c \
			compress.c decompress.c bzlib.c bzip2.c
		for i in 1 2 3 4 5 6; do cat "$CACHE/build/bzip2.in"; done \
			>"$out/bzip2.in"
		measure bzip2 -9 -c "$out/bzip2.in"
		;;
	lua)
		d=$CACHE/build/lua/src
		# shellcheck disable=SC2046
		build lua "$d" -DLUA_USE_LINUX -include kcc_seed.h \
			$(cd "$d" && ls *.c | grep -v luac.c) -ldl
		measure lua -e "for _ = 1, ${LUA_REPS:-20} do dofile('$top/eval/workloads/bench.lua') end"
		;;
	*)
		echo "valence.sh: unknown program '$w' (bzip2, lua)" >&2
		exit 2
		;;
	esac
done
