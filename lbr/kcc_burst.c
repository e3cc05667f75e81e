// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_burst.c - adaptive bursting (Zhuang et al., PLDI'06, Section 5.3):
 * replay every burst of a context seen for the first time, and only one
 * burst in rr_inv of the contexts seen before, weighted rr_inv.
 *
 * The decision runs once per sample in the worker, never in NMI context;
 * it still allocates nothing and takes no lock: the history table and the
 * generator state belong to the caller (one per task in kcc.ko).
 */
#include "kcc_stitch.h"

size_t kcc_burst_mem_size(u32 entries)
{
	return (size_t)entries * sizeof(u64);
}

/**
 * kcc_burst_init() - set up adaptive bursting in caller memory
 * @b:		state to initialise
 * @mem:	8-byte aligned block of kcc_burst_mem_size(@entries) bytes;
 *		may be NULL when @rr_inv is 0 (no table is used)
 * @mem_size:	size of @mem
 * @entries:	history table entries, a power of two (ignored for @rr_inv 0)
 * @rr_inv:	N: a burst of a context already seen is taken with
 *		probability 1/N and weighted N; 0 takes every burst
 * @sig_depth:	stack entries hashed into a context signature, >= 1
 * @seed:	non-zero start of the xorshift64 generator
 *
 * Return: 0, or -EINVAL for a bad size, table or seed.
 */
int kcc_burst_init(struct kcc_burst *b, void *mem, size_t mem_size,
		   u32 entries, u32 rr_inv, u32 sig_depth, u64 seed)
{
	if (!b || !seed || !sig_depth)
		return -EINVAL;
	memset(b, 0, sizeof(*b));
	b->rr_inv = rr_inv;
	b->sig_depth = sig_depth;
	b->rng = seed;
	if (!rr_inv)
		return 0;
	if (!entries || (entries & (entries - 1)) || !mem ||
	    ((unsigned long)mem & 7) || mem_size < kcc_burst_mem_size(entries))
		return -EINVAL;
	b->table = mem;
	b->mask = entries - 1;
	memset(b->table, 0, kcc_burst_mem_size(entries));
	return 0;
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static inline u64 kcc_burst_mix(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/**
 * kcc_burst_sig() - signature of the innermost part of a sampled stack
 * @stack:	sampled ip, then return addresses, innermost first
 * @nr_stack:	entries of @stack
 * @sig_depth:	entries hashed (fewer when the stack is shallower)
 *
 * The number of entries hashed is mixed in first, so a stack is never
 * confused with its own prefix padded with zeros.  0 marks an empty
 * table slot and is never returned.
 */
u64 kcc_burst_sig(const u64 *stack, u32 nr_stack, u32 sig_depth)
{
	u32 n = nr_stack < sig_depth ? nr_stack : sig_depth;
	u64 h = kcc_burst_mix(0x9e3779b97f4a7c15ull + n);
	u32 i;

	for (i = 0; i < n; i++)
		h = kcc_burst_mix(h ^ stack[i]) + 0x9e3779b97f4a7c15ull;
	return h ? h : 1;
}

/* Marsaglia's xorshift64 (13, 7, 17): period 2^64 - 1, never 0. */
static inline u64 kcc_burst_next(struct kcc_burst *b)
{
	u64 x = b->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	b->rng = x;
	return x;
}

/* floor(2^64 / n) for n >= 2, without 128-bit arithmetic. */
static u64 kcc_burst_threshold(u32 n)
{
	u64 q = kcc_div_u64(~0ull, n);

	/* 2^64 - 1 = q * n + r; 2^64 / n is q + 1 when r = n - 1. */
	if (~0ull - q * n == (u64)n - 1)
		q++;
	return q;
}

/**
 * kcc_burst_decide() - weight of the burst of a sample
 * @b:		adaptive bursting state
 * @stack:	the sample's stack
 * @nr_stack:	its entries
 *
 * A context (signature) not in the table enters it and its burst is
 * replayed with weight 1.  A context found there is re-enabled when the
 * next generator output is below 2^64 / rr_inv, with weight rr_inv, and
 * skipped (weight 0) otherwise.  rr_inv 0 never looks at the table;
 * rr_inv 1 re-enables every burst with weight 1.
 *
 * Return: the weight, 0 to skip the burst.
 */
u32 kcc_burst_decide(struct kcc_burst *b, const u64 *stack, u32 nr_stack)
{
	u64 sig, *slot;

	if (!b->rr_inv)
		return 1;

	sig = kcc_burst_sig(stack, nr_stack, b->sig_depth);
	slot = &b->table[sig & b->mask];
	if (*slot != sig) {
		/* New, or evicted by a colliding context: direct-mapped. */
		*slot = sig;
		b->new_contexts++;
		return 1;
	}
	if (b->rr_inv == 1 ||
	    kcc_burst_next(b) < kcc_burst_threshold(b->rr_inv)) {
		b->reenabled++;
		return b->rr_inv;
	}
	b->skipped++;
	return 0;
}
