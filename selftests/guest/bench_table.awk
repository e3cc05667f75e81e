# SPDX-License-Identifier: GPL-2.0
#
# bench_table.awk - the table of make bench-guest from the run lines of
# selftests/guest/bench_cost.sh ("group=G cfg=C scale=S rep=R mode=M
# rc=.. wall=.. samples=.. bytes=.. fin=.. report=.. kmem=.. wakeups=..
# hcalls=.. hns=.. workns=.."): medians with the spread (min-max over the
# repetitions), ratios to perf, the goals beside them.  Asserts nothing.

function med(key, f,    n, i, j, t, a) {
	n = cnt[key]
	if (!n)
		return ""
	for (i = 1; i <= n; i++)
		a[i] = val[key, i, f] + 0
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	lo[key, f] = a[1]
	hi[key, f] = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# Slowdown of each repetition over the median unprofiled wall time.
function slow(g, s, c,    key, p, i, n, a, t, j) {
	key = g SUBSEP s SUBSEP c
	p = med(g SUBSEP s SUBSEP "plain", "wall")
	if (p == "" || p <= 0 || !cnt[key])
		return ""
	n = cnt[key]
	for (i = 1; i <= n; i++)
		val[key, i, "slow"] = val[key, i, "wall"] / p
	return med(key, "slow")
}

function spread(key, f, fmt, div) {
	if (!div)
		div = 1
	return sprintf("[" fmt "-" fmt "]", lo[key, f] / div, hi[key, f] / div)
}

# Handler ns per sample: the median call (the mean when not traced so).
function hns(key) {
	if (hm[key] > 0)
		return hm[key]
	return hc[key] > 0 ? ht[key] / hc[key] : ""
}

function ratio(a, b, fmt) {
	if (a == "" || b == "" || b + 0 == 0)
		return "-"
	return sprintf(fmt, a / b)
}

{
	delete v
	for (i = 1; i <= NF; i++) {
		eq = index($i, "=")
		v[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	key = v["group"] SUBSEP v["scale"] SUBSEP v["cfg"]
	if (!(key in seen)) {
		seen[key] = 1
		order[++norder] = key
	}
	if (v["rc"] != 0)
		failed[key]++
	if (v["mode"] == "h") {
		hc[key] = v["hcalls"]
		ht[key] = v["hns"]
		hm[key] = v["hmed"]
		next
	}
	n = ++cnt[key]
	for (f in v)
		val[key, n, f] = v[f]
}

function row(g, s, c, quiet,    key, sd, smp, b, r, wk) {
	key = g SUBSEP s SUBSEP c
	if (!cnt[key])
		return
	sd = slow(g, s, c)
	smp = med(key, "samples")
	b = med(key, "bytes")
	r = med(key, "report")
	wk = med(key, "wakeups")
	if (!quiet)
	printf "  %-11s %8s  %5.2f %-13s %8s %8s  %8s  %7s %-15s %8s  %s%s\n", c,
		c == "plain" ? "-" : sprintf("%d", smp),
		sd, spread(key, "slow", "%.2f"),
		c == "plain" ? "-" : (smp > 0 ? sprintf("%.1f", b / smp) : "-"),
		c == "plain" ? "-" : human(b),
		hns(key) == "" ? "-" : sprintf("%.0f", hns(key)),
		c == "plain" ? "-" : sprintf("%.3f", r / 1e9),
		c == "plain" ? "" : spread(key, "report", "%.3f", 1e9),
		c == "plain" ? "-" : human(med(key, "kmem")),
		((c ~ /^kcc/ && wk > 0) ? sprintf("%.1f smp/wakeup", smp / wk) : ""),
		(failed[key] ? sprintf(" (%d runs failed)", failed[key]) : "")
	sdv[key] = sd
	smpv[key] = smp
	bv[key] = b
	rv[key] = r
	kv[key] = med(key, "kmem")
	wkv[key] = wk
}

function header(title) {
	print ""
	print title
	printf "  %-11s %8s  %-19s %8s %8s  %8s  %-23s %8s  %s\n", "config",
		"samples", "slowdown [spread]", "B/sample", "bytes",
		"hndl ns", "to report s [spread]", "kmem", "hand-off"
}

# kcc against perf: ratios kcc / perf (report: perf / kcc).
function cmp(g, s, k, p,    a, b) {
	a = g SUBSEP s SUBSEP k
	b = g SUBSEP s SUBSEP p
	if (!cnt[a] || !cnt[b])
		return
	printf "  %-11s vs %-11s slowdown %s (best runs %s), bytes %s (per sample %s), handler/sample %s, report %s faster, kernel memory %s\n",
		k, p, ratio(sdv[a], sdv[b], "%.2fx"),
		ratio(lo[a, "slow"], lo[b, "slow"], "%.2fx"),
		ratio(bv[a], bv[b], "%.4fx"),
		ratio(smpv[a] ? bv[a] / smpv[a] : "", smpv[b] ? bv[b] / smpv[b] : "", "%.4fx"),
		ratio(hns(a), hns(b), "%.2fx"), ratio(rv[b], rv[a], "%.1fx"),
		ratio(kv[a], kv[b], "%.2fx")
}

# Group G at scale 1: the rows of CFGS, then the ratios of the PAIRS
# ("kcc:perf" each).
function group(g, title, cfgs, pairs,    c, p, n, i, kp) {
	if (!cnt[g SUBSEP 1 SUBSEP "plain"])
		return
	header(title)
	n = split(cfgs, c, " ")
	for (i = 1; i <= n; i++)
		row(g, 1, c[i])
	print "  ratios (kcc / perf; report: how many times faster kcc's is):"
	n = split(pairs, p, " ")
	for (i = 1; i <= n; i++) {
		split(p[i], kp, ":")
		cmp(g, 1, kp[1], kp[2])
	}
}

END {
	group("fp", "fp: cpu-clock, same period; slowdown = wall / median unprofiled wall (median [min-max]); hndl ns = median __perf_event_overflow call (function_graph)",
	      "plain perf-g perf-dwarf kcc-fp kcc-fp-b0 kcc-fp-lean",
	      "kcc-fp:perf-g kcc-fp:perf-dwarf kcc-fp-b0:perf-g kcc-fp-lean:perf-g")
	group("lbr", "lbr: software LBR PMU kcc_lbr, program traced with KCC_TRACE_LBR=1 (its own unprofiled baseline)",
	      "plain perf-j kcc-lbr kcc-lbr-b0 perf-j-2ev kcc-2ev",
	      "kcc-lbr:perf-j kcc-lbr-b0:perf-j kcc-2ev:perf-j-2ev")
	a = "fp" SUBSEP 1 SUBSEP "kcc-fp"
	b = "fp" SUBSEP 1 SUBSEP "kcc-fp-b0"
	if (cnt[a] && cnt[b]) {
		print ""
		print "batched hand-off (kcc-fp) against a wakeup per sample (kcc-fp-b0, batch=0):"
		printf "  samples per wakeup %s -> %s; slowdown %.2f -> %.2f; handler ns/sample %s -> %s; worker ns/sample %.0f -> %.0f\n",
			wkv[b] ? sprintf("%.1f", smpv[b] / wkv[b]) : "-",
			wkv[a] ? sprintf("%.1f", smpv[a] / wkv[a]) : "-",
			sdv[b], sdv[a],
			hns(b) == "" ? "-" : sprintf("%.0f", hns(b)),
			hns(a) == "" ? "-" : sprintf("%.0f", hns(a)),
			smpv[b] ? med(b, "workns") / smpv[b] : 0,
			smpv[a] ? med(a, "workns") / smpv[a] : 0
	}

	# The handler by walk depth: one traced run each.
	if (hc["depth" SUBSEP 1 SUBSEP "kcc-fp-127"] > 0) {
		print ""
		print "handler by walk depth (deep: every sample 600 frames deep; one traced run each; hndl ns = median __perf_event_overflow call):"
		printf "  %-12s %8s %9s %9s %s\n", "config", "samples", "median ns", "mean ns", "vs perf -g at 127"
		split("perf-g-127 perf-g-512 kcc-fp-32 kcc-fp-127 kcc-fp-512 perf-gj-127 kcc-lbr-32 kcc-lbr-127 kcc-lbr-512", dc, " ")
		b = "depth" SUBSEP 1 SUBSEP "perf-g-127"
		for (i = 1; i <= 9; i++) {
			k = "depth" SUBSEP 1 SUBSEP dc[i]
			if (!(hc[k] > 0))
				continue
			printf "  %-12s %8d %9.0f %9.0f %s%s\n", dc[i], hc[k], hm[k],
				ht[k] / hc[k], ratio(hm[k], hm[b], "%.2fx"),
				(failed[k] ? " (run failed)" : "")
		}
	}

	# The sweep: one run per point.
	split("1 10 100", sc, " ")
	big = ""
	if (cnt["fp" SUBSEP 10 SUBSEP "plain"] || cnt["fp" SUBSEP 100 SUBSEP "plain"]) {
		print ""
		print "scaling (one run per point, so no slowdown; growth relative to scale 1):"
		printf "  %-7s %-7s %8s %9s %7s %9s %6s %9s %6s\n", "scale", "tool",
			"samples", "bytes", "growth", "report s", "growth",
			"kmem", "growth"
		for (i = 1; i <= 3; i++) {
			for (j = 1; j <= 3; j++) {
				t = j == 1 ? "perf-g" : j == 2 ? "kcc-fp" : "kcc-fp-lean"
				k = "fp" SUBSEP sc[i] SUBSEP t
				k1 = "fp" SUBSEP 1 SUBSEP t
				if (!cnt[k])
					continue
				if (sc[i] != 1)
					row("fp", sc[i], t, 1)
				printf "  %-7s %-7s %8d %9s %6.1fx %9.3f %5.1fx %9s %5.1fx\n",
					sc[i] "x", t, smpv[k], human(bv[k]),
					bv[k1] ? bv[k] / bv[k1] : 0, rv[k] / 1e9,
					rv[k1] ? rv[k] / rv[k1] : 0, human(kv[k]),
					kv[k1] ? kv[k] / kv[k1] : 0
				if (t == "perf-g" && smpv[k] >= 100000)
					big = sc[i]
			}
		}
	}

	print ""
	print "goals (stated, not asserted):"
	a = "fp" SUBSEP 1 SUBSEP "kcc-fp"
	b = "fp" SUBSEP 1 SUBSEP "perf-g"
	if (cnt[a] && cnt[b]) {
		why = "met"
		if (sdv[a] > sdv[b])
			why = sprintf("missed (handler %s vs %s ns/sample; kcc's worker adds %.0f ns/sample in process context)", (hns(a) == "" ? "-" : sprintf("%.0f", hns(a))), (hns(b) == "" ? "-" : sprintf("%.0f", hns(b))), (smpv[a] ? med(a, "workns") / smpv[a] : 0))
		if (lo[a, "slow"] <= hi[b, "slow"] && lo[b, "slow"] <= hi[a, "slow"])
			why = why "; the spreads overlap: within the guest's noise"
		printf "  kcc's slowdown <= perf -g's at the same period: %.2f vs %.2f (medians): %s\n", sdv[a], sdv[b], why
	}
	if (big == "") {
		mx = 0
		for (i = 1; i <= 3; i++) {
			k = "fp" SUBSEP sc[i] SUBSEP "perf-g"
			if (cnt[k] && smpv[k] > mx)
				mx = smpv[k]
		}
		printf "  bytes <= 1%% of perf's and report >= 10x faster on >= 100,000 samples: not measured (largest run: %d samples; scaled down for TCG)\n", mx
		if (mx) {
			for (i = 1; i <= 3; i++)
				if (cnt["fp" SUBSEP sc[i] SUBSEP "perf-g"] && smpv["fp" SUBSEP sc[i] SUBSEP "perf-g"] == mx)
					big = sc[i]
			printf "    at that run instead:\n"
		}
	}
	if (big != "") {
		a = "fp" SUBSEP big SUBSEP "kcc-fp"
		b = "fp" SUBSEP big SUBSEP "perf-g"
		why = "missed (a kcc profile copies the symbol table of every mapped object, about 55 KB for the static program (1,284 functions), so that it names routines without the binaries, and holds one forest per thread: both grow with objects and threads, not samples; perf.data grows with the samples and would pass 100x kcc's only at several 100,000 samples)"
		if (bv[b] && bv[a] <= bv[b] / 100)
			why = "met"
		printf "  bytes <= 1%% of perf -g's (%dx run, %d samples): %.2f%%: %s\n", big, smpv[b], (bv[b] ? 100 * bv[a] / bv[b] : 0), why
		c = "fp" SUBSEP big SUBSEP "kcc-fp-lean"
		if (cnt[c])
			printf "    with --per-process --build-ids (kcc-fp-lean: one forest per process, no symbol tables): %.2f%% (%s against %s): %s\n", (bv[b] ? 100 * bv[c] / bv[b] : 0), human(bv[c]), human(bv[a]), (bv[b] && bv[c] <= bv[b] / 100) ? "met" : "missed"
		why = "missed (kcc report's own start, symbols and forests, against perf report's replay of every sample)"
		if (rv[a] && rv[b] >= 10 * rv[a])
			why = "met"
		printf "  report >= 10x faster than perf report (%dx run): %.1fx: %s\n", big, (rv[a] ? rv[b] / rv[a] : 0), why
	}
}
