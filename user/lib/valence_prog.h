/* SPDX-License-Identifier: GPL-2.0 */
/*
 * valence_prog.h - the Valence encoding table of one executable: its call
 * graph from the direct calls of its code (capstone) and its symbol table
 * (libelf), annotated by valence.c, and the table file that the runtime
 * (tools/kcc-trace/kcc_valence_rt.c) applies and kcc decodes with.
 *
 * Table file, text, one record a line:
 *	kcc-valence 1
 *	table <table_id> <nodes> <edges> <acyc_words> <rec_len>
 *	node <index> <address> <size> <name>
 *	edge <caller> <callee> <site>
 *	op <site> <caller> <callee> <kind> <pos0> <width0> <val0> <pos1>
 *	   <width1> <val1>			(on one line)
 * Addresses and sites are hexadecimal image offsets (the runtime
 * subtracts the load base); the ops are what the runtime needs, the
 * nodes and edges what the decoder annotates again, and table_id
 * (FNV-1a over the ops) tells whether both agree.
 */
#ifndef KCC_VALENCE_PROG_H
#define KCC_VALENCE_PROG_H

#include <stdio.h>

#include "valence.h"

struct valence_prog {
	struct valence v;
	uint32_t nr_nodes;
	uint64_t *addr;		/* node -> entry address (image offset) */
	uint64_t *size;
	char **name;
	uint64_t table_id;
	uint32_t indirect;	/* calls whose target is not a routine start */
};

/* Builds the graph of the ELF executable at path: 0 or -errno. */
int valence_prog__from_elf(struct valence_prog *p, const char *path,
			   char *err, size_t errlen);
int valence_prog__write(const struct valence_prog *p, FILE *f);
int valence_prog__read(struct valence_prog *p, FILE *f, char *err,
		       size_t errlen);
void valence_prog__exit(struct valence_prog *p);

uint64_t valence__table_id(const struct valence *v);

/*
 * Check records, written by the runtime's check mode: the area a sample
 * read, then the thread's true path from its own shadow stack.
 */
#define VALENCE_CHECK_MAGIC	0x4b564c43u	/* "CLVK" */

struct valence_check_hdr {
	uint32_t magic;
	uint32_t depth;		/* struct valence_frame that follow */
	struct kcc_valence_area area;
};

struct valence_check_stats {
	uint64_t samples, exact, wrong, torn, overflow, undecodable;
	uint64_t escaped_frames;
	uint64_t words, pcce_words;
	uint32_t max_words;
};

/* Decodes every record of f against its truth: 0 or -errno. */
int valence_prog__check(const struct valence_prog *p, FILE *f,
			struct valence_check_stats *st, FILE *diag);

#endif /* KCC_VALENCE_PROG_H */
