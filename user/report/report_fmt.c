// SPDX-License-Identifier: GPL-2.0
/*
 * report_fmt.c - kcc report's folded and JSON outputs, and the choice of
 * format (report__print).
 *
 * Both list exclusive k-contexts (see report.h), so the folded counts of
 * a group add up to its total, which the tests check against the text
 * report.  The JSON schema is in Documentation/user-guide.rst.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pprof.h"
#include "report_fmt.h"
#include "svg.h"

static const char *const json_drops[KCC_DROP_NR] = {
	"ring_full", "no_task", "task_cap", "mem_cap", "bad_sample",
	"no_stack", "stopped", "budget",
};

/* Folded stack frames may not hold ';' (the separator) nor newlines. */
static void put_frame(const char *s, FILE *out)
{
	for (; *s; s++)
		putc(*s == ';' ? ':' : (*s == '\n' ? ' ' : *s), out);
}

struct fold_ent {
	char *path;
	uint64_t n;
};

static int fold_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fold_ent *)a)->path,
		      ((const struct fold_ent *)b)->path);
}

int report__folded(struct report *r, FILE *out)
{
	uint32_t gi, v, nc = r->nr_ctrs;
	struct fold_ent *ents = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	for (gi = 0; gi < r->nr_groups; gi++) {
		struct report_grp *g = &r->groups[gi];
		const struct kcc_forest *f = &g->kccf.f;

		for (v = 0; v < f->count; v++) {
			uint64_t x = g->vexcl[(size_t)v * nc + r->sort];
			struct sbuf sb = { 0 };
			uint32_t u;

			if (!x || !report__shown(r, g, v))
				continue;
			if (n == cap) {
				struct fold_ent *q;

				cap = cap ? 2 * cap : 256;
				q = realloc(ents, cap * sizeof(*q));
				if (!q) {
					ret = -ENOMEM;
					goto cleanup;
				}
				ents = q;
			}
			/* Separators are written here, frames sanitised. */
			if (r->nr_groups > 1) {
				sbuf__append(&sb, g->name, strlen(g->name));
				sbuf__append(&sb, "\x01", 1);
			}
			for (u = v;;) {
				const struct kcc_node *nd = kcc_forest_node(f, u);
				const char *name = report__name(r, nd->label);

				sbuf__append(&sb, name, strlen(name));
				if (kcc_is_root_parent(nd->parent))
					break;
				sbuf__append(&sb, "\x01", 1);
				u = nd->parent;
			}
			sbuf__append(&sb, "", 1);
			if (sb.err) {
				sbuf__exit(&sb);
				ret = -ENOMEM;
				goto cleanup;
			}
			ents[n].path = (char *)sb.p;
			ents[n++].n = x;
		}
	}
	if (n)
		qsort(ents, n, sizeof(*ents), fold_cmp);
	for (i = 0; i < n; i++) {
		char *s = ents[i].path, *sep;

		while ((sep = strchr(s, '\x01'))) {
			*sep = 0;
			put_frame(s, out);
			putc(';', out);
			s = sep + 1;
		}
		put_frame(s, out);
		fprintf(out, " %" PRIu64 "\n", ents[i].n);
	}
cleanup:
	for (i = 0; i < n; i++)
		free(ents[i].path);
	free(ents);
	return ret;
}

static void json_ctrs(const struct report *r, const uint64_t *c, FILE *out)
{
	uint32_t j;

	putc('[', out);
	for (j = 0; j < r->nr_cols; j++)
		fprintf(out, "%s%" PRIu64, j ? ", " : "", c[j]);
	putc(']', out);
}

/* ", "calls_ci95": [lo, hi]" of counters @c; null where calls are no estimate. */
static void json_ci(const struct report *r, const uint64_t *c, FILE *out)
{
	uint64_t lo, hi;

	fprintf(out, ", \"calls_ci95\": ");
	if (!report__calls_ci95(r, c, &lo, &hi))
		fprintf(out, "null");
	else if (hi == UINT64_MAX)
		fprintf(out, "[%" PRIu64 ", null]", lo);
	else
		fprintf(out, "[%" PRIu64 ", %" PRIu64 "]", lo, hi);
}

struct json_ent {
	uint32_t v;
	char *path;
};

static int json_cmp(const void *a, const void *b)
{
	return strcmp(((const struct json_ent *)a)->path,
		      ((const struct json_ent *)b)->path);
}

static int json_group(struct report *r, struct report_grp *g, FILE *out)
{
	static const uint64_t zero[STREAM_MAX_CTRS];
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t nc = r->nr_ctrs, v, n = 0, i;
	struct json_ent *ents;
	int ret = 0;

	ents = calloc((size_t)f->count + 1, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (v = 0; v < f->count; v++) {
		struct sbuf sb = { 0 };
		uint32_t j;
		bool any = false;

		for (j = 0; j < nc; j++)
			any |= g->vinc[(size_t)v * nc + j] != 0;
		if (!g->keep[v] || !any)
			continue;
		ret = report__path(r, g, v, &sb);
		if (ret) {
			sbuf__exit(&sb);
			goto cleanup;
		}
		ents[n].v = v;
		ents[n++].path = (char *)sb.p;
	}
	qsort(ents, n, sizeof(*ents), json_cmp);

	fprintf(out, "    {\n      \"name\": ");
	json_str(g->name, out);
	fprintf(out, ",\n      \"tasks\": %u,\n      \"samples\": %" PRIu64 ",\n",
		g->nr_tasks, g->samples);
	fprintf(out, "      \"lost\": {\"nodes\": %" PRIu64 ", \"frames\": %" PRIu64 ", \"charges\": %" PRIu64 ", \"stitch_errors\": %" PRIu64 "},\n",
		g->node_drops, g->stack_drops, g->lost_charges, g->stitch_errors);
	fprintf(out, "      \"total\": ");
	json_ctrs(r, g->total, out);
	fprintf(out, ",\n      \"shown\": ");
	json_ctrs(r, g->vtotal, out);
	fprintf(out, ",\n      \"contexts\": [");
	for (i = 0; i < n; i++) {
		const struct kcc_node *nd;
		uint32_t u = ents[i].v;
		bool first = true;

		fprintf(out, "%s\n        {\"path\": [", i ? "," : "");
		for (;;) {
			nd = kcc_forest_node(f, u);
			fprintf(out, "%s", first ? "" : ", ");
			json_str(report__name(r, nd->label), out);
			first = false;
			if (kcc_is_root_parent(nd->parent))
				break;
			u = nd->parent;
		}
		fprintf(out, "], \"self\": ");
		json_ctrs(r, g->shown[ents[i].v] ? &g->vexcl[(size_t)ents[i].v * nc] :
			  zero, out);
		json_ci(r, g->shown[ents[i].v] ? &g->vexcl[(size_t)ents[i].v * nc] :
			zero, out);
		fprintf(out, ", \"total\": ");
		json_ctrs(r, &g->vinc[(size_t)ents[i].v * nc], out);
		fprintf(out, "}");
	}
	fprintf(out, "%s]\n    }", n ? "\n      " : "");
cleanup:
	for (i = 0; i < n; i++)
		free(ents[i].path);
	free(ents);
	return ret;
}

int report__json(struct report *r, FILE *out)
{
	bool first;
	uint32_t i;
	int ret = 0;

	fprintf(out, "{\n  \"format\": \"kcc-report\",\n  \"version\": 1,\n  \"input\": ");
	json_str(r->o.name, out);
	fprintf(out, ",\n  \"source\": %u,\n", r->source);
	if (r->k_src == KCC_K_INF)
		fprintf(out, "  \"recorded_k\": \"inf\",\n");
	else
		fprintf(out, "  \"recorded_k\": %u,\n", r->k_src);
	if (r->k == KCC_K_INF)
		fprintf(out, "  \"k\": \"inf\",\n");
	else
		fprintf(out, "  \"k\": %u,\n", r->k);
	fprintf(out, "  \"metrics\": [");
	for (i = 0; i < r->nr_cols; i++) {
		fprintf(out, "%s", i ? ", " : "");
		json_str(r->desc[i].name, out);
	}
	fprintf(out, "],\n  \"view\": {\"routine\": ");
	if (r->o.routine)
		json_str(r->o.routine, out);
	else
		fprintf(out, "null");
	fprintf(out, ", \"similar\": %g, \"hot\": %g, \"percent_limit\": %g},\n",
		r->o.similar, r->o.hot, r->o.percent_limit);
	fprintf(out, "  \"calls_valid\": %s,\n",
		r->calls_valid ? "true" : "false");
	/* The stdio header's "# calls counted:" line; null: not scaled. */
	if (r->st_calls_samples) {
		char after[24] = "null";	/* not known of an import */

		if (!r->after_last_unknown)
			snprintf(after, sizeof(after), "%" PRIu64,
				 r->st_calls_after_last);
		fprintf(out, "  \"calls_counted\": {\"counter\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"exact\": %" PRIu64 ", \"scaled\": %" PRIu64 ", \"unplaced\": %" PRIu64 ", \"bursts_exact\": %" PRIu64 ", \"bursts_scaled\": %" PRIu64 ", \"source\": \"%s\", \"after_last\": %s, \"samples_unread\": %" PRIu64 "},\n",
			r->st_calls_counter, r->st_calls_samples,
			r->st_calls_exact, r->st_calls_scaled,
			r->st_calls_unplaced, r->st_calls_bursts_exact,
			r->st_calls_bursts_scaled,
			r->calls_counter ? "counter" : "event",
			after, r->st_calls_unread);
	} else {
		fprintf(out, "  \"calls_counted\": null,\n");
	}
	fprintf(out, "  \"branch_records_wrong_path\": %" PRIu64 ",\n",
		r->st_br_wrong_path);
	fprintf(out, "  \"samples_other_cgroups\": %" PRIu64 ",\n",
		r->st_cgroup_other);
	fprintf(out, "  \"sort\": ");
	json_str(r->desc[r->sort].name, out);
	fprintf(out, ",\n  \"samples\": {\"taken\": %" PRIu64 ", \"processed\": %" PRIu64 ", \"dropped\": {",
		r->st_samples, r->st_processed);
	for (i = 0; i < KCC_DROP_NR; i++)
		fprintf(out, "%s\"%s\": %" PRIu64, i ? ", " : "", json_drops[i],
			r->st_dropped[i]);
	fprintf(out, "}},\n  \"srclines\": {");
	for (i = 0, first = true; i < r->nr_fns; i++) {
		if (!report__srcline(r, i))
			continue;
		fprintf(out, "%s", first ? "" : ", ");
		first = false;
		json_str(report__name(r, i), out);
		fprintf(out, ": ");
		json_str(report__srcline(r, i), out);
	}
	/* Each routine shown: its symbol and object (identity is both). */
	fprintf(out, "},\n  \"routines\": {");
	for (i = 0; i < r->nr_fns; i++) {
		const struct report_obj *o = report__obj(r, i);

		fprintf(out, "%s\n    ", i ? "," : "");
		json_str(report__name(r, i), out);
		fprintf(out, ": {\"symbol\": ");
		json_str(r->fns[i].sym, out);
		fprintf(out, ", \"dso\": ");
		json_str(o ? o->path : "", out);
		if (o && o->build_id_len) {
			char hex[2 * SYM_BUILD_ID_MAX + 1];

			build_id__hex(o->build_id, o->build_id_len, hex);
			fprintf(out, ", \"build_id\": \"%s\"", hex);
		}
		fprintf(out, "}");
	}
	fprintf(out, "%s},\n  \"groups\": [\n", r->nr_fns ? "\n  " : "");
	for (i = 0; i < r->nr_groups && !ret; i++) {
		if (i)
			fprintf(out, ",\n");
		ret = json_group(r, &r->groups[i], out);
	}
	fprintf(out, "\n  ]\n}\n");
	return ret;
}

int report__print(struct report *r, FILE *out)
{
	switch (r->o.format) {
	case FMT_FOLDED:
		return report__folded(r, out);
	case FMT_JSON:
		return report__json(r, out);
	case FMT_PPROF:
		return report__pprof(r, out);
	case FMT_SVG:
		return report__svg(r, out);
	default:
		return report__text(r, out);
	}
}
