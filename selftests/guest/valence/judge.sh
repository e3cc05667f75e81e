# SPDX-License-Identifier: GPL-2.0
#
# judge.sh - the host side of the Valence end-to-end runs
# (valence_e2e.sh), sourced by selftests/kcc/guest.sh, which sets KCC,
# tmp and i and counts failures.
#
# The oracle: each run's runtime wrote the set of true paths of that run
# (every distinct stack of instrumented routines any thread entered,
# from its own shadow stack, kept apart from the encoding).  kcc.ko's
# samples cannot be paired with a true stack one by one, so every
# sampled context, as kcc report prints it in full (folded, one line
# per context), must be one of those paths; valence-work's check-mode
# samples (the area and the true stack taken together at each SIGPROF)
# must in addition decode to exactly their own stack.  For fp the frames
# outside the program's instrumented routines are dropped first (libc,
# the runtime), which only helps it.
#
# valence_judge KERNEL: three TAP results (work, torn, fp beside valence).

# vj_truth TABLE PATHS: the true paths by name, one a line.
vj_truth() {
	awk '
		FNR == NR { if ($1 == "node") name[$2] = $5; next }
		{
			s = ""
			for (f = 1; f <= NF; f++)
				s = s (f > 1 ? ";" : "") name[$f]
			print s
		}' "$1" "$2"
}

# vj_score TRUTH FOLDED: "exact total unknown": samples whose context
# (program routines only) is a true path, samples with a context,
# samples charged to [unknown] or no program routine at all.
vj_score() {
	awk '
		FNR == NR {
			ok[$0] = 1
			n = split($0, f, ";")
			for (j = 1; j <= n; j++) prog[f[j]] = 1
			next
		}
		{
			c = $NF; $NF = ""; sub(/ $/, "")
			n = split($0, f, ";")
			s = ""
			for (j = 1; j <= n; j++)
				if (f[j] in prog) s = s (s == "" ? "" : ";") f[j]
			if (s == "") { unk += c; next }
			total += c
			if (s in ok) exact += c
		}
		END { printf "%d %d %d\n", exact, total, unk }' "$1" "$2"
}

# (run.sh writes blob NAME to $tmp/blobs/NAME.stream.)
# vj_run RUN: score line of RUN's profile against its own truth.
# What is missing is said on stderr (a comment in the TAP).
vj_run() {
	b=$tmp/blobs
	for f in "$b/$1.stream" "$b/$1-paths.stream" "$tmp/rec/vwork.valence"; do
		[ -s "$f" ] && continue
		echo "# $1: $(basename "$f") missing or empty" >&2
		return 1
	done
	vj_truth "$tmp/rec/vwork.valence" "$b/$1-paths.stream" >"$tmp/$1.truth"
	if [ ! -s "$tmp/$1.truth" ]; then
		echo "# $1: no true path named from $(wc -l <"$b/$1-paths.stream") lines of paths" >&2
		return 1
	fi
	if ! "$KCC" report --format folded --sort samples "$b/$1.stream" \
		>"$tmp/$1.folded" 2>"$tmp/$1.rerr"; then
		sed "s/^/# $1: kcc report: /" "$tmp/$1.rerr" >&2
		return 1
	fi
	vj_score "$tmp/$1.truth" "$tmp/$1.folded" >"$tmp/$1.score"
	# No sampled context with a routine of the truth's: say what each
	# side held (a truth of ids the table lacks, a profile of [unknown]).
	if [ "$(cut -d' ' -f2 "$tmp/$1.score")" = 0 ]; then
		echo "# $1: no sampled context names a routine of the $(wc -l <"$tmp/$1.truth") true paths (first: $(head -c 120 "$tmp/$1.truth" | head -n 1); paths blob: $(head -c 60 "$b/$1-paths.stream" | head -n 1))" >&2
	fi
	cat "$tmp/$1.score"
}

valence_judge() {
	kern=$1

	if [ -n "${KCC_ARTIFACTS:-}" ] && mkdir -p "$KCC_ARTIFACTS/valence-$kern"; then
		cp "$tmp"/blobs/valence-* "$tmp"/blobs/fp-work* "$tmp/rec/vwork" \
			"$tmp/rec/vwork.valence" "$KCC_ARTIFACTS/valence-$kern/" 2>/dev/null
	fi

	i=$((i + 1))
	what="guest $kern: kcc record --source valence of vwork (no frame pointers, threads, recursion): every sampled context is a true path of the run, check-mode samples decode exactly"
	set -- $(vj_run valence-work)
	vw_exact=${1:-0} vw_total=${2:-0}
	sed -n 's/^/# valence-work: /p' "$tmp/blobs/valence-work-err.stream" 2>/dev/null
	"$KCC" valence check "$tmp/rec/vwork.valence" \
		"$tmp/blobs/valence-work-chk.stream" >"$tmp/vw.check" 2>&1
	vc=$?
	sed 's/^/# valence-work check mode: /' "$tmp/vw.check"
	set -- $(sed -n 's/^samples \([0-9]*\) exact \([0-9]*\) wrong \([0-9]*\).*/\1 \2 \3/p' "$tmp/vw.check")
	echo "# valence-work: $vw_exact of $vw_total sampled contexts true"
	if [ "$vw_total" -ge 100 ] && [ "$vw_exact" = "$vw_total" ] &&
	   grep -q ' 0 undecodable' "$tmp/blobs/valence-work-err.stream" &&
	   grep -q ' 0 of another table' "$tmp/blobs/valence-work-err.stream" &&
	   [ $vc -eq 0 ] && [ "${1:-0}" -ge 1 ] && [ "$1" = "$2" ] &&
	   [ "$3" = 0 ]; then
		echo "ok $i $what"
	else
		head -n 20 "$tmp/valence-work.folded" 2>/dev/null | sed 's/^/# /'
		echo "not ok $i $what"
		fail=1
	fi

	i=$((i + 1))
	what="guest $kern: kcc record --source valence of vwork torn (samples inside the area's updates): torn reads counted, every sampled context true"
	set -- $(vj_run valence-torn)
	sed -n 's/^/# valence-torn: /p' "$tmp/blobs/valence-torn-err.stream" 2>/dev/null
	torn=$(sed -n 's/^kcc.ko: .* torn \([0-9]*\),.*/\1/p' \
		"$tmp/blobs/valence-torn-err.stream" 2>/dev/null)
	echo "# valence-torn: ${1:-0} of ${2:-0} sampled contexts true, ${torn:-?} torn reads"
	if [ "${2:-0}" -ge 50 ] && [ "$1" = "$2" ] && [ "${torn:-0}" -ge 1 ] &&
	   grep -q ' 0 undecodable' "$tmp/blobs/valence-torn-err.stream"; then
		echo "ok $i $what"
	else
		head -n 20 "$tmp/valence-torn.folded" 2>/dev/null | sed 's/^/# /'
		echo "not ok $i $what"
		fail=1
	fi

	# fp on the same binary: a figure, not a verdict on fp.
	i=$((i + 1))
	what="guest $kern: vwork under --source fp and --source valence, side by side"
	set -- $(vj_run fp-work)
	fp_exact=${1:-0} fp_total=${2:-0} fp_unk=${3:-0}
	echo "# side by side, vwork work 2000 (no frame pointers), samples in a true context:"
	echo "#   valence  $vw_exact of $vw_total"
	echo "#   fp       $fp_exact of $fp_total (and $fp_unk with no program routine)"
	for r in valence-work fp-work; do
		echo "# $r, top contexts:"
		sort -k2 -n -r "$tmp/$r.folded" 2>/dev/null | awk '
			{ c = $NF; $NF = ""; t[$0] = c }
			END { for (x in t) print t[x], x }' | sort -n -r |
			head -n 6 | sed 's/^/#   /'
	done
	if [ "$fp_total" -gt 0 ] && [ "$vw_total" -gt 0 ]; then
		echo "ok $i $what"
	else
		echo "not ok $i $what"
		fail=1
	fi
}
