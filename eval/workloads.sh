#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# workloads.sh - fetch, build and record the real programs of make eval:
#
#	bzip2	the compressor, compressing 1.5 MB of its own sources
#	lua	the Lua 5.4 interpreter running eval/workloads/bench.lua
#	sqlite	the sqlite3 shell running eval/workloads/bench.sql in memory
#	tcc	the Tiny C Compiler compiling bzip2's and lua's sources (a
#		compiler: recursive descent, deep recursion in expressions)
#	lz4	the LZ4 compressor at level 9 on the bzip2 input (a
#		compressor with tight loops around small routines)
#
# Sources are Debian's (apt-get source through a private apt state in the
# cache, so the system's apt configuration is left alone; unpacked without
# the packaging patches, which relink to the system's libraries), built with
# -finstrument-functions and linked with the kcc tracing runtime; each run
# is recorded with address randomisation off and converted to a kcc binary
# trace: $CACHE/traces/NAME.trace.  Everything lives in the cache
# (default ~/.cache/kcc-eval, or $KCC_EVAL_CACHE), outside the tree;
# finished steps are skipped on the next run.
#
# Usage: KCC=path/to/kcc KCC_TRACE_RT=path/to/kcc_trace_rt.o \
#	 sh eval/workloads.sh [NAME...]
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}
: "${KCC:?set KCC to the kcc binary}"
: "${KCC_TRACE_RT:?set KCC_TRACE_RT to kcc_trace_rt.o (make trace-rt)}"
CC=${CC:-gcc}
JOBS=${JOBS:-2}
TRACE_CFLAGS="-O2 -g -finstrument-functions -fno-omit-frame-pointer"

log() {
	echo "eval: $*" >&2
}

need_tools() {
	missing=""
	command -v "$CC" >/dev/null 2>&1 || missing="$missing gcc"
	command -v make >/dev/null 2>&1 || missing="$missing make"
	command -v dpkg-source >/dev/null 2>&1 || missing="$missing dpkg-dev"
	command -v tclsh >/dev/null 2>&1 || missing="$missing tcl"
	command -v xz >/dev/null 2>&1 || missing="$missing xz-utils"
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "missing build tools:$missing (apt-get install them)"
		exit 1
	fi
	log "installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2
}

# apt-get with a private state: only Debian's deb-src index, in the cache.
APT=$CACHE/apt
apt_src() {
	apt-get -q -o APT::Sandbox::User=root \
		-o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$APT/parts" \
		-o Dir::State::Lists="$APT/lists" \
		-o Dir::Cache="$APT/cache" "$@"
}

apt_init() {
	[ -f "$APT/updated" ] && return 0
	mkdir -p "$APT/parts" "$APT/lists/partial" "$APT/cache/archives/partial"
	cat >"$APT/parts/debian-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	log "apt-get update (deb-src index, private to the cache)"
	apt_src update >&2
	touch "$APT/updated"
}

# fetch PKG: unpacked Debian source in $CACHE/src/PKG; prints the dir.
fetch() {
	d=$CACHE/src/$1
	if [ ! -f "$d/.unpacked" ]; then
		apt_init
		rm -rf "$d" && mkdir -p "$d"
		log "apt-get source $1"
		(cd "$d" && apt_src source --download-only "$1" >&2 &&
		 dpkg-source --no-check --skip-patches -x ./*.dsc src >&2)
		touch "$d/.unpacked"
	fi
	echo "$d/src"
}

# record NAME CMD...: run CMD traced, into $CACHE/traces/NAME.trace.
record() {
	name=$1
	shift
	out=$CACHE/traces/$name
	[ -f "$out.trace" ] && return 0
	rm -rf "$out" && mkdir -p "$out"
	log "recording $name"
	KCC_TRACE_DIR=$out setarch "$(uname -m)" -R "$@" >"$out.stdout"
	"$KCC" trace convert -o "$out.trace.tmp" "$out"
	mv "$out.trace.tmp" "$out.trace"
	rm -rf "$out"
}

build_bzip2() {
	src=$(fetch bzip2)
	b=$CACHE/build/bzip2
	if [ ! -x "$b/bzip2" ]; then
		log "building bzip2"
		rm -rf "$b" && cp -r "$src" "$b"
		make -C "$b" -j"$JOBS" CC="$CC" \
			CFLAGS="$TRACE_CFLAGS -D_FILE_OFFSET_BITS=64" \
			LDFLAGS="$KCC_TRACE_RT" bzip2 >&2
	fi
	# The input: the package's own C sources, over and over (1.5 MB).
	in=$CACHE/build/bzip2.in
	if [ ! -f "$in" ]; then
		: >"$in.tmp"
		for _ in 1 2 3 4 5 6; do
			cat "$b"/*.c "$b"/*.h >>"$in.tmp"
		done
		head -c 1500000 "$in.tmp" >"$in" && rm -f "$in.tmp"
	fi
	record bzip2 sh -c "'$b/bzip2' -9 -c '$in' >/dev/null"
}

build_lua() {
	src=$(fetch lua5.4)
	b=$CACHE/build/lua
	if [ ! -x "$b/src/lua" ]; then
		log "building lua"
		rm -rf "$b" && cp -r "$src" "$b"
		# A fixed string hash seed: runs are identical to the event.
		echo '#define luai_makeseed(L) 0u' >"$b/src/kcc_seed.h"
		make -C "$b/src" -j"$JOBS" CC="$CC" \
			MYCFLAGS="$TRACE_CFLAGS -include kcc_seed.h" \
			SYSCFLAGS="-DLUA_USE_LINUX" \
			SYSLIBS="-Wl,-E -ldl" MYLDFLAGS="$KCC_TRACE_RT" \
			lua >&2
	fi
	record lua "$b/src/lua" "$top/eval/workloads/bench.lua"
}

build_sqlite() {
	src=$(fetch sqlite3)
	b=$CACHE/build/sqlite
	if [ ! -x "$b/sqlite3" ]; then
		log "building sqlite3 (amalgamation, then the shell)"
		rm -rf "$b" && mkdir -p "$b"
		(cd "$b" && "$src/configure" --disable-tcl --disable-readline \
			--disable-load-extension >&2 &&
		 make -j"$JOBS" sqlite3.c shell.c >&2)
		"$CC" $TRACE_CFLAGS -DSQLITE_THREADSAFE=0 \
			-DSQLITE_OMIT_LOAD_EXTENSION -I"$b" \
			-o "$b/sqlite3" "$b/shell.c" "$b/sqlite3.c" \
			"$KCC_TRACE_RT" -lm >&2
	fi
	record sqlite sh -c "'$b/sqlite3' :memory: <'$top/eval/workloads/bench.sql'"
}

build_tcc() {
	# Its input first: the functions share their variables.
	build_lua
	build_bzip2
	src=$(fetch tcc)
	b=$CACHE/build/tcc
	if [ ! -x "$b/tcc" ]; then
		log "building tcc"
		rm -rf "$b" && cp -r "$src" "$b"
		# The compiler is traced; its runtime library is built by
		# the traced compiler itself, untraced (no KCC_TRACE_DIR).
		(cd "$b" && ./configure --cc="$CC" \
			--extra-cflags="$TRACE_CFLAGS" \
			--extra-ldflags="$KCC_TRACE_RT -lpthread" >&2 &&
		 make -j"$JOBS" >&2)
	fi
	set -- "$CACHE"/build/bzip2/blocksort.c "$CACHE"/build/bzip2/compress.c \
		"$CACHE"/build/bzip2/bzlib.c "$CACHE"/build/lua/src/lparser.c \
		"$CACHE"/build/lua/src/lvm.c "$CACHE"/build/lua/src/lcode.c
	# Into a file of the cache, never /dev/null: tcc unlinks its output
	# before it writes it, and as root that removes the device node
	# (every later write to /dev/null then fills a regular file, and
	# compilers' probes that read it, kbuild's cc-option, fail).
	record tcc sh -c "for f in $*; do '$b/tcc' -B'$b' -I'$b/include' \
		-I'$CACHE/build/lua/src' -c -o '$b/eval-out.o' \$f || exit 1; done"
}

build_lz4() {
	build_bzip2
	src=$(fetch lz4)
	b=$CACHE/build/lz4
	if [ ! -x "$b/programs/lz4" ]; then
		log "building lz4"
		rm -rf "$b" && cp -r "$src" "$b"
		make -C "$b/programs" -j"$JOBS" CC="$CC" \
			CFLAGS="$TRACE_CFLAGS" LDFLAGS="$KCC_TRACE_RT" lz4 >&2
	fi
	record lz4 sh -c "'$b/programs/lz4' -9 -c '$CACHE/build/bzip2.in' >/dev/null"
}

need_tools
mkdir -p "$CACHE/traces" "$CACHE/build"
[ $# -gt 0 ] || set -- bzip2 lua sqlite tcc lz4
for w in "$@"; do
	case "$w" in
	bzip2) build_bzip2 ;;
	lua) build_lua ;;
	sqlite) build_sqlite ;;
	tcc) build_tcc ;;
	lz4) build_lz4 ;;
	*) log "unknown workload '$w' (bzip2, lua, sqlite, tcc, lz4)"; exit 2 ;;
	esac
	# A recorded program must leave the machine as it found it.
	if [ ! -c /dev/null ]; then
		log "after $w, /dev/null is no longer a device (restore it: rm /dev/null; mknod -m 666 /dev/null c 1 3)"
		exit 1
	fi
done
