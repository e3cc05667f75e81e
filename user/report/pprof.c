// SPDX-License-Identifier: GPL-2.0
/*
 * pprof.c - kcc report --format pprof: the groups' exclusive k-contexts
 * as samples of a gzipped profile.proto.
 *
 * One sample per k-context with a non-zero exclusive count, its
 * locations innermost first (the callee, then its callers), one value
 * per measured counter of the stream (calls only when bursts were
 * replayed; the clock events in nanoseconds), and a "process" label
 * naming the group.  Each routine is one Function and one Location (the
 * k-CCF is routine-level; addresses are gone) in the Mapping of its
 * object (path and build-id), with the routine's full source path and
 * definition line when --srcline found them.  period_type is the
 * sampled event; time_nanos the wall clock recorded in the profile (none
 * when the profile predates that).  The comments say that contexts, and
 * so pprof's cum, stop at k callers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <linux/perf_event.h>

#include "pprof.h"
#include "report.h"

void pb_varint(struct sbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	sbuf__append(b, tmp, n);
}

void pb_uint(struct sbuf *b, uint32_t field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3);	/* wire type 0: varint */
	pb_varint(b, v);
}

void pb_bytes(struct sbuf *b, uint32_t field, const void *p, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	if (len)
		sbuf__append(b, p, len);
}

void pb_msg(struct sbuf *b, uint32_t field, const struct sbuf *msg)
{
	if (msg->err && !b->err)
		b->err = msg->err;
	pb_bytes(b, field, msg->p, msg->len);
}

void pb_packed(struct sbuf *b, uint32_t field, const uint64_t *v, size_t n)
{
	struct sbuf t = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		pb_varint(&t, v[i]);
	pb_msg(b, field, &t);
	sbuf__exit(&t);
}

int gzip_write(const void *p, size_t len, FILE *out)
{
	uint8_t buf[1 << 16];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper, which is what pprof readers expect. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	z.next_in = (Bytef *)p;
	z.avail_in = len;	/* profiles stay far below 4 GiB */
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		fwrite(buf, 1, sizeof(buf) - z.avail_out, out);
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return zr == Z_STREAM_END && !ferror(out) ? 0 : -EIO;
}

/* profile.proto field numbers. */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4,
	P_FUNCTION = 5, P_STRING_TABLE = 6, P_TIME_NANOS = 9,
	P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12,
	P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2,
	M_ID = 1, M_FILENAME = 5, M_BUILD_ID = 6, M_HAS_FUNCTIONS = 7,
	M_HAS_FILENAMES = 8, M_HAS_LINE_NUMBERS = 9,
	LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4,
	F_START_LINE = 5,
};

static uint64_t str_id(struct symtab *st, const char *s)
{
	uint32_t id = 0;

	/* On failure id 0 is "", which keeps the message well-formed. */
	symtab__intern(st, s, strlen(s), &id);
	return id;
}

static void value_type(struct sbuf *b, uint32_t field, struct symtab *st,
		       const char *type, const char *unit)
{
	struct sbuf m = { 0 };

	pb_uint(&m, VT_TYPE, str_id(st, type));
	pb_uint(&m, VT_UNIT, str_id(st, unit));
	pb_msg(b, field, &m);
	sbuf__exit(&m);
}

/* The unit of counter @i: the clock events count nanoseconds. */
static const char *ctr_unit(const struct report *r, uint32_t i)
{
	const struct kcc_metric_desc *d = &r->desc[i];

	if (i != KCC_CTR_CALLS && d->type == PERF_TYPE_SOFTWARE &&
	    (d->config == PERF_COUNT_SW_CPU_CLOCK ||
	     d->config == PERF_COUNT_SW_TASK_CLOCK))
		return "nanoseconds";
	return "count";
}

/* Counters exported: all but calls when calls were not measured. */
static uint32_t pprof_ctrs(const struct report *r, uint32_t *idx)
{
	uint32_t i, n = 0;

	for (i = 0; i < r->nr_cols; i++)
		if (i != KCC_CTR_CALLS || r->calls_valid)
			idx[n++] = i;
	return n;
}

/* @s as a JSON string, quoted. */
void json_str(const char *s, FILE *out)
{
	putc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
	}
	putc('"', out);
}

int report__pprof_types(struct report *r, FILE *out)
{
	uint32_t idx[STREAM_MAX_CTRS], nc, i;

	nc = pprof_ctrs(r, idx);
	fputc('{', out);
	for (i = 0; i < nc; i++) {
		const char *name = r->desc[idx[i]].name;

		if (i)
			fputc(',', out);
		json_str(name, out);
		fprintf(out, ":{\"units\":\"%s\",\"aggregation\":\"sum\",\"display-name\":",
			ctr_unit(r, idx[i]));
		json_str(name, out);
		fputs(",\"sampled\":false}", out);
	}
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}

static void comment(struct sbuf *b, struct symtab *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void comment(struct sbuf *b, struct symtab *st, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pb_uint(b, P_COMMENT, str_id(st, buf));
}

static void comments(struct report *r, struct sbuf *b, struct symtab *st)
{
	static const char *const keys[] = {
		"cmdline", "hostname", "release", "cpu", "version", "cgroup",
	};
	char k[16];
	size_t i;

	if (r->k == KCC_K_INF)
		snprintf(k, sizeof(k), "inf");
	else
		snprintf(k, sizeof(k), "%u", r->k);
	comment(b, st, "kcc k-calling-context profile, k = %s: each sample is one k-context, its routine and at most k callers",
		k);
	comment(b, st, "flat is exact; cum and the call graph stop at k callers: activations deeper than k callers below a routine are not in its cum");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = profile__info_get(r->p, keys[i]);

		if (v)
			comment(b, st, "%s: %s", keys[i], v);
	}
}

static void mappings(struct report *r, struct sbuf *b, struct symtab *st)
{
	struct sbuf m = { 0 };
	uint32_t i;

	for (i = 0; i < r->nr_objs; i++) {
		const struct report_obj *o = &r->objs[i];
		char hex[2 * SYM_BUILD_ID_MAX + 1];

		build_id__hex(o->build_id, o->build_id_len, hex);
		sbuf__exit(&m);
		pb_uint(&m, M_ID, (uint64_t)i + 1);
		pb_uint(&m, M_FILENAME, str_id(st, o->path));
		if (o->build_id_len)
			pb_uint(&m, M_BUILD_ID, str_id(st, hex));
		/* Routine-level: names always, files and lines with --srcline. */
		pb_uint(&m, M_HAS_FUNCTIONS, 1);
		if (r->o.srcline) {
			pb_uint(&m, M_HAS_FILENAMES, 1);
			pb_uint(&m, M_HAS_LINE_NUMBERS, 1);
		}
		pb_msg(b, P_MAPPING, &m);
	}
	sbuf__exit(&m);
}

/*
 * The labels fleet profilers group by (kcc serve): the machine's
 * hostname and kernel release as the profile recorded them, the command
 * name of group @g, its cgroup (when all its tasks were in one, else the
 * -G session's), and the build-id of the object of the sample's routine
 * @fn.
 */
static void fleet_labels(struct report *r, struct sbuf *m, struct symtab *st,
			 const struct report_grp *g, uint64_t fn)
{
	static const char *const keys[][2] = {
		{ "hostname", "hostname" }, { "kernel", "release" },
	};
	const char *cgroup = g->cgroup ? g->cgroup :
			     profile__info_get(r->p, "cgroup");
	const char *comm = g->name;
	const struct report_obj *o = report__obj(r, fn);
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	struct sbuf lab = { 0 };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = profile__info_get(r->p, keys[i][1]);

		if (!v)
			continue;
		pb_uint(&lab, L_KEY, str_id(st, keys[i][0]));
		pb_uint(&lab, L_STR, str_id(st, v));
		pb_msg(m, S_LABEL, &lab);
		sbuf__exit(&lab);
	}
	if (r->o.group != GROUP_CGROUP) {
		pb_uint(&lab, L_KEY, str_id(st, "comm"));
		pb_uint(&lab, L_STR, str_id(st, comm));
		pb_msg(m, S_LABEL, &lab);
		sbuf__exit(&lab);
	}
	/* The container: its tasks' cgroup, or the -G session's. */
	if (cgroup) {
		pb_uint(&lab, L_KEY, str_id(st, "cgroup"));
		pb_uint(&lab, L_STR, str_id(st, cgroup));
		pb_msg(m, S_LABEL, &lab);
		sbuf__exit(&lab);
	}
	if (o && o->build_id_len) {
		build_id__hex(o->build_id, o->build_id_len, hex);
		pb_uint(&lab, L_KEY, str_id(st, "build_id"));
		pb_uint(&lab, L_STR, str_id(st, hex));
		pb_msg(m, S_LABEL, &lab);
		sbuf__exit(&lab);
	}
}

int report__pprof(struct report *r, FILE *out)
{
	struct sbuf b = { 0 }, m = { 0 };
	struct symtab st;
	uint32_t idx[STREAM_MAX_CTRS], nc, gi, i;
	uint64_t *locs = NULL, vals[STREAM_MAX_CTRS];
	uint64_t k_proc;
	int ret;

	ret = symtab__init(&st);
	if (ret)
		return ret;
	str_id(&st, "");
	k_proc = str_id(&st, r->o.group == GROUP_CGROUP ? "cgroup" : "process");
	nc = pprof_ctrs(r, idx);
	for (i = 0; i < nc; i++)
		value_type(&b, P_SAMPLE_TYPE, &st, r->desc[idx[i]].name,
			   ctr_unit(r, idx[i]));

	for (gi = 0; gi < r->nr_groups; gi++) {
		struct report_grp *g = &r->groups[gi];
		const struct kcc_forest *f = &g->kccf.f;
		uint64_t v_proc = str_id(&st, g->name);
		uint32_t v;

		free(locs);
		locs = malloc(((size_t)(r->k == KCC_K_INF ? f->count : r->k) + 2) *
			      sizeof(*locs));
		if (!locs) {
			ret = -ENOMEM;
			goto cleanup;
		}
		for (v = 0; v < f->count; v++) {
			const uint64_t *e = &g->vexcl[(size_t)v * r->nr_ctrs];
			struct sbuf lab = { 0 };
			size_t n = 0, a, z;
			bool any = false;
			uint32_t u, j;

			if (!report__shown(r, g, v))
				continue;
			for (j = 0; j < nc; j++) {
				vals[j] = e[idx[j]];
				any |= vals[j] != 0;
			}
			if (!any)
				continue;
			/* v's root path is outermost first: reverse it. */
			for (u = v;; u = kcc_forest_node(f, u)->parent) {
				locs[n++] = kcc_forest_node(f, u)->label + 1;
				if (kcc_is_root_parent(kcc_forest_node(f, u)->parent))
					break;
			}
			for (a = 0, z = n - 1; a < z; a++, z--) {
				uint64_t t = locs[a];

				locs[a] = locs[z];
				locs[z] = t;
			}
			sbuf__exit(&m);
			pb_packed(&m, S_LOCATION_ID, locs, n);
			pb_packed(&m, S_VALUE, vals, nc);
			pb_uint(&lab, L_KEY, k_proc);
			pb_uint(&lab, L_STR, v_proc);
			pb_msg(&m, S_LABEL, &lab);
			sbuf__exit(&lab);
			if (r->o.fleet_labels)
				fleet_labels(r, &m, &st, g, locs[0] - 1);
			pb_msg(&b, P_SAMPLE, &m);
		}
	}

	mappings(r, &b, &st);
	for (i = 0; i < r->nr_fns; i++) {
		const struct report_fn *fn = &r->fns[i];
		struct sbuf line = { 0 };

		sbuf__exit(&m);
		pb_uint(&m, LOC_ID, (uint64_t)i + 1);
		if (fn->obj != REPORT_NO_OBJ)
			pb_uint(&m, LOC_MAPPING_ID, (uint64_t)fn->obj + 1);
		pb_uint(&line, LINE_FUNCTION_ID, (uint64_t)i + 1);
		if (fn->line > 0)
			pb_uint(&line, LINE_LINE, (uint64_t)fn->line);
		pb_msg(&m, LOC_LINE, &line);
		sbuf__exit(&line);
		pb_msg(&b, P_LOCATION, &m);

		sbuf__exit(&m);
		pb_uint(&m, F_ID, (uint64_t)i + 1);
		pb_uint(&m, F_NAME, str_id(&st, fn->name));
		pb_uint(&m, F_SYSTEM_NAME, str_id(&st, fn->sym));
		if (fn->file)
			pb_uint(&m, F_FILENAME, str_id(&st, fn->file));
		if (fn->line > 0)
			pb_uint(&m, F_START_LINE, (uint64_t)fn->line);
		pb_msg(&b, P_FUNCTION, &m);
	}

	/* Wall clock, when the profile recorded it (kcc record, kccread). */
	if (r->p->info.valid) {
		pb_uint(&b, P_TIME_NANOS, r->p->info.start_ns);
		if (r->p->info.duration_ns)
			pb_uint(&b, P_DURATION_NANOS, r->p->info.duration_ns);
	}
	/* The sampled event, whatever --sort says. */
	if (r->nr_ctrs > KCC_CTR_EVENTS)
		value_type(&b, P_PERIOD_TYPE, &st, r->desc[KCC_CTR_EVENTS].name,
			   ctr_unit(r, KCC_CTR_EVENTS));
	pb_uint(&b, P_PERIOD, r->p->runs[0].s.hdr.sample_period);
	comments(r, &b, &st);
	pb_uint(&b, P_DEFAULT_SAMPLE_TYPE, str_id(&st, r->desc[r->sort].name));
	/* The string table last: every string is known by now. */
	for (i = 0; i < symtab__nr(&st); i++) {
		const char *s = symtab__name(&st, i);

		pb_bytes(&b, P_STRING_TABLE, s, strlen(s));
	}
	ret = b.err ? b.err : gzip_write(b.p, b.len, out);
cleanup:
	free(locs);
	sbuf__exit(&m);
	sbuf__exit(&b);
	symtab__exit(&st);
	return ret;
}
