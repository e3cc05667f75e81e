# SPDX-License-Identifier: GPL-2.0
#
# plot.awk - line charts in SVG from the TSV of kcc eval, one panel per
# program, one line per method.  No dependency but awk.
#
#	awk -f eval/plot.awk -v x=period -v y=overlap -v logx=1 \
#	    -v title="..." results.tsv >plot.svg
#
# x, y: column names of the header line; logx=1 for a log scale.  Y is
# a percentage; its axis spans [ymin, 100] with ymin the lowest value
# rounded down to 10.

BEGIN {
	FS = "\t"
	pw = 300; ph = 220		# panel plot area
	ml = 50; mr = 15; mt = 40; mb = 45	# panel margins
	split("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f", color, " ")
	np = 0; nm = 0; ymin = 100
}

NR == 1 {
	for (i = 1; i <= NF; i++)
		col[$i] = i
	if (!(x in col) || !(y in col)) {
		print "plot.awk: no column " x " or " y > "/dev/stderr"
		exit 2
	}
	next
}

{
	p = $col["program"]; m = $col["method"]
	xv = $col[x] + 0; yv = $col[y] + 0
	if (!(p in pidx)) { pidx[p] = ++np; pname[np] = p }
	if (!(m in midx)) { midx[m] = ++nm; mname[nm] = m }
	key = pidx[p] SUBSEP midx[m]
	n = ++cnt[key]
	px[key, n] = xv; py[key, n] = yv
	if (yv < ymin) ymin = yv
	if (!xset || xv < xmin) xmin = xv
	if (!xset || xv > xmax) xmax = xv
	xset = 1
}

function xpos(v) {
	if (logx)
		return (xmax == xmin) ? pw / 2 : (log(v) - log(xmin)) / (log(xmax) - log(xmin)) * pw
	return (xmax == xmin) ? pw / 2 : (v - xmin) / (xmax - xmin) * pw
}

function ypos(v) {
	return ph - (v - y0) / (100 - y0) * ph
}

END {
	if (!np)
		exit 1
	y0 = int(ymin / 10) * 10
	if (y0 >= 100) y0 = 90
	W = np * (ml + pw + mr) + 130
	H = mt + ph + mb + 10
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", W, H
	printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	printf "<text x=\"10\" y=\"18\" font-size=\"14\">%s</text>\n", title
	for (p = 1; p <= np; p++) {
		ox = (p - 1) * (ml + pw + mr) + ml
		printf "<g transform=\"translate(%d,%d)\">\n", ox, mt
		printf "<text x=\"%d\" y=\"-6\" text-anchor=\"middle\" font-size=\"12\">%s</text>\n", pw / 2, pname[p]
		printf "<rect width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n", pw, ph
		for (t = 100; t >= y0; t -= (100 - y0 > 50 ? 20 : 10)) {
			printf "<line x1=\"0\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", pw, ypos(t), ypos(t)
			printf "<text x=\"-4\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n", ypos(t) + 4, t
		}
		# x ticks: every distinct x value
		delete seen
		for (key in cnt) {
			split(key, kk, SUBSEP)
			if (kk[1] != p) continue
			for (i = 1; i <= cnt[key]; i++) {
				v = px[key, i]
				if (v in seen) continue
				seen[v] = 1
				printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", xpos(v), xpos(v), ph, ph + 4
				printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", xpos(v), ph + 16, v
			}
		}
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", pw / 2, ph + 34, xlabel ? xlabel : x
		for (m = 1; m <= nm; m++) {
			key = p SUBSEP m
			if (!cnt[key]) continue
			pts = ""
			for (i = 1; i <= cnt[key]; i++)
				pts = pts sprintf("%.1f,%.1f ", xpos(px[key, i]), ypos(py[key, i]))
			printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", color[(m - 1) % 8 + 1], pts
			for (i = 1; i <= cnt[key]; i++)
				printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", xpos(px[key, i]), ypos(py[key, i]), color[(m - 1) % 8 + 1]
		}
		printf "</g>\n"
	}
	lx = np * (ml + pw + mr) + 10
	for (m = 1; m <= nm; m++) {
		ly = mt + 10 + (m - 1) * 18
		printf "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>\n", lx, lx + 20, ly, ly, color[(m - 1) % 8 + 1]
		printf "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 26, ly + 4, mname[m]
	}
	printf "<text x=\"10\" y=\"%d\" fill=\"#555\">%s</text>\n", H - 6, ylabel
	print "</svg>"
}
