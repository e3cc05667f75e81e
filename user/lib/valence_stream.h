/* SPDX-License-Identifier: GPL-2.0 */
/*
 * valence_stream.h - the KCC_REC_VALENCE records of a /dev/kcc stream
 * (kcc.ko's Valence source) decoded with the program's encoding table
 * into the calling context trees of their tasks, so that every kcc report
 * view and format sees full routine paths.
 */
#ifndef KCC_VALENCE_STREAM_H
#define KCC_VALENCE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "valence_prog.h"

struct valence_stream_stats {
	uint64_t records;	/* KCC_REC_VALENCE records */
	uint64_t entries;	/* distinct encodings */
	uint64_t samples;	/* samples they carry */
	uint64_t decoded;	/* of which decoded to a routine path */
	uint64_t other_table;	/* table_id is not the table's */
	uint64_t undecodable;	/* not an encoding of the table */
	uint64_t no_routine;	/* registered, no routine entered yet */
	uint64_t no_base;	/* the program's mapping is not in the stream */
	uint64_t escaped_frames;
	uint64_t table_full;	/* encodings kcc.ko could not keep */
	uint64_t max_depth;
};

/*
 * Decode the KCC_REC_VALENCE records of the stream at @raw (@len bytes)
 * with table @p of executable @exe (its path as mapped: the load base
 * comes from the stream's KCC_REC_MAP of that file).  Each encoding
 * becomes a path of its task's tree, labelled with the routines' run
 * time addresses, charged its events and samples; undecodable ones are
 * charged to an [unknown] root.  The stream must be of k = KCC_K_INF.
 * Writes the new stream (no KCC_REC_VALENCE left) to *@out, malloc()ed.
 * Returns 0, -EINVAL (malformed; @err says why) or -ENOMEM.
 */
int valence_stream__decode(const void *raw, size_t len,
			   const struct valence_prog *p, const char *exe,
			   void **out, size_t *out_len,
			   struct valence_stream_stats *st, char *err,
			   size_t errlen);

void valence_stream__print(const struct valence_stream_stats *st, FILE *f);

#endif /* KCC_VALENCE_STREAM_H */
