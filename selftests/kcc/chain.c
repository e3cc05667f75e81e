// SPDX-License-Identifier: GPL-2.0
/*
 * chain - the worst case of Section 4.2 of the k-CCF paper: n distinct
 * routines called in one chain, each once.  Routine v_i has exactly one
 * activated q-context for each q <= min(k, i - 1), so its k-CCF tree is
 * a chain of min(k, i - 1) + 1 nodes and the forest has
 *	sum_i (min(k, i - 1) + 1) = (n - k)(k + 1) + k(k + 1)/2
 * nodes for k < n; for k >= n - 1 it stays at n(n + 1)/2 (Property 5).
 * Chain pruning, invented for exactly this shape, keeps one node a tree.
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


int main(void)
{
	unsigned int i;

	ksft_print_header();
	ksft_set_plan(3 * NN);

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
	ksft_finished();
}
