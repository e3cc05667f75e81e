// SPDX-License-Identifier: GPL-2.0
/*
 * ppp - preferential path numbering of watched k-contexts (lbr/kcc_ppp.c)
 * against brute force.
 *
 *  - Numbering: on random call graphs and random watched sets I, every
 *    path of the position-unrolled DAG (enumerated by depth-first search
 *    over the edges that I spells) is summed from the increments; the
 *    contexts of I must get distinct sums in [0, range), and the sums the
 *    run-time walk finds for a stack spelling a context must be the same.
 *  - Exact counting and residual: random traces replayed through
 *    kcc_ppp_call()/kcc_ppp_return(); every watched context's count must
 *    equal the number of calls whose stack ends with it (a scan of the
 *    whole stack at every call), the calls with no watched suffix must be
 *    the unwatched count, and the checks must have refused aliases on
 *    the way (so that the no-false-positive property was exercised).
 *  - Bad input: empty, too long, duplicate, too many, too little memory,
 *    too few numbers allowed; each refused with its own error, leaving a
 *    numbering nothing can run on.
 */
#include <inttypes.h>

#include "ktap.h"
#include "kcc_forest.h"
#include "kcc_ppp.h"
#include "ref.h"

#define NGRAPHS		300
#define NTRACES		150
#define MAXLEN		(KCC_PPP_MAX_K + 1)

struct watch {
	u64 *labels;
	u32 *lens;
	u32 n;
	u32 nlabels;
	u32 cap;
};

static bool watch_has(const struct watch *w, const u64 *c, u32 len)
{
	u32 i, off = 0;

	for (i = 0; i < w->n; off += w->lens[i++])
		if (w->lens[i] == len &&
		    !memcmp(w->labels + off, c, len * sizeof(*c)))
			return true;
	return false;
}

static void watch_add(struct watch *w, const u64 *c, u32 len)
{
	if (watch_has(w, c, len) || w->n == w->cap)
		return;
	memcpy(w->labels + w->nlabels, c, len * sizeof(*c));
	w->lens[w->n++] = len;
	w->nlabels += len;
}

static void watch_init(struct watch *w, u32 cap)
{
	w->labels = ref_alloc((size_t)cap * MAXLEN * sizeof(u64));
	w->lens = ref_alloc(cap * sizeof(u32));
	w->n = 0;
	w->nlabels = 0;
	w->cap = cap;
}

static void watch_free(struct watch *w)
{
	free(w->labels);
	free(w->lens);
}

struct built {
	struct kcc_ppp p;
	void *mem;
};

static int build(struct built *b, const struct watch *w, u32 max_range)
{
	size_t sz = kcc_ppp_mem_size(w->n, w->nlabels, max_range);

	b->mem = ref_alloc(sz);
	return kcc_ppp_build(&b->p, b->mem, sz, w->labels, w->lens, w->n,
			     max_range);
}

/* ---- numbering against the enumerated DAG ------------------------------ */

struct dfs {
	const struct kcc_ppp *p;
	u32 path[MAXLEN];
	u64 paths;		/* DAG paths enumerated */
	u64 in_range;		/* paths outside I summing into the range */
	u8 *seen;		/* per number: an I context summed to it */
	struct ksft_prop *uniq;
	struct ksft_prop *range;
};

/* Is the path of m + 1 routine ids in @d->path a context of I? */
static u32 dfs_ctx(const struct dfs *d, u32 m)
{
	const struct kcc_ppp *p = d->p;
	u32 c;

	for (c = 0; c < p->nctx; c++)
		if (p->ctx_len[c] == m + 1 &&
		    !memcmp(p->ctx_rid + p->ctx_off[c], d->path,
			    (m + 1) * sizeof(u32)))
			return c;
	return KCC_NIL;
}

/*
 * Extend a path of the DAG that started at s -> (m, path[0]) and has
 * reached position @pos with path[m - pos], summing @sum so far.
 */
static void dfs_walk(struct dfs *d, u32 m, u32 pos, s64 sum)
{
	const struct kcc_ppp *p = d->p;
	u32 cur = d->path[m - pos], e;

	if (d->paths > 200000)
		return;
	if (pos == 0) {
		u32 c;

		if (p->w_callee[cur] == KCC_PPP_NONE)
			return;
		sum += p->w_callee[cur];
		d->paths++;
		c = dfs_ctx(d, m);
		if (c == KCC_NIL) {
			d->in_range += sum >= 0 && sum < p->range;
			return;
		}
		ksft_prop_check(d->range, sum >= 0 && sum < p->range &&
				sum == p->ctx_num[c],
				"context %u sums to %" PRId64 ", range %u, number %u",
				c, sum, p->range, p->ctx_num[c]);
		if (sum >= 0 && sum < p->range) {
			ksft_prop_check(d->uniq, !d->seen[sum],
					"two contexts sum to %" PRId64, sum);
			d->seen[sum] = 1;
		}
		return;
	}
	for (e = 0; e < p->nedges; e++) {
		s32 w = p->ew[(size_t)e * KCC_PPP_MAX_K + pos - 1];

		if (p->ecaller[e] != cur || w == KCC_PPP_NONE)
			continue;
		d->path[m - pos + 1] = p->ecallee[e];
		dfs_walk(d, m, pos - 1, sum + w);
	}
}

/* A random call graph: routine i calls a few others. */
struct graph {
	u32 nr;
	u32 deg[64];
	u32 out[64][6];
};

static void graph_random(struct graph *g, u64 *rng)
{
	u32 i, j;

	g->nr = 2 + ref_below(rng, 40);
	for (i = 0; i < g->nr; i++) {
		g->deg[i] = 1 + ref_below(rng, 5);
		for (j = 0; j < g->deg[i]; j++)
			g->out[i][j] = ref_below(rng, g->nr);
	}
}

/* Random walks of the graph, of 1 .. k + 1 routines. */
static void watch_random(struct watch *w, const struct graph *g, u32 k,
			 u32 want, u64 *rng)
{
	u64 c[MAXLEN];
	u32 tries, len, i, r;

	for (tries = 0; tries < 4 * want && w->n < want; tries++) {
		len = 1 + ref_below(rng, k + 1);
		r = ref_below(rng, g->nr);
		for (i = 0; i < len; i++) {
			c[i] = ref_label(r);
			r = g->out[r][ref_below(rng, g->deg[r])];
		}
		watch_add(w, c, len);
	}
}

static void test_numbering(u64 *rng)
{
	struct ksft_prop uniq = { 0 }, range = { 0 }, walk = { 0 };
	struct kcc_ppp_frame stack[MAXLEN];
	u64 paths = 0, aliases = 0, sum_i = 0, sum_range = 0;
	double worst = 1.0;
	u32 t;

	for (t = 0; t < NGRAPHS; t++) {
		u32 k = ref_below(rng, KCC_PPP_MAX_K + 1), c, i;
		struct watch w;
		struct graph g;
		struct built b;
		struct dfs d = { 0 };
		struct kcc_ppp_run run;
		u64 *counts;

		graph_random(&g, rng);
		watch_init(&w, 1 + ref_below(rng, 200));
		watch_random(&w, &g, k, w.cap, rng);
		if (build(&b, &w, KCC_PPP_MAX_RANGE)) {
			ksft_prop_check(&range, 0, "build refused: %s",
					kcc_ppp_strerror(b.p.err));
			goto next;
		}
		d.p = &b.p;
		d.seen = ref_alloc(b.p.range);
		d.uniq = &uniq;
		d.range = &range;
		for (i = 0; i < b.p.nroutines; i++) {
			u32 m;

			for (m = 0; m <= b.p.kmax; m++) {
				s32 ws = b.p.w_outer[i * (KCC_PPP_MAX_K + 1) + m];

				if (ws == KCC_PPP_NONE)
					continue;
				d.path[0] = i;
				dfs_walk(&d, m, m, ws);
			}
		}
		/* Every context was reached by the enumeration. */
		for (c = 0; c < b.p.nctx; c++)
			ksft_prop_check(&range, d.seen[b.p.ctx_num[c]],
					"context %u not enumerated", c);
		paths += d.paths;
		aliases += d.in_range;
		sum_i += b.p.nctx;
		sum_range += b.p.range;
		if ((double)b.p.range / b.p.nctx > worst)
			worst = (double)b.p.range / b.p.nctx;

		/* The run-time walk finds the same numbers. */
		counts = ref_alloc(b.p.range * sizeof(u64));
		for (c = 0; c < b.p.nctx; c++) {
			const u64 *lab = w.labels;
			u32 len = w.lens[c];

			for (i = 0; i < c; i++)
				lab += w.lens[i];
			kcc_ppp_run_init(&run, &b.p, counts, stack, MAXLEN);
			for (i = 0; i < len; i++)
				kcc_ppp_call(&run, lab[i]);
			ksft_prop_check(&walk,
					kcc_ppp_lookup(&run, len) == b.p.ctx_num[c] &&
					counts[b.p.ctx_num[c]] == 1,
					"context %u: walk gives %u, number %u", c,
					kcc_ppp_lookup(&run, len), b.p.ctx_num[c]);
		}
		free(counts);
		free(d.seen);
next:
		free(b.mem);
		watch_free(&w);
	}
	ksft_print_msg("%u watched sets, %" PRIu64 " contexts, %" PRIu64 " numbers: delta %.3f overall, worst %.2f\n",
		       NGRAPHS, sum_i, sum_range,
		       (double)sum_range / (double)sum_i, worst);
	ksft_print_msg("%" PRIu64 " DAG paths enumerated, %" PRIu64 " outside I summing into the range\n",
		       paths, aliases);
	ksft_prop_result(&uniq, "contexts of I get distinct numbers");
	ksft_prop_result(&range, "numbers in [0, range) equal to the DAG sums");
	ksft_prop_result(&walk, "the run-time walk finds each context's number");
}

/* ---- exact counts and residual on traces ---------------------------------- */

static void test_counting(u64 *rng)
{
	struct ksft_prop exact = { 0 }, resid = { 0 };
	u64 aliased = 0, matched = 0, unwatched = 0;
	u32 t;

	for (t = 0; t < NTRACES; t++) {
		struct ref_trace tr;
		struct ref_gen g;
		struct watch w;
		struct built b;
		struct kcc_ppp_run run;
		struct kcc_ppp_frame *stack;
		u64 *counts, *want, c[MAXLEN], unw = 0;
		u32 *stk, d = 0, k, i, j;
		size_t e;

		ref_gen_random(&g, rng);
		g.nr = 2 + g.nr % 12;	/* few routines: many aliases */
		ref_gen_trace(&tr, &g, rng);
		k = ref_below(rng, KCC_PPP_MAX_K + 1);
		watch_init(&w, 1 + ref_below(rng, 150));
		stk = ref_alloc((tr.max_depth + 1) * sizeof(u32));
		/* Suffixes of stacks seen, and random paths never seen. */
		for (e = 0; e < tr.n && w.n < w.cap; e++) {
			if (tr.ev[e] == REF_RET) {
				d--;
				continue;
			}
			stk[d++] = tr.ev[e];
			if (ref_below(rng, 4))
				continue;
			if (ref_below(rng, 3)) {
				u32 len = 1 + ref_below(rng, k + 1);

				if (len > d)
					len = d;
				for (i = 0; i < len; i++)
					c[i] = ref_label(stk[d - len + i]);
				watch_add(&w, c, len);
			} else {
				u32 len = 1 + ref_below(rng, k + 1);

				for (i = 0; i < len; i++)
					c[i] = ref_label(ref_below(rng, tr.nr));
				watch_add(&w, c, len);
			}
		}
		if (!w.n) {
			c[0] = ref_label(0);
			watch_add(&w, c, 1);
		}
		if (build(&b, &w, KCC_PPP_MAX_RANGE)) {
			ksft_prop_check(&exact, 0, "build refused: %s",
					kcc_ppp_strerror(b.p.err));
			goto next;
		}
		counts = ref_alloc(b.p.range * sizeof(u64));
		want = ref_alloc(w.n * sizeof(u64));
		stack = ref_alloc((tr.max_depth + 1) * sizeof(*stack));
		kcc_ppp_run_init(&run, &b.p, counts, stack, tr.max_depth + 1);
		d = 0;
		for (e = 0; e < tr.n; e++) {
			u32 off = 0;
			bool any = false;

			if (tr.ev[e] == REF_RET) {
				kcc_ppp_return(&run);
				d--;
				continue;
			}
			kcc_ppp_call(&run, ref_label(tr.ev[e]));
			stk[d++] = tr.ev[e];
			/* Brute force: every context against the stack. */
			for (i = 0; i < w.n; off += w.lens[i++]) {
				u32 len = w.lens[i];

				if (len > d)
					continue;
				for (j = 0; j < len; j++)
					if (w.labels[off + j] !=
					    ref_label(stk[d - len + j]))
						break;
				if (j == len) {
					want[i]++;
					any = true;
				}
			}
			unw += !any;
		}
		for (i = 0; i < w.n; i++)
			ksft_prop_check(&exact, counts[b.p.ctx_num[i]] == want[i],
					"trace %u context %u: counted %" PRIu64 ", exact %" PRIu64,
					t, i, counts[b.p.ctx_num[i]], want[i]);
		/* Slots of no context stay zero: nothing else counted. */
		for (i = 0; i < b.p.range; i++)
			ksft_prop_check(&resid,
					b.p.slot[i] != KCC_NIL || !counts[i],
					"trace %u: unused number %u counted", t, i);
		ksft_prop_check(&resid, run.unwatched == unw && !run.stack_drops,
				"trace %u: unwatched %" PRIu64 ", exact %" PRIu64,
				t, run.unwatched, unw);
		aliased += run.aliased;
		matched += run.matched;
		unwatched += run.unwatched;
		free(counts);
		free(want);
		free(stack);
next:
		free(b.mem);
		free(stk);
		watch_free(&w);
		ref_trace_free(&tr);
	}
	ksft_print_msg("%" PRIu64 " watched activations, %" PRIu64 " unwatched calls, %" PRIu64 " aliases refused\n",
		       matched, unwatched, aliased);
	ksft_prop_result(&exact, "watched counts equal the exact suffix counts");
	ksft_prop_check(&resid, aliased > 0, "no alias was ever refused");
	ksft_prop_result(&resid, "unwatched calls exact, aliases never counted");
}

/* ---- bad input ------------------------------------------------------------ */

static void test_bad(void)
{
	static u32 many_lens[KCC_PPP_MAX_CTX + 1];
	static u64 many[KCC_PPP_MAX_CTX + 1];
	u64 lab[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	u32 lens[3], i;
	struct kcc_ppp p;
	struct kcc_ppp_run run;
	struct kcc_ppp_frame st[4];
	u64 cnt[4];
	char mem[1 << 14];
	int ret;

	lens[0] = 0;
	ret = kcc_ppp_build(&p, mem, sizeof(mem), lab, lens, 1, 64);
	ksft_test_result(ret == -EINVAL && p.err == KCC_PPP_E_EMPTY &&
			 kcc_ppp_run_init(&run, &p, cnt, st, 4) == -EINVAL,
			 "a context of no routine is refused\n");

	lens[0] = 2;
	lens[1] = KCC_PPP_MAX_K + 2;
	ret = kcc_ppp_build(&p, mem, sizeof(mem), lab, lens, 2, 64);
	ksft_test_result(ret == -EINVAL && p.err == KCC_PPP_E_TOO_LONG &&
			 p.err_ctx == 1 && !p.range,
			 "a context of %u call edges is refused: %s\n",
			 KCC_PPP_MAX_K + 1, kcc_ppp_strerror(p.err));

	lens[0] = 3;
	lens[1] = 2;
	lens[2] = 3;
	lab[5] = 1;
	lab[6] = 2;
	lab[7] = 3;	/* context 2 = context 0 */
	ret = kcc_ppp_build(&p, mem, sizeof(mem), lab, lens, 3, 64);
	ksft_test_result(ret == -EINVAL && p.err == KCC_PPP_E_DUP &&
			 (p.err_ctx == 0 || p.err_ctx == 2) && !p.range,
			 "a context given twice is refused: %s\n",
			 kcc_ppp_strerror(p.err));

	for (i = 0; i <= KCC_PPP_MAX_CTX; i++) {
		many[i] = i;
		many_lens[i] = 1;
	}
	ret = kcc_ppp_build(&p, mem, sizeof(mem), many, many_lens,
			    KCC_PPP_MAX_CTX + 1, KCC_PPP_MAX_RANGE);
	ksft_test_result(ret == -E2BIG && p.err == KCC_PPP_E_TOO_MANY,
			 "%u contexts are refused: %s\n", KCC_PPP_MAX_CTX + 1,
			 kcc_ppp_strerror(p.err));

	lab[7] = 4;
	ret = kcc_ppp_build(&p, mem, 64, lab, lens, 3, 64);
	ksft_test_result(ret == -ENOMEM && p.err == KCC_PPP_E_MEM,
			 "a block smaller than kcc_ppp_mem_size() is refused\n");

	/* Three contexts need three numbers at least. */
	ret = kcc_ppp_build(&p, mem, sizeof(mem), lab, lens, 3, 2);
	ksft_test_result(ret == -E2BIG && p.err == KCC_PPP_E_RANGE,
			 "a numbering over max_range is refused: %s\n",
			 kcc_ppp_strerror(p.err));

	ret = kcc_ppp_build(&p, mem, sizeof(mem), lab, lens, 3, 64);
	ksft_test_result(!ret && p.range == 3 && p.nctx == 3,
			 "the same set, corrected, numbers 0..2\n");
}

int main(void)
{
	u64 rng = 0x5eed0f99;

	ksft_print_header();
	ksft_set_plan(5 + 7);
	test_numbering(&rng);
	test_counting(&rng);
	test_bad();
	ksft_finished();
}
