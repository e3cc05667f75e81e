// SPDX-License-Identifier: GPL-2.0
/*
 * hcct - the Hot Calling Context Tree against exact CCT frequencies taken
 * by brute force, on skewed random traces, for several (phi, epsilon).
 *
 * N calls, m = floor(1/eps) + 1 counters (what the kcc hcct command
 * uses, so m > 1/eps), threshold T = floor(phi N).  What Space-Saving
 * guarantees, and what is asserted:
 *
 *  - Sum of counters is N, so the smallest one is at most N/m; an item
 *    that is not monitored has a true frequency f at most the smallest
 *    counter.  Hence f > N/m implies monitored, estimate >= f >= T,
 *    reported.  The header's "every context with f >= floor(phi N) is
 *    reported" needs this extra f > N/m: phi N > N/m, but after the
 *    floor T can be <= N/m (N = 50, phi = 0.01, T = 0 makes every
 *    context "hot", monitored or not), so a context with T <= f <= N/m
 *    may be missing.  Asserted: f >= T and f * m > N  =>  reported.
 *  - A monitored estimate exceeds f by at most the counter it took over,
 *    which was at most (N' - 1)/m < N/m at that time: 0 <= est - f and
 *    (est - f) * m < N, for every exported node with est > 0 (an
 *    ancestor kept only for connection exports 0).
 *  - Hence a reported context (est >= T) has f > T - N/m, asserted as
 *    f * m > T * m - N.  In terms of epsilon this gives f >= floor((phi
 *    - eps) N), not f > floor((phi - eps) N): with N = 1000, phi N =
 *    10.5, eps = 0.0042 (m = 239), f = 6 is allowed (6 > 10 - 4.18) and
 *    equals floor(6.3).  So the test asserts that no context with
 *    f < floor((phi - eps) N) is reported hot, which is what holds.
 *  - The MCCT keeps monitored contexts, their ancestors and the pending
 *    activations: at most (m + 1) * D nodes for depth D, and after the
 *    trace every live node is monitored or an ancestor of one.
 */
#include <stdarg.h>
#include <inttypes.h>

#include "ktap.h"
#include "kcc_hcct.h"
#include "ref.h"

#define NTRACES	100

struct params {
	u32 phi_ppm;
	u32 eps_ppm;
};

static const struct params ps[] = {
	{ 300000, 100000 },
	{ 100000, 50000 },
	{ 50000, 10000 },
	{ 20000, 2000 },
	{ 10000, 5000 },
	{ 5000, 1000 },
	{ 50000, 40000 },	/* few counters: hot yet not guaranteed */
	{ 20000, 15000 },
};
#define NP	(sizeof(ps) / sizeof(ps[0]))

enum prop {
	P_RUN,		/* N, threshold, no drops, sum of counters == N */
	P_BOUND,	/* live MCCT nodes <= (m + 1) D, nothing kept for naught */
	P_REAL,		/* exported nodes are real contexts, tree shape kept */
	P_RET,		/* return value == exported nodes with est >= T */
	P_COMPLETE,	/* f >= T and f > N/m => reported */
	P_EST,		/* est >= f, (est - f) m < N */
	P_TIGHT,	/* reported => f > T - N/m */
	P_EPS,		/* reported => f >= floor((phi - eps) N) */
	P_EXACT,	/* m >= distinct contexts: exact, hot set == {f >= T} */
	P_GUAR,		/* est - err <= f; exported ctr[1] == est - err */
	P_GUAR_HOT,	/* est - err >= T  =>  f >= T */
	P_SUMMARY,	/* Stream-Summary buckets sorted, counts match */
	NPROP
};

static const char *const prop_name[NPROP] = {
	[P_RUN]		= "N == calls, threshold == floor(phi N), no drops, counters sum to N",
	[P_BOUND]	= "live MCCT nodes <= (m+1) * depth, every node monitored or an ancestor of one",
	[P_REAL]	= "every exported node is a context of the trace",
	[P_RET]		= "kcc_hcct_export() returns the number of nodes with estimate >= threshold",
	[P_COMPLETE]	= "every context with f >= floor(phi N) and f > N/m is reported",
	[P_EST]		= "estimates never below f and less than N/m above it",
	[P_TIGHT]	= "a reported context has f > floor(phi N) - N/m",
	[P_EPS]		= "no context with f < floor((phi - eps) N) is reported",
	[P_EXACT]	= "with m >= distinct contexts: exact estimates, hot set == {f >= floor(phi N)}",
	[P_GUAR]	= "guaranteed count est - err <= f for every counter, exported as ctr[1]",
	[P_GUAR_HOT]	= "a context whose guaranteed count reaches floor(phi N) is hot",
	[P_SUMMARY]	= "Stream-Summary: buckets non-empty, counts strictly rising, each counter's count == its node's",
};

static struct ksft_prop res[NPROP];
#define check(p, ok, ...)	ksft_prop_check(&res[p], ok, __VA_ARGS__)

static u64 runs, overestimated;	/* the approximation was exercised */
static u64 guar_hot, guar_short;	/* sure hot; hot but not sure */

/*
 * The buckets from the smallest count up: each non-empty, counts
 * strictly rising, every counter in exactly one bucket whose count is
 * its node's estimate, and the first bucket holding the minimum.
 */
static void check_summary(const struct kcc_hcct *h, u64 seed)
{
	u32 b, prev = KCC_NIL, seen = 0, bad = 0;
	u64 last = 0;

	for (b = h->ss.bmin; b != KCC_NIL && seen <= h->ss.m; b = h->ss.bnext[b]) {
		u32 s, in = 0;

		bad += h->ss.bprev[b] != prev || h->ss.bhead[b] == KCC_NIL ||
		       (prev != KCC_NIL && h->ss.bcnt[b] <= last);
		for (s = h->ss.bhead[b]; s != KCC_NIL && in <= h->ss.m;
		     s = h->ss.snext[s]) {
			bad += h->ss.sbkt[s] != b || h->ss.slot[h->ss.mon[s]] != s ||
			       kcc_forest_ctr(&h->f, h->ss.mon[s])[0] != h->ss.bcnt[b];
			in++;
		}
		seen += in;
		last = h->ss.bcnt[b];
		prev = b;
	}
	check(P_SUMMARY, !bad && seen == h->ss.nmon,
	      "seed %" PRIu64 " m %u: %u inconsistencies, %u counters in buckets of %u",
	      seed, h->ss.m, bad, seen, h->ss.nmon);
}

static void run(const struct ref_trace *t, const struct ref_map *cct, u64 seed,
		u32 phi_ppm, u32 eps_ppm, u32 m, bool exact)
{
	u64 d = t->max_depth ? t->max_depth : 1;
	u64 bound = (u64)(m + 1) * d;
	u32 cap = (u32)(bound < cct->n ? bound : cct->n) + 16;
	u64 N = t->calls, thr_ref = N * phi_ppm / 1000000;
	u64 lo_eps = N * (phi_ppm - eps_ppm) / 1000000;
	size_t sz = kcc_hcct_mem_size(cap, m), j;
	void *mem = ref_alloc(sz);
	struct kcc_forest dst;
	struct kcc_hcct h;
	u32 maxlive = 0, i, *ids, *scratch;
	u64 sum = 0, thr, hot_seen = 0, over = 0;
	u8 *need, *exported;
	void *dmem;
	int hot;

	if (kcc_hcct_init(&h, mem, sz, cap, m)) {
		check(P_RUN, false, "seed %" PRIu64 ": kcc_hcct_init(%u, %u) failed",
		      seed, cap, m);
		free(mem);
		return;
	}
	for (j = 0; j < t->n; j++) {
		if (t->ev[j] == REF_RET)
			kcc_hcct_return(&h);
		else
			kcc_hcct_call(&h, ref_label(t->ev[j]));
		if (h.f.live > maxlive)
			maxlive = h.f.live;
	}
	for (i = 0; i < h.ss.nmon; i++)
		sum += kcc_forest_ctr(&h.f, h.ss.mon[i])[0];
	thr = kcc_hcct_threshold(&h, phi_ppm);
	check(P_RUN, h.n == N && thr == thr_ref && !h.drops && !h.f.drops &&
	      !h.depth && !h.bad_returns && sum == N && h.ss.nmon <= m,
	      "seed %" PRIu64 " phi %u eps %u: n %" PRIu64 "/%" PRIu64 " thr %" PRIu64 "/%" PRIu64 " drops %" PRIu64 " sum %" PRIu64,
	      seed, phi_ppm, eps_ppm, h.n, N, thr, thr_ref, h.drops, sum);

	/* Mark what must stay: monitored nodes and their ancestors. */
	need = ref_alloc((size_t)h.f.count + 1);
	for (i = 0; i < h.ss.nmon; i++) {
		u32 v = h.ss.mon[i];

		while (!need[v]) {
			u32 p = kcc_forest_node(&h.f, v)->parent;

			need[v] = 1;
			if (kcc_is_root_parent(p))
				break;
			v = p;
		}
	}
	{
		u32 stray = 0, live = 0;

		for (i = 0; i < h.f.count; i++) {
			if (kcc_forest_node(&h.f, i)->parent == KCC_FREE)
				continue;
			live++;
			stray += !need[i];
		}
		check(P_BOUND, maxlive <= bound && !stray && live == h.f.live,
		      "seed %" PRIu64 " m %u: max live %u > %" PRIu64 " or %u nodes kept for nothing",
		      seed, m, maxlive, bound, stray);
	}
	free(need);

	/* Every counter, exported or not, obeys the Space-Saving bounds. */
	for (i = 0; i < h.ss.nmon; i++) {
		u32 v = h.ss.mon[i], x = REF_NONE, q = 0;
		u64 est = kcc_forest_ctr(&h.f, v)[0], f;
		u64 *lab = ref_alloc(((size_t)d + 1) * sizeof(u64));

		for (;;) {
			const struct kcc_node *n = kcc_forest_node(&h.f, v);

			if (q > d)
				break;
			lab[q++] = n->label;
			if (kcc_is_root_parent(n->parent))
				break;
			v = n->parent;
		}
		while (q-- > 0 && (x = ref_map_find(cct, x, lab[q])) != REF_NONE)
			;
		free(lab);
		f = x == REF_NONE ? 0 : cct->e[x].cnt;
		check(P_EST, x != REF_NONE && est >= f && (est - f) * m < N,
		      "seed %" PRIu64 " m %u N %" PRIu64 ": monitored node %u estimate %" PRIu64 ", true %" PRIu64 "%s",
		      seed, m, N, h.ss.mon[i], est, f,
		      x == REF_NONE ? " (not a context)" : "");
		check(P_GUAR, h.ss.err[i] <= est && est - h.ss.err[i] <= f,
		      "seed %" PRIu64 " m %u: counter %u estimate %" PRIu64 " err %" PRIu64 ", true %" PRIu64,
		      seed, m, i, est, h.ss.err[i], f);
		over += est > f;
	}

	check_summary(&h, seed);
	dmem = ref_forest_new(&dst, h.f.count + 1, 1);
	scratch = ref_alloc((2 * (size_t)h.f.count + 1) * sizeof(u32));
	hot = kcc_hcct_export(&h, phi_ppm, &dst, scratch);
	ids = ref_alloc(((size_t)dst.count + 1) * sizeof(u32));
	exported = ref_alloc((size_t)cct->n + 1);

	for (i = 0; i < dst.count; i++) {
		const struct kcc_node *n = kcc_forest_node(&dst, i);
		u64 est = n->ctr[0], f;
		u32 key = REF_NONE, x;
		char path[160];

		ids[i] = REF_NONE;
		if (!kcc_is_root_parent(n->parent)) {
			if (n->parent >= i || ids[n->parent] == REF_NONE) {
				check(P_REAL, false, "seed %" PRIu64 ": node %u under %u",
				      seed, i, n->parent);
				continue;
			}
			key = ids[n->parent];
		}
		x = ref_map_find(cct, key, n->label);
		ref_forest_path(&dst, i, path, sizeof(path));
		check(P_REAL, x != REF_NONE && !exported[x],
		      "seed %" PRIu64 ": exported <%s> is not a context or twice",
		      seed, path);
		if (x == REF_NONE)
			continue;
		ids[i] = x;
		exported[x] = 1 + (est >= thr);
		f = cct->e[x].cnt;
		hot_seen += est >= thr;
		if (est)
			check(P_EST, est >= f && (est - f) * m < N,
			      "seed %" PRIu64 " m %u N %" PRIu64 ": <%s> estimate %" PRIu64 ", true %" PRIu64,
			      seed, m, N, path, est, f);
		{
			u64 g = n->ctr[1];

			if (exact && est)
				check(P_EXACT, g == est,
				      "seed %" PRIu64 " m %u: <%s> guaranteed %" PRIu64 " below estimate %" PRIu64 " without evictions",
				      seed, m, path, g, est);
			check(P_GUAR, g <= f && g <= est,
			      "seed %" PRIu64 " m %u: <%s> guaranteed %" PRIu64 ", estimate %" PRIu64 ", true %" PRIu64,
			      seed, m, path, g, est, f);
			if (g >= thr && thr) {
				check(P_GUAR_HOT, f >= thr,
				      "seed %" PRIu64 " m %u T %" PRIu64 ": <%s> guaranteed %" PRIu64 ", true %" PRIu64,
				      seed, m, thr, path, g, f);
				guar_hot++;
			} else if (est >= thr && f >= thr) {
				guar_short++;
			}
		}
		if (est >= thr) {
			check(P_TIGHT, f * m + N > thr * m,
			      "seed %" PRIu64 " m %u N %" PRIu64 " T %" PRIu64 ": <%s> reported with f %" PRIu64,
			      seed, m, N, thr, path, f);
			check(P_EPS, f >= lo_eps,
			      "seed %" PRIu64 " phi %u eps %u: <%s> reported with f %" PRIu64 " < %" PRIu64,
			      seed, phi_ppm, eps_ppm, path, f, lo_eps);
		}
		if (exact)
			check(P_EXACT, est == f || (!est && f < thr),
			      "seed %" PRIu64 " m %u: <%s> estimate %" PRIu64 ", true %" PRIu64,
			      seed, m, path, est, f);
	}
	check(P_RET, hot >= 0 && (u64)hot == hot_seen,
	      "seed %" PRIu64 " phi %u: returned %d, %" PRIu64 " nodes at or above %" PRIu64,
	      seed, phi_ppm, hot, hot_seen, thr);

	for (i = 0; i < cct->n; i++) {
		u64 f = cct->e[i].cnt;
		char path[160];

		if (f < thr)
			continue;
		ref_map_path(cct, i, path, sizeof(path));
		if (f * m > N)
			check(P_COMPLETE, exported[i] == 2,
			      "seed %" PRIu64 " phi %u m %u N %" PRIu64 ": <%s> f %" PRIu64 " not reported",
			      seed, phi_ppm, m, N, path, f);
		if (exact)
			check(P_EXACT, exported[i] == 2,
			      "seed %" PRIu64 " m %u: <%s> f %" PRIu64 " >= %" PRIu64 " not reported",
			      seed, m, path, f, thr);
	}
	runs++;
	overestimated += over > 0;
	free(exported);
	free(ids);
	free(scratch);
	free(dmem);
	free(mem);
}

/*
 * Callers that lose their counter while they are still running: each of
 * 60 top-level routines calls 40 distinct leaves, so with a few counters
 * the caller is evicted long before it returns, and only its return can
 * free its node.
 */
static void wide_trace(struct ref_trace *t)
{
	u32 j, i;

	memset(t, 0, sizeof(*t));
	t->nr = 60 + 400;
	for (j = 0; j < 60; j++) {
		ref_trace_add(t, j);
		for (i = 0; i < 40; i++) {
			ref_trace_add(t, 60 + (j * 41 + i * 7) % 400);
			ref_trace_add(t, REF_RET);
		}
		ref_trace_add(t, REF_RET);
	}
	ref_trace_scan(t);
}

int main(void)
{
	unsigned int p, pi;
	u64 seed;

	ksft_print_header();
	ksft_set_plan(NPROP + 2);

	for (seed = 0; seed <= NTRACES; seed++) {
		u64 rng = seed * 0xd1342543de82ef95ull + 3;
		struct ref_trace t;
		struct ref_map cct;
		struct ref_gen g;

		ref_gen_random(&g, &rng);
		/* Enough calls that phi N is not 0, skewed so some are hot. */
		g.len = 4000 + ref_below(&rng, 16000);
		g.maxd = 2 + ref_below(&rng, 30);
		g.skew = 2 + ref_below(&rng, 4);
		g.nr = 3 + ref_below(&rng, 80);
		g.call_pct = 40 + ref_below(&rng, 25);
		if (seed == NTRACES)
			wide_trace(&t);
		else
			ref_gen_trace(&t, &g, &rng);
		ref_cct(&cct, &t, REF_NOCAP);

		for (pi = 0; pi < NP; pi++) {
			u32 m = 1000000 / ps[pi].eps_ppm + 1;

			run(&t, &cct, seed, ps[pi].phi_ppm, ps[pi].eps_ppm, m,
			    m >= cct.n);
		}
		/* Enough counters for every context: no estimate errs. */
		run(&t, &cct, seed, 10000, 5000, cct.n + 1, true);
		ref_map_free(&cct);
		ref_trace_free(&t);
	}

	for (p = 0; p < NPROP; p++)
		ksft_prop_result(&res[p], prop_name[p]);
	/* Without evictions the bounds above would hold trivially. */
	ksft_test_result(overestimated * 2 > runs,
			 "counters above the true frequency in %" PRIu64 " of %" PRIu64 " runs\n",
			 overestimated, runs);
	/* Both kinds of hot context occur: the mark tells them apart. */
	ksft_test_result(guar_hot && guar_short,
			 "hot contexts guaranteed by est - err: %" PRIu64 ", hot but not guaranteed: %" PRIu64 "\n",
			 guar_hot, guar_short);
	ksft_finished();
}
