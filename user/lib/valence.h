/* SPDX-License-Identifier: GPL-2.0 */
/*
 * valence.h - Valence calling context encoding (Zhou et al., "Valence:
 * variable length calling context encoding"): annotation of a call graph
 * with levels and edge codes (Algorithm 1), cyclic codes for the edges
 * inside strongly connected components (Algorithm 3), and decoding of a
 * thread's struct kcc_valence_area back to its routine path (Algorithms
 * 2 and 4).  Calls the graph does not hold are escaped (valence_area.h).
 */
#ifndef KCC_VALENCE_H
#define KCC_VALENCE_H

#include <stdint.h>

#include "valence_area.h"

struct valence_edge {
	uint32_t caller;	/* node index */
	uint32_t callee;	/* node index */
	uint64_t site;		/* return address of the call, image offset */
};

/* The annotation of one super node: a routine, or an SCC of them. */
struct valence_sup {
	uint32_t level;		/* bits of the acyclic id below its callees */
	uint32_t lvlen;		/* width of its level codes */
	uint32_t nlv;		/* distinct caller levels */
	uint32_t *lv;		/* level code -> caller level (c2lv) */
	uint32_t *ew;		/* level code -> edge code width */
	uint32_t *off;		/* level code -> first of its edges in emap */
	uint32_t *cnt;		/* level code -> number of its edges */
	uint32_t *emap;		/* (level code, edge code) -> edge (ccMap) */
};

struct valence {
	uint32_t nr_nodes;
	uint32_t nr_edges;
	struct valence_edge *edges;
	struct valence_op *ops;		/* per edge */
	uint32_t *scc;			/* node -> super node */
	uint32_t nr_scc;
	struct valence_sup *sup;
	uint32_t *cyc_edge;		/* cyclic code - 1 -> edge */
	uint32_t nr_cyc;
	uint32_t rec_len;		/* width of cyclic codes and the tag */
	uint32_t max_level;
	uint32_t acyc_words;
	struct valence_op *by_site;	/* ops sorted by site */
	uint32_t *site_edge;		/* by_site index -> edge */
	/* PCCE on the same graph, for comparison: */
	uint8_t *back;			/* per edge: a back edge of the DFS */
	double *pcce_bits;		/* per node: log2(numCC) */
};

/* One routine of a decoded path, root first. */
struct valence_frame {
	uint32_t node;
	uint32_t escaped;	/* entered by a call the table did not know */
	uint64_t site;		/* return address of the call into it, or 0 */
};

/*
 * Annotates nr_edges edges over nr_nodes nodes (copied).  0, -ENOMEM,
 * -EINVAL (a node out of range) or -E2BIG (the acyclic id would not fit
 * in KCC_VALENCE_ACYC_WORDS words).
 */
int valence__annotate(struct valence *v, uint32_t nr_nodes,
		      const struct valence_edge *edges, uint32_t nr_edges);
void valence__exit_graph(struct valence *v);

/* The table's entry for a call's return address, or NULL. */
const struct valence_op *valence__lookup(const struct valence *v,
					 uint64_t site);

/* A fresh area for the table: empty stack, no running routine. */
void valence__area_init(const struct valence *v, struct kcc_valence_area *a);

/*
 * Decodes a consistent (even seq) area into at most max frames, root
 * first.  Returns the number of frames, or -EAGAIN (torn: odd seq),
 * -EOVERFLOW (pushes did not fit in rec[]), -E2BIG (more than max
 * frames), -ENOENT (no routine entered yet), -EINVAL (not an encoding
 * of this table).
 */
int valence__decode(const struct valence *v, const struct kcc_valence_area *a,
		    struct valence_frame *out, uint32_t max);

/* Encoding length in 64-bit words of a sampled area, at least 1. */
uint32_t valence__words(const struct valence *v,
			const struct kcc_valence_area *a);

#endif /* KCC_VALENCE_H */
