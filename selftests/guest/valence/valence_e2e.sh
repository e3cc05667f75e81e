# SPDX-License-Identifier: GPL-2.0
#
# valence_e2e.sh - the Valence source end to end, sourced by
# guest_init.sh (busybox sh; uses its check and dmesg_clean) when
# selftests/kcc/guest.sh packed it into /demo with vwork (vwork.c, built
# with -fomit-frame-pointer -finstrument-functions and kcc's Valence
# runtime) and its table vwork.valence.
#
# Runs, each `kcc record -e cpu-clock -c 500000` of vwork:
#   valence-work  --source valence, vwork work: main and 3 threads,
#                 recursion, frameless leaves, qsort callbacks
#   fp-work       --source fp, the same binary and work
#   valence-torn  --source valence, vwork torn: a tight loop of calls,
#                 samples mostly inside the runtime's updates
# In every run the runtime writes the set of true paths of the run
# (KCC_VALENCE_PATHS); valence-work also writes its check-mode samples
# (KCC_VALENCE_CHECK: the area and the true stack at each SIGPROF).
# Profiles, paths, check samples and kcc record's messages come back as
# blobs NAME, NAME-paths, NAME-chk, NAME-err; selftests/kcc/guest.sh
# judges them on the host (it has the table's names and kcc report).

vrun() {	# vrun NAME SOURCE MODE N
	rm -f "/tmp/$1.data" "/tmp/$1.paths" "/tmp/$1.chk"
	if [ "$2" = valence ]; then
		KCC_VALENCE_PATHS=/tmp/$1.paths KCC_VALENCE_CHECK=/tmp/$1.chk \
			/demo/kcc record --source valence \
			--valence-table /demo/vwork.valence -e cpu-clock \
			-c 500000 -o "/tmp/$1.data" -- /demo/vwork "$3" "$4" \
			>"/tmp/$1.err" 2>&1
	else
		KCC_VALENCE_TABLE=/demo/vwork.valence \
			KCC_VALENCE_PATHS=/tmp/$1.paths /demo/kcc record \
			--source "$2" -k inf -e cpu-clock -c 500000 \
			-o "/tmp/$1.data" -- /demo/vwork "$3" "$4" \
			>"/tmp/$1.err" 2>&1
	fi
	crc=$?
	sed 's/^/# /' "/tmp/$1.err"
	check $crc "$1: kcc record --source $2 -e cpu-clock -- vwork $3 $4"
	blob "$1" "/tmp/$1.data"
	blob "$1-paths" "/tmp/$1.paths"
	blob "$1-chk" "/tmp/$1.chk"
	blob "$1-err" "/tmp/$1.err"
	rm -f "/tmp/$1.data" "/tmp/$1.paths" "/tmp/$1.chk"
	dmesg_clean "$1"
}

vrun valence-work valence work 2000
vrun fp-work fp work 2000
vrun valence-torn valence torn 3000000
