// SPDX-License-Identifier: GPL-2.0
/*
 * chain - the worst case of Section 4.2 of the k-CCF paper: n distinct
 * routines called in one chain, each once.  Routine v_i has exactly one
 * activated q-context for each q <= min(k, i - 1), so its k-CCF tree is
 * a chain of min(k, i - 1) + 1 nodes and the forest has
 *	sum_i (min(k, i - 1) + 1) = (n - k)(k + 1) + k(k + 1)/2
 * nodes for k < n; for k >= n - 1 it stays at n(n + 1)/2 (Property 5).
 * Chain pruning, invented for exactly this shape, keeps one node a tree.
 *
 * Then, on random traces, that pruning can be undone: the witness
 * kcc_inv_k() records for every k-CCF node is a source node whose root
 * path spells the node's path, and the ancestors of a chain leaf's
 * witness name exactly the nodes the chain pruned.
 */
#include <inttypes.h>

#include "ktap.h"
#include "ref.h"

static const u32 ns[] = { 1, 2, 3, 5, 10, 64, 200 };
#define NN	(sizeof(ns) / sizeof(ns[0]))

static u64 expected(u64 n, u64 k)
{
	if (k >= n)	/* KCC_K_INF included */
		k = n - 1;
	return (n - k) * (k + 1) + k * (k + 1) / 2;
}

static void chain_trace(struct ref_trace *t, u32 n)
{
	u32 i;

	memset(t, 0, sizeof(*t));
	t->nr = n;
	for (i = 0; i < n; i++)
		ref_trace_add(t, i);
	for (i = 0; i < n; i++)
		ref_trace_add(t, REF_RET);
	ref_trace_scan(t);
}


#define NRANDOM	120

/* From the k-SF (@kp) and from the CCT, for k = 0, 1, 2, 3, 5, inf. */
static void witnesses(const struct ref_trace *t, u64 seed, bool *paths_ok,
		      bool *chains_ok, u64 *nchains)
{
	static const u32 ks[] = { 0, 1, 2, 3, 5, KCC_K_INF };
	u32 ki, src_i;

	for (ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
		for (src_i = 0; src_i < 2; src_i++) {
			u32 k = ks[ki], kp = src_i ? KCC_K_INF : (k ? k : 1);
			u32 cap, *w, *len, *leaf, *scratch, d, q;
			u64 *lab;
			struct kcc_forest dst;
			struct ref_ksf s;
			void *mem;
			u8 *keep;

			ref_ksf_build(&s, t, kp, 2 * (u32)t->calls + 16,
				      t->max_depth + 1);
			cap = ((k < t->max_depth ? k : t->max_depth) + 1) *
			      s.f.count + 1;
			mem = ref_forest_new(&dst, cap, 0);
			w = ref_alloc((size_t)cap * sizeof(u32));
			if (kcc_inv_k(&s.f, kp, k, &dst, w)) {
				*paths_ok = false;
				goto next;
			}
			/*
			 * Node d at level q was made by joining the reversed
			 * root path of its witness v: level j of d's path is
			 * the j-th ancestor of v, for j = 0 .. q.
			 */
			lab = ref_alloc(((size_t)t->max_depth + 2) * sizeof(u64));
			for (d = 0; d < dst.count; d++) {
				u32 lv = kcc_forest_level(&dst, d), x = d, u = w[d];

				for (q = lv + 1; q-- > 0; x = kcc_forest_node(&dst, x)->parent)
					lab[q] = kcc_forest_node(&dst, x)->label;
				for (q = 0; q <= lv && u < s.f.count; q++) {
					if (kcc_forest_node(&s.f, u)->label != lab[q])
						break;
					u = kcc_forest_node(&s.f, u)->parent;
				}
				if (q <= lv) {
					if (*paths_ok)
						ksft_print_msg("seed %" PRIu64 " k=%u src k %u: node %u, witness %u differs at level %u\n",
							       seed, k, kp, d, w[d], q);
					*paths_ok = false;
				}
			}
			keep = ref_alloc(dst.count + 1);
			len = ref_alloc((dst.count + 1) * sizeof(u32));
			leaf = ref_alloc((dst.count + 1) * sizeof(u32));
			scratch = ref_alloc((2 * (size_t)dst.count + 1) *
					    sizeof(u32));
			kcc_prune_chains(&dst, keep, len, leaf, scratch);
			/*
			 * A head d at level L with N pruned: the ancestors
			 * L + 1 .. L + N of its leaf's witness are the
			 * pruned k-CCF nodes from the head's child down to
			 * the leaf, and none of those is kept.
			 */
			for (d = 0; d < dst.count; d++) {
				u32 L, x, u;

				if (!len[d])
					continue;
				(*nchains)++;
				L = kcc_forest_level(&dst, d);
				x = leaf[d];
				if (x >= dst.count ||
				    kcc_forest_level(&dst, x) != L + len[d]) {
					*chains_ok = false;
					continue;
				}
				/* Source ancestors, nearest (level 0) first. */
				for (q = 0, u = w[x]; q <= L + len[d]; q++) {
					if (u >= s.f.count)
						break;
					lab[q] = kcc_forest_node(&s.f, u)->label;
					u = kcc_forest_node(&s.f, u)->parent;
				}
				if (q <= L + len[d]) {
					*chains_ok = false;
					continue;
				}
				for (q = L + len[d]; q > L; q--) {
					if (keep[x] ||
					    kcc_forest_node(&dst, x)->label != lab[q])
						*chains_ok = false;
					x = kcc_forest_node(&dst, x)->parent;
				}
				if (x != d || !keep[d])
					*chains_ok = false;
			}
			free(lab);
			free(keep);
			free(len);
			free(leaf);
			free(scratch);
next:
			free(w);
			free(mem);
			ref_ksf_free(&s);
		}
	}
}

int main(void)
{
	bool paths_ok = true, chains_ok = true;
	u64 seed, nchains = 0;
	unsigned int i;

	ksft_print_header();
	ksft_set_plan(3 * NN + 2);

	for (i = 0; i < NN; i++) {
		u32 n = ns[i], ki, ks = 0;
		struct ref_trace t;
		struct ref_ksf cct;
		bool size_ok = true, ones_ok = true, prune_ok = true;
		char msg[200] = "";

		chain_trace(&t, n);
		ref_ksf_build(&cct, &t, KCC_K_INF, n, n);

		/* Every k from 0 to past the chain's length, then infinity. */
		for (ki = 0; ki <= n + 2; ki++) {
			u32 k = ki == n + 2 ? KCC_K_INF : ki;
			u32 kp = k ? k : 1;
			u64 want = expected(n, k);
			struct kcc_forest d1, d2;
			struct ref_ksf s;
			u8 *keep;
			u32 *len, *scratch, j, kept;
			void *m1, *m2;
			int r1, r2;

			ks++;
			ref_ksf_build(&s, &t, kp, 2 * n, n);
			m1 = ref_forest_new(&d1, (u32)want + 8, 0);
			m2 = ref_forest_new(&d2, (u32)want + 8, 0);
			r1 = kcc_inv_k(&s.f, kp, k, &d1, NULL);
			r2 = kcc_inv_k(&cct.f, KCC_K_INF, k, &d2, NULL);
			if (size_ok && (r1 || r2 || d1.count != want ||
					d2.count != want)) {
				size_ok = false;
				snprintf(msg, sizeof(msg),
					 "n=%u k=%u: %u nodes from the k-SF, %u from the CCT (ret %d, %d), expected %" PRIu64,
					 n, k, d1.count, d2.count, r1, r2, want);
				ksft_print_msg("%s\n", msg);
			}
			for (j = 0; j < d1.count; j++)
				if (kcc_forest_ctr(&d1, j)[KCC_CTR_CALLS] != 1)
					ones_ok = false;

			keep = ref_alloc(d1.count + 1);
			len = ref_alloc((d1.count + 1) * sizeof(u32));
			scratch = ref_alloc((2 * (size_t)d1.count + 1) *
					    sizeof(u32));
			kept = kcc_prune_chains(&d1, keep, len, NULL, scratch);
			/* Root v_i (label i) heads a chain of min(k, i) more. */
			if (kept != n)
				prune_ok = false;
			for (j = 0; j < d1.count; j++) {
				const struct kcc_node *nd = kcc_forest_node(&d1, j);
				u64 id = ref_id(nd->label);
				bool root = kcc_is_root_parent(nd->parent);
				u32 more = id < k ? (u32)id : k;

				if (keep[j] != root || (root && len[j] != more))
					prune_ok = false;
			}
			free(keep);
			free(len);
			free(scratch);
			free(m1);
			free(m2);
			ref_ksf_free(&s);
		}
		ksft_test_result(size_ok,
				 "chain n=%u: k-CCF size == (n-k)(k+1) + k(k+1)/2 (%u values of k)\n",
				 n, ks);
		ksft_test_result(ones_ok, "chain n=%u: every k-CCF counter is 1\n",
				 n);
		ksft_test_result(prune_ok,
				 "chain n=%u: chain pruning keeps the n roots, v_i heading min(k, i-1) pruned nodes\n",
				 n);
		ref_ksf_free(&cct);
		ref_trace_free(&t);
	}

	for (seed = 0; seed < NRANDOM; seed++) {
		u64 rng = seed * 0x9e3779b97f4a7c15ull + 5;
		struct ref_trace t;
		struct ref_gen g;

		ref_gen_random(&g, &rng);
		if (g.len > 2000)
			g.len = 2000;
		ref_gen_trace(&t, &g, &rng);
		witnesses(&t, seed, &paths_ok, &chains_ok, &nchains);
		ref_trace_free(&t);
	}
	ksft_test_result(paths_ok,
			 "random traces: every k-CCF node's witness has a root path spelling the node\n");
	ksft_test_result(chains_ok && nchains,
			 "random traces: a chain leaf's witness names the %" PRIu64 " pruned chains node by node\n",
			 nchains);
	ksft_finished();
}
