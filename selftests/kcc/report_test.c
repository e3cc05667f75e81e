// SPDX-License-Identifier: GPL-2.0
/*
 * report_test.c - the userspace path from a /dev/kcc stream to a report,
 * against answers known by construction:
 *
 *  - random call traces become streams (stream__from_trace(): labels at
 *    pseudo-random addresses inside their routines, top-level calls
 *    spread over threads), go through a profile file and kcc report's
 *    relabel + join + inv_k; the k-CCF must equal the brute-force one of
 *    ref.h, and the event counters the ones the generator charged;
 *  - the stream writer and parser round-trip byte for byte;
 *  - every truncation, hostile counts and random corruption of a stream
 *    and of a profile fail cleanly (ASan/UBSan watch);
 *  - merge(A, A) doubles every counter and merge is order-independent.
 */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "ktap.h"
#include "ref.h"
#include "ksfdump.h"
#include "pprof.h"
#include "report_fmt.h"

#define NR_RANDOM	40


static int trace_from_ref(struct trace *t, const struct ref_trace *rt)
{
	char name[16];
	uint32_t i, id;

	if (trace__init(t))
		return -1;
	for (i = 0; i < rt->nr; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		if (symtab__intern(&t->syms, name, strlen(name), &id) || id != i)
			return -1;
	}
	t->ev = malloc((rt->n + 1) * sizeof(*t->ev));
	if (!t->ev)
		return -1;
	memcpy(t->ev, rt->ev, rt->n * sizeof(*t->ev));
	t->nr = rt->n;
	t->cap = rt->n + 1;
	t->calls = rt->calls;
	t->returns = rt->calls;
	t->max_depth = rt->max_depth;
	t->routines = rt->nr;
	return 0;
}

/* A profile of @t as kcc record --trace writes it, parsed back. */
static int make_profile(struct profile *p, const struct trace *t, uint32_t k,
			uint32_t threads, uint64_t seed, struct sbuf *stream)
{
	struct stream_gen g = {
		.k = k, .threads = threads, .tgid = 4242, .comm = "test",
		.base = 0x555555554000ull, .jitter = seed,
	};
	struct profile tmp;
	struct symobj so;
	struct sbuf b = { 0 };
	char *mem = NULL;
	size_t len = 0;
	FILE *f;
	uint32_t i;
	int ret;

	ret = stream__from_trace(&b, t, &g);
	if (ret)
		return ret;
	if (stream) {
		sbuf__append(stream, b.p, b.len);
		if (stream->err)
			return stream->err;
	}
	profile__init(&tmp);
	ret = profile__add_stream(&tmp, b.p, b.len, "gen");
	if (ret)
		goto out;
	memset(&so, 0, sizeof(so));
	so.path = strdup(STREAM_GEN_PATH);
	for (i = 0; i < symtab__nr(&t->syms); i++)
		symobj__add(&so, (uint64_t)i * STREAM_GEN_STRIDE,
			    STREAM_GEN_STRIDE, symtab__name(&t->syms, i));
	symobj__finish(&so);
	ret = profile__add_object(&tmp, 0, 1, 0, &so);
	if (ret)
		goto out;
	f = open_memstream(&mem, &len);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	ret = profile__write(&tmp, f);
	fclose(f);
	if (!ret)
		ret = profile__parse(p, mem, len, "memory");
out:
	free(mem);
	profile__exit(&tmp);
	return ret;
}

struct relabel_ctx {
	const struct report *r;
};

static uint64_t to_ref_label(void *arg, uint64_t label)
{
	const struct relabel_ctx *c = arg;
	const char *name = report__name(c->r, label);

	return ref_label((u32)strtoul(name + 1, NULL, 10));
}

/* Compare group 0 of @r with the brute-force k-CCF of @rt. */
static int check_report(const struct report *r, const struct ref_trace *rt,
			uint32_t k, char *why, size_t whylen)
{
	struct relabel_ctx c = { .r = r };
	struct ref_map m;
	struct pool q = { 0 };
	uint32_t v;
	int ret;

	if (r->nr_groups != (rt->calls ? 1u : 0u)) {
		snprintf(why, whylen, "%u groups", r->nr_groups);
		return -1;
	}
	if (!rt->calls)
		return 0;
	if (ksf__relabel(&q, &r->groups[0].kccf.f, to_ref_label, &c)) {
		snprintf(why, whylen, "relabel failed");
		return -1;
	}
	ref_kccf(&m, rt, REF_NOCAP);
	ret = ref_match(&q.f, &m, k, 0, NULL, why, whylen);
	for (v = 0; !ret && v < q.f.count; v++) {
		const u64 *ctr = kcc_forest_ctr(&q.f, v);
		u32 root = v;

		while (!kcc_is_root_parent(kcc_forest_node(&q.f, root)->parent))
			root = kcc_forest_node(&q.f, root)->parent;
		/* The generator charged id + 1 events and 1 sample a call. */
		if (ctr[1] != ctr[0] * (ref_id(kcc_forest_node(&q.f, root)->label) + 1) ||
		    ctr[2] != ctr[0]) {
			snprintf(why, whylen, "node %u: counters %llu %llu %llu", v,
				 (unsigned long long)ctr[0], (unsigned long long)ctr[1],
				 (unsigned long long)ctr[2]);
			ret = -1;
		}
	}
	ref_map_free(&m);
	pool__exit(&q);
	return ret;
}

static void test_random(void)
{
	static const uint32_t ks[] = { 1, 2, 3, 4, 7, KCC_K_INF };
	u64 rng = 0x6b6363;
	int i;

	for (i = 0; i < NR_RANDOM; i++) {
		struct ref_trace rt;
		struct ref_gen g;
		struct trace t;
		struct profile p;
		struct report r;
		struct report_opts o = { .name = "gen", .sort = -1 };
		uint32_t k = ks[ref_below(&rng, 6)], threads = 1 + ref_below(&rng, 3);
		char why[256] = "";
		int ok = 0;

		ref_gen_random(&g, &rng);
		ref_gen_trace(&rt, &g, &rng);
		o.k = k == KCC_K_INF ? (ref_below(&rng, 2) ? KCC_K_INF : ref_below(&rng, 6)) :
		      ref_below(&rng, k + 1);
		o.k_set = true;
		o.group = ref_below(&rng, 2) ? GROUP_ALL : GROUP_PROCESS;
		if (trace_from_ref(&t, &rt) ||
		    make_profile(&p, &t, k, threads, i + 1, NULL)) {
			snprintf(why, sizeof(why), "setup failed");
		} else if (report__build(&r, &p, &o)) {
			snprintf(why, sizeof(why), "report__build failed");
		} else {
			ok = !check_report(&r, &rt, o.k, why, sizeof(why));
			report__exit(&r);
		}
		profile__exit(&p);
		trace__exit(&t);
		ksft_test_result(ok, "random trace %d (%zu events, k %d, report k %d, %u threads) %s\n",
				 i, rt.n, (int)k, (int)o.k, threads, why);
		ref_trace_free(&rt);
	}
}

/* A small fixed trace of Figure 2 of the k-CCF paper, as a stream. */
static int fig2(struct trace *t)
{
	static const char *const ev[] = {
		"r", "a", "b", NULL, "c", NULL, NULL, "c", "a", "b", NULL, "b",
		NULL, NULL, NULL, NULL,
	};
	size_t i;
	uint32_t id;

	if (trace__init(t))
		return -1;
	t->ev = malloc(sizeof(ev) / sizeof(ev[0]) * sizeof(*t->ev));
	if (!t->ev)
		return -1;
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		if (!ev[i]) {
			t->ev[t->nr++] = TRACE_RET;
			continue;
		}
		symtab__intern(&t->syms, ev[i], strlen(ev[i]), &id);
		t->ev[t->nr++] = id;
		t->calls++;
	}
	t->returns = t->calls;
	t->max_depth = 3;
	return 0;
}

static void quiet_stderr(int on)
{
	static FILE *saved;

	fflush(stderr);
	if (on) {
		saved = stderr;
		stderr = fopen("/dev/null", "w");
		if (!stderr)
			stderr = saved;
	} else if (saved) {
		fclose(stderr);
		stderr = saved;
	}
}

/* A record of a kind this reader does not know, @payload bytes after it. */
static void unknown_record(struct sbuf *b, uint32_t type, uint32_t payload)
{
	struct kcc_rec r = { .type = type, .size = sizeof(r) + payload };
	uint8_t junk[64];

	memset(junk, 0xa5, sizeof(junk));
	sbuf__append(b, &r, sizeof(r));
	sbuf__append(b, junk, payload);
}

/*
 * kcc.h promises that readers skip record kinds they do not know: a
 * newer kcc.ko may add some.  Records of three unknown kinds, before
 * the first task and before END, leave what is read unchanged; an
 * unknown record must still be well formed.
 */
static void test_unknown_records(const struct sbuf *st)
{
	const struct kcc_stream_header *h = (const void *)st->p;
	size_t first = h->header_size, end = st->len - sizeof(struct kcc_rec);
	struct sbuf b = { 0 }, out = { 0 };
	struct stream s;
	int ret, ok;

	sbuf__append(&b, st->p, first);
	/* Types 4 and 5 are known now (watch, valence), 6-7 reserved. */
	unknown_record(&b, 1000, 24);
	unknown_record(&b, 0, 0);
	sbuf__append(&b, st->p + first, end - first);
	unknown_record(&b, 0xffffffffu, 64);
	sbuf__append(&b, st->p + end, st->len - end);
	ret = stream__parse(&s, b.p, b.len);
	ok = !ret && s.nr_tasks == 2 && s.nr_maps == 1 && s.unknown_recs == 3;
	if (!ret)
		stream__write(&s, &out);
	ok &= out.len == st->len && !memcmp(out.p, st->p, st->len);
	ksft_test_result(ok, "records of unknown kinds are skipped: same tasks and maps (%d, %d tasks, %" PRIu64 " skipped)\n",
			 ret, (int)s.nr_tasks, s.unknown_recs);
	stream__exit(&s);
	sbuf__exit(&out);

	/* An unknown kind with a size that is not a multiple of 8. */
	((struct kcc_rec *)(b.p + first))->size = sizeof(struct kcc_rec) + 20;
	ret = stream__parse(&s, b.p, b.len);
	ksft_test_result(ret == -EINVAL && strstr(s.err, "bad record size"),
			 "an unknown record of a bad size is refused\n");
	stream__exit(&s);
	sbuf__exit(&b);
}

static void test_stream_parser(const struct sbuf *st)
{
	struct stream s;
	struct sbuf out = { 0 };
	size_t cut;
	int ret, bad = 0, n;
	u64 rng = 7;

	ret = stream__parse(&s, st->p, st->len);
	ksft_test_result(!ret && s.nr_tasks == 2 && s.nr_maps == 1,
			 "stream parses: %d tasks, %d maps\n", (int)s.nr_tasks,
			 (int)s.nr_maps);
	if (!ret)
		stream__write(&s, &out);
	ksft_test_result(!ret && out.len == st->len && !memcmp(out.p, st->p, st->len),
			 "stream write(parse(x)) == x\n");
	stream__exit(&s);
	sbuf__exit(&out);

	for (cut = 0; cut < st->len; cut++) {
		if (!stream__parse(&s, st->p, cut) || !s.err[0])
			bad++;
		stream__exit(&s);
	}
	ksft_test_result(!bad, "every truncation of the stream is refused with a reason (%d not)\n",
			 bad);

	/* Random corruption: parse, and when accepted the result is sane. */
	for (n = 0; n < 3000; n++) {
		uint8_t *c = malloc(st->len);
		uint32_t j, flips = 1 + ref_below(&rng, 4);

		memcpy(c, st->p, st->len);
		for (j = 0; j < flips; j++)
			c[ref_below(&rng, st->len)] ^= 1u << ref_below(&rng, 8);
		if (!stream__parse(&s, c, st->len)) {
			for (j = 0; j < s.nr_tasks; j++)
				if (s.tasks[j].ksf.f.count > st->len / 16)
					bad++;
		}
		stream__exit(&s);
		free(c);
	}
	ksft_test_result(!bad, "3000 corrupted streams handled\n");

	/*
	 * Streams written before the stitch_* counters closed the status:
	 * the same header without them parses, the counters read 0; and a
	 * counter set in a current header is read back.
	 */
	{
		size_t at = offsetof(struct kcc_stream_header, status) +
			    offsetof(struct kcc_status, stitch_leaf_repaired);
		size_t gap = sizeof(struct kcc_status) -
			     offsetof(struct kcc_status, stitch_leaf_repaired);
		uint8_t *old = malloc(st->len), *cur = malloc(st->len);
		struct kcc_stream_header *h = (void *)old;
		struct stream s2;
		int ok;

		memcpy(old, st->p, at);
		memcpy(old + at, st->p + at + gap, st->len - at - gap);
		h->header_size -= gap;
		memcpy(cur, st->p, st->len);
		((struct kcc_stream_header *)cur)->status.stitch_walk_cut = 3;
		((struct kcc_stream_header *)cur)->status.stitch_below_walk = 5;
		ret = stream__parse(&s, old, st->len - gap);
		ok = !ret && s.nr_tasks == 2 && s.nr_maps == 1 &&
		     !strcmp(s.desc[0].name, "calls") &&
		     !s.hdr.status.stitch_leaf_repaired &&
		     !s.hdr.status.stitch_below_walk;
		ret = stream__parse(&s2, cur, st->len);
		ok &= !ret && s2.hdr.status.stitch_walk_cut == 3 &&
		      s2.hdr.status.stitch_below_walk == 5 &&
		      s2.nr_ctrs == s.nr_ctrs &&
		      !memcmp(s2.desc, s.desc, s.nr_ctrs * sizeof(s.desc[0]));
		ksft_test_result(ok, "a header without the stitch counters parses; counters read back\n");
		stream__exit(&s);
		stream__exit(&s2);
		free(old);
		free(cur);
	}
	test_unknown_records(st);
}

/* Stream with one hand-made task record. */
static int hostile(uint32_t nr_nodes, uint32_t size_nodes,
		   const struct kcc_rec_node *nodes, bool end, const char *want)
{
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct kcc_rec_task rt;
	struct sbuf b = { 0 };
	struct stream s;
	uint32_t i;
	uint64_t zero[KCC_NR_CTRS] = { 1, 1, 1 };
	int ret, ok;

	stream__default_header(&h, d, 2, KCC_SOURCE_INJECT, 0);
	stream__write_header(&b, &h, d);
	memset(&rt, 0, sizeof(rt));
	rt.hdr.type = KCC_REC_TASK;
	rt.hdr.size = sizeof(rt) + size_nodes * (sizeof(*nodes) + sizeof(zero));
	rt.nr_nodes = nr_nodes;
	sbuf__append(&b, &rt, sizeof(rt));
	for (i = 0; i < size_nodes; i++) {
		sbuf__append(&b, &nodes[i], sizeof(nodes[i]));
		sbuf__append(&b, zero, sizeof(zero));
	}
	if (end)
		stream__write_end(&b);
	ret = stream__parse(&s, b.p, b.len);
	ok = ret == -EINVAL && strstr(s.err, want);
	if (!ok)
		ksft_print_msg("got %d '%s', wanted '%s'\n", ret, s.err, want);
	stream__exit(&s);
	sbuf__exit(&b);
	return ok;
}

static void test_hostile(void)
{
	struct kcc_rec_node n[5] = {
		{ .parent = KCC_NODE_ROOT_TOP, .label = 1 },
		{ .parent = 0, .label = 2 },
		{ .parent = 1, .label = 3 },
		{ .parent = 2, .label = 4 },
		{ .parent = 3, .label = 5 },
	};
	struct kcc_rec_node fwd[2] = {
		{ .parent = 1, .label = 1 },
		{ .parent = KCC_NODE_ROOT_TOP, .label = 2 },
	};
	struct kcc_rec_node dup[2] = {
		{ .parent = KCC_NODE_ROOT_TOP, .label = 1 },
		{ .parent = KCC_NODE_ROOT_TOP, .label = 1 },
	};

	ksft_test_result(hostile(0x7fffffff, 1, n, true, "does not hold"),
			 "huge node count in a small record refused before allocating\n");
	ksft_test_result(hostile(2, 2, fwd, true, "does not come before"),
			 "forward parent refused\n");
	ksft_test_result(hostile(2, 2, dup, true, "same parent and label"),
			 "duplicate node refused\n");
	ksft_test_result(hostile(5, 5, n, true, "more than a 2-SF"),
			 "tree deeper than 2k - 1 refused\n");
	ksft_test_result(hostile(2, 2, n, false, "no END"),
			 "missing END record refused\n");
}

static char *folded_of(struct profile *p)
{
	struct report_opts o = { .name = "m", .sort = -1 };
	struct report r;
	char *mem = NULL;
	size_t len = 0;
	FILE *f;

	if (report__build(&r, p, &o))
		return NULL;
	f = open_memstream(&mem, &len);
	o.sort = KCC_CTR_CALLS;
	r.sort = KCC_CTR_CALLS;
	report__folded(&r, f);
	fclose(f);
	report__exit(&r);
	return mem;
}

static void test_profile_parser(const struct trace *t)
{
	struct profile p, q;
	char *mem = NULL;
	size_t len = 0, cut;
	FILE *f;
	int bad = 0, n, refused = 0, accepted = 0;
	u64 rng = 11;

	if (make_profile(&p, t, 2, 2, 3, NULL)) {
		ksft_test_result_fail("profile setup\n");
		return;
	}
	f = open_memstream(&mem, &len);
	profile__write(&p, f);
	fclose(f);
	for (cut = 0; cut < len; cut++) {
		if (!profile__parse(&q, mem, cut, "cut"))
			bad++;
		profile__exit(&q);
	}
	ksft_test_result(!bad, "every truncation of a profile is refused (%d not)\n", bad);
	/*
	 * Random corruption: refused (-EINVAL), or accepted, and then it
	 * reports without error and the same once written and read back.
	 */
	bad = 0;
	quiet_stderr(1);
	for (n = 0; n < 3000; n++) {
		uint8_t *c = malloc(len);
		uint32_t j;
		int ret;

		memcpy(c, mem, len);
		for (j = 0; j < 1 + ref_below(&rng, 3); j++)
			c[ref_below(&rng, len)] ^= 1u << ref_below(&rng, 8);
		ret = profile__parse(&q, c, len, "corrupt");
		if (ret == -EINVAL) {
			refused++;
		} else if (ret) {
			bad++;
		} else {
			struct report r;
			struct report_opts o = { .name = "c", .sort = -1 };
			char *w1 = NULL, *f1, *f2;
			size_t l1 = 0;
			struct profile q2;
			FILE *m;

			accepted++;
			m = open_memstream(&w1, &l1);
			ret = profile__write(&q, m);
			fclose(m);
			if (ret || profile__parse(&q2, w1, l1, "rewritten")) {
				bad++;
			} else {
				/* What kcc merge writes reports the same. */
				f1 = folded_of(&q);
				f2 = folded_of(&q2);
				if ((f1 || f2) && (!f1 || !f2 || strcmp(f1, f2)))
					bad++;
				free(f1);
				free(f2);
			}
			profile__exit(&q2);
			free(w1);
			ret = report__build(&r, &q, &o);
			if (!ret) {
				FILE *nul = fopen("/dev/null", "w");

				if (report__text(&r, nul))
					bad++;
				fclose(nul);
				report__exit(&r);
			} else if (ret != -EINVAL) {
				bad++;
			}
		}
		profile__exit(&q);
		free(c);
	}
	quiet_stderr(0);
	ksft_test_result(!bad && refused > 100 && accepted > 100,
			 "3000 corrupted profiles: %d refused, %d accepted and reported the same once rewritten; %d not\n",
			 refused, accepted, bad);
	free(mem);
	profile__exit(&p);
}

static void test_merge(void)
{
	struct ref_trace ra, rb;
	struct ref_gen g;
	struct trace ta, tb;
	struct profile a, b, aa, ab, ba;
	struct report r1, r2;
	struct report_opts o = { .name = "m", .sort = -1,
				 .group = GROUP_ALL };
	u64 rng = 99;
	char *fab, *fba;
	uint32_t v, j;
	int ok = 1;

	ref_gen_random(&g, &rng);
	g.len = 3000;
	ref_gen_trace(&ra, &g, &rng);
	ref_gen_trace(&rb, &g, &rng);
	trace_from_ref(&ta, &ra);
	trace_from_ref(&tb, &rb);
	make_profile(&a, &ta, 3, 2, 1, NULL);
	make_profile(&b, &tb, 3, 1, 2, NULL);

	profile__init(&aa);
	profile__append(&aa, &a, "a");
	profile__append(&aa, &a, "a");
	if (report__build(&r1, &a, &o) || report__build(&r2, &aa, &o)) {
		ok = 0;
	} else {
		const struct kcc_forest *f1 = &r1.groups[0].kccf.f;
		const struct kcc_forest *f2 = &r2.groups[0].kccf.f;

		ok = f1->count == f2->count;
		/* Same relabelled order: node v is the same path in both. */
		for (v = 0; ok && v < f1->count; v++)
			for (j = 0; j < 3; j++)
				if (kcc_forest_ctr(f2, v)[j] != 2 * kcc_forest_ctr(f1, v)[j] ||
				    kcc_forest_node(f2, v)->label != kcc_forest_node(f1, v)->label)
					ok = 0;
		report__exit(&r1);
		report__exit(&r2);
	}
	ksft_test_result(ok, "merge(A, A) doubles every k-CCF counter\n");

	profile__init(&ab);
	profile__init(&ba);
	profile__append(&ab, &a, "a");
	profile__append(&ab, &b, "b");
	profile__append(&ba, &b, "b");
	profile__append(&ba, &a, "a");
	fab = folded_of(&ab);
	fba = folded_of(&ba);
	ksft_test_result(fab && fba && !strcmp(fab, fba) && strlen(fab) > 10,
			 "merge(A, B) and merge(B, A) report the same\n");
	free(fab);
	free(fba);
	profile__exit(&a);
	profile__exit(&b);
	profile__exit(&aa);
	profile__exit(&ab);
	profile__exit(&ba);
	trace__exit(&ta);
	trace__exit(&tb);
	ref_trace_free(&ra);
	ref_trace_free(&rb);
}

#define NR_FOLD		20

/*
 * --per-process (profile__fold_processes()): random traces spread over
 * 2 to 5 threads of one process fold into one task (KCC_TASK_FOLDED,
 * pid = tgid, no more nodes than its threads had), whose k-CCF is still
 * the brute-force one, and whose stream, written anew, parses back.
 */
static void test_fold_random(void)
{
	u64 rng = 0x666f6c64;
	char why[256] = "";
	int i, good = 0;
	uint64_t before = 0, after = 0;

	for (i = 0; i < NR_FOLD; i++) {
		struct ref_trace rt;
		struct ref_gen g;
		struct trace t;
		struct profile p;
		struct stream q;
		struct report r;
		struct report_opts o = { .name = "gen", .sort = -1,
					 .group = GROUP_PROCESS };
		uint32_t k = 1 + ref_below(&rng, 4), threads = 2 + ref_below(&rng, 4);
		uint32_t nodes = 0, j;
		const struct stream_task *f;
		int ok = 0;

		ref_gen_random(&g, &rng);
		ref_gen_trace(&rt, &g, &rng);
		if (trace_from_ref(&t, &rt) ||
		    make_profile(&p, &t, k, threads, i + 1, NULL)) {
			snprintf(why, sizeof(why), "trace %d: setup failed", i);
			goto next;
		}
		for (j = 0; j < p.runs[0].s.nr_tasks; j++)
			nodes += p.runs[0].s.tasks[j].ksf.f.count;
		before += p.runs[0].raw_len;
		if (profile__fold_processes(&p, 0)) {
			snprintf(why, sizeof(why), "trace %d: fold failed", i);
			goto next;
		}
		after += p.runs[0].raw_len;
		f = &p.runs[0].s.tasks[0];
		if (p.runs[0].s.nr_tasks != 1 || !(f->flags & KCC_TASK_FOLDED) ||
		    f->pid != 4242 || f->tgid != 4242 || f->ksf.f.count > nodes) {
			snprintf(why, sizeof(why), "trace %d: %u tasks, flags %#x, pid %u, %u nodes of %u",
				 i, p.runs[0].s.nr_tasks, f->flags, f->pid,
				 f->ksf.f.count, nodes);
			goto next;
		}
		if (stream__parse(&q, p.runs[0].raw, p.runs[0].raw_len) ||
		    q.nr_tasks != 1 || q.tasks[0].ksf.f.count != f->ksf.f.count) {
			snprintf(why, sizeof(why), "trace %d: the folded stream does not parse back", i);
			stream__exit(&q);
			goto next;
		}
		stream__exit(&q);
		if (report__build(&r, &p, &o)) {
			snprintf(why, sizeof(why), "trace %d: report__build failed", i);
			goto next;
		}
		ok = !check_report(&r, &rt, k, why, sizeof(why));
		report__exit(&r);
next:
		profile__exit(&p);
		trace__exit(&t);
		ref_trace_free(&rt);
		good += ok;
	}
	ksft_print_msg("per-process: streams of %" PRIu64 " bytes folded into %" PRIu64 "\n",
		       before, after);
	ksft_test_result(good == NR_FOLD, "per-process: %d of %d random traces over 2-5 threads fold into one task with the brute-force k-CCF %s\n",
			 good, NR_FOLD, why);
}

/* A task of @nr nodes (label, parent index or -1, calls) into @b. */
static void fold_task(struct sbuf *b, uint32_t pid, uint32_t tgid,
		      uint32_t flags, const uint64_t (*nd)[3], uint32_t nr)
{
	struct stream_task t;
	uint32_t ids[8], i;

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tgid = tgid;
	t.start_time_ns = 1000 + pid;
	t.flags = flags;
	t.samples = nr;
	t.cgroup_id = 1000 + tgid;	/* a KCC_REC_CGROUP after it */
	snprintf(t.comm, sizeof(t.comm), "p%u", pid);
	pool__alloc(&t.ksf, nr, KCC_NR_CTRS - 1);
	for (i = 0; i < nr; i++) {
		ids[i] = kcc_forest_get(&t.ksf.f, nd[i][1] == ~0ull ? KCC_ROOT_TOP :
					ids[nd[i][1]], nd[i][0]);
		kcc_forest_ctr(&t.ksf.f, ids[i])[KCC_CTR_CALLS] = nd[i][2];
	}
	stream__write_task(b, &t, KCC_NR_CTRS);
	pool__exit(&t.ksf);
}

/* The calls of path @a (;@b) in task @t, or ~0 when it has none. */
static uint64_t fold_calls(const struct stream_task *t, uint64_t a, uint64_t b)
{
	uint32_t v = kcc_forest_find(&t->ksf.f, KCC_ROOT_TOP, a);

	if (v != KCC_NIL && b)
		v = kcc_forest_find(&t->ksf.f, v, b);
	return v == KCC_NIL ? ~0ull : kcc_forest_ctr(&t->ksf.f, v)[KCC_CTR_CALLS];
}

/*
 * Threads fold only with their own process image: two threads of
 * process 10 fold (a shared path summed, the others kept; not EXITED,
 * since one of them had not exited), its thread after an exec (image 1)
 * and process 20 stay as they were.  Records the reader does not know
 * (they may be per thread) refuse the fold and leave the stream whole.
 */
static void test_fold_apart(void)
{
	static const uint64_t t10[][3] = { { 0x100, ~0ull, 1 }, { 0x200, 0, 2 } };
	static const uint64_t t11[][3] = { { 0x100, ~0ull, 5 }, { 0x300, ~0ull, 7 } };
	static const uint64_t t12[][3] = { { 0x100, ~0ull, 100 } };
	static const uint64_t t20[][3] = { { 0x100, ~0ull, 1000 } };
	const uint32_t img1 = 1u << KCC_TASK_IMAGE_SHIFT;
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct sbuf b = { 0 };
	struct stream s;
	const struct stream_task *f = NULL, *e = NULL, *o = NULL;
	uint32_t i;
	int ok;

	stream__default_header(&h, d, 3, KCC_SOURCE_INJECT, KCC_HDR_CALLS_VALID);
	stream__write_header(&b, &h, d);
	fold_task(&b, 10, 10, KCC_TASK_EXITED, t10, 2);
	fold_task(&b, 20, 20, 0, t20, 1);
	fold_task(&b, 11, 10, 0, t11, 2);
	fold_task(&b, 12, 10, img1, t12, 1);
	stream__write_end(&b);
	ok = !b.err && !stream__parse(&s, b.p, b.len) && !stream__fold_processes(&s) &&
	     s.nr_tasks == 3;
	for (i = 0; ok && i < s.nr_tasks; i++) {
		const struct stream_task *t = &s.tasks[i];

		if (t->tgid == 10 && !(t->flags >> KCC_TASK_IMAGE_SHIFT))
			f = t;
		else if (t->tgid == 10)
			e = t;
		else
			o = t;
	}
	ok = ok && f && e && o &&
	     f->pid == 10 && f->flags == KCC_TASK_FOLDED && f->samples == 4 &&
	     f->start_time_ns == 1010 && !strcmp(f->comm, "p10") &&
	     f->ksf.f.count == 3 && fold_calls(f, 0x100, 0) == 6 &&
	     fold_calls(f, 0x100, 0x200) == 2 && fold_calls(f, 0x300, 0) == 7 &&
	     e->pid == 12 && e->flags == img1 && fold_calls(e, 0x100, 0) == 100 &&
	     o->pid == 20 && !o->flags && fold_calls(o, 0x100, 0) == 1000 &&
	     f->cgroup_id == 1010 && e->cgroup_id == 1010 && o->cgroup_id == 1020;
	stream__exit(&s);
	ksft_test_result(ok, "per-process: threads fold with their own image only (2 into 1, shared path 1 + 5), another image and process as they were, cgroups kept\n");

	/* A cgroup record before any task: malformed. */
	{
		struct sbuf c = { 0 };
		struct kcc_rec_cgroup rc = {
			.hdr = { .type = KCC_REC_CGROUP, .size = sizeof(rc) },
			.cgroup_id = 5,
		};

		stream__write_header(&c, &h, d);
		sbuf__append(&c, &rc, sizeof(rc));
		stream__write_end(&c);
		ok = !c.err && stream__parse(&s, c.p, c.len) == -EINVAL &&
		     strstr(s.err, "not after a task");
		stream__exit(&s);
		sbuf__exit(&c);
	}
	ksft_test_result(ok, "cgroup record: round trip with its task; before any task refused\n");

	/* The same with a record of an unknown kind: refused, unchanged. */
	b.len -= sizeof(struct kcc_rec);
	unknown_record(&b, KCC_REC_WATCH + 100, 8);
	stream__write_end(&b);
	ok = !b.err && !stream__parse(&s, b.p, b.len) && s.unknown_recs == 1 &&
	     stream__fold_processes(&s) == -EINVAL && s.nr_tasks == 4;
	stream__exit(&s);
	ksft_test_result(ok, "per-process: a stream with records it does not know is left whole (-EINVAL)\n");
	sbuf__exit(&b);
}

/*
 * Tasks of cgroups (KCC_REC_CGROUP, named by the profile's CGROUP
 * sections): --per-cgroup groups them by path (two processes of /a, one
 * of /b, one task whose cgroup was not named); a process group is
 * labelled with its cgroup only when all its tasks share it; the names
 * survive a write and a merge; the fleet pprof carries a cgroup label.
 */
static void test_cgroups(void)
{
	static const uint64_t one[][3] = { { 0x100, ~0ull, 1 } };
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct report_opts o = { .name = "cg", .sort = KCC_CTR_CALLS,
				 .group = GROUP_CGROUP };
	struct sbuf b = { 0 };
	struct profile p, q, m;
	struct report r;
	char *mem = NULL, *pb = NULL;
	size_t len = 0, pblen = 0;
	const char *want[] = { "/a", "/b", "[cgroup 1040]" };
	const uint32_t tasks[] = { 2, 1, 1 };
	uint32_t i, gi;
	FILE *f;
	int ok;

	stream__default_header(&h, d, 3, KCC_SOURCE_INJECT, KCC_HDR_CALLS_VALID);
	stream__write_header(&b, &h, d);
	fold_task(&b, 10, 10, 0, one, 1);	/* cgroup 1010 */
	fold_task(&b, 11, 10, 0, one, 1);	/* 1010 */
	fold_task(&b, 20, 20, 0, one, 1);	/* 1020 */
	fold_task(&b, 40, 40, 0, one, 1);	/* 1040: not named */
	stream__write_end(&b);
	profile__init(&p);
	ok = !b.err && !profile__add_stream(&p, b.p, b.len, "cg") &&
	     !profile__add_cgroup(&p, 0, 1010, "/a") &&
	     !profile__add_cgroup(&p, 0, 1020, "/b");
	b.p = NULL;
	f = ok ? open_memstream(&mem, &len) : NULL;
	ok = f && !profile__write(&p, f);
	if (f)
		fclose(f);
	ok = ok && !profile__parse(&q, mem, len, "cg") && q.nr_cgroups == 2 &&
	     !strcmp(profile__cgroup(&q, 0, 1020), "/b");
	if (ok && !report__build(&r, &q, &o)) {
		ok = r.nr_groups == 3;
		for (i = 0; ok && i < 3; i++) {
			for (gi = 0; gi < r.nr_groups; gi++)
				if (!strcmp(r.groups[gi].name, want[i]))
					break;
			ok = gi < r.nr_groups && r.groups[gi].nr_tasks == tasks[i] &&
			     r.groups[gi].total[KCC_CTR_CALLS] == tasks[i];
		}
		report__exit(&r);
	} else {
		ok = 0;
	}
	/* Per process: p10 (both threads in /a) labelled, p40 not. */
	o.group = GROUP_PROCESS;
	o.fleet_labels = true;
	if (ok && !report__build(&r, &q, &o)) {
		for (gi = 0; gi < r.nr_groups; gi++) {
			const struct report_grp *g = &r.groups[gi];

			if (g->tgid == 10 && (!g->cgroup || strcmp(g->cgroup, "/a")))
				ok = 0;
			if (g->tgid == 40 && g->cgroup)
				ok = 0;
		}
		f = open_memstream(&pb, &pblen);
		ok = ok && f && !report__pprof(&r, f);
		if (f)
			fclose(f);
		report__exit(&r);
	} else {
		ok = 0;
	}
	if (ok) {
		char path[64], cmd[256];

		snprintf(path, sizeof(path), "/tmp/kcc-cg-test.%d.pb.gz", (int)getpid());
		snprintf(cmd, sizeof(cmd), "zcat %s | grep -aq cgroup && zcat %s | grep -aq /a",
			 path, path);
		f = fopen(path, "w");
		ok = f && fwrite(pb, 1, pblen, f) == pblen;
		if (f)
			fclose(f);
		ok = ok && !system(cmd);
		unlink(path);
	}
	profile__init(&m);
	ok = ok && !profile__append(&m, &q, "a") && !profile__append(&m, &q, "b") &&
	     m.nr_cgroups == 4 && !strcmp(profile__cgroup(&m, 1, 1010), "/a");
	profile__exit(&m);
	ksft_test_result(ok, "cgroups: --per-cgroup groups by path (/a 2 tasks, /b 1, an unnamed id 1); a process labelled when all its tasks share one; kept by write and merge; a pprof label\n");
	profile__exit(&q);
	profile__exit(&p);
	free(mem);
	free(pb);
}

int main(void)
{
	struct trace t;
	struct sbuf st = { 0 };
	struct profile p;

	ksft_print_header();
	ksft_set_plan(NR_RANDOM + 5 + 5 + 2 + 2 + 2 + 5);
	test_random();
	test_fold_random();
	test_fold_apart();
	test_cgroups();

	if (fig2(&t) || make_profile(&p, &t, 2, 2, 5, &st))
		ksft_exit_fail_msg("fig2 setup\n");
	profile__exit(&p);
	quiet_stderr(1);
	test_stream_parser(&st);
	quiet_stderr(0);
	test_hostile();
	quiet_stderr(1);
	test_profile_parser(&t);
	quiet_stderr(0);
	test_merge();
	sbuf__exit(&st);
	trace__exit(&t);
	ksft_finished();
}
