// SPDX-License-Identifier: GPL-2.0
/*
 * fprune - the forests of kcc.ko's tasks: grown by kcc_forest_move(),
 * then pruned to their hot contexts by kcc_fprune once they may not
 * grow, against the exact CCT of random skewed traces (brute force,
 * ref.h).
 *
 * The CCT is built by the k-SF builder with k = inf, as kcc.ko builds
 * it, in a forest that starts at 16 nodes and doubles up to a cap C;
 * when a call might not fit in a forest at its cap, pruning starts:
 * m = C / 4 Space-Saving counters over the calls counter.  Before each
 * event the builder's pending frames are pinned, as kcc.ko does before
 * each sample.  With N the calls counted (kcc_fprune.n), what is
 * asserted, on the runs without a node drop (a node refused because the
 * pool was full loses calls the bound cannot know of):
 *  - every context with f * m > N is present;
 *  - every present node is a context of the trace, with a count c of
 *    calls such that c <= f and (f - c) * m <= N;
 * and on every run: counts never above f, the forest's index finds every
 * live node, kcc_forest_topo() puts parents first.  A cap above the
 * number of contexts must give the exact CCT (growth alone).
 */
#include <inttypes.h>

#include "ktap.h"
#include "kcc_hcct.h"
#include "ref.h"

#define NTRACES	120

enum prop {
	P_GROW,		/* grown, never pruned: exactly the CCT */
	P_REAL,		/* live nodes are contexts, counts <= f */
	P_INDEX,	/* every live node found by its (parent, label) */
	P_TOPO,		/* kcc_forest_topo(): parents first, all live nodes */
	P_PRESENT,	/* f * m > N  =>  present */
	P_WITHIN,	/* (f - c) * m <= N */
	P_STREAM,	/* N == calls of the trace counted */
	NPROP
};

static const char *const prop_name[NPROP] = {
	[P_GROW]	= "a forest grown by kcc_forest_move() up to a cap it never reaches is the exact CCT",
	[P_REAL]	= "every live node of a pruned forest is a context of the trace, its count never above f",
	[P_INDEX]	= "every live node is found again by its parent and label",
	[P_TOPO]	= "kcc_forest_topo() orders every live node after its parent",
	[P_PRESENT]	= "without node drops, every context with f > N/m is present",
	[P_WITHIN]	= "without node drops, every present context's count is within N/m below f",
	[P_STREAM]	= "without node drops, the summary's stream length N is the number of calls",
};

static struct ksft_prop res[NPROP];
#define check(p, ok, ...)	ksft_prop_check(&res[p], ok, __VA_ARGS__)

static u64 pruned_runs, clean_runs, evictions, max_err_ppm;

struct grower {
	struct kcc_forest f;
	void *mem;
	u32 cap;		/* where growth stops */
	struct kcc_fprune pr;
	void *pmem;
};

static bool grow(struct grower *g, u32 need)
{
	u32 c = g->f.capacity;
	size_t sz;
	void *mem;

	while (c - g->f.count < need && c < g->cap)
		c = c * 2 > g->cap ? g->cap : c * 2;
	if (c == g->f.capacity)
		return false;
	sz = kcc_forest_mem_size(c, 2);
	mem = ref_alloc(sz);
	if (kcc_forest_move(&g->f, mem, sz, c)) {
		free(mem);
		return false;
	}
	free(g->mem);
	g->mem = mem;
	return true;
}

static void run(const struct ref_trace *t, const struct ref_map *cct,
		u64 seed, u32 cap)
{
	struct kcc_frame *stack = ref_alloc(((size_t)t->max_depth + 2) *
					    sizeof(*stack));
	size_t sz = kcc_forest_mem_size(16, 2), j;
	struct grower g = { .cap = cap };
	u32 *ids, *order, *map, n, i, m = 0, bad_topo = 0;
	struct kcc_ksf s;
	bool drops;
	u64 N = 0;

	g.mem = ref_alloc(sz);
	kcc_forest_init(&g.f, g.mem, sz, 16, 2);
	kcc_ksf_init(&s, &g.f, KCC_K_INF, stack, t->max_depth + 2);
	for (j = 0; j < t->n; j++) {
		if (!g.f.pr && g.f.capacity - g.f.count < 2 && !grow(&g, 2)) {
			size_t psz = kcc_fprune_mem_size(g.f.capacity);

			g.pmem = ref_alloc(psz);
			if (kcc_fprune_start(&g.pr, g.pmem, psz, &g.f,
					     KCC_CTR_CALLS)) {
				check(P_REAL, false, "seed %" PRIu64 ": kcc_fprune_start failed", seed);
				break;
			}
			m = g.pr.ss.m;
			kcc_fprune_begin(&g.f);
			kcc_ksf_pin(&s);
			kcc_fprune_sweep(&g.f);
		}
		kcc_fprune_begin(&g.f);
		kcc_ksf_pin(&s);
		if (t->ev[j] == REF_RET)
			kcc_ksf_return(&s);
		else
			kcc_ksf_call(&s, ref_label(t->ev[j]));
	}
	drops = g.f.drops || s.lost_calls;

	/* Every live node: its context in the CCT, parents first. */
	ids = ref_alloc(((size_t)g.f.count + 1) * sizeof(u32));
	order = ref_alloc(((size_t)g.f.count + 1) * sizeof(u32));
	map = ref_alloc(((size_t)g.f.count + 1) * sizeof(u32));
	n = kcc_forest_topo(&g.f, order, map);
	for (i = 0; i < n; i++) {
		const struct kcc_node *nd = kcc_forest_node(&g.f, order[i]);

		bad_topo += map[order[i]] != i || nd->parent == KCC_FREE ||
			    (!kcc_is_root_parent(nd->parent) &&
			     map[nd->parent] >= i);
	}
	check(P_TOPO, !bad_topo && n == g.f.live,
	      "seed %" PRIu64 " cap %u: %u of %u nodes out of order, %u live", seed,
	      cap, bad_topo, n, g.f.live);
	for (i = 0; i < n; i++) {
		u32 v = order[i];
		const struct kcc_node *nd = kcc_forest_node(&g.f, v);
		u64 c = nd->ctr[KCC_CTR_CALLS], f;
		u32 x;

		check(P_INDEX, kcc_forest_find(&g.f, nd->parent, nd->label) == v,
		      "seed %" PRIu64 ": node %u not found by its edge", seed, v);
		x = ref_map_find(cct, kcc_is_root_parent(nd->parent) ? REF_NONE :
				 ids[nd->parent], nd->label);
		ids[v] = x;
		f = x == REF_NONE ? 0 : cct->e[x].cnt;
		check(P_REAL, x != REF_NONE && c <= f,
		      "seed %" PRIu64 " cap %u: node %u %s, count %" PRIu64 ", true %" PRIu64,
		      seed, cap, v, x == REF_NONE ? "not a context" : "a context", c, f);
		if (x == REF_NONE || !g.f.pr || drops)
			continue;
		check(P_WITHIN, c <= f && (f - c) * m <= g.pr.n,
		      "seed %" PRIu64 " m %u N %" PRIu64 ": count %" PRIu64 ", true %" PRIu64,
		      seed, m, g.pr.n, c, f);
		if (c <= f && g.pr.n && (f - c) * 1000000 / g.pr.n > max_err_ppm)
			max_err_ppm = (f - c) * 1000000 / g.pr.n;
	}
	if (!g.f.pr) {
		char why[256] = "";

		check(P_GROW, !ref_match(&g.f, cct, REF_NOCAP, 0, NULL, why,
					 sizeof(why)) && !drops,
		      "seed %" PRIu64 " cap %u: grown forest of %u nodes differs from the CCT of %u: %s",
		      seed, cap, g.f.count, cct->n, why);
	} else {
		pruned_runs++;
		evictions += g.pr.evicted;
	}
	if (g.f.pr && !drops) {
		/* Contexts above N/m, looked up in the forest. */
		u32 *fx = ref_alloc(((size_t)cct->n + 1) * sizeof(u32));

		N = g.pr.n;
		clean_runs++;
		check(P_STREAM, N == t->calls,
		      "seed %" PRIu64 ": N %" PRIu64 ", calls %" PRIu64, seed, N,
		      t->calls);
		for (i = 0; i < cct->n; i++)
			fx[i] = 0;
		for (i = 0; i < n; i++)
			if (ids[order[i]] != REF_NONE)
				fx[ids[order[i]]] = 1;
		for (i = 0; i < cct->n; i++) {
			char path[160];

			if (cct->e[i].cnt * m <= N)
				continue;
			ref_map_path(cct, i, path, sizeof(path));
			check(P_PRESENT, fx[i],
			      "seed %" PRIu64 " m %u N %" PRIu64 ": <%s> f %" PRIu64 " missing",
			      seed, m, N, path, cct->e[i].cnt);
		}
		free(fx);
	}
	free(ids);
	free(order);
	free(map);
	free(stack);
	free(g.pmem);
	free(g.mem);
}

int main(void)
{
	unsigned int p;
	u64 seed;

	ksft_print_header();
	ksft_set_plan(NPROP + 1);

	for (seed = 0; seed < NTRACES; seed++) {
		u64 rng = seed * 0x9e3779b97f4a7c15ull + 11;
		struct ref_trace t;
		struct ref_map cct;
		struct ref_gen g;

		ref_gen_random(&g, &rng);
		g.len = 4000 + ref_below(&rng, 16000);
		g.maxd = 2 + ref_below(&rng, 12);
		g.skew = 2 + ref_below(&rng, 4);
		g.nr = 3 + ref_below(&rng, 60);
		g.call_pct = 40 + ref_below(&rng, 25);
		ref_gen_trace(&t, &g, &rng);
		ref_cct(&cct, &t, REF_NOCAP);

		/* Growth alone, then caps that prune. */
		run(&t, &cct, seed, 2 * cct.n + 64);
		run(&t, &cct, seed, 256);
		run(&t, &cct, seed, 64 + 8 * (u32)t.max_depth);
		ref_map_free(&cct);
		ref_trace_free(&t);
	}
	for (p = 0; p < NPROP; p++)
		ksft_prop_result(&res[p], prop_name[p]);
	ksft_test_result(pruned_runs && clean_runs * 2 > pruned_runs && evictions,
			 "pruning exercised: %" PRIu64 " pruned runs, %" PRIu64 " without node drops, %" PRIu64 " nodes evicted, max error %" PRIu64 " ppm of N\n",
			 pruned_runs, clean_runs, evictions, max_err_ppm);
	ksft_finished();
}
