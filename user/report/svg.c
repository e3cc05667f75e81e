// SPDX-License-Identifier: GPL-2.0
/*
 * svg.c - the k-CCF as a flame graph in one SVG file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define SVG_W		1200.0
#define FRAME_H		17
#define PAD_TOP		44
#define PAD_BOTTOM	10
#define MIN_PX		0.3

static void k_str(const struct report *r, char *buf, size_t len)
{
	if (r->k == KCC_K_INF)
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%u", r->k);
}

void xml_str(const char *s, FILE *out)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			putc((unsigned char)*s < 0x20 ? ' ' : *s, out);
		}
	}
}

/* Bytes of the first @n characters of UTF-8 @s (all of it if shorter). */
static size_t utf8_prefix(const char *s, int n)
{
	size_t i = 0;

	while (s[i] && n-- > 0) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
	return i;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct svg_ctx {
	struct report *r;
	FILE *out;
	double scale;		/* px per count */
	uint32_t height;
	uint32_t *first, *kids;	/* CSR children, per group, rebuilt */
};

static void frame(struct svg_ctx *c, double x, double w, uint32_t depth,
		  const char *name, const char *title, const char *cls)
{
	FILE *out = c->out;
	uint32_t h = name_hash(name);
	double y = c->height - PAD_BOTTOM - (depth + 1) * FRAME_H;
	int chars = (int)((w - 6) / 7);

	fprintf(out, "<g class=\"f%s\"><title>", cls);
	xml_str(title, out);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"rgb(%u,%u,%u)\"/>",
		x, y, w, FRAME_H - 1, 205 + h % 50, 80 + (h >> 8) % 120,
		40 + (h >> 16) % 50);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 5);
	if (chars >= 3) {
		size_t cut = utf8_prefix(name, chars);

		if (!name[cut]) {
			xml_str(name, out);
		} else {
			/* Whole characters only: a cut one is not UTF-8. */
			char *t = strndup(name, utf8_prefix(name, chars - 2));

			if (t) {
				xml_str(t, out);
				fputs("..", out);
				free(t);
			}
		}
	}
	fputs("</text></g>\n", out);
}

static void title_of(struct svg_ctx *c, const struct report_grp *g,
		     uint32_t v, char *buf, size_t len)
{
	struct report *r = c->r;
	const uint64_t *ctr = &g->vinc[(size_t)v * r->nr_ctrs];
	struct sbuf sb = { 0 };
	size_t n;
	uint32_t j;

	report__path(r, g, v, &sb);
	n = snprintf(buf, len, "%s [%s]", sb.err ? "?" : (char *)sb.p, g->name);
	sbuf__exit(&sb);
	for (j = 0; j < r->nr_cols && n < len; j++) {
		if (j == KCC_CTR_CALLS && !r->calls_valid)
			n += snprintf(buf + n, len - n, " | %s: -", r->desc[j].name);
		else
			n += snprintf(buf + n, len - n, " | %s: %" PRIu64,
				      r->desc[j].name, ctr[j]);
	}
	if (n < len && g->vtotal[r->sort])
		snprintf(buf + n, len - n, " | %.2f%% of %s",
			 100.0 * ctr[r->sort] / g->vtotal[r->sort],
			 r->desc[r->sort].name);
}

static uint32_t max_depth(const struct report_grp *g)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t *lv, v, m = 0;

	lv = malloc(((size_t)f->count + 1) * sizeof(*lv));
	if (!lv)
		return 64;
	for (v = 0; v < f->count; v++) {
		uint32_t p = kcc_forest_node(f, v)->parent;

		lv[v] = kcc_is_root_parent(p) ? 0 : lv[p] + 1;
		if (lv[v] > m)
			m = lv[v];
	}
	free(lv);
	return m;
}

static int svg_group(struct svg_ctx *c, struct report_grp *g, double x0,
		     uint32_t base_depth)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t n = f->count, nc = c->r->nr_ctrs, i, sp = 0, *stack = NULL;
	double *xs = NULL;
	char *title = NULL;
	int ret;

	ret = forest__children(f, g->keep, &c->first, &c->kids);
	if (ret)
		goto cleanup;
	ret = -ENOMEM;
	stack = malloc(((size_t)n + 1) * sizeof(uint32_t));
	xs = malloc(((size_t)n + 1) * sizeof(double));
	title = malloc(8192);
	if (!stack || !xs || !title)
		goto cleanup;

	/* Roots side by side from x0, then each node's callers above it. */
	{
		double x = x0;

		sp = 0;
		for (i = c->first[n]; i < c->first[n + 1]; i++) {
			uint32_t v = c->kids[i];

			xs[v] = x;
			x += g->vinc[(size_t)v * nc + c->r->sort] * c->scale;
			stack[sp++] = v;
		}
	}
	while (sp) {
		uint32_t v = stack[--sp], j, d = kcc_forest_level(f, v);
		const struct kcc_node *nd = kcc_forest_node(f, v);
		double w = g->vinc[(size_t)v * nc + c->r->sort] * c->scale;
		double x = xs[v];

		if (w < MIN_PX)
			continue;
		title_of(c, g, v, title, 8192);
		frame(c, xs[v], w, base_depth + d, report__name(c->r, nd->label),
		      title, "");
		for (j = c->first[v]; j < c->first[v + 1]; j++) {
			uint32_t u = c->kids[j];

			xs[u] = x;
			x += g->vinc[(size_t)u * nc + c->r->sort] * c->scale;
			stack[sp++] = u;
		}
	}
	ret = 0;
cleanup:
	free(c->first);
	free(c->kids);
	c->first = c->kids = NULL;
	free(stack);
	free(xs);
	free(title);
	return ret;
}

static const char svg_js[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var details = document.getElementById('details');\n"
"var frames = document.querySelectorAll('g.f');\n"
"var W = " "1200" ";\n"
"function info(g) { return g.querySelector('title').textContent; }\n"
"function fit(g) {\n"
"  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
"  var w = +r.getAttribute('width'), name = g.getAttribute('data-name');\n"
"  t.setAttribute('x', +r.getAttribute('x') + 3);\n"
"  var n = Math.floor((w - 6) / 7);\n"
"  t.textContent = n < 3 ? '' : (name.length <= n ? name : name.slice(0, n - 2) + '..');\n"
"}\n"
"function zoom(g) {\n"
"  var r = g.querySelector('rect');\n"
"  var x0 = +r.getAttribute('data-x'), w0 = +r.getAttribute('data-w');\n"
"  var y0 = +r.getAttribute('y'), s = (W - 20) / w0;\n"
"  frames.forEach(function (h) {\n"
"    var q = h.querySelector('rect'), x = +q.getAttribute('data-x');\n"
"    var w = +q.getAttribute('data-w'), y = +q.getAttribute('y');\n"
"    var inside = x >= x0 - 1e-6 && x + w <= x0 + w0 + 1e-6;\n"
"    var below = y >= y0;\n"
"    if ((inside || (below && x <= x0 && x + w >= x0 + w0)) && w * s >= 0.3) {\n"
"      h.style.display = '';\n"
"      var nx = 10 + Math.max(0, (x - x0) * s), nw = Math.min(w * s, W - 20);\n"
"      q.setAttribute('x', nx); q.setAttribute('width', nw); fit(h);\n"
"    } else {\n"
"      h.style.display = 'none';\n"
"    }\n"
"  });\n"
"}\n"
"function reset() {\n"
"  frames.forEach(function (h) {\n"
"    var q = h.querySelector('rect');\n"
"    h.style.display = '';\n"
"    q.setAttribute('x', q.getAttribute('data-x'));\n"
"    q.setAttribute('width', q.getAttribute('data-w')); fit(h);\n"
"  });\n"
"}\n"
"var search = document.getElementById('search');\n"
"search.style.cursor = 'pointer';\n"
"search.addEventListener('click', function () {\n"
"  var term = prompt('Highlight routines matching (a regular expression)', '');\n"
"  var re = null, n = 0;\n"
"  try { if (term) re = new RegExp(term); } catch (e) { re = null; }\n"
"  frames.forEach(function (g) {\n"
"    var r = g.querySelector('rect');\n"
"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    var hit = re && re.test(g.getAttribute('data-name'));\n"
"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
"    n += hit ? 1 : 0;\n"
"  });\n"
"  search.textContent = re ? 'Search: ' + n + ' frames match' : 'Search';\n"
"});\n"
"frames.forEach(function (g) {\n"
"  var r = g.querySelector('rect');\n"
"  r.setAttribute('data-x', r.getAttribute('x'));\n"
"  r.setAttribute('data-w', r.getAttribute('width'));\n"
"  g.setAttribute('data-name', info(g).split(' [')[0].split(';')[0]);\n"
"  g.addEventListener('mouseover', function () { details.textContent = info(g); });\n"
"  g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  g.addEventListener('click', function () {\n"
"    if (g.classList.contains('fall')) reset(); else zoom(g);\n"
"  });\n"
"});\n"
"]]></script>\n";

int report__svg(struct report *r, FILE *out)
{
	struct svg_ctx c = { .r = r, .out = out };
	uint64_t total = 0;
	uint32_t gi, depth = 0;
	double x;
	int ret = 0;
	char title[512], kbuf[16], *head;
	const char *p;
	double avail, fs;
	size_t nch;

	for (gi = 0; gi < r->nr_groups; gi++) {
		uint32_t d = max_depth(&r->groups[gi]);

		total += r->groups[gi].vtotal[r->sort];
		if (d > depth)
			depth = d;
	}
	/* all, then groups (when several), then routines and callers */
	depth += 2 + (r->nr_groups > 1);
	c.height = PAD_TOP + PAD_BOTTOM + depth * FRAME_H;
	c.scale = total ? (SVG_W - 20) / (double)total : 0;
	k_str(r, kbuf, sizeof(kbuf));
	if (asprintf(&head, "kcc k-CCF flame graph: %s (k = %s, width: %s, routine at the bottom, its callers above)",
		     r->o.name, kbuf, r->desc[r->sort].name) < 0)
		return -ENOMEM;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\">\n",
		(int)SVG_W, c.height, (int)SVG_W, c.height);
	fprintf(out, "<style>text { font-family: monospace; font-size: 12px; fill: #000; pointer-events: none; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		"#title { font-size: 16px; } #details { font-size: 12px; }</style>\n");
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n");
	/*
	 * The title shrinks, from 16 px, to end 20 px left of "Search"
	 * whatever the profile's name: monospace glyphs advance 0.6 em
	 * (DejaVu Sans Mono 0.602), so N characters take 0.61 * size * N.
	 */
	for (nch = 0, p = head; *p; p++)
		nch += ((unsigned char)*p & 0xc0) != 0x80;	/* UTF-8 lead bytes */
	avail = SVG_W - 10 - 10 - 6 * 0.61 * 12 - 20;
	fs = nch && avail / (0.61 * nch) < 16 ? avail / (0.61 * nch) : 16;
	fprintf(out, "<text id=\"title\" x=\"10\" y=\"20\" style=\"font-size: %.2fpx\">", fs);
	xml_str(head, out);
	fprintf(out, "</text>\n");
	free(head);
	fprintf(out, "<text id=\"details\" x=\"10\" y=\"38\"> </text>\n");
	fprintf(out, "<text id=\"search\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n",
		(int)SVG_W - 10);

	snprintf(title, sizeof(title), "all | %s: %" PRIu64,
		 r->desc[r->sort].name, total);
	frame(&c, 10, SVG_W - 20, 0, "all", title, " fall");
	x = 10;
	for (gi = 0; gi < r->nr_groups && !ret; gi++) {
		struct report_grp *g = &r->groups[gi];
		double w = g->vtotal[r->sort] * c.scale;

		if (r->nr_groups > 1 && w >= MIN_PX) {
			snprintf(title, sizeof(title), "%s | %s: %" PRIu64,
				 g->name, r->desc[r->sort].name,
				 g->vtotal[r->sort]);
			frame(&c, x, w, 1, g->name, title, "");
		}
		ret = svg_group(&c, g, x, 1 + (r->nr_groups > 1));
		x += w;
	}
	fputs(svg_js, out);
	fputs("</svg>\n", out);
	return ret;
}
