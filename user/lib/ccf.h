/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ccf.h - k-calling-context forests, and hot calling context trees, of a
 * trace held in memory, built with the lbr/ core and printed.
 *
 * The core works in fixed blocks of memory and counts what does not fit.
 * Here pools start small and double until nothing is dropped, unless the
 * user fixes a node budget (--max-nodes), in which case what was kept is
 * what gets printed and the drop counters say what was lost.
 */
#ifndef KCC_CCF_H
#define KCC_CCF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kcc_forest.h"
#include "kcc_hcct.h"
#include "trace.h"

/* A forest together with the memory block it lives in. */
struct pool {
	struct kcc_forest f;
	void *mem;
};

struct ccf_opts {
	uint32_t k;		/* call edges per context, KCC_K_INF: all */
	bool from_cct;		/* inv_k of the CCT rather than of a k-SF */
	uint32_t max_nodes;	/* node budget per forest, 0: grow */
};

struct ccf {
	const struct trace *trace;
	uint32_t k;
	uint32_t max_nodes;
	struct pool src;	/* the k'-SF or CCT the k-CCF comes from */
	uint32_t src_k;		/* k' of src, KCC_K_INF for a CCT */
	uint64_t lost_calls;	/* calls the source could not record */
	struct pool kccf;
	uint32_t kccf_nodes;	/* nodes of the k-CCF before any pruning */
	uint64_t kccf_drops;	/* k-CCF nodes that did not fit */
	bool pruned;		/* a pruned view replaced or masks kccf */
	uint8_t *keep;		/* NULL, or per node: shown */
	uint32_t *chain_len;	/* NULL, or per chain head: nodes pruned */
	uint32_t *chain_leaf;	/* NULL, or per chain head: the chain's leaf */
	uint32_t *witness;	/* per kccf node: a src node spelling it */
	bool expand_chains;	/* tree: name what each chain pruned */
	uint32_t shown;		/* nodes shown */
};

void pool__exit(struct pool *p);
/*
 * Replay @t into a k-SF (@k >= 1) or, with KCC_K_INF, a CCT.  With
 * @max_nodes = 0 the pool doubles whenever a call could overflow it.
 */
int pool__build_ksf(struct pool *p, const struct trace *t, uint32_t k,
		    uint32_t max_nodes, uint64_t *lost_calls);
uint32_t pool__roots(const struct pool *p);

int ccf__build(struct ccf *c, const struct trace *t,
	       const struct ccf_opts *o);
void ccf__exit(struct ccf *c);
/* Keep the x%-similar nodes, x in basis points (9000 = 90%). */
int ccf__prune_similar(struct ccf *c, uint32_t x_bp);
int ccf__prune_chains(struct ccf *c);

int ccf__print_paths(const struct ccf *c, FILE *out);
int ccf__print_tree(const struct ccf *c, FILE *out);
int ccf__print_stats(const struct ccf *c, FILE *out);

struct hcct {
	struct kcc_hcct h;
	void *mem;
	struct pool hot;	/* the exported HCCT */
	uint32_t phi_ppm;
	uint32_t m;
	uint64_t threshold;
	int nhot;
};

int hcct__build(struct hcct *hc, const struct trace *t, uint32_t phi_ppm,
		uint32_t m);
/*
 * With @guaranteed, a second column holds each node's guaranteed count
 * (estimate minus its Space-Saving error; 0 for an ancestor no longer
 * monitored) and the summary line ends with sure=<contexts whose
 * guaranteed count reaches the threshold>.
 */
int hcct__print(const struct hcct *hc, const struct symtab *st,
		bool guaranteed, FILE *out);
void hcct__exit(struct hcct *hc);

#endif /* KCC_CCF_H */
