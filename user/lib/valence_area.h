/* SPDX-License-Identifier: GPL-2.0 */
/*
 * valence_area.h - the updates a Valence-instrumented call makes to its
 * thread's struct kcc_valence_area, shared by the -finstrument-functions
 * runtime (tools/kcc-trace/kcc_valence_rt.c) and by the decoder's tests,
 * which run the same code on simulated call paths.
 *
 * One call site carries one struct valence_op from the encoding table.
 * An acyclic edge writes its level and edge codes into two fields of
 * acyc[] (Algorithm 1, lines 32-35); a cyclic edge pushes its code onto
 * the rec[] bit stack (Algorithm 3); a call the table does not know
 * (indirect, from uninstrumented code, or to another callee than the
 * table says) pushes an escape record: the saved acyclic id, the call
 * site and callee as literals, and the tag 0, then starts a fresh
 * acyclic id, as DACCE does for dynamic edges.  The thread's outermost
 * call has nothing to save: it only sets root and root_site.
 *
 * Every update is bracketed by seq++ (odd: being updated) and seq++
 * (even: consistent).  A sample interrupts the thread between two of its
 * instructions, so a compiler barrier orders the thread's own stores as
 * the sampling interrupt sees them; x86 keeps stores in order for a
 * reader on another CPU too (SDM vol. 3A, 9.2.2).
 */
#ifndef KCC_VALENCE_AREA_H
#define KCC_VALENCE_AREA_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kcc.h>

#define VALENCE_OP_ACYC		1
#define VALENCE_OP_CYC		2

#define VALENCE_REC_BITS	(64u * KCC_VALENCE_REC_WORDS)

struct valence_op {
	uint64_t site;		/* return address of the call, image offset */
	uint32_t caller;	/* node of the calling routine */
	uint32_t callee;	/* node the call enters */
	uint16_t kind;		/* VALENCE_OP_* */
	uint16_t pos[2];	/* acyc: bit positions of edge and level code */
	uint8_t width[2];	/* acyc: their widths; cyc: width[0] = rec_len */
	uint32_t val[2];	/* acyc: the two codes; cyc: val[0] = code */
};

/* Escape records that did not fit in rec[], kept by the thread only. */
struct valence_spill {
	uint64_t *w;
	size_t nr;
	size_t cap;
};

static inline void valence__barrier(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void valence__seq_begin(struct kcc_valence_area *a)
{
	*(volatile uint32_t *)&a->seq = a->seq + 1;
	valence__barrier();
}

static inline void valence__seq_end(struct kcc_valence_area *a)
{
	valence__barrier();
	*(volatile uint32_t *)&a->seq = a->seq + 1;
}

/* Bits [pos, pos + width) of a little-endian word array, width <= 64. */
static inline uint64_t valence__get_bits(const __u64 *w, uint32_t pos,
					 uint32_t width)
{
	uint32_t i = pos / 64, s = pos % 64;
	uint64_t v;

	if (!width)
		return 0;
	v = w[i] >> s;
	if (s && s + width > 64)
		v |= w[i + 1] << (64 - s);
	return width == 64 ? v : v & ((1ull << width) - 1);
}

static inline void valence__put_bits(__u64 *w, uint32_t pos,
				     uint32_t width, uint64_t v)
{
	uint32_t i = pos / 64, s = pos % 64;
	uint64_t m = width == 64 ? ~0ull : (1ull << width) - 1;

	if (!width)
		return;
	v &= m;
	w[i] = (w[i] & ~(m << s)) | (v << s);
	if (s && s + width > 64) {
		uint32_t r = 64 - s;

		w[i + 1] = (w[i + 1] & ~(m >> r)) | (v >> r);
	}
}

/*
 * An escape record, bottom to top: the k acyclic words in use (the rest
 * are zero), the call site, the caller and callee nodes, k, and the tag
 * 0.  Decoding reads it from the top, so k sits just below the tag.
 */
#define VALENCE_ESC_HDR_BITS	(64 + 32 + 32 + 8)

struct valence_escape {
	uint64_t site;
	uint32_t caller;
	uint32_t callee;
	uint32_t k;		/* saved acyclic words */
	uint32_t base;		/* bit offset of the record in rec[] */
};

/* The escape record under top, or -1 when it cannot be one. */
static inline int valence__escape_read(const __u64 *rec, uint32_t top,
				       uint32_t rec_len,
				       struct valence_escape *e)
{
	uint32_t h = top - rec_len - VALENCE_ESC_HDR_BITS;

	if (top < rec_len + VALENCE_ESC_HDR_BITS)
		return -1;
	e->k = valence__get_bits(rec, h + 128, 8);
	e->callee = valence__get_bits(rec, h + 96, 32);
	e->caller = valence__get_bits(rec, h + 64, 32);
	e->site = valence__get_bits(rec, h, 64);
	if (e->k > KCC_VALENCE_ACYC_WORDS || h < 64 * e->k)
		return -1;
	e->base = h - 64 * e->k;
	return 0;
}

static inline int valence__spill_push(struct valence_spill *sp,
				      const uint64_t *w, size_t n)
{
	if (sp->nr + n > sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 64;
		uint64_t *nw;

		while (cap < sp->nr + n)
			cap *= 2;
		nw = realloc(sp->w, cap * sizeof(*nw));
		if (!nw)
			return -1;
		sp->w = nw;
		sp->cap = cap;
	}
	memcpy(sp->w + sp->nr, w, n * sizeof(*w));
	sp->nr += n;
	return 0;
}

/* Words of the acyclic id up to its highest nonzero one. */
static inline uint32_t valence__acyc_used(const struct kcc_valence_area *a)
{
	uint32_t k = a->acyc_words;

	while (k && !a->acyc[k - 1])
		k--;
	return k;
}

/*
 * A call entering node callee from return address site; op is the
 * table's entry for site or NULL.  rec_len is the table's cyclic code
 * width.  Returns 1 when the call was escaped, 0 when encoded.
 */
static inline int valence__enter(struct kcc_valence_area *a,
				 struct valence_spill *sp,
				 const struct valence_op *op, uint32_t callee,
				 uint64_t site, uint32_t rec_len)
{
	uint32_t nw = a->acyc_words, k = valence__acyc_used(a);
	int escaped = !op || op->callee != callee;

	valence__seq_begin(a);
	if (a->cur == KCC_VALENCE_NO_NODE && !a->rec_bits && !a->rec_over) {
		/* The thread's outermost call: nothing to save. */
		a->root = callee;
		a->root_site = site;
		escaped = 1;
	} else if (!escaped && op->kind == VALENCE_OP_ACYC) {
		valence__put_bits(a->acyc, op->pos[0], op->width[0], op->val[0]);
		valence__put_bits(a->acyc, op->pos[1], op->width[1], op->val[1]);
	} else if (!escaped) {
		if (a->rec_over || a->rec_bits + rec_len > VALENCE_REC_BITS) {
			a->rec_over++;
		} else {
			valence__put_bits(a->rec, a->rec_bits, rec_len,
					  op->val[0]);
			a->rec_bits += rec_len;
		}
	} else if (a->rec_over || a->rec_bits + 64 * k +
		   VALENCE_ESC_HDR_BITS + rec_len > VALENCE_REC_BITS) {
		uint64_t rec[KCC_VALENCE_ACYC_WORDS + 2];

		memcpy(rec, a->acyc, nw * sizeof(*rec));
		rec[nw] = site;
		rec[nw + 1] = (uint64_t)a->cur << 32 | callee;
		if (valence__spill_push(sp, rec, nw + 2) == 0)
			a->rec_over++;
		else	/* no memory: the context is lost from here down */
			a->rec_over = UINT32_MAX / 2;
		memset(a->acyc, 0, nw * sizeof(*a->acyc));
	} else {
		uint32_t i, b = a->rec_bits;

		for (i = 0; i < k; i++, b += 64)
			valence__put_bits(a->rec, b, 64, a->acyc[i]);
		valence__put_bits(a->rec, b, 64, site);
		valence__put_bits(a->rec, b + 64, 32, a->cur);
		valence__put_bits(a->rec, b + 96, 32, callee);
		valence__put_bits(a->rec, b + 128, 8, k);
		valence__put_bits(a->rec, b + 136, rec_len, 0);
		a->rec_bits = b + 136 + rec_len;
		memset(a->acyc, 0, k * sizeof(*a->acyc));
	}
	a->cur = callee;
	valence__seq_end(a);
	return escaped;
}

/* The return matching valence__enter(a, sp, op, callee, site, rec_len). */
static inline void valence__exit(struct kcc_valence_area *a,
				 struct valence_spill *sp,
				 const struct valence_op *op, uint32_t callee,
				 uint32_t rec_len)
{
	uint32_t nw = a->acyc_words;
	int escaped = !op || op->callee != callee;

	valence__seq_begin(a);
	if (escaped && !a->rec_bits && !a->rec_over) {
		a->cur = KCC_VALENCE_NO_NODE;	/* the outermost call returns */
		a->root = KCC_VALENCE_NO_NODE;
	} else if (!escaped && op->kind == VALENCE_OP_ACYC) {
		valence__put_bits(a->acyc, op->pos[0], op->width[0], 0);
		valence__put_bits(a->acyc, op->pos[1], op->width[1], 0);
		a->cur = op->caller;
	} else if (!escaped) {
		if (a->rec_over)
			a->rec_over--;
		else
			a->rec_bits -= rec_len;
		a->cur = op->caller;
	} else if (a->rec_over) {
		a->rec_over--;
		if (sp->nr >= nw + 2) {
			sp->nr -= nw + 2;
			memcpy(a->acyc, sp->w + sp->nr, nw * sizeof(*a->acyc));
			a->cur = sp->w[sp->nr + nw + 1] >> 32;
		}
	} else {
		struct valence_escape e;
		uint32_t i;

		if (valence__escape_read(a->rec, a->rec_bits, rec_len, &e))
			e.k = 0, e.base = 0, e.caller = KCC_VALENCE_NO_NODE;
		for (i = 0; i < nw; i++)
			a->acyc[i] = i < e.k ?
				valence__get_bits(a->rec, e.base + 64 * i, 64) : 0;
		a->cur = e.caller;
		a->rec_bits = e.base;
	}
	valence__seq_end(a);
}

#endif /* KCC_VALENCE_AREA_H */
