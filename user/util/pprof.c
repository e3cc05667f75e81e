// SPDX-License-Identifier: GPL-2.0
/*
 * pprof.c - kcc report --format pprof: the groups' exclusive k-contexts
 * as samples of a gzipped profile.proto.
 *
 * One sample per k-context with a non-zero exclusive count, its
 * locations innermost first (the callee, then its callers), one value
 * per counter of the stream (calls, the sampled event, samples), and a
 * "process" label naming the group.  Each routine is one Function and
 * one Location (the k-CCF is routine-level; addresses are gone), with
 * the routine's definition line when --srcline found it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_PERIOD_TYPE = 11, P_PERIOD = 12,
	P_DEFAULT_SAMPLE_TYPE = 14,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2,
	LOC_ID = 1, LOC_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4,
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

int report__pprof(struct report *r, FILE *out)
{
	struct sbuf b = { 0 }, m = { 0 };
	struct symtab st;
	uint32_t nc = r->nr_ctrs, gi, i, nn = symtab__nr(&r->names);
	uint64_t *locs = NULL, vals[STREAM_MAX_CTRS];
	uint64_t k_proc;
	int ret;

	ret = symtab__init(&st);
	if (ret)
		return ret;
	str_id(&st, "");
	k_proc = str_id(&st, "process");
	for (i = 0; i < nc; i++)
		value_type(&b, P_SAMPLE_TYPE, &st, r->desc[i].name, "count");

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
			const uint64_t *e = &g->excl[(size_t)v * nc];
			struct sbuf lab = { 0 };
			size_t n = 0, a, z;
			bool any = false;
			uint32_t u, j;

			for (j = 0; j < nc; j++) {
				vals[j] = e[j];
				any |= e[j] != 0;
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
			pb_msg(&b, P_SAMPLE, &m);
		}
	}

	for (i = 0; i < nn; i++) {
		struct sbuf line = { 0 };
		const char *sl = report__srcline(r, i);
		char file[512];
		int lineno = 0;

		sbuf__exit(&m);
		pb_uint(&m, LOC_ID, (uint64_t)i + 1);
		pb_uint(&line, LINE_FUNCTION_ID, (uint64_t)i + 1);
		if (sl) {
			const char *colon = strrchr(sl, ':');

			lineno = colon ? atoi(colon + 1) : 0;
			snprintf(file, sizeof(file), "%.*s",
				 colon ? (int)(colon - sl) : (int)strlen(sl), sl);
		}
		if (lineno > 0)
			pb_uint(&line, LINE_LINE, (uint64_t)lineno);
		pb_msg(&m, LOC_LINE, &line);
		sbuf__exit(&line);
		pb_msg(&b, P_LOCATION, &m);

		sbuf__exit(&m);
		pb_uint(&m, F_ID, (uint64_t)i + 1);
		pb_uint(&m, F_NAME, str_id(&st, report__name(r, i)));
		pb_uint(&m, F_SYSTEM_NAME, str_id(&st, report__name(r, i)));
		if (sl)
			pb_uint(&m, F_FILENAME, str_id(&st, file));
		pb_msg(&b, P_FUNCTION, &m);
	}

	pb_uint(&b, P_TIME_NANOS, r->p->runs[0].s.hdr.time_ns);
	value_type(&b, P_PERIOD_TYPE, &st, r->desc[r->sort].name, "count");
	pb_uint(&b, P_PERIOD, r->p->runs[0].s.hdr.sample_period);
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
