// SPDX-License-Identifier: GPL-2.0
/*
 * burst.c - adaptive bursting (lbr/kcc_burst.c): new contexts get their
 * burst with weight 1, contexts seen before one burst in N with weight N,
 * decisions are reproducible from the seed, the history table is
 * direct-mapped, and the stitcher counts skipped bursts and weights calls.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "kcc_stitch.h"
#include "ksfdump.h"
#include "samples.h"

static u64 table_mem[4096];

static int init(struct kcc_burst *b, u32 entries, u32 rr_inv, u32 depth,
		u64 seed)
{
	return kcc_burst_init(b, table_mem, sizeof(table_mem), entries, rr_inv,
			      depth, seed);
}

static void test_init(void)
{
	struct kcc_burst b;
	bool ok = true;

	ok &= init(&b, 16, 4, 4, 0) == -EINVAL;		/* seed 0 */
	ok &= init(&b, 16, 4, 0, 1) == -EINVAL;		/* no frames */
	ok &= init(&b, 0, 4, 4, 1) == -EINVAL;
	ok &= init(&b, 24, 4, 4, 1) == -EINVAL;		/* not a power of 2 */
	ok &= init(&b, 8192, 4, 4, 1) == -EINVAL;	/* mem too small */
	ok &= kcc_burst_init(&b, NULL, 0, 16, 4, 4, 1) == -EINVAL;
	ok &= kcc_burst_init(&b, (char *)table_mem + 4, 1024, 16, 4, 4, 1) ==
	      -EINVAL;
	ok &= kcc_burst_init(&b, NULL, 0, 0, 0, 4, 1) == 0;	/* rr_inv 0 */
	ok &= init(&b, 4096, 4, 4, 1) == 0 && b.mask == 4095;
	ksft_test_result(ok, "kcc_burst_init checks seed, depth, table size and memory\n");
}

static void test_off(void)
{
	struct kcc_burst b;
	u64 stack[2] = { 0x1000, 0x2000 };
	bool ok;
	u32 i, w = 1;

	ok = kcc_burst_init(&b, NULL, 0, 0, 0, 4, 7) == 0;
	for (i = 0; i < 1000; i++)
		w &= kcc_burst_decide(&b, stack, 2) == 1;
	ok &= w && b.rng == 7 && !b.new_contexts && !b.reenabled && !b.skipped;
	ksft_test_result(ok, "rr_inv 0: weight 1 always, no table, no draw\n");

	ok = init(&b, 16, 1, 4, 7) == 0;
	for (i = 0; i < 1000; i++)
		w &= kcc_burst_decide(&b, stack, 2) == 1;
	ok &= w && b.new_contexts == 1 && b.reenabled == 999 && !b.skipped;
	ksft_test_result(ok, "rr_inv 1: every burst taken with weight 1\n");
}

static void test_new(void)
{
	struct kcc_burst b;
	u32 i, bad = 0;

	init(&b, 4096, 1000, 2, 99);
	for (i = 0; i < 1000; i++) {
		u64 stack[2] = { 0x400000 + 16 * i, 0x401000 };

		bad += kcc_burst_decide(&b, stack, 2) != 1;
	}
	/* Collisions in a 4096-entry table make a context new, not old. */
	ksft_test_result(!bad && b.new_contexts == 1000 && !b.skipped,
			 "new contexts: weight 1 (1000 distinct stacks)\n");
}

/* Re-enable rate 1/N within 5 standard deviations over many draws. */
static void test_rate(u32 n)
{
	u64 stack[3] = { 0x401234, 0x402345, 0x403456 };
	const u32 draws = 200000;
	struct kcc_burst b;
	u32 i, bad = 0;
	double p = 1.0 / n, sd = sqrt(draws * p * (1 - p));

	init(&b, 64, n, 3, 0x1234567 + n);
	bad += kcc_burst_decide(&b, stack, 3) != 1;
	for (i = 0; i < draws; i++) {
		u32 w = kcc_burst_decide(&b, stack, 3);

		bad += w != 0 && w != n;
	}
	ksft_test_result(!bad && b.new_contexts == 1 &&
			 b.reenabled + b.skipped == draws &&
			 fabs(b.reenabled - draws * p) <= 5 * sd + 1,
			 "rr_inv %u: re-enabled %" PRIu64 " of %u (expected %.0f +- %.0f), weight %u, skip rate %.4f\n",
			 n, b.reenabled, draws, draws * p, 5 * sd, n,
			 (double)b.skipped / draws);
}

static void test_determinism(void)
{
	struct kcc_burst a, b;
	static u64 mem2[256];
	u32 i, diff = 0, diff_seed = 0;

	init(&a, 256, 3, 2, 42);
	kcc_burst_init(&b, mem2, sizeof(mem2), 256, 3, 2, 42);
	for (i = 0; i < 20000; i++) {
		u64 stack[2] = { 0x1000 + 16 * (i % 97), 0x2000 };

		diff += kcc_burst_decide(&a, stack, 2) !=
			kcc_burst_decide(&b, stack, 2);
	}
	ksft_test_result(!diff && a.rng == b.rng && a.skipped == b.skipped,
			 "same seed, same stacks: same decisions\n");

	init(&a, 256, 3, 2, 42);
	kcc_burst_init(&b, mem2, sizeof(mem2), 256, 3, 2, 43);
	for (i = 0; i < 20000; i++) {
		u64 stack[2] = { 0x1000 + 16 * (i % 97), 0x2000 };

		diff_seed += kcc_burst_decide(&a, stack, 2) !=
			     kcc_burst_decide(&b, stack, 2);
	}
	ksft_test_result(diff_seed > 1000,
			 "another seed: other decisions (%u of 20000 differ)\n",
			 diff_seed);
}

static void test_table(void)
{
	u64 sa[1] = { 0x1000 }, sb[1] = { 0x2000 }, sc[1];
	struct kcc_burst b;
	u32 w = 0, i;
	bool ok;

	/* One entry: A and B evict each other and stay new. */
	init(&b, 1, 1000000, 1, 5);
	for (i = 0; i < 100; i++) {
		w += kcc_burst_decide(&b, sa, 1);
		w += kcc_burst_decide(&b, sb, 1);
	}
	ok = w == 200 && b.new_contexts == 200 && !b.skipped;
	w = kcc_burst_decide(&b, sb, 1);
	ok &= w == 0 || w == 1000000;
	ksft_test_result(ok && b.new_contexts == 200,
			 "1-entry table: alternating contexts collide and stay new\n");

	/*
	 * Two entries: a context in the other slot survives, one in the
	 * same slot evicts.
	 */
	init(&b, 2, 1000000, 1, 5);
	for (i = 0, sc[0] = 0x3000;
	     (kcc_burst_sig(sc, 1, 1) & 1) == (kcc_burst_sig(sa, 1, 1) & 1);
	     i++)
		sc[0] += 16;
	kcc_burst_decide(&b, sa, 1);
	kcc_burst_decide(&b, sc, 1);
	ok = b.new_contexts == 2;
	kcc_burst_decide(&b, sa, 1);
	ok &= b.new_contexts == 2;	/* still there */
	for (sc[0] = 0x3000;
	     (kcc_burst_sig(sc, 1, 1) & 1) != (kcc_burst_sig(sa, 1, 1) & 1);)
		sc[0] += 16;
	kcc_burst_decide(&b, sc, 1);
	kcc_burst_decide(&b, sa, 1);
	ok &= b.new_contexts == 4;	/* evicted, new again */
	ksft_test_result(ok, "2-entry table: direct-mapped, same slot evicts\n");
}

static void test_sig(void)
{
	u64 s1[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };
	u64 s2[4] = { 0x1000, 0x2000, 0x3000, 0x5000 };
	u64 zero[2] = { 0, 0 };
	bool ok;

	ok = kcc_burst_sig(s1, 4, 3) == kcc_burst_sig(s2, 4, 3);
	ok &= kcc_burst_sig(s1, 4, 4) != kcc_burst_sig(s2, 4, 4);
	ksft_test_result(ok, "signature covers exactly sig_depth entries\n");
	ok = kcc_burst_sig(NULL, 0, 4) != 0 && kcc_burst_sig(zero, 2, 4) != 0 &&
	     kcc_burst_sig(zero, 1, 4) != kcc_burst_sig(zero, 2, 4) &&
	     kcc_burst_sig(s1, 1, 4) != kcc_burst_sig(s1, 2, 4);
	ksft_test_result(ok, "signature is never 0 and tells a stack from its prefix\n");
}

/* The stitcher: skipped bursts are charged, taken ones weighted. */
static void test_stitch(void)
{
	struct stitcher_opts o = {
		.k = KCC_K_INF, .rr_inv = 4, .table = 64, .sig_depth = 4,
		.seed = 77, .no_join = true,
	};
	struct sample_buf sb;
	struct stitcher sr;
	const u64 *c;
	u32 i, f;

	if (stitcher__init(&sr, &o))
		ksft_exit_fail_msg("stitcher__init failed\n");
	for (i = 0; i < 4000; i++) {
		sample_buf__init(&sb, 0, 3);
		sample_buf__push_stack(&sb, 0x2010);
		sample_buf__push_stack(&sb, 0x1105);
		sample_buf__push_branch(&sb, 0x1100, 0x2000, KCC_BR_CALL);
		stitcher__sample(&sr, &sb.hdr);
	}
	/* f's node by its entry label, under the anchored main frame. */
	f = kcc_forest_find(&sr.pool.f,
			    kcc_forest_find(&sr.pool.f, KCC_ROOT_TOP, 0x1105),
			    0x2000);
	c = f == KCC_NIL ? NULL : kcc_forest_ctr(&sr.pool.f, f);
	ksft_test_result(c && c[KCC_CTR_CALLS] == sr.burst.new_contexts +
			 4 * sr.burst.reenabled &&
			 sr.st.bursts_skipped == sr.burst.skipped &&
			 sr.st.bursts_replayed == 1 + sr.burst.reenabled &&
			 sr.burst.skipped > 2500,
			 "stitcher: calls = new + 4 x re-enabled (%" PRIu64 " + 4 x %" PRIu64 "), %" PRIu64 " skipped\n",
			 sr.burst.new_contexts, sr.burst.reenabled,
			 sr.burst.skipped);
	/* Every sample is charged, skipped or not. */
	{
		u32 skip = kcc_forest_find(&sr.pool.f,
			kcc_forest_find(&sr.pool.f, KCC_ROOT_TOP, 0x1105),
			0x2010);
		u64 samples = (c ? c[KCC_CTR_SAMPLES] : 0) +
			      (skip == KCC_NIL ? 0 :
			       kcc_forest_ctr(&sr.pool.f, skip)[KCC_CTR_SAMPLES]);

		ksft_test_result(samples == 4000 && sr.st.samples == 4000,
				 "every sample is charged, skipped bursts included\n");
	}
	stitcher__exit(&sr);
}

int main(void)
{
	static const u32 rates[] = { 2, 3, 10, 64, 1000 };
	u32 i;

	ksft_print_header();
	ksft_set_plan(12 + sizeof(rates) / sizeof(rates[0]));
	test_init();
	test_off();
	test_new();
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		test_rate(rates[i]);
	test_determinism();
	test_table();
	test_sig();
	test_stitch();
	ksft_finished();
}
