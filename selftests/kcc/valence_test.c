// SPDX-License-Identifier: GPL-2.0
/*
 * valence_test.c - Valence encoding and decoding (user/lib/valence.c)
 * against brute force: on random call graphs, acyclic and with nested
 * SCCs, every call path up to a depth is enumerated by a DFS that runs
 * the runtime's own area updates (valence_area.h) on the way down and
 * up; at every step the decoded area must equal the DFS stack (routines,
 * call sites, escapes).  The graphs also carry calls the table does not
 * hold (indirect calls; a site whose callee differs), which must come
 * back as escapes.  Then: a thread updating its area in a tight loop
 * while a CPU-time timer interrupts it between arbitrary instructions
 * (as a PMU sample does) never decodes to a wrong context, torn reads
 * being seen as an odd seq; and hostile areas decode to an error, never
 * a crash (AddressSanitizer).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ktap.h"
#include "valence.h"

#define MAX_NODES	48
#define MAX_EDGES	160
#define MAX_DEPTH	64
#define OUTSIDE_SITE	0xfeedull	/* the thread's start, outside */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int bad_shown;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct graph {
	uint32_t nodes;
	uint32_t nr;		/* edges in the table */
	uint32_t nr_all;	/* plus calls the table does not hold */
	struct valence_edge e[MAX_EDGES];
};

/*
 * Forward edges i -> j (i < j), sometimes two sites for one pair; with
 * cycles, back edges and self loops whose SCCs nest (a cycle inside a
 * larger one); then dynamic calls: fresh sites, and one reused site with
 * another callee.
 */
static void graph__random(struct graph *g, int cyclic)
{
	uint32_t i, nf, nb, nd;

	memset(g, 0, sizeof(*g));
	g->nodes = 4 + rnd(MAX_NODES - 4);
	nf = g->nodes + rnd(2 * g->nodes);
	nb = cyclic ? 1 + rnd(6) : 0;
	nd = rnd(4);
	for (i = 1; i < g->nodes; i++) {	/* everything reachable */
		g->e[g->nr].caller = rnd(i);
		g->e[g->nr].callee = i;
		g->nr++;
	}
	for (i = 0; i < nf && g->nr < MAX_EDGES - 16; i++) {
		uint32_t a = rnd(g->nodes - 1), b = a + 1 + rnd(g->nodes - 1 - a);

		g->e[g->nr].caller = a;
		g->e[g->nr].callee = b;
		g->nr++;
	}
	for (i = 0; i < nb; i++) {
		uint32_t b = 1 + rnd(g->nodes - 1), a = b + rnd(g->nodes - b);

		g->e[g->nr].caller = a;		/* a >= b: back edge or loop */
		g->e[g->nr].callee = b;
		g->nr++;
	}
	for (i = 0; i < g->nr; i++)
		g->e[i].site = 0x1000 + 16 * i;
	g->nr_all = g->nr;
	for (i = 0; i < nd; i++) {
		struct valence_edge *d = &g->e[g->nr_all++];

		d->caller = rnd(g->nodes);
		d->callee = 1 + rnd(g->nodes - 1);
		d->site = 0x900000 + 16 * i;
	}
	if (g->nr) {	/* a known site calling another routine */
		struct valence_edge *d = &g->e[g->nr_all++];

		*d = g->e[rnd(g->nr)];
		d->callee = (d->callee + 1) % g->nodes;
	}
}

struct walk {
	const struct valence *v;
	const struct graph *g;
	struct kcc_valence_area a;
	struct valence_spill sp;
	struct valence_frame truth[MAX_DEPTH + 1];
	struct valence_frame got[MAX_DEPTH + 8];
	uint32_t depth;
	uint32_t max_depth;
	uint64_t states, budget;
	uint64_t bad, escapes;
	uint64_t words, pcce_words, static_states;
	uint32_t back_on_stack, esc_on_stack;
};

static int frames__equal(const struct valence_frame *a,
			 const struct valence_frame *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].node != b[i].node || a[i].site != b[i].site ||
		    a[i].escaped != b[i].escaped)
			return 0;
	return 1;
}

static void walk__check(struct walk *w)
{
	int n = valence__decode(w->v, &w->a, w->got, MAX_DEPTH + 8);
	uint32_t m = w->truth[w->depth - 1].node;

	w->states++;
	if (n != (int)w->depth || !frames__equal(w->got, w->truth, w->depth)) {
		if (!w->bad++ && !bad_shown++)
			ksft_print_msg("decoded %d frames, truth %u (leaf %u)\n",
				       n, w->depth, m);
	}
	if (w->esc_on_stack > 1)	/* a dynamic call: PCCE has no table */
		return;
	w->static_states++;
	w->words += valence__words(w->v, &w->a);
	w->pcce_words += (uint64_t)(w->v->pcce_bits[m] > 64 ?
		(w->v->pcce_bits[m] + 63) / 64 : 1) + 2 * w->back_on_stack;
}

static int edge__is_back(const struct walk *w, uint32_t i)
{
	return i < w->g->nr && w->v->back[i];
}

static void walk__dfs(struct walk *w)
{
	uint32_t m = w->truth[w->depth - 1].node, i;

	walk__check(w);
	if (w->depth >= w->max_depth)
		return;
	for (i = 0; i < w->g->nr_all && w->states < w->budget; i++) {
		const struct valence_edge *e = &w->g->e[i];
		const struct valence_op *op;
		int esc;

		if (e->caller != m)
			continue;
		op = valence__lookup(w->v, e->site);
		esc = valence__enter(&w->a, &w->sp, op, e->callee, e->site,
				     w->v->rec_len);
		w->escapes += esc;
		w->esc_on_stack += esc;
		w->back_on_stack += edge__is_back(w, i);
		w->truth[w->depth].node = e->callee;
		w->truth[w->depth].site = e->site;
		w->truth[w->depth].escaped = esc;
		w->depth++;
		walk__dfs(w);
		w->depth--;
		w->back_on_stack -= edge__is_back(w, i);
		w->esc_on_stack -= esc;
		valence__exit(&w->a, &w->sp, op, e->callee, w->v->rec_len);
	}
}

/* One graph: 0 when every state decoded to its path and unwound clean. */
static int graph__check(const struct graph *g, uint32_t depth,
			struct walk *w)
{
	struct valence v;
	struct kcc_valence_area init;
	int err = valence__annotate(&v, g->nodes, g->e, g->nr);

	if (err) {
		ksft_print_msg("annotate: %s\n", strerror(-err));
		return -1;
	}
	memset(w, 0, sizeof(*w));
	w->v = &v;
	w->g = g;
	w->max_depth = depth;
	w->budget = 20000;
	valence__area_init(&v, &w->a);
	init = w->a;
	/* The thread's first routine is called from outside the table. */
	w->esc_on_stack = valence__enter(&w->a, &w->sp, NULL, 0, OUTSIDE_SITE,
					 v.rec_len);
	w->truth[0].node = 0;
	w->truth[0].site = OUTSIDE_SITE;
	w->truth[0].escaped = 1;
	w->depth = 1;
	walk__dfs(w);
	valence__exit(&w->a, &w->sp, NULL, 0, v.rec_len);
	if (init.cur != w->a.cur || init.rec_bits != w->a.rec_bits ||
	    init.rec_over != w->a.rec_over ||
	    memcmp(init.acyc, w->a.acyc, sizeof(init.acyc))) {
		if (!bad_shown++)
			ksft_print_msg("area not back to its start after unwinding\n");
		w->bad++;
	}
	free(w->sp.w);
	valence__exit_graph(&v);
	return w->bad ? -1 : 0;
}

static void test_random(int cyclic, uint32_t graphs)
{
	static struct walk w;
	struct graph g;
	uint64_t states = 0, escapes = 0, words = 0, pcce = 0, sstates = 0;
	uint32_t i, failed = 0;

	for (i = 0; i < graphs; i++) {
		graph__random(&g, cyclic);
		if (graph__check(&g, 20, &w))
			failed++;
		states += w.states;
		escapes += w.escapes;
		words += w.words;
		pcce += w.pcce_words;
		sstates += w.static_states;
	}
	ksft_print_msg("%s: %u graphs, %llu paths, %llu escaped calls; on the %llu static paths, words per path %.2f (PCCE %.2f)\n",
		       cyclic ? "cyclic" : "acyclic", graphs,
		       (unsigned long long)states, (unsigned long long)escapes,
		       (unsigned long long)sstates,
		       (double)words / (double)(sstates ? sstates : 1),
		       (double)pcce / (double)(sstates ? sstates : 1));
	ksft_test_result(!failed && states > graphs,
			 "%s random graphs: every path decodes to itself (%u graphs failed)\n",
			 cyclic ? "cyclic" : "acyclic", failed);
}

/*
 * The paper's Figure 2 graph (from PCCE's Figure 1): I has callers F and
 * G at level 2 and J at level 0 -> two level codes, and F, G need an
 * edge code.  Checked by hand: I's level is 4 and JI sets only the level
 * code bit (the paper's "only one bit is necessary to distinguish JJ").
 */
static void test_figure2(void)
{
	enum { A, B, C, D, E, F, G, H, I, J, N };
	static const struct valence_edge e[] = {
		{ A, B, 1 }, { A, C, 2 }, { A, J, 3 }, { B, D, 4 },
		{ C, D, 5 }, { C, E, 6 }, { D, F, 7 }, { D, F, 8 },
		{ E, G, 9 }, { D, G, 10 }, { E, H, 11 }, { F, I, 12 },
		{ G, I, 13 }, { J, I, 14 },
	};
	struct valence v;
	const struct valence_op *ji;
	int ok;

	ok = !valence__annotate(&v, N, e, sizeof(e) / sizeof(e[0]));
	ji = ok ? valence__lookup(&v, 14) : NULL;
	ok = ok && v.sup[v.scc[A]].level == 0 && v.sup[v.scc[D]].level == 1 &&
		v.sup[v.scc[F]].level == 2 && v.sup[v.scc[G]].level == 2 &&
		v.sup[v.scc[I]].level == 4 && v.nr_cyc == 0 && ji &&
		ji->width[0] == 0 && ji->width[1] == 1 && ji->val[1] == 1 &&
		ji->pos[1] == 3;
	ksft_test_result(ok, "figure 2 graph: levels A0 D1 F2 G2 I4, JI one level bit\n");
	if (!ok && v.sup)
		ksft_print_msg("levels D %u F %u G %u I %u\n",
			       v.sup[v.scc[D]].level, v.sup[v.scc[F]].level,
			       v.sup[v.scc[G]].level, v.sup[v.scc[I]].level);
	valence__exit_graph(&v);
}

/*
 * Recursion deeper than rec[] holds: the samples beyond it are
 * -EOVERFLOW, never a wrong path; escapes beyond it wait in the spill
 * stack; unwinding back below it decodes exactly again.
 */
static void test_overflow(void)
{
	static const struct valence_edge e[] = {
		{ 0, 1, 0x10 }, { 1, 1, 0x20 }, { 1, 2, 0x30 },
	};
	static struct valence_frame truth[4 * VALENCE_REC_BITS],
		got[4 * VALENCE_REC_BITS];
	struct kcc_valence_area a;
	struct valence_spill sp = { 0 };
	struct valence v;
	uint32_t d, depth = 2 * VALENCE_REC_BITS, exact = 0, over = 0, bad = 0;

	if (valence__annotate(&v, 3, e, 3)) {
		ksft_test_result_fail("annotate\n");
		return;
	}
	valence__area_init(&v, &a);
	valence__enter(&a, &sp, NULL, 0, OUTSIDE_SITE, v.rec_len);
	truth[0] = (struct valence_frame){ 0, 1, OUTSIDE_SITE };
	valence__enter(&a, &sp, valence__lookup(&v, 0x10), 1, 0x10, v.rec_len);
	truth[1] = (struct valence_frame){ 1, 0, 0x10 };
	/* 1 -> 1 (cyclic) and, every 7th, 1 -> 1 through an unknown site */
	for (d = 2; d < depth; d++) {
		uint64_t site = d % 7 ? 0x20 : 0x777;
		int esc = valence__enter(&a, &sp, valence__lookup(&v, site), 1,
					 site, v.rec_len);

		truth[d] = (struct valence_frame){ 1, (uint32_t)esc, site };
	}
	for (d = depth; d-- > 2;) {
		int n = valence__decode(&v, &a, got, 4 * VALENCE_REC_BITS);

		if (n == -EOVERFLOW)
			over++;
		else if (n == (int)d + 1 && frames__equal(got, truth, d + 1))
			exact++;
		else
			bad++;
		valence__exit(&a, &sp, truth[d].escaped ? NULL :
			      valence__lookup(&v, truth[d].site), 1, v.rec_len);
	}
	ksft_print_msg("overflow: %u exact, %u -EOVERFLOW, %u wrong\n", exact,
		       over, bad);
	ksft_test_result(!bad && over && exact && !a.rec_over && !sp.nr,
			 "recursion deeper than the area: counted, then exact again\n");
	free(sp.w);
	valence__exit_graph(&v);
}

/* ---- torn reads: a timer signal interrupts the updating thread ---- */

static struct {
	struct valence v;
	struct kcc_valence_area a;
	struct valence_spill sp;
	struct valence_frame truth[MAX_DEPTH + 1];
	volatile uint32_t depth;
	volatile int pending;	/* +1: a call being made, -1: a return */
	struct valence_frame next;
	volatile uint64_t samples, torn, wrong, undecodable;
} tr;

static void torn__sample(int sig)
{
	struct valence_frame got[MAX_DEPTH + 8];
	uint32_t d = tr.depth;
	int n;

	(void)sig;
	tr.samples++;
	n = valence__decode(&tr.v, &tr.a, got, MAX_DEPTH + 8);
	if (n == -EAGAIN) {
		tr.torn++;
		return;
	}
	if (n < 0) {
		tr.undecodable++;
		return;
	}
	/* The area is from before or after the operation under way. */
	if ((uint32_t)n == d && frames__equal(got, tr.truth, d))
		return;
	if (tr.pending > 0 && (uint32_t)n == d + 1 &&
	    frames__equal(got, tr.truth, d) &&
	    frames__equal(got + d, &tr.next, 1))
		return;
	if (tr.pending < 0 && (uint32_t)n + 1 == d &&
	    frames__equal(got, tr.truth, n))
		return;
	tr.wrong++;
}

static void test_torn(void)
{
	struct graph g;
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
				.sigev_signo = SIGPROF };
	struct itimerspec its = { .it_interval = { 0, 20000 },
				  .it_value = { 0, 20000 } };
	struct sigaction sa = { .sa_handler = torn__sample };
	timer_t timer;
	uint64_t steps;

	do
		graph__random(&g, 1);
	while (valence__annotate(&tr.v, g.nodes, g.e, g.nr));
	valence__area_init(&tr.v, &tr.a);
	valence__enter(&tr.a, &tr.sp, NULL, 0, OUTSIDE_SITE, tr.v.rec_len);
	tr.truth[0] = (struct valence_frame){ 0, 1, OUTSIDE_SITE };
	tr.depth = 1;
	sigaction(SIGPROF, &sa, NULL);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer)) {
		ksft_test_result_skip("timer_create: %s\n", strerror(errno));
		return;
	}
	timer_settime(timer, 0, &its, NULL);
	/* A random walk of calls and returns, until enough samples came. */
	for (steps = 0; tr.samples < 20000 && steps < 400000000ull; steps++) {
		uint32_t m = tr.truth[tr.depth - 1].node, i, k = 0, pick;
		const struct valence_edge *e = NULL;
		const struct valence_op *op;

		for (i = 0; i < g.nr_all; i++)
			k += g.e[i].caller == m;
		pick = k && tr.depth < MAX_DEPTH - 1 ? rnd(k + 1) : k;
		for (i = 0; i < g.nr_all && !e; i++)
			if (g.e[i].caller == m && !pick--)
				e = &g.e[i];
		if (e) {
			op = valence__lookup(&tr.v, e->site);
			tr.next = (struct valence_frame){ e->callee,
				!op || op->callee != e->callee, e->site };
			tr.pending = 1;
			valence__enter(&tr.a, &tr.sp, op, e->callee, e->site,
				       tr.v.rec_len);
			tr.truth[tr.depth] = tr.next;
			tr.depth = tr.depth + 1;
			tr.pending = 0;
		} else if (tr.depth > 1) {
			struct valence_frame f = tr.truth[tr.depth - 1];

			op = valence__lookup(&tr.v, f.site);
			tr.pending = -1;
			valence__exit(&tr.a, &tr.sp, f.escaped ? NULL : op,
				      f.node, tr.v.rec_len);
			tr.depth = tr.depth - 1;
			tr.pending = 0;
		}
	}
	timer_delete(timer);
	signal(SIGPROF, SIG_DFL);
	ksft_print_msg("torn: %llu samples, %llu torn (odd seq), %llu undecodable, %llu wrong\n",
		       (unsigned long long)tr.samples,
		       (unsigned long long)tr.torn,
		       (unsigned long long)tr.undecodable,
		       (unsigned long long)tr.wrong);
	ksft_test_result(tr.samples >= 1000 && !tr.wrong && !tr.undecodable,
			 "samples between any two instructions never decode wrongly\n");
	free(tr.sp.w);
	valence__exit_graph(&tr.v);
}

/* Hostile areas: errors, never an out-of-bounds read. */
static void test_hostile(void)
{
	struct valence_frame got[MAX_DEPTH];
	struct kcc_valence_area a;
	struct valence v;
	struct graph g;
	uint32_t i, errs = 0, paths = 0, bad = 0;

	graph__random(&g, 1);
	if (valence__annotate(&v, g.nodes, g.e, g.nr)) {
		ksft_test_result_fail("annotate\n");
		return;
	}
	for (i = 0; i < 100000; i++) {
		uint32_t j;
		int n;

		valence__area_init(&v, &a);
		for (j = 0; j < KCC_VALENCE_REC_WORDS; j++)
			a.rec[j] = (uint64_t)rnd(1u << 31) << 33 ^ rnd(1u << 31);
		for (j = 0; j < KCC_VALENCE_ACYC_WORDS; j++)
			a.acyc[j] = (uint64_t)rnd(1u << 31) << 33 ^ rnd(1u << 31);
		a.rec_bits = rnd(4) ? rnd(VALENCE_REC_BITS + 1) : rnd(~0u);
		a.cur = rnd(4) ? rnd(g.nodes) : rnd(~0u);
		if (!rnd(8))
			a.size = rnd(1024);
		n = valence__decode(&v, &a, got, MAX_DEPTH);
		if (n < 0) {
			errs++;
			continue;
		}
		paths++;
		for (j = 0; j < (uint32_t)n; j++)
			bad += got[j].node >= g.nodes;
	}
	ksft_print_msg("hostile: %u errors, %u decoded to some path\n", errs,
		       paths);
	ksft_test_result(!bad && errs > 0,
			 "random and hostile areas: an error or a path of real routines\n");
	valence__exit_graph(&v);
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(6);
	test_figure2();
	test_random(0, 200);
	test_random(1, 200);
	test_overflow();
	test_torn();
	test_hostile();
	ksft_finished();
}
