# SPDX-License-Identifier: GPL-2.0
#
# bench_curve.awk - the table of make bench-guest-long from the lines of
# selftests/guest/bench_cost.sh's cost_curve: "run group=G cfg=C
# scale=POINT mode=M rc=.. wall=.. samples=.. bytes=.. report=..
# kmem=.." (one run each) and "curve point=POINT ..." (the sizes of a
# point, what kcc dropped, the time a point took).  Per point and tool:
# samples, bytes, bytes a sample, kcc's bytes as a share of perf's,
# time to a report, kernel memory; then the goal, kcc's bytes at most
# 1% of perf's at 100,000 samples or more in at least one mode.
# Asserts nothing.

function kv(    i, eq) {
	delete v
	for (i = 2; i <= NF; i++) {
		eq = index($i, "=")
		v[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
}

# 10000 -> 10^4; any other point as it is.
function pname(p,    e, q) {
	q = p + 0
	for (e = 0; q >= 10 && q % 10 == 0; e++)
		q /= 10
	return (q == 1 && e > 0) ? "10^" e : p
}

# The perf configuration a kcc one is measured against.
function perfof(g) {
	return g == "fp" ? "perf-g" : "perf-j"
}

$1 == "curve" {
	kv()
	if ("took" in v)
		took[v["point"]] = v["took"]
	else if ("dropped" in v)
		drop[v["point"], v["group"], v["cfg"]] = v["dropped"]
	else {
		rounds[v["point"], v["group"]] = v["rounds"]
		threads[v["point"], v["group"]] = v["threads"]
		period[v["point"], v["group"]] = v["period"]
	}
	next
}

$1 == "run" {
	kv()
	p = v["scale"]
	if (!(p in seenp)) {
		seenp[p] = 1
		pts[++npts] = p
	}
	k = p SUBSEP v["group"] SUBSEP v["cfg"]
	have[k] = 1
	for (f in v)
		r[k, f] = v[f] ~ /^[0-9]+$/ ? v[f] + 0 : v[f]
}

function line(p, g, c, first,    k, pk, s, b, pb, sh, rep, dr, bad) {
	k = p SUBSEP g SUBSEP c
	if (!have[k])
		return
	pk = p SUBSEP g SUBSEP perfof(g)
	s = r[k, "samples"] + 0
	b = r[k, "bytes"] + 0
	pb = have[pk] ? r[pk, "bytes"] + 0 : 0
	sh = "-"
	if (c !~ /^perf/ && pb > 0)
		sh = sprintf("%.2f%%", 100 * b / pb)
	rep = sprintf("%.3f", r[k, "report"] / 1e9)
	if (r[k, "mode"] == "p")
		rep = "piped"
	dr = c ~ /^perf/ ? "" : "-"
	if ((p SUBSEP g SUBSEP c) in drop)
		dr = drop[p, g, c]
	bad = ""
	if (r[k, "rc"] != 0)
		bad = " (run failed, rc " r[k, "rc"] ")"
	printf "  %-6s %-5s %7s  %-13s %8d %9s %9s %8s %8.1f %9s %8s  %s%s\n",
		first ? pname(p) : "", first ? g : "",
		first ? rounds[p, g] : "", c, s, human(b),
		s ? sprintf("%.1f", b / s) : "-", sh, r[k, "wall"] / 1e9,
		rep, human(r[k, "kmem"]), dr, bad
}

BEGIN {
	split("perf-g kcc-fp kcc-fp-lean", cfp, " ")
	split("perf-j kcc-lbr kcc-lbr-lean", clbr, " ")
}

function cname(g, n) {
	return g == "fp" ? cfp[n] : clbr[n]
}

END {
	print ""
	print "curve: one run per point and tool (make bench-guest-long); % of perf = kcc's bytes / perf's at the point; piped: perf record wrote into a pipe, bytes counted, no file, no report"
	for (i = 1; i <= npts; i++) {
		p = pts[i]
		for (j = 1; j <= 2; j++) {
			g = j == 1 ? "fp" : "lbr"
			if ((p, g) in rounds)
				printf "  %s %s: %s rounds on %s threads, %s %s a sample\n",
					pname(p), g, rounds[p, g], threads[p, g],
					period[p, g], g == "fp" ? "ns of cpu-clock" : "calls"
		}
	}
	printf "  %-6s %-5s %7s  %-13s %8s %9s %9s %8s %8s %9s %8s  %s\n",
		"point", "group", "rounds", "tool", "samples", "bytes",
		"B/sample", "of perf", "wall s", "report s", "kmem", "dropped"
	for (i = 1; i <= npts; i++) {
		p = pts[i]
		for (j = 1; j <= 2; j++) {
			g = j == 1 ? "fp" : "lbr"
			for (n = 1; n <= 3; n++)
				line(p, g, cname(g, n), n == 1)
		}
		if (p in took)
			printf "  %-6s took %.0f s\n", "", took[p] / 1e9
	}

	# The goal: at points where the kcc run and perf's both took
	# 100,000 samples or more.
	print ""
	print "goal (stated, not asserted): kcc's bytes <= 1% of perf's at >= 100,000 samples, in at least one mode:"
	best = ""
	for (j = 1; j <= 2; j++) {
		g = j == 1 ? "fp" : "lbr"
		for (n = 2; n <= 3; n++) {
			c = cname(g, n)
			out = ""
			for (i = 1; i <= npts; i++) {
				p = pts[i]
				k = p SUBSEP g SUBSEP c
				pk = p SUBSEP g SUBSEP perfof(g)
				if (!have[k] || !have[pk] || r[pk, "bytes"] + 0 == 0)
					continue
				if (r[k, "samples"] < 100000 || r[pk, "samples"] < 100000)
					continue
				sh = 100 * r[k, "bytes"] / r[pk, "bytes"]
				out = out sprintf("%s%s %.2f%% (%s of %s; %d and %d samples)",
					out == "" ? "" : ", ", pname(p), sh,
					human(r[k, "bytes"]), human(r[pk, "bytes"]),
					r[k, "samples"], r[pk, "samples"])
				if (best == "" || sh < bsh) {
					best = c " at " pname(p)
					bsh = sh
				}
			}
			printf "  %-13s vs %-7s %s\n", c, perfof(g),
				out == "" ? "no point with 100,000 samples in both runs" : out
		}
	}
	if (best == "")
		print "  not measured: no point reached 100,000 samples in both tools"
	else
		printf "  %s: the least share is %.2f%%, %s\n",
			bsh <= 1 ? "met" : "missed", bsh, best
}
