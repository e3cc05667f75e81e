// SPDX-License-Identifier: GPL-2.0
/*
 * stitch.c - stitching LBR bursts onto sampled stacks (lbr/kcc_stitch.c).
 *
 * Hand-made samples whose k-SF follows from the algorithm in
 * kcc_stitch.h by hand: anchoring at absolute depth, returns from frames
 * below the sampled stack, truncated walks, every way a burst can fail to
 * fit its stack, joining of overlapping bursts; kcc_sample_check() on
 * every malformed field.  Then the property that justifies the design:
 * over seeded random traces, simulated LBR samples (user/harness/lbrsim.c)
 * whose bursts cover the window since the previous sample, stitched,
 * joined and relabelled to routines, give exactly the k-SF of the trace;
 * without joining every call is counted once per burst that holds it.
 *
 * Addresses of the hand-made samples: main 0x1000-0x1fff, f 0x2000-0x2fff,
 * g 0x3000-0x3fff; each routine's entry is its first byte.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "ref.h"
#include "kcc_stitch.h"
#include "ksfdump.h"
#include "lbrsim.h"
#include "samples.h"

#define C	KCC_BR_CALL
#define R	KCC_BR_RET
#define O	KCC_BR_OTHER

struct br3 {
	u64 from;
	u64 to;
	u32 kind;
};

static struct sample_buf sb;

static const struct kcc_sample *mk(u32 flags, u64 delta, u32 nst,
				   const u64 *stack, u32 nbr,
				   const struct br3 *br)
{
	u32 i;

	sample_buf__init(&sb, flags, delta);
	for (i = 0; i < nst; i++)
		sample_buf__push_stack(&sb, stack[i]);
	for (i = 0; i < nbr; i++)
		sample_buf__push_branch(&sb, br[i].from, br[i].to, br[i].kind);
	return &sb.hdr;
}

#define MK(flags, delta, st, br) \
	mk(flags, delta, sizeof(st) / sizeof((st)[0]), st, \
	   sizeof(br) / sizeof((br)[0]), br)
#define MK0(flags, delta, st) \
	mk(flags, delta, sizeof(st) / sizeof((st)[0]), st, 0, NULL)

static void start(struct stitcher *sr, u32 k)
{
	struct stitcher_opts o = { .k = k };

	if (stitcher__init(sr, &o))
		ksft_exit_fail_msg("stitcher__init(k=%u) failed\n", k);
}

/* The dump of @sr's forest (3 counters) must be @want; prints both when not. */
static bool dump_is(struct stitcher *sr, const char *want)
{
	char *got = ksf__dump_string(&sr->pool.f, NULL, 3);
	bool ok = got && !strcmp(got, want);

	if (!ok) {
		ksft_print_msg("expected:\n%s", want);
		ksft_print_msg("got:\n%s", got ? got : "(null)\n");
	}
	free(got);
	return ok;
}

static void apply(struct stitcher *sr, const struct kcc_sample *s)
{
	if (kcc_sample_check(s, s->size) != (int)s->size)
		ksft_exit_fail_msg("hand-made sample refused by kcc_sample_check\n");
	if (stitcher__sample(sr, s))
		ksft_exit_fail_msg("stitcher__sample failed\n");
}

/* ---- hand-made samples ------------------------------------------------- */

static void test_anchor(void)
{
	static const u64 st1[] = { 0x2010, 0x1105 };
	static const u64 st3[] = { 0x3010, 0x2207, 0x1105 };
	static const struct br3 call_f[] = { { 0x1100, 0x2000, C } };
	static const struct br3 call_g[] = { { 0x2202, 0x3000, C } };
	struct stitcher sr;
	bool ok;

	/* No records: the stack is anchored and charged, nothing counted. */
	start(&sr, KCC_K_INF);
	apply(&sr, MK0(0, 7, st1));
	ok = dump_is(&sr, "top 1105;2010 0 7 1\n") &&
	     sr.st.samples == 1 && sr.st.bursts_replayed == 0;
	ksft_test_result(ok, "a sample without records is only charged\n");
	stitcher__exit(&sr);

	/* The call that made the top frame is undone, then replayed. */
	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 7, st1, call_f));
	ok = dump_is(&sr, "top 1105;2000 1 7 1\n") &&
	     sr.st.bursts_replayed == 1 && sr.st.branches == 1 &&
	     !sr.st.stitch_errors;
	ksft_test_result(ok, "call undone, anchored caller, call replayed and charged\n");
	stitcher__exit(&sr);

	/*
	 * k = 1: the anchored frames sit at depths 1 and 2, so the call of g
	 * at depth 2 starts a slab: t restarts at a slab root, b continues
	 * the slab rooted at the anchored g frame.
	 */
	start(&sr, 1);
	apply(&sr, MK(0, 7, st3, call_g));
	ok = dump_is(&sr, "slab 2207;3000 1 7 1\nslab 3000 1 7 1\n");
	ksft_test_result(ok, "k=1: anchoring at absolute depth aligns slabs\n");
	stitcher__exit(&sr);

	/* k = 3: depth 2 is not a boundary, the call extends the top tree. */
	start(&sr, 3);
	apply(&sr, MK(0, 7, st3, call_g));
	ok = dump_is(&sr, "top 1105;2207;3000 1 7 1\n");
	ksft_test_result(ok, "k=3: the same sample stays in the depth-0 tree\n");
	stitcher__exit(&sr);
}

static void test_below_bottom(void)
{
	/* main's ip; f and g returned during the burst, g was called in it. */
	static const u64 st[] = { 0x1200 };
	static const struct br3 br[] = {
		{ 0x2ff0, 0x1105, R },	/* f returns to main */
		{ 0x3ff0, 0x2207, R },	/* g returns to f */
		{ 0x2202, 0x3000, C },	/* f calls g */
	};
	struct stitcher sr;
	bool ok;

	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 5, st, br));
	ok = dump_is(&sr, "top 1200 0 5 1\ntop 1200;2ff0;3000 1 0 0\n") &&
	     sr.st.bursts_replayed == 1 && sr.st.ksf.depth == 1;
	ksft_test_result(ok, "returns from frames below the sampled stack are re-pushed\n");
	stitcher__exit(&sr);
}

static void test_truncated(void)
{
	static const u64 st[] = { 0x3010, 0x2207 };
	static const struct br3 br[] = { { 0x2202, 0x3000, C } };
	static const struct br3 two[] = {
		{ 0x2202, 0x3000, C }, { 0x1100, 0x2000, C },
	};
	struct stitcher sr;
	bool ok;

	start(&sr, KCC_K_INF);
	apply(&sr, MK(KCC_SAMPLE_TRUNCATED, 5, st, br));
	ok = dump_is(&sr, "top 0;2207;3000 1 5 1\n");
	ksft_test_result(ok, "truncated walk: [unknown] frame at the bottom\n");
	stitcher__exit(&sr);

	/* Popping the bottom frame is fine, popping [unknown] is not. */
	start(&sr, KCC_K_INF);
	apply(&sr, MK(KCC_SAMPLE_TRUNCATED, 5, st, two));
	ok = dump_is(&sr, "top 0;2000 1 0 0\ntop 0;2000;3000 1 5 1\n");
	ksft_test_result(ok && !sr.st.stitch_errors,
			 "truncated walk: the bottom frame's call is unchecked\n");
	stitcher__exit(&sr);
}

/* What one sample leaves: the dump, and the stitcher for its counts. */
static bool one(struct stitcher *sr, const struct kcc_sample *s,
		const char *want)
{
	start(sr, KCC_K_INF);
	apply(sr, s);
	return dump_is(sr, want) && !sr->st.stitch_errors &&
	       sr->st.bursts_replayed == 1;
}

/* The counts of @c that are not zero must be exactly @want's. */
static bool counts_are(const struct kcc_stitch_counts *c,
		       const struct kcc_stitch_counts *want)
{
	bool ok = !memcmp(c, want, sizeof(*c));

	if (!ok)
		ksft_print_msg("counts: leaf %" PRIu64 " walk %" PRIu64 " cut %" PRIu64 " skid %" PRIu64 " unrec %" PRIu64 " unmatched %" PRIu64 " far %" PRIu64 " below %" PRIu64 "\n",
			       c->leaf_repaired, c->walk_repaired, c->walk_cut,
			       c->skid_repaired, c->unrecorded,
			       c->unmatched_return, c->far_skipped,
			       c->below_walk);
	return ok;
}

static bool accepted(const struct kcc_sample *s)
{
	static const struct kcc_stitch_counts none;
	struct stitcher sr;
	bool ok;

	start(&sr, KCC_K_INF);
	apply(&sr, s);
	ok = !sr.st.stitch_errors && sr.st.bursts_replayed == 1 &&
	     counts_are(&sr.st.cnt, &none);
	stitcher__exit(&sr);
	return ok;
}

/* A misfit of the sampled frame only: repaired as a frameless leaf. */
static bool leaf_repaired(const struct kcc_sample *s)
{
	static const struct kcc_stitch_counts want = { .leaf_repaired = 1 };
	struct stitcher sr;
	bool ok;

	start(&sr, KCC_K_INF);
	apply(&sr, s);
	ok = !sr.st.stitch_errors && counts_are(&sr.st.cnt, &want) &&
	     sr.st.ksf.calls == 1;
	stitcher__exit(&sr);
	return ok;
}

static void test_errors(void)
{
	static const u64 st1[] = { 0x2010, 0x1105 };
	static const u64 top[] = { 0x2010 };
	static const u64 empty[] = { 0 };
	struct br3 b[2] = { { 0x1100, 0x2000, C } };
	static const struct br3 other[] = {
		{ 0x2005, 0x2008, O }, { 0x1100, 0x2000, C },
	};
	static const struct br3 kernel[] = {
		{ 0xffffffff81a00123ull, 0x2008, R },
		{ 0x1100, 0xffffffff81000000ull, C },
		{ 0x1100, 0x2000, C },
	};
	static const struct br3 fit_other[] = {
		{ 0x1100, 0x2000, O }, { 0x1100, 0xffffffff81000000ull, C },
	};
	static const struct br3 two_calls[] = {
		{ 0x1100, 0x2000, C }, { 0x0f00, 0x1000, C },
	};
	struct kcc_stitch_counts want = { 0 };
	struct stitcher sr;
	bool ok;
	u32 i;

	ok = true;
	b[0].from = 0x1105;	/* 0 bytes */
	ok &= leaf_repaired(mk(0, 7, 2, st1, 1, b));
	b[0].from = 0x1106;	/* return address before the call */
	ok &= leaf_repaired(mk(0, 7, 2, st1, 1, b));
	b[0].from = 0x1105 - 16;
	ok &= leaf_repaired(mk(0, 7, 2, st1, 1, b));
	b[0].from = 0x1105 - 15;
	ok &= accepted(mk(0, 7, 2, st1, 1, b));
	b[0].from = 0x1105 - 1;
	ok &= accepted(mk(0, 7, 2, st1, 1, b));
	ksft_test_result(ok, "call undo fits 1..15 bytes; 0, 16 and negative are repaired\n");

	ok = one(&sr, MK(0, 7, st1, other), "top 1105;2000 1 7 1\n");
	want.far_skipped = 1;
	ok &= counts_are(&sr.st.cnt, &want) && sr.st.branches == 1;
	stitcher__exit(&sr);
	ksft_test_result(ok, "a record other than call/return is skipped, the rest replayed\n");

	ok = one(&sr, MK(0, 7, st1, kernel), "top 1105;2000 1 7 1\n");
	want.far_skipped = 2;
	ok &= counts_are(&sr.st.cnt, &want) && sr.st.branches == 1;
	stitcher__exit(&sr);
	ksft_test_result(ok, "records with a kernel address are skipped\n");

	/*
	 * Skipped records that would fit as calls (a jump from main's call
	 * site, a call into the kernel), each alone: the stack is anchored
	 * whole and nothing is replayed.
	 */
	ok = true;
	want.far_skipped = 1;
	for (i = 0; i < 2; i++) {
		ok &= one(&sr, mk(0, 7, 2, st1, 1, &fit_other[i]),
			  "top 1105;2010 0 7 1\n");
		ok &= counts_are(&sr.st.cnt, &want) && !sr.st.branches;
		stitcher__exit(&sr);
	}
	ksft_test_result(ok, "skipped records that would fit the stack as calls pop no frame\n");

	/*
	 * More calls than frames in a complete walk: f's frame was the
	 * bottom one, main's missing (frameless); the older call is
	 * undone below it and both are replayed from depth 0.
	 */
	ok = one(&sr, MK(0, 7, top, two_calls),
		 "top 1000 1 0 0\ntop 1000;2000 1 7 1\n");
	memset(&want, 0, sizeof(want));
	want.below_walk = 1;
	ok &= counts_are(&sr.st.cnt, &want) && sr.st.branches == 2;
	stitcher__exit(&sr);
	ksft_test_result(ok, "more call undos than frames: undone below the walk, all replayed\n");

	ok = one(&sr, mk(0, 7, 0, empty, 1, two_calls), "top 2000 1 7 1\n") &&
	     counts_are(&sr.st.cnt, &want) && sr.st.branches == 1;
	stitcher__exit(&sr);
	ksft_test_result(ok, "a call undo on an empty stack: replayed from depth 0\n");
}

/*
 * Bursts shaped as hardware gives them.  Addresses: main 0x1000, f
 * 0x2000, g 0x3000, h 0x4000, a library routine 0x6000 and its callback
 * 0x8000, start 0x7000, a signal handler 0x9000, the signal restorer at
 * 0xa000, a retpoline thunk at 0xb000; call sites at 0x?100 etc. with
 * 5-byte calls.  Each walk is what a frame-pointer walk reads on that
 * shape, each expected forest the true one as far as the records tell
 * it.  The stitcher that dropped misfitting bursts refused every one
 * but the tail call and the recursion.
 */
struct shape {
	const char *what;
	u32 flags;
	u64 st[4];		/* the walk, 0-terminated when shorter */
	struct br3 br[4];	/* the records, from 0 when fewer */
	const char *dump;
	struct kcc_stitch_counts want;
};

static const struct shape shapes[] = {
	{	/* main -> f -> g, g frameless: f is missing from the walk. */
		"frameless leaf and frameless caller: both restored from the calls",
		0, { 0x3010, 0x7105 },
		{ { 0x2202, 0x3000, C }, { 0x1100, 0x2000, C },
		  { 0x7100, 0x1000, C } },
		"top 7105;1000 1 0 0\ntop 7105;1000;2000 1 0 0\n"
		"top 7105;1000;2000;3000 1 7 1\n",
		{ .leaf_repaired = 1, .walk_repaired = 1 },
	}, {	/* start -> main -> lib (frameless) -> callback. */
		"frameless library routine mid-stack: its caller restored",
		0, { 0x8010, 0x6107, 0x7105 },
		{ { 0x6102, 0x8000, C }, { 0x1100, 0x6000, C } },
		"top 7105;1100;6000 1 0 0\ntop 7105;1100;6000;8000 1 7 1\n",
		{ .walk_repaired = 1 },
	}, {	/* The library used rbp as a register: garbage, then stop. */
		"garbled walk: cut under [unknown], every record replayed",
		KCC_SAMPLE_TRUNCATED, { 0x8010, 0x6107, 0xdead0, 0x1234 },
		{ { 0x6102, 0x8000, C }, { 0x1100, 0x6000, C },
		  { 0x7100, 0x1000, C } },
		"top 0;1000 1 0 0\ntop 0;1000;6000 1 0 0\n"
		"top 0;1000;6000;8000 1 7 1\n",
		{ .walk_cut = 1 },
	}, {	/* main -> f tail-calls h (a jump, not recorded). */
		"tail call: fits, charged to the routine called",
		0, { 0x4010, 0x1105 }, { { 0x1100, 0x2000, C } },
		"top 1105;2000 1 7 1\n", { 0 },
	}, {	/*
		 * main -> f; a signal runs handler 0x9000 on f, which calls
		 * h: the restorer stands where f's return address would be,
		 * and no record enters the handler.
		 */
		"signal handler: entered without a call, placed on the interrupted routine",
		0, { 0x4010, 0x9107, 0xa005, 0x1105 },
		{ { 0x9102, 0x4000, C }, { 0x1100, 0x2000, C } },
		"top 1105;2000 1 0 0\ntop 1105;2000;9107;4000 1 7 1\n",
		{ .unrecorded = 1 },
	}, {	/* f calls g; a handler runs on g, returns; g returns. */
		"a handler's return without its entry: re-entered, the rest fits",
		0, { 0x2010, 0x1105 },
		{ { 0x3ff0, 0x2307, R }, { 0x9ff0, 0xa000, R },
		  { 0x2302, 0x3000, C }, { 0x1100, 0x2000, C } },
		"top 1105;2000 1 7 1\ntop 1105;2000;3000 1 0 0\n",
		{ .unmatched_return = 1 },
	}, {	/* Skid: g returned after its registers were read. */
		"skid, LBR ahead: the sampled frame's return is kept, the sample goes to its caller",
		0, { 0x3010, 0x2207, 0x1105 },
		{ { 0x3ff0, 0x2207, R }, { 0x2202, 0x3000, C },
		  { 0x1100, 0x2000, C } },
		"top 1105;2000 1 7 1\ntop 1105;2000;3000 1 0 0\n",
		{ .skid_repaired = 1 },
	}, {	/*
		 * Not skid: f recursing from one call site, the inner f
		 * returned to the sampled f at the address the sampled f
		 * returns to.  Read as skid, the older calls would misfit.
		 */
		"recursion through one call site is not taken for skid",
		0, { 0x2010, 0x2105, 0x1105 },
		{ { 0x2ff0, 0x2105, R }, { 0x2100, 0x2000, C },
		  { 0x2100, 0x2000, C }, { 0x1100, 0x2000, C } },
		"top 1105;2000 1 0 0\ntop 1105;2000;2000 1 7 1\n"
		"top 1105;2000;2000;2000 1 0 0\n",
		{ 0 },
	}, {	/* Skid: f called g after the LBR froze. */
		"skid, LBR behind: the unrecorded frame is re-entered uncounted",
		0, { 0x3010, 0x2207, 0x1105 }, { { 0x1100, 0x2000, C } },
		"top 1105;2000 1 0 0\ntop 1105;2000;3010 0 7 1\n",
		{ .unrecorded = 1 },
	}, {	/*
		 * A retpoline: call thunk, call 1f inside it, ret to the
		 * target g: the return pairs with the inner call without
		 * fitting it, and the sample lands in the thunk.
		 */
		"retpoline: an unmatched return pairs with its call, nothing lost",
		0, { 0x3010, 0x2207, 0x1105 },
		{ { 0xb020, 0x3000, R }, { 0xb000, 0xb010, C },
		  { 0x2202, 0xb000, C }, { 0x1100, 0x2000, C } },
		"top 1105;2000 1 0 0\ntop 1105;2000;b000 1 7 1\n"
		"top 1105;2000;b000;b010 1 0 0\n",
		{ .unmatched_return = 1 },
	},
};

static void test_shapes(void)
{
	u32 i, nst, nbr;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *sh = &shapes[i];
		struct stitcher sr;
		bool ok;

		for (nst = 0; nst < 4 && sh->st[nst]; nst++)
			;
		for (nbr = 0; nbr < 4 && sh->br[nbr].from; nbr++)
			;
		ok = one(&sr, mk(sh->flags, 7, nst, sh->st, nbr, sh->br),
			 sh->dump) &&
		     counts_are(&sr.st.cnt, &sh->want) &&
		     sr.st.branches == nbr;
		stitcher__exit(&sr);
		ksft_test_result(ok, "%s\n", sh->what);
	}
}

/*
 * A burst that fits its stack, in a scratch of 11 frames: 10 returns put
 * back 10 frames above main's, so the frames and the 11 events of the
 * replay do not both fit in it.  The forest must be the one of a large
 * scratch.
 */
static void test_fit_scratch(void)
{
	static const u64 stk[] = { 0x1200 };
	struct kcc_stitch_frame frames[11];
	struct br3 rec[11] = { { 0x2ff0, 0x1105, R } };
	struct kcc_frame stack[16];
	struct stitcher sr;
	struct kcc_stitch st;
	char *got = NULL;
	struct pool p;
	bool ok;
	int i;

	/* Oldest first: f calls itself, then 10 returns, the last to main. */
	for (i = 1; i < 10; i++)
		rec[i] = (struct br3){ 0x2ff0, 0x2105, R };
	rec[10] = (struct br3){ 0x2100, 0x2000, C };
	if (ksf__pool_init(&p, 64, KCC_NR_CTRS - 1) ||
	    kcc_stitch_init(&st, &p.f, KCC_K_INF, stack, 16, frames, 11, NULL))
		ksft_exit_fail_msg("out of memory\n");
	kcc_stitch_sample(&st, MK(0, 1, stk, rec));
	got = ksf__dump_string(&p.f, NULL, 3);
	ok = got && !st.stitch_errors &&
	     one(&sr, MK(0, 1, stk, rec), got);
	ksft_test_result(ok, "a burst that fits a small scratch: the forest of a large one\n");
	stitcher__exit(&sr);
	free(got);
	pool__exit(&p);
}

static void test_frames_cap(void)
{
	static const u64 stk[] = { 0x1200 };
	static const u64 stk6[] = {
		0x1200, 0x1105, 0x1105, 0x1105, 0x1105, 0x1105,
	};
	static const struct br3 rets[] = {
		{ 0x2ff0, 0x1105, R }, { 0x3ff0, 0x2207, R },
		{ 0x3ff0, 0x3107, R },
	};
	struct kcc_stitch_frame frames[8];
	struct kcc_frame stack[8];
	struct kcc_stitch st;
	struct pool p;
	bool ok;
	int ret;

	if (ksf__pool_init(&p, 64, KCC_NR_CTRS - 1))
		ksft_exit_fail_msg("out of memory\n");
	ret = kcc_stitch_init(&st, &p.f, KCC_K_INF, stack, 8, frames, 3, NULL);
	/* 1 frame + 3 returns need 4 scratch frames: refused, not overrun. */
	kcc_stitch_sample(&st, MK(0, 1, stk, rets));
	ok = !ret && st.stitch_errors == 1 && st.samples == 1;
	pool__exit(&p);
	/* The same with 6 frames walked, 8 scratch frames, 3 returns. */
	if (ksf__pool_init(&p, 64, KCC_NR_CTRS - 1))
		ksft_exit_fail_msg("out of memory\n");
	ret = kcc_stitch_init(&st, &p.f, KCC_K_INF, stack, 8, frames, 8, NULL);
	kcc_stitch_sample(&st, MK(0, 1, stk6, rets));
	ok &= !ret && st.stitch_errors == 1;
	ksft_test_result(ok, "a burst needing more than frames_cap frames is a stitch error\n");
	pool__exit(&p);

	test_fit_scratch();

	/* The forest must have the events and samples metrics. */
	if (ksf__pool_init(&p, 64, 0))
		ksft_exit_fail_msg("out of memory\n");
	ret = kcc_stitch_init(&st, &p.f, KCC_K_INF, stack, 8, frames, 3, NULL);
	ksft_test_result(ret == -EINVAL, "kcc_stitch_init refuses a forest without 2 metrics\n");
	pool__exit(&p);
}

static void test_join(void)
{
	static const u64 sa[] = { 0x2010, 0x1105 };
	static const struct br3 ba[] = { { 0x1100, 0x2000, C } };
	static const u64 sb_[] = { 0x3010, 0x2207, 0x1105 };
	static const struct br3 bb[] = {
		{ 0x2202, 0x3000, C }, { 0x1100, 0x2000, C },
	};
	static const u64 sm[] = { 0x1200 };
	static const struct br3 loop[] = {
		{ 0x2ff0, 0x1105, R }, { 0x1100, 0x2000, C },
		{ 0x2ff0, 0x1105, R }, { 0x1100, 0x2000, C },
	};
	static const struct br3 bad[] = { { 0x1000, 0x2000, C } };
	static const char joined[] =
		"top 1105;2000 1 7 1\ntop 1105;2000;3000 1 7 1\n";
	static const char twice[] =
		"top 1105;2000 2 7 1\ntop 1105;2000;3000 1 7 1\n";
	struct stitcher sr;
	bool ok;

	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 7, sa, ba));
	apply(&sr, MK(0, 7, sb_, bb));
	ok = dump_is(&sr, joined) && sr.st.bursts_joined == 1 &&
	     sr.st.branches == 3 && !sr.st.join_ambiguous;
	ksft_test_result(ok, "overlapping bursts: the shared call is counted once\n");
	stitcher__exit(&sr);

	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 7, sa, ba));
	kcc_stitch_break(&sr.st);
	apply(&sr, MK(0, 7, sb_, bb));
	ok = dump_is(&sr, twice) && !sr.st.bursts_joined;
	ksft_test_result(ok, "kcc_stitch_break forgets: the shared call counts twice\n");
	stitcher__exit(&sr);

	/* A repair in between: the next burst does not join across it. */
	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 7, sa, ba));
	apply(&sr, MK(0, 0, sa, bad));
	apply(&sr, MK(0, 7, sb_, bb));
	ok = sr.st.cnt.leaf_repaired == 1 && !sr.st.bursts_joined &&
	     dump_is(&sr, "top 1105;1000;2000 1 0 1\n"
			  "top 1105;2000 2 7 1\ntop 1105;2000;3000 1 7 1\n");
	ksft_test_result(ok, "no join with a repaired burst\n");
	stitcher__exit(&sr);

	/*
	 * A loop calling f twice per window: the new burst's two oldest
	 * records and its four records both match the previous burst, with
	 * the right depth.  Longest: all four are the previous burst's, no
	 * call is new.  Unique: ambiguous, everything counted.
	 */
	start(&sr, KCC_K_INF);
	sr.st.join_policy = KCC_JOIN_LONGEST;
	apply(&sr, MK(0, 7, sm, loop));
	apply(&sr, MK(0, 7, sm, loop));
	ok = sr.st.join_ambiguous == 1 && sr.st.bursts_joined == 1 &&
	     dump_is(&sr, "top 1200 0 14 2\ntop 1200;2000 2 0 0\n");
	ksft_test_result(ok, "two possible overlaps, longest policy: the longer is used\n");
	stitcher__exit(&sr);

	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 7, sm, loop));
	apply(&sr, MK(0, 7, sm, loop));
	ok = sr.st.join_ambiguous == 1 && !sr.st.bursts_joined &&
	     dump_is(&sr, "top 1200 0 14 2\ntop 1200;2000 4 0 0\n");
	ksft_test_result(ok, "two possible overlaps, unique policy: all counted\n");
	stitcher__exit(&sr);

	/*
	 * A short coincidence.  f calls g twice: [call g, ret g, call g].
	 * Then g returns and f calls h: the new burst's oldest record
	 * (call g) equals the previous newest at the same depth (L = 1), and
	 * the true overlap (L = 3) qualifies too.
	 */
	{
		static const u64 s1[] = { 0x3010, 0x2207, 0x1105 };
		static const struct br3 b1[] = {
			{ 0x2202, 0x3000, C }, { 0x3ff0, 0x2207, R },
			{ 0x2202, 0x3000, C },
		};
		static const u64 s2[] = { 0x4010, 0x2307, 0x1105 };
		static const struct br3 b2[] = {
			{ 0x2302, 0x4000, C }, { 0x3ff0, 0x2207, R },
			{ 0x2202, 0x3000, C }, { 0x3ff0, 0x2207, R },
			{ 0x2202, 0x3000, C },
		};
		static const char longest[] =
			"top 1105;2207;3000 2 1 1\ntop 1105;2307;4000 1 1 1\n";
		static const char unique[] =
			"top 1105;2207;3000 2 1 1\ntop 1105;2307;3000 2 0 0\n"
			"top 1105;2307;4000 1 1 1\n";

		start(&sr, KCC_K_INF);
		sr.st.join_policy = KCC_JOIN_LONGEST;
		apply(&sr, MK(0, 1, s1, b1));
		apply(&sr, MK(0, 1, s2, b2));
		ok = sr.st.bursts_joined == 1 && sr.st.join_ambiguous == 1 &&
		     sr.st.ksf.calls == 3 && dump_is(&sr, longest);
		ksft_test_result(ok, "longest overlap wins over a shorter coincidence\n");
		stitcher__exit(&sr);

		start(&sr, KCC_K_INF);
		apply(&sr, MK(0, 1, s1, b1));
		apply(&sr, MK(0, 1, s2, b2));
		ok = !sr.st.bursts_joined && sr.st.join_ambiguous == 1 &&
		     sr.st.ksf.calls == 5 && dump_is(&sr, unique);
		ksft_test_result(ok, "unique policy counts the coincidence twice\n");
		stitcher__exit(&sr);

		/* kcc.ko's default: no overlap is even looked for. */
		start(&sr, KCC_K_INF);
		sr.st.join_policy = KCC_JOIN_NONE;
		apply(&sr, MK(0, 1, s1, b1));
		apply(&sr, MK(0, 1, s2, b2));
		ok = !sr.st.bursts_joined && !sr.st.join_ambiguous &&
		     !sr.st.nr_last && sr.st.ksf.calls == 5 &&
		     dump_is(&sr, unique);
		ksft_test_result(ok, "no-join policy counts every burst whole, remembers none\n");
		stitcher__exit(&sr);
	}

	/*
	 * Depth tells overlaps apart: records equal to the previous burst
	 * but leaving the stack one frame deeper than the previous sample
	 * are not the previous burst.
	 */
	start(&sr, KCC_K_INF);
	apply(&sr, MK(0, 7, sa, ba));		/* depth 2 after */
	{
		static const u64 deep[] = { 0x2010, 0x1105, 0x1105 };

		apply(&sr, MK(0, 7, deep, ba));	/* main;main;f, depth 3 */
	}
	ok = !sr.st.bursts_joined && !sr.st.join_ambiguous &&
	     dump_is(&sr, "top 1105;1105;2000 1 7 1\ntop 1105;2000 1 7 1\n");
	ksft_test_result(ok, "equal records at another depth are not an overlap\n");
	stitcher__exit(&sr);
}

/* ---- kcc_sample_check -------------------------------------------------- */

static void test_check(void)
{
	static const u64 st[] = { 0x2010, 0x1105 };
	static const struct br3 br[] = { { 0x1100, 0x2000, C } };
	struct sample_buf buf;
	struct kcc_sample *s = &buf.hdr;
	struct kcc_branch *b;
	u32 size, why;
	bool ok = true;
	size_t len;

	memcpy(&buf, MK(0, 1, st, br), sizeof(buf));
	size = s->size;
	b = (struct kcc_branch *)((u64 *)(s + 1) + s->nr_stack);
	ok &= kcc_sample_check(s, size) == (int)size;
	ok &= kcc_sample_check(s, size + 64) == (int)size;
	s->flags = KCC_SAMPLE_TRUNCATED;
	ok &= kcc_sample_check(s, size) == (int)size;
	ksft_test_result(ok, "kcc_sample_check accepts good samples, returns the size\n");

#define BAD(what, code, mutate) do {					\
	memcpy(&buf, MK(0, 1, st, br), sizeof(buf));			\
	mutate;								\
	why = kcc_sample_why(s, len, NULL);				\
	ksft_test_result(kcc_sample_check(s, len) == -EINVAL &&	\
			 why == (code),					\
			 "kcc_sample_check refuses %s (why %u)\n", what, why); \
} while (0)
	len = size;
	{
		BAD("len below the header", KCC_SAMPLE_E_SHORT, len = 16);
		len = size;
		BAD("size below the header", KCC_SAMPLE_E_SHORT, s->size = 16);
		BAD("size beyond len", KCC_SAMPLE_E_SHORT, len = size - 8);
		len = size;
		BAD("size not a multiple of 8", KCC_SAMPLE_E_ALIGN,
		    s->size = size - 4);
		BAD("an unknown flag", KCC_SAMPLE_E_FLAGS, s->flags = 8);
		BAD("calls saturated without calls", KCC_SAMPLE_E_FLAGS,
		    s->flags = KCC_SAMPLE_CALLS_SAT);
		BAD("a high unknown flag", KCC_SAMPLE_E_FLAGS,
		    s->flags = 0x80000001u);
		BAD("calls without KCC_SAMPLE_CALLS", KCC_SAMPLE_E_RESERVED,
		    s->calls = 1);
		BAD("nr_stack above the limit", KCC_SAMPLE_E_STACK,
		    s->nr_stack = KCC_INJECT_MAX_STACK + 1);
		BAD("nr_branches above the limit", KCC_SAMPLE_E_BRANCHES,
		    s->nr_branches = KCC_INJECT_MAX_BRANCHES + 1);
		BAD("size larger than the counts", KCC_SAMPLE_E_SIZE,
		    s->nr_branches = 0);
		BAD("size smaller than the counts", KCC_SAMPLE_E_SIZE,
		    s->nr_stack = 3);
		BAD("branch kind 3", KCC_SAMPLE_E_KIND, b->kind = 3);
		BAD("branch kind ~0", KCC_SAMPLE_E_KIND, b->kind = ~0u);
		BAD("a branch reserved field", KCC_SAMPLE_E_BR_RESERVED,
		    b->__reserved = 1);
		BAD("a misaligned sample", KCC_SAMPLE_E_ALIGN,
		    s = (struct kcc_sample *)((char *)&buf + 4));
		s = &buf.hdr;
	}
#undef BAD
}

/* ---- the property: stitched and joined = exact ------------------------ */

/*
 * Why joining is exact: when the burst covers the window since the
 * previous sample (window < LBR depth), the true overlap L always
 * qualifies.  A unique qualifying L is therefore the true one, and each
 * call is counted by the first burst that holds it only.  With several:
 *
 * - KCC_JOIN_LONGEST uses the longest.  A longer false L needs the
 *   records to repeat over the whole overlap (a tight loop); then new
 *   calls are taken for old ones: counts can only fall short, never
 *   exceed, and only on traces with ambiguous joins.
 * - KCC_JOIN_UNIQUE counts the whole burst: the excess is exactly the
 *   calls in the overlaps of the ambiguous bursts.
 *
 * All of it is checked below on seeded random traces.
 */
struct prop {
	struct stitcher sr;
	struct lbrsim *sim;
	u64 burst_calls;	/* call records over all bursts */
	u64 overlap_calls;	/* call records in ambiguous bursts' overlaps */
};

static int prop_emit(void *arg, const struct kcc_sample *s)
{
	const struct kcc_branch *b = kcc_sample_branches(s);
	struct prop *p = arg;
	u64 amb = p->sr.st.join_ambiguous;
	u32 i;
	int ret;

	if (kcc_sample_check(s, s->size) != (int)s->size)
		return -EINVAL;
	for (i = 0; i < s->nr_branches; i++)
		p->burst_calls += b[i].kind == KCC_BR_CALL;
	ret = stitcher__sample(&p->sr, s);
	if (p->sr.st.join_ambiguous != amb)
		for (i = p->sim->sample_window; i < s->nr_branches; i++)
			p->overlap_calls += b[i].kind == KCC_BR_CALL;
	return ret;
}

/* Routine-level label of a simulated address: the ref.h label. */
static u64 prop_relabel(void *arg, u64 label)
{
	u32 r = lbrsim__routine_of(arg, label);

	return r == LBRSIM_NONE ? ~0ull : ref_label(r);
}

/*
 * Every node of @a with calls has its root path in @b; with @ge, b's
 * calls there are at least a's.
 */
static bool paths_in(const struct kcc_forest *a, const struct kcc_forest *b,
		     bool ge)
{
	u32 *map = ref_alloc(((size_t)a->count + 1) * sizeof(*map)), i;
	bool ok = true;

	for (i = 0; i < a->count && ok; i++) {
		const struct kcc_node *n = kcc_forest_node(a, i);
		u32 bp = kcc_is_root_parent(n->parent) ? n->parent :
			 map[n->parent];

		map[i] = bp == KCC_NIL ? KCC_NIL :
			 kcc_forest_find(b, bp, n->label);
		if (!n->ctr[KCC_CTR_CALLS])
			continue;
		if (map[i] == KCC_NIL)
			ok = false;
		else if (ge && kcc_forest_ctr(b, map[i])[KCC_CTR_CALLS] <
			 n->ctr[KCC_CTR_CALLS])
			ok = false;
	}
	free(map);
	return ok;
}

struct prop_run {
	u32 k;
	u32 period;
	bool no_join;
	bool longest;
	/* results */
	bool equal;		/* relabelled k-SF dumps equal the exact one */
	bool dominates;		/* same paths, counts >= exact */
	bool dominated;		/* no extra path, counts <= exact */
	u64 calls;		/* calls the stitcher counted */
	u64 burst_calls;
	u64 overlap_calls;
	u64 ambiguous;
	u64 errors;
	u64 joined;
	u64 uncovered;
};

static void prop_run(struct prop_run *pr, const struct ref_trace *t, u64 seed)
{
	struct lbrsim_opts so = {
		.period = pr->period, .lbr_depth = KCC_INJECT_MAX_BRANCHES,
		.stack_depth = KCC_INJECT_MAX_STACK, .seed = seed,
	};
	struct stitcher_opts o = {
		.k = pr->k, .no_join = pr->no_join, .longest_join = pr->longest,
	};
	struct prop p = { .burst_calls = 0 };
	struct ref_ksf exact;
	struct lbrsim sim;
	struct pool rel;
	char *a, *b;
	int ret;

	if (stitcher__init(&p.sr, &o) ||
	    lbrsim__init(&sim, t->nr, &so, prop_emit, &p))
		ksft_exit_fail_msg("out of memory\n");
	p.sim = &sim;
	ret = lbrsim__run(&sim, t->ev, t->n);
	if (!ret)
		ret = lbrsim__finish(&sim);
	if (ret)
		ksft_exit_fail_msg("seed %" PRIu64 ": simulation failed: %d\n",
				   seed, ret);
	if (ksf__relabel(&rel, &p.sr.pool.f, prop_relabel, &sim))
		ksft_exit_fail_msg("relabel failed\n");
	ref_ksf_build(&exact, t, pr->k, 2 * (u32)t->calls + 16,
		      t->max_depth + 1);
	a = ksf__dump_string(&rel.f, NULL, 1);
	b = ksf__dump_string(&exact.f, NULL, 1);
	if (!a || !b)
		ksft_exit_fail_msg("out of memory\n");
	pr->equal = !strcmp(a, b);
	pr->dominates = paths_in(&exact.f, &rel.f, true) &&
			paths_in(&rel.f, &exact.f, false);
	pr->dominated = paths_in(&rel.f, &exact.f, true);
	pr->calls = p.sr.st.ksf.calls;
	pr->burst_calls = p.burst_calls;
	pr->overlap_calls = p.overlap_calls;
	pr->ambiguous = p.sr.st.join_ambiguous;
	pr->errors = p.sr.st.stitch_errors;
	pr->joined = p.sr.st.bursts_joined;
	pr->uncovered = sim.uncovered;
	free(a);
	free(b);
	ref_ksf_free(&exact);
	pool__exit(&rel);
	lbrsim__exit(&sim);
	stitcher__exit(&p.sr);
}

/* Unique policy: counted = exact + the overlaps of ambiguous bursts. */
static bool prop_accounts(const struct prop_run *pr, const struct ref_trace *t)
{
	return !pr->errors && pr->dominates &&
	       pr->calls == t->calls + pr->overlap_calls &&
	       (pr->ambiguous || pr->equal);
}

/* Longest policy: exact unless ambiguous, and then never above exact. */
static bool prop_longest(const struct prop_run *pr, const struct ref_trace *t)
{
	return !pr->errors && pr->dominated && pr->calls <= t->calls &&
	       (pr->ambiguous || (pr->equal && pr->calls == t->calls));
}

#define PROP_TRACES	240
#define PROP_EXACT	200	/* exact traces wanted per setting */
#define PROP_OTHER	100	/* traces also run unique and unjoined */

static void test_property(void)
{
	static const u32 ks[] = { 1, 2, 3, 4, 7, KCC_K_INF };
	u32 ok1 = 0, eq1 = 0, ok2 = 0, eq2 = 0, cov2 = 0;
	u32 uniq = 0, unjoined = 0, i;
	u64 rng = 0x5717c4ull, amb = 0, joins = 0, calls = 0;

	for (i = 0; i < PROP_TRACES; i++) {
		struct prop_run pr = { 0 };
		struct ref_trace t;
		struct ref_gen g;
		u64 seed = ref_rand(&rng);

		ref_gen_random(&g, &rng);
		ref_gen_trace(&t, &g, &rng);
		pr.k = ks[ref_below(&rng, sizeof(ks) / sizeof(ks[0]))];

		/* Period 1 call: every window is a few returns and a call. */
		pr.period = 1;
		pr.longest = true;
		prop_run(&pr, &t, seed);
		ok1 += prop_longest(&pr, &t);
		eq1 += pr.equal && pr.calls == t.calls;
		if (!prop_longest(&pr, &t) || !pr.equal)
			ksft_print_msg("trace %u (k=%u, %" PRIu64 " calls): counted %" PRIu64 ", ambiguous %" PRIu64 ", equal %d, dominated %d\n",
				       i, pr.k, (u64)t.calls, pr.calls,
				       pr.ambiguous, pr.equal, pr.dominated);
		amb += pr.ambiguous;
		joins += pr.joined;
		calls += t.calls;

		if (i < PROP_OTHER) {
			struct prop_run q = pr;

			q.longest = false;
			prop_run(&q, &t, seed);
			uniq += prop_accounts(&q, &t);

			/* Without joining: once per burst holding a call. */
			q.no_join = true;
			prop_run(&q, &t, seed);
			unjoined += q.calls == q.burst_calls && q.dominates &&
				    (q.calls > t.calls || t.calls <= 1);
		}

		/*
		 * Periods of 2..8 calls over a program at most 40 deep: a
		 * window holds at most 8 calls and 48 returns, and the
		 * 64-record LBR covers it.
		 */
		ref_trace_free(&t);
		g.maxd = g.maxd > 40 ? 40 : g.maxd;
		ref_gen_trace(&t, &g, &rng);
		pr.period = 2 + ref_below(&rng, 7);
		prop_run(&pr, &t, seed);
		cov2 += !pr.uncovered;
		ok2 += prop_longest(&pr, &t);
		eq2 += pr.equal && pr.calls == t.calls;
		if (!prop_longest(&pr, &t) || !pr.equal)
			ksft_print_msg("trace %u (k=%u, period %u): counted %" PRIu64 " of %" PRIu64 ", ambiguous %" PRIu64 ", equal %d, dominated %d, uncovered %" PRIu64 "\n",
				       i, pr.k, pr.period, pr.calls,
				       (u64)t.calls, pr.ambiguous, pr.equal,
				       pr.dominated, pr.uncovered);
		ref_trace_free(&t);
	}
	ksft_print_msg("period 1: %" PRIu64 " calls, %" PRIu64 " joins, %" PRIu64 " with several overlaps\n",
		       calls, joins, amb);
	ksft_test_result(ok1 == PROP_TRACES,
			 "longest, period 1: exact unless an overlap was ambiguous, never above (%u/%u traces)\n",
			 ok1, PROP_TRACES);
	ksft_test_result(eq1 >= PROP_EXACT,
			 "longest, period 1: stitched+joined+relabelled k-SF = exact k-SF on %u of %u traces\n",
			 eq1, PROP_TRACES);
	ksft_test_result(cov2 == PROP_TRACES && ok2 == PROP_TRACES,
			 "longest, periods 2..8, covering LBR: exact unless ambiguous, never above (%u/%u traces)\n",
			 ok2, PROP_TRACES);
	ksft_test_result(eq2 >= PROP_EXACT,
			 "longest, periods 2..8: k-SF = exact k-SF on %u of %u traces\n",
			 eq2, PROP_TRACES);
	ksft_test_result(uniq == PROP_OTHER,
			 "unique (default): counted = exact + calls in ambiguous overlaps (%u/%u traces)\n",
			 uniq, PROP_OTHER);
	ksft_test_result(unjoined == PROP_OTHER,
			 "no joining: each call counted once per burst holding it (%u/%u traces)\n",
			 unjoined, PROP_OTHER);
}

/* A random trace from @rng through the LBR simulator into @emit. */
static void sim_random(const struct lbrsim_opts *so, u64 *rng,
		       lbrsim_emit_fn emit, void *arg)
{
	struct ref_trace t;
	struct ref_gen g;
	struct lbrsim sim;
	int ret;

	ref_gen_random(&g, rng);
	ref_gen_trace(&t, &g, rng);
	if (lbrsim__init(&sim, t.nr, so, emit, arg))
		ksft_exit_fail_msg("out of memory\n");
	ret = lbrsim__run(&sim, t.ev, t.n);
	if (!ret)
		ret = lbrsim__finish(&sim);
	if (ret)
		ksft_exit_fail_msg("simulation failed: %d\n", ret);
	lbrsim__exit(&sim);
	ref_trace_free(&t);
}

/* ---- the undo of a burst that fits, against the general undo ---------- */

/*
 * kcc_stitch_undo_fit() leaves the walk in the sample and writes only
 * the frames put back, their labels and return addresses apart, and the
 * replay's events.  The second stitcher of each pair has its frames_cap
 * lowered before each sample, one below what the fit needs, so that the
 * general undo copies the walk and stitches every burst: the two must
 * leave the same forest node for node, the same shadow stack and the
 * same statistics, on bursts with and without effects.
 */
struct fit_emit {
	struct stitcher sr[2];
	u64 general;		/* bursts that fit, undone in general by the second */
	int err;
};

static int fit_emit(void *arg, const struct kcc_sample *s)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	struct fit_emit *fe = arg;
	struct kcc_stitch *st = &fe->sr[1].st;
	u32 cap = s->nr_stack + s->nr_branches, i, rets = 0;

	if (kcc_sample_check(s, s->size) != (int)s->size)
		return -EINVAL;
	for (i = 0; i < s->nr_branches; i++)
		rets += br[i].kind == KCC_BR_RET;
	/* The general undo needs nr_stack plus a frame a return. */
	st->frames_cap = rets < s->nr_branches ? cap - 1 : cap;
	if (!fe->err)
		fe->err = stitcher__sample(&fe->sr[0], s);
	if (!fe->err)
		fe->err = stitcher__sample(&fe->sr[1], s);
	fe->general += s->nr_branches && fe->sr[0].st.fit && !st->fit;
	st->frames_cap = STITCHER_DEPTH;
	return fe->err;
}

static bool fit_equal(const struct fit_emit *fe)
{
	const struct kcc_stitch *a = &fe->sr[0].st, *b = &fe->sr[1].st;
	const struct kcc_forest *fa = a->ksf.f, *fb = b->ksf.f;
	const struct kcc_ksf *ka = &a->ksf, *kb = &b->ksf;

	return fa->count == fb->count && fa->drops == fb->drops &&
	       !memcmp(fa->nodes, fb->nodes, (size_t)fa->count * fa->stride) &&
	       !memcmp(ka->stack, kb->stack, ka->stack_cap * sizeof(*ka->stack)) &&
	       ka->depth == kb->depth && ka->slab_pos == kb->slab_pos &&
	       ka->max_depth == kb->max_depth && ka->calls == kb->calls &&
	       ka->returns == kb->returns && ka->lost_calls == kb->lost_calls &&
	       ka->bad_returns == kb->bad_returns &&
	       ka->lost_charges == kb->lost_charges &&
	       a->bursts_replayed == b->bursts_replayed &&
	       a->bursts_joined == b->bursts_joined &&
	       a->join_ambiguous == b->join_ambiguous &&
	       a->branches == b->branches && !a->stitch_errors &&
	       !b->stitch_errors && !memcmp(&a->cnt, &b->cnt, sizeof(a->cnt));
}

static void test_fit_general(void)
{
	u64 rng = 0xf17f17ull, general = 0;
	u32 ok = 0, i, n = 120;

	for (i = 0; i < n; i++) {
		struct lbrsim_opts so = {
			.period = 1 + ref_below(&rng, 40),
			.lbr_depth = 1 + ref_below(&rng, KCC_INJECT_MAX_BRANCHES),
			.stack_depth = ref_below(&rng, 3) ? KCC_INJECT_MAX_STACK :
				       1 + ref_below(&rng, 24),
			.seed = ref_rand(&rng),
			.effects = ref_below(&rng, 2) ? 0 : (u32)ref_rand(&rng) &
				   LBRSIM_FX_ALL,
		};
		struct stitcher_opts o = {
			.k = 1 + ref_below(&rng, 4),
			.longest_join = ref_below(&rng, 2),
		};
		struct fit_emit fe = { .err = 0 };

		if (stitcher__init(&fe.sr[0], &o) ||
		    stitcher__init(&fe.sr[1], &o))
			ksft_exit_fail_msg("out of memory\n");
		sim_random(&so, &rng, fit_emit, &fe);
		if (fit_equal(&fe))
			ok++;
		else
			ksft_print_msg("trace %u: the general undo left another forest, stack or statistics (k %u, period %u, lbr %u, walk %u, effects 0x%x)\n",
				       i, o.k, so.period, so.lbr_depth,
				       so.stack_depth, so.effects);
		general += fe.general;
		stitcher__exit(&fe.sr[0]);
		stitcher__exit(&fe.sr[1]);
	}
	ksft_print_msg("fit against general undo: %" PRIu64 " bursts that fit undone in general\n",
		       general);
	ksft_test_result(ok == n && general,
			 "a burst that fits leaves what the general undo leaves (%u/%u traces)\n",
			 ok, n);
}

/* ---- the overlap search against every L -------------------------------- */

/*
 * kcc_stitch_sample() looks only at the L whose newest record is the
 * previous burst's newest, longest first, and stops at the second that
 * qualifies.  Here every L is compared in full, as the stitcher first
 * did, and the overlap it finds must be the one the stitcher used, on
 * bursts that overlap (periods of 1 to 8 calls) and bursts that repeat
 * (tight loops), with whole and truncated walks.
 */
struct ovl_emit {
	struct stitcher sr;
	struct ksft_prop *prop;
	u64 joins;		/* bursts the search joined */
	u64 several;		/* bursts where several L qualified */
};

/* The net depth change of records br[from .. to), newest first. */
static int ovl_net(const struct kcc_branch *br, u32 from, u32 to)
{
	int d = 0;

	for (; from < to; from++)
		d += br[from].kind == KCC_BR_CALL ? 1 : -1;
	return d;
}

static int ovl_emit(void *arg, const struct kcc_sample *s)
{
	static struct kcc_branch last[KCC_STITCH_JOIN_MAX];
	const struct kcc_branch *br = kcc_sample_branches(s);
	struct ovl_emit *oe = arg;
	struct kcc_stitch *st = &oe->sr.st;
	u32 r = s->nr_branches, nr_last = st->nr_last, want = st->last_depth;
	bool known = !((s->flags | st->last_flags) & KCC_SAMPLE_TRUNCATED);
	u64 joined = st->bursts_joined, amb = st->join_ambiguous;
	u64 replayed = st->bursts_replayed, calls = st->ksf.calls;
	u32 max, len, i, found = 0, matches = 0, used, want_calls = 0;
	u32 start;
	int ret;

	if (kcc_sample_check(s, s->size) != (int)s->size)
		return -EINVAL;
	memcpy(last, st->last, sizeof(last));
	ret = stitcher__sample(&oe->sr, s);
	if (ret || st->bursts_replayed == replayed || !nr_last ||
	    st->altered)
		return ret;
	/* Anchored depth before the oldest record: the end's, less the burst. */
	start = st->last_depth - (u32)ovl_net(br, 0, r);
	max = r < nr_last ? r : nr_last;
	for (len = 1; len <= max; len++) {
		if (known && start + (u32)ovl_net(br, r - len, r) != want)
			continue;
		for (i = 0; i < len; i++)
			if (br[r - len + i].from != last[i].from ||
			    br[r - len + i].to != last[i].to ||
			    br[r - len + i].kind != last[i].kind)
				break;
		if (i == len) {
			found = len;
			matches++;
		}
	}
	used = matches > 1 && st->join_policy != KCC_JOIN_LONGEST ? 0 : found;
	for (i = 0; i < r - used; i++)
		want_calls += br[i].kind == KCC_BR_CALL;
	oe->joins += used > 0;
	oe->several += matches > 1;
	ksft_prop_check(oe->prop, st->bursts_joined - joined == (used > 0) &&
			st->join_ambiguous - amb == (matches > 1) &&
			st->ksf.calls - calls == want_calls,
			"policy %u, %u records, %u qualify, longest %u: joined %" PRIu64 ", ambiguous %" PRIu64 ", %" PRIu64 " calls counted, not %u",
			st->join_policy, r, matches, found,
			st->bursts_joined - joined, st->join_ambiguous - amb,
			st->ksf.calls - calls, want_calls);
	return 0;
}

static void test_overlap_search(void)
{
	static const u32 lbr[] = { 8, 16, 32, KCC_INJECT_MAX_BRANCHES };
	struct ksft_prop prop = { 0 };
	u64 rng = 0x0e71a9ull, joins = 0, several = 0;
	u32 i;

	for (i = 0; i < 120; i++) {
		struct lbrsim_opts so = {
			.period = 1 + ref_below(&rng, 8),
			.lbr_depth = lbr[ref_below(&rng, 4)],
			/* A third of the walks truncated: depth unknown. */
			.stack_depth = ref_below(&rng, 3) ? KCC_INJECT_MAX_STACK :
				       1 + ref_below(&rng, 6),
			.seed = ref_rand(&rng),
		};
		struct stitcher_opts o = {
			.k = 1 + ref_below(&rng, 4),
			.longest_join = i & 1,
		};
		struct ovl_emit oe = { .prop = &prop };

		if (stitcher__init(&oe.sr, &o))
			ksft_exit_fail_msg("out of memory\n");
		sim_random(&so, &rng, ovl_emit, &oe);
		joins += oe.joins;
		several += oe.several;
		stitcher__exit(&oe.sr);
	}
	ksft_print_msg("overlap search: %" PRIu64 " joins, %" PRIu64 " bursts with several overlaps\n",
		       joins, several);
	ksft_prop_result(&prop, "overlap search: the overlap of comparing every L in full, joins and ambiguity alike");
}

/* ---- effects: bursts shaped like hardware's (lbrsim effects) --------- */

struct fx_run {
	u32 effects;		/* LBRSIM_FX_* */
	u32 period;
	u32 k;
	/* results */
	u64 samples_with_records;
	u64 replayed;
	u64 errors;
	u64 calls;		/* counted */
	u64 sound;		/* counted calls on an edge of the trace or
				 * with an unknown caller */
	u64 plt_records;	/* call records to a PLT stub */
	struct kcc_stitch_counts cnt;
	char *dump;		/* relabelled k-SF */
	struct ksft_prop *prop;	/* per-sample checks, or NULL */
	struct ksft_prop *charge;
	u64 records;		/* usable records */
	u64 records_replayed;
};

struct fx_emit {
	struct stitcher sr;
	struct fx_run *fr;
	struct ksft_prop *prop;	/* per-sample checks, or NULL */
	struct ksft_prop *charge; /* the sample charged to its routine */
	struct lbrsim *sim;
	u64 records;		/* usable records in all bursts */
	u64 replayed;		/* records replayed */
};

static int fx_emit(void *arg, const struct kcc_sample *s)
{
	const struct kcc_branch *b = kcc_sample_branches(s);
	struct fx_emit *fe = arg;
	u32 i;

	if (kcc_sample_check(s, s->size) != (int)s->size)
		return -EINVAL;
	u64 before = fe->sr.st.branches, errors = fe->sr.st.stitch_errors;
	u32 usable = 0;
	int ret;

	fe->fr->samples_with_records += s->nr_branches > 0;
	for (i = 0; i < s->nr_branches; i++) {
		fe->fr->plt_records += b[i].kind == KCC_BR_CALL &&
				       b[i].to >= LBRSIM_PLT_BASE &&
				       b[i].to < LBRSIM_GARBAGE;
		usable += b[i].kind != KCC_BR_OTHER &&
			  !((b[i].from | b[i].to) >> 63);
	}
	ret = stitcher__sample(&fe->sr, s);
	if (!fe->prop || ret)
		return ret;
	fe->records += usable;
	fe->replayed += fe->sr.st.branches - before;
	ksft_prop_check(fe->prop, fe->sr.st.stitch_errors == errors,
			"a stitch error");
	/* Every call and return is replayed, whatever did not fit. */
	ksft_prop_check(fe->prop, fe->sr.st.branches - before == usable,
			"%" PRIu64 " of %u records replayed",
			fe->sr.st.branches - before, usable);
	/*
	 * The sample is charged to the sampled routine, but with a tail
	 * call (to the routine called) or skid (LBR and registers apart).
	 */
	if (s->nr_stack &&
	    !(fe->fr->effects & (LBRSIM_FX_TAIL | LBRSIM_FX_SKID))) {
		const struct kcc_ksf *k = &fe->sr.st.ksf;
		u32 want = lbrsim__routine_of(fe->sim, kcc_sample_stack(s)[0]);
		u32 got = LBRSIM_NONE;

		if (k->depth && k->stack[k->depth - 1].t != KCC_NIL)
			got = lbrsim__routine_of(fe->sim, kcc_forest_node(k->f,
						 k->stack[k->depth - 1].t)->label);
		ksft_prop_check(fe->charge, got == want,
				"charged to routine %u, sampled in %u (effects 0x%x)",
				got, want, fe->fr->effects);
	}
	return 0;
}

/* Routine of a relabelled label, REF_NONE for [unknown]. */
static u32 fx_id(u64 label, u32 nr)
{
	u64 id = ref_id(label);

	return id < nr ? (u32)id : REF_NONE;
}

/* Counted calls of @f (k = inf, relabelled) whose caller is known and
 * calls them in the trace (@edge[caller * nr + callee]), or unknown.
 */
static void fx_sound(struct fx_run *fr, const struct kcc_forest *f,
		     const u8 *edge, u32 nr)
{
	u32 i;

	for (i = 0; i < f->count; i++) {
		const struct kcc_node *n = kcc_forest_node(f, i);
		u64 c = n->ctr[KCC_CTR_CALLS];
		u32 p, callee;

		if (!c)
			continue;
		fr->calls += c;
		if (kcc_is_root_parent(n->parent)) {
			fr->sound += c;		/* from the loader */
			continue;
		}
		p = fx_id(kcc_forest_node(f, n->parent)->label, nr);
		callee = fx_id(n->label, nr);
		if (p == REF_NONE || (callee != REF_NONE && edge[p * nr + callee]))
			fr->sound += c;
	}
}

static void fx_run(struct fx_run *fr, const struct ref_trace *t, u64 seed)
{
	struct lbrsim_opts so = {
		.period = fr->period, .lbr_depth = 32, .stack_depth = 127,
		.seed = seed, .effects = fr->effects,
	};
	struct stitcher_opts o = { .k = fr->k, .no_join = true };
	struct lbrsim sim;
	struct fx_emit fe = {
		.fr = fr, .prop = fr->prop, .charge = fr->charge, .sim = &sim,
	};
	u32 nr = t->nr ? t->nr : 1, *stk, d = 0;
	struct pool rel;
	u8 *edge;
	size_t i;
	int ret;

	edge = ref_alloc((size_t)nr * nr);
	stk = ref_alloc(((size_t)t->max_depth + 1) * sizeof(*stk));
	memset(edge, 0, (size_t)nr * nr);
	for (i = 0; i < t->n; i++) {
		if (t->ev[i] == REF_RET) {
			d--;
			continue;
		}
		if (d)
			edge[stk[d - 1] * nr + t->ev[i]] = 1;
		stk[d++] = t->ev[i];
	}
	if (stitcher__init(&fe.sr, &o) ||
	    lbrsim__init(&sim, nr, &so, fx_emit, &fe))
		ksft_exit_fail_msg("out of memory\n");
	ret = lbrsim__run(&sim, t->ev, t->n);
	if (!ret)
		ret = lbrsim__finish(&sim);
	if (ret)
		ksft_exit_fail_msg("seed %" PRIu64 ": simulation failed: %d\n",
				   seed, ret);
	if (ksf__relabel(&rel, &fe.sr.pool.f, prop_relabel, &sim))
		ksft_exit_fail_msg("relabel failed\n");
	fr->replayed = fe.sr.st.bursts_replayed;
	fr->records = fe.records;
	fr->records_replayed = fe.replayed;
	fr->errors = fe.sr.st.stitch_errors;
	fr->cnt = fe.sr.st.cnt;
	if (fr->k == KCC_K_INF)
		fx_sound(fr, &rel.f, edge, nr);
	fr->dump = ksf__dump_string(&rel.f, NULL, 1);
	pool__exit(&rel);
	lbrsim__exit(&sim);
	stitcher__exit(&fe.sr);
	free(edge);
	free(stk);
}

#define FX_TRACES	40

/*
 * Each effect on its own over seeded random traces: every burst is
 * replayed (no stitch error), the reason the effect calls for is
 * counted, and what the effect must not change does not change.
 */
static void test_effects(void)
{
	static const struct {
		u32 fx;
		const char *what;
	} fxs[] = {
		{ LBRSIM_FX_LEAF, "frameless leaves" },
		{ LBRSIM_FX_LIB, "frameless libraries" },
		{ LBRSIM_FX_PLT, "PLT stubs" },
		{ LBRSIM_FX_TAIL, "tail calls" },
		{ LBRSIM_FX_SIGNAL, "signal handlers" },
		{ LBRSIM_FX_SKID, "skid" },
		{ LBRSIM_FX_WIPE, "LBR wipes" },
		{ LBRSIM_FX_FAR, "far-branch records" },
	};
	u32 e;

	for (e = 0; e < sizeof(fxs) / sizeof(fxs[0]); e++) {
		u64 rng = 0xeffec7ull + e, errors = 0, lost = 0, reason = 0;
		u64 same = 0, fewer = 0, plt = 0, sound = 0, calls = 0;
		u32 i;

		for (i = 0; i < FX_TRACES; i++) {
			struct fx_run a = { .period = 20 + ref_below(&rng, 200),
					    .k = KCC_K_INF };
			struct fx_run b;
			struct ref_trace t;
			struct ref_gen g;
			u64 seed = ref_rand(&rng);

			ref_gen_random(&g, &rng);
			g.len = 2000 + ref_below(&rng, 3000);
			ref_gen_trace(&t, &g, &rng);
			b = a;
			b.effects = fxs[e].fx;
			fx_run(&a, &t, seed);
			fx_run(&b, &t, seed);
			errors += b.errors;
			lost += b.samples_with_records - b.replayed;
			switch (fxs[e].fx) {
			case LBRSIM_FX_LEAF:
				reason += b.cnt.leaf_repaired;
				break;
			case LBRSIM_FX_LIB:
				reason += b.cnt.walk_repaired + b.cnt.walk_cut;
				break;
			case LBRSIM_FX_SIGNAL:
				reason += b.cnt.unrecorded + b.cnt.unmatched_return;
				break;
			case LBRSIM_FX_SKID:
				reason += b.cnt.skid_repaired;
				break;
			case LBRSIM_FX_FAR:
				reason += b.cnt.far_skipped;
				break;
			case LBRSIM_FX_TAIL:
			case LBRSIM_FX_WIPE:
				fewer += b.calls < a.calls;
				reason += b.calls < a.calls;
				break;
			}
			same += !strcmp(a.dump, b.dump);
			plt += b.plt_records;
			if (fxs[e].fx != LBRSIM_FX_TAIL &&
			    fxs[e].fx != LBRSIM_FX_SKID) {
				sound += b.sound;
				calls += b.calls;
			}
			free(a.dump);
			free(b.dump);
			ref_trace_free(&t);
		}
		if (fxs[e].fx == LBRSIM_FX_PLT) {
			/* Stubs relabelled to their targets: nothing moves. */
			ksft_test_result(!errors && plt && same == FX_TRACES,
					 "effect %s: %" PRIu64 " stub calls, relabelled forest unchanged on %u/%u traces\n",
					 fxs[e].what, plt, (u32)same, FX_TRACES);
			continue;
		}
		ksft_print_msg("%s: %" PRIu64 " counted, %" PRIu64 " of the calls on a real edge\n",
			       fxs[e].what, calls, sound);
		/*
		 * No record enters a handler, so the calls just before its
		 * return may be its own or the interrupted routine's: the
		 * stitcher gives the newest to the handler, and a few
		 * land on the wrong one.
		 */
		ksft_test_result(!errors && !lost && reason &&
				 (fxs[e].fx == LBRSIM_FX_SIGNAL ?
				  sound * 100 >= calls * 97 : sound == calls) &&
				 same < FX_TRACES,
				 "effect %s: no burst lost, %" PRIu64 " counted for it, counted edges real\n",
				 fxs[e].what, reason);
	}
}

/*
 * Random sets of effects, all together: no sample loses a call or
 * return record of its burst, whatever did not fit.  (At period 1
 * without effects every call is exact: the properties above.)
 */
static void test_effects_random(void)
{
	struct ksft_prop prop = { 0 }, charge = { 0 };
	u64 rng = 0xa11effull, records = 0;
	u32 i;

	for (i = 0; i < FX_TRACES; i++) {
		struct fx_run fr = {
			.period = 5 + ref_below(&rng, 300), .k = 3,
			.effects = 1 + ref_below(&rng, LBRSIM_FX_ALL),
			.prop = &prop, .charge = &charge,
		};
		struct ref_trace t;
		struct ref_gen g;
		u64 seed = ref_rand(&rng);

		ref_gen_random(&g, &rng);
		g.len = 1000 + ref_below(&rng, 4000);
		ref_gen_trace(&t, &g, &rng);
		fx_run(&fr, &t, seed);
		records += fr.records;
		free(fr.dump);
		ref_trace_free(&t);
	}
	ksft_print_msg("random effects: %" PRIu64 " records\n", records);
	ksft_prop_result(&prop, "random effects: every call and return record replayed, no stitch error");
	ksft_prop_result(&charge, "random effects but tail calls and skid: each sample charged to its routine");
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(70);
	test_anchor();
	test_below_bottom();
	test_truncated();
	test_errors();
	test_shapes();
	test_frames_cap();
	test_join();
	test_check();
	test_property();
	test_overlap_search();
	test_fit_general();
	test_effects();
	test_effects_random();
	ksft_finished();
}
