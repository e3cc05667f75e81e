// SPDX-License-Identifier: GPL-2.0
/*
 * calls.c - counted calls (KCC_SAMPLE_CALLS, ABI 1.2) in lbr/kcc_stitch.c.
 *
 * A sample that says how many calls the task retired since its previous
 * sample lets the stitcher count each call once however the bursts
 * overlap: the newest N call records when the burst holds them, else
 * every call record weighted so that the burst adds exactly N.
 *
 * Hand-made samples check the rule record by record.  Then, on seeded
 * random traces simulated by user/harness/lbrsim.c with several samples
 * between two calls (a time or miss event in a loop without calls), the
 * dense stream of overlapping bursts with counts gives exactly the k-SF
 * of the trace, node for node, while the same samples without their
 * counts do not; and sparse two-event streams (bursts shorter than the
 * calls between them) are scaled to the counter's total exactly.
 *
 * Addresses of the hand-made samples: main 0x1000-0x1fff, f 0x2000-0x2fff,
 * g 0x3000-0x3fff; each routine's entry is its first byte.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "ktap.h"
#include "ref.h"
#include "kcc_stitch.h"
#include "ksfdump.h"
#include "lbrsim.h"
#include "samples.h"

static struct sample_buf sb;

static void start(struct stitcher *sr, u32 k)
{
	struct stitcher_opts o = { .k = k, .no_join = true };

	if (stitcher__init(sr, &o))
		ksft_exit_fail_msg("stitcher__init(k=%u) failed\n", k);
}

static bool dump_is(struct stitcher *sr, const char *want)
{
	/* calls, events, samples: the variance is var_is()'s */
	char *got = ksf__dump_string(&sr->pool.f, NULL, 3);
	bool ok = got && !strcmp(got, want);

	if (!ok) {
		ksft_print_msg("expected:\n%s", want);
		ksft_print_msg("got:\n%s", got ? got : "(null)\n");
	}
	free(got);
	return ok;
}

/* The variance counter (KCC_CTR_CALLS_VAR) summed over the forest. */
static bool var_is(struct stitcher *sr, u64 want)
{
	u64 got = 0;
	u32 i;

	for (i = 0; i < sr->pool.f.count; i++)
		got += kcc_forest_ctr(&sr->pool.f, i)[KCC_CTR_CALLS_VAR];
	if (got != want)
		ksft_print_msg("variance: expected %" PRIu64 ", got %" PRIu64 "\n",
			       want, got);
	return got == want;
}

/*
 * main (stack 0x1105 below) called f three times from 0x1100; the
 * sample is in the third f.  Records newest first: call, ret, call,
 * ret, call.
 */
static const struct kcc_sample *three_calls_of(u64 callee, u32 flags,
					       u32 calls)
{
	u32 i;

	sample_buf__init(&sb, flags, 1);
	sb.hdr.calls = calls;
	sample_buf__push_stack(&sb, callee + 0x10);
	sample_buf__push_stack(&sb, 0x1105);
	for (i = 0; i < 3; i++) {
		if (i)
			sample_buf__push_branch(&sb, callee + 0xfff, 0x1105,
						KCC_BR_RET);
		sample_buf__push_branch(&sb, 0x1100, callee, KCC_BR_CALL);
	}
	return &sb.hdr;
}

/* A sample in g called from main, without records. */
static const struct kcc_sample *no_records(u32 flags, u32 calls)
{
	sample_buf__init(&sb, flags, 1);
	sb.hdr.calls = calls;
	sample_buf__push_stack(&sb, 0x3010);
	sample_buf__push_stack(&sb, 0x1105);
	return &sb.hdr;
}

static const struct kcc_sample *three_calls(u32 flags, u32 calls)
{
	return three_calls_of(0x2000, flags, calls);
}

static void apply(struct stitcher *sr, const struct kcc_sample *s)
{
	if (kcc_sample_check(s, s->size) != (int)s->size)
		ksft_exit_fail_msg("hand-made sample refused by kcc_sample_check\n");
	if (stitcher__sample(sr, s))
		ksft_exit_fail_msg("stitcher__sample failed\n");
}

static void test_hand(void)
{
	struct stitcher sr;
	bool ok;
	u32 i;

	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(0, 0));
	ok = dump_is(&sr, "top 1105;2000 3 1 1\n");
	ksft_test_result(ok, "without a count the burst counts whole (3 calls)\n");
	stitcher__exit(&sr);

	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(KCC_SAMPLE_CALLS, 1));
	ok = dump_is(&sr, "top 1105;2000 1 1 1\n") &&
	     sr.st.calls.bursts_exact == 1 && sr.st.calls.exact == 1 &&
	     sr.st.calls.counter == 1 && !sr.st.calls.scaled;
	ksft_test_result(ok, "count 1 of 3 records: only the newest call counts\n");
	stitcher__exit(&sr);

	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(KCC_SAMPLE_CALLS, 0));
	ok = dump_is(&sr, "top 1105;2000 0 1 1\n") &&
	     sr.st.calls.bursts_exact == 1 && !sr.st.calls.exact;
	ksft_test_result(ok, "count 0: the burst only anchors, the sample is charged\n");
	stitcher__exit(&sr);

	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(KCC_SAMPLE_CALLS, 11));
	ok = dump_is(&sr, "top 1105;2000 11 1 1\n") &&
	     sr.st.calls.bursts_scaled == 1 && sr.st.calls.scaled == 11 &&
	     !sr.st.calls.exact;
	ksft_test_result(ok, "count 11 over 3 records: weights 3, 4, 4 add up to 11\n");
	/* Variance, the burst one cluster: y (y - n) = 11 * 8; an exact burst adds 0. */
	ok = var_is(&sr, 88);
	apply(&sr, three_calls(KCC_SAMPLE_CALLS, 2));
	ok = ok && var_is(&sr, 88) && dump_is(&sr, "top 1105;2000 13 2 2\n");
	ksft_test_result(ok, "the variance counter adds y (y - n) a location a burst: 88 for 3 calls weighing 11; 0 for an exact window\n");
	stitcher__exit(&sr);

	/*
	 * More locations than one table holds (KCC_ACC_MAX): main calls 32
	 * routines in turn, N = 96, weight 3 each; at k = 1 each call is
	 * counted at two locations, 64 in all, so the table folds once in
	 * the burst.  Each location holds one call: 3 * 2 each.
	 */
	ok = true;
	for (i = 0; i < 2; i++) {
		u32 j;

		start(&sr, i ? 1 : KCC_K_INF);
		sample_buf__init(&sb, KCC_SAMPLE_CALLS, 1);
		sb.hdr.calls = 96;
		sample_buf__push_stack(&sb, 0x4010);
		sample_buf__push_stack(&sb, 0x1105);
		for (j = 0; j < 32; j++) {
			if (j)
				sample_buf__push_branch(&sb, 0x40ff + 0x100 * j,
							0x1105, KCC_BR_RET);
			sample_buf__push_branch(&sb, 0x1100, 0x4000 + 0x100 * j,
						KCC_BR_CALL);
		}
		apply(&sr, &sb.hdr);
		ok = ok && sr.st.calls.scaled == 96 && var_is(&sr, i ? 384 : 192);
		stitcher__exit(&sr);
	}
	ksft_test_result(ok, "32 routines weighing 3: 6 a location, 192 at k = inf, 384 at k = 1 (a fold in the burst)\n");

	/* Scaled weights land on distinct contexts: f then g, N = 5. */
	start(&sr, KCC_K_INF);
	sample_buf__init(&sb, KCC_SAMPLE_CALLS, 1);
	sb.hdr.calls = 5;
	sample_buf__push_stack(&sb, 0x3010);
	sample_buf__push_stack(&sb, 0x1105);
	sample_buf__push_branch(&sb, 0x1103, 0x3000, KCC_BR_CALL);
	sample_buf__push_branch(&sb, 0x2fff, 0x1105, KCC_BR_RET);
	sample_buf__push_branch(&sb, 0x1100, 0x2000, KCC_BR_CALL);
	apply(&sr, &sb.hdr);
	ok = dump_is(&sr, "top 1105;2000 2 0 0\ntop 1105;3000 3 1 1\n");
	ksft_test_result(ok, "count 5 over f then g: f 2, g (newest) 3\n");
	stitcher__exit(&sr);

	/* No call record: the count is unplaced, never lost silently. */
	start(&sr, KCC_K_INF);
	sample_buf__init(&sb, KCC_SAMPLE_CALLS, 1);
	sb.hdr.calls = 4;
	sample_buf__push_stack(&sb, 0x2010);
	sample_buf__push_stack(&sb, 0x1105);
	apply(&sr, &sb.hdr);
	ok = sr.st.calls.unplaced == 4 && sr.st.calls.counter == 4;
	ksft_test_result(ok, "a count without records is counted as unplaced\n");
	stitcher__exit(&sr);

	/*
	 * A switch-out carried 8 calls (kcc_stitch_carry()): they wait,
	 * outside the counter, and the next count (3) takes them, 11 over
	 * 3 records as above; an uncounted sample leaves them waiting.
	 */
	start(&sr, KCC_K_INF);
	kcc_stitch_carry(&sr.st, 8);
	ok = sr.st.calls.pending == 8 && !sr.st.calls.counter;
	apply(&sr, three_calls(0, 0));
	ok = ok && sr.st.calls.pending == 8;
	stitcher__exit(&sr);
	start(&sr, KCC_K_INF);
	kcc_stitch_carry(&sr.st, 8);
	apply(&sr, three_calls(KCC_SAMPLE_CALLS, 3));
	ok = ok && dump_is(&sr, "top 1105;2000 11 1 1\n") &&
	     !sr.st.calls.pending && sr.st.calls.counter == 11 &&
	     sr.st.calls.scaled == 11 && sr.st.calls.samples == 1;
	ksft_test_result(ok, "carried calls wait for the next count and join it: 8 + 3 over 3 records\n");
	stitcher__exit(&sr);
}

/* ---- the property ------------------------------------------------------ */

struct run {
	struct stitcher sr;
	bool strip;		/* drop the counts: the control */
	u64 records;		/* call records over all bursts */
};

static int emit(void *arg, const struct kcc_sample *s)
{
	struct run *p = arg;
	struct kcc_sample *w = (struct kcc_sample *)s;

	if (kcc_sample_check(s, s->size) != (int)s->size)
		return -EINVAL;
	if (p->strip) {
		w->flags &= ~(KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_SAT);
		w->calls = 0;
	}
	return stitcher__sample(&p->sr, s);
}

static u64 relabel(void *arg, u64 label)
{
	u32 r = lbrsim__routine_of(arg, label);

	return r == LBRSIM_NONE ? ~0ull : ref_label(r);
}

/* Sum of the calls counters of a CCT: every activation once. */
static u64 cct_calls(const struct kcc_forest *f)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < f->count; i++)
		sum += kcc_forest_ctr(f, i)[KCC_CTR_CALLS];
	return sum;
}

struct result {
	bool equal;		/* relabelled k-SF equals the trace's */
	u64 uncovered;		/* bursts that did not reach the previous one */
	u64 samples;
	u64 forest_calls;	/* CCT only: sum of the calls counters */
	struct acc_ci ci;	/* CCT only: the 95% intervals against the trace */
	struct kcc_stitch st;
};

static void run(struct result *res, const struct ref_trace *t, u32 k,
		const struct lbrsim_opts *so, bool strip)
{
	struct stitcher_opts o = { .k = k, .no_join = true };
	struct run p = { .strip = strip };
	struct ref_ksf exact;
	struct lbrsim sim;
	struct pool rel;
	char *a, *b;
	int ret;

	if (stitcher__init(&p.sr, &o) ||
	    lbrsim__init(&sim, t->nr, so, emit, &p))
		ksft_exit_fail_msg("out of memory\n");
	ret = lbrsim__run(&sim, t->ev, t->n);
	if (!ret)
		ret = lbrsim__finish(&sim);
	if (ret)
		ksft_exit_fail_msg("simulation failed: %d\n", ret);
	if (ksf__relabel(&rel, &p.sr.pool.f, relabel, &sim))
		ksft_exit_fail_msg("relabel failed\n");
	ref_ksf_build(&exact, t, k, 2 * (u32)t->calls + 16, t->max_depth + 1);
	a = ksf__dump_string(&rel.f, NULL, 1);
	b = ksf__dump_string(&exact.f, NULL, 1);
	if (!a || !b)
		ksft_exit_fail_msg("out of memory\n");
	res->equal = !strcmp(a, b);
	res->uncovered = sim.uncovered;
	res->samples = sim.samples;
	res->forest_calls = k == KCC_K_INF ? cct_calls(&p.sr.pool.f) : 0;
	memset(&res->ci, 0, sizeof(res->ci));
	if (k == KCC_K_INF &&
	    accuracy__ci95(&exact.f, &rel.f, k, KCC_CTR_CALLS_VAR, &res->ci))
		ksft_exit_fail_msg("accuracy__ci95 failed\n");
	res->st = p.sr.st;
	free(a);
	free(b);
	ref_ksf_free(&exact);
	pool__exit(&rel);
	lbrsim__exit(&sim);
	stitcher__exit(&p.sr);
}

#define TRACES	200

static void test_dense(void)
{
	static const u32 ks[] = { 1, 2, 3, 4, 7, KCC_K_INF };
	u32 exact = 0, uncovered = 0, differ = 0, i;
	u64 rng = 0xca115ull, samples = 0, calls = 0;

	for (i = 0; i < TRACES; i++) {
		struct lbrsim_opts so = {
			.lbr_depth = KCC_INJECT_MAX_BRANCHES,
			.stack_depth = KCC_INJECT_MAX_STACK,
			.count_calls = true, .every_period = true,
		};
		struct result r, c;
		struct ref_trace t;
		struct ref_gen g;
		u32 k;

		so.seed = ref_rand(&rng);
		do {
			ref_gen_random(&g, &rng);
			/* At most 40 deep: a window fits 64 records. */
			g.maxd = g.maxd > 40 ? 40 : g.maxd;
			ref_gen_trace(&t, &g, &rng);
			if (t.calls >= 8)
				break;
			/* A call or two: no overlap to get wrong. */
			ref_trace_free(&t);
		} while (1);
		k = ks[ref_below(&rng, sizeof(ks) / sizeof(ks[0]))];
		/* Up to 12 samples a call, a sample at least every 2 calls. */
		so.max_rate = 4 + ref_below(&rng, 9);
		so.period = 1 + ref_below(&rng, 3);

		run(&r, &t, k, &so, false);
		if (r.uncovered) {
			/*
			 * A window longer than the LBR (a run of calls
			 * with rate 0): not the dense case; its burst is
			 * scaled, checked by test_scaled().
			 */
			uncovered++;
			ref_trace_free(&t);
			i--;
			continue;
		}
		run(&c, &t, k, &so, true);
		exact += r.equal && r.st.calls.counter == t.calls &&
			 !r.st.calls.scaled && !r.st.stitch_errors;
		differ += !c.equal;
		samples += r.samples;
		calls += t.calls;
		if (!r.equal || c.equal || r.st.calls.scaled)
			ksft_print_msg("trace %u (k=%u, %" PRIu64 " calls, %" PRIu64 " samples): counted equal %d, uncovered %" PRIu64 ", scaled %" PRIu64 "; control equal %d\n",
				       i, k, (u64)t.calls, r.samples, r.equal,
				       r.uncovered, r.st.calls.scaled, c.equal);
		ref_trace_free(&t);
	}
	ksft_print_msg("dense: %" PRIu64 " samples for %" PRIu64 " calls; %u/%u traces exact, control differs on %u/%u; %u traces skipped (a window longer than the LBR)\n",
		       samples, calls, exact, TRACES, differ, TRACES,
		       uncovered);
	ksft_test_result(exact == TRACES,
			 "dense overlapping bursts with counts give the trace's k-SF node for node (%u/%u)\n",
			 exact, TRACES);
	ksft_test_result(differ == TRACES,
			 "the same bursts without counts differ from it (%u/%u)\n",
			 differ, TRACES);
}

static void test_scaled(void)
{
	u32 ok = 0, i;
	u64 rng = 0x5ca1edull, scaled = 0, calls = 0;
	u64 items = 0, covered = 0;
	double share = 0;

	for (i = 0; i < TRACES; i++) {
		struct lbrsim_opts so = {
			.stack_depth = KCC_INJECT_MAX_STACK,
			.count_calls = true, .period = 1000000,
		};
		struct result r;
		struct ref_trace t;
		struct ref_gen g;

		so.seed = ref_rand(&rng);
		ref_gen_random(&g, &rng);
		ref_gen_trace(&t, &g, &rng);
		/* Two events: bursts of 4..16 records every 20..200 calls. */
		so.lbr_depth = 4 + ref_below(&rng, 13);
		so.calls_period = 20 + ref_below(&rng, 181);
		run(&r, &t, KCC_K_INF, &so, false);
		ok += r.st.calls.counter == t.calls &&
		      r.forest_calls == r.st.calls.exact + r.st.calls.scaled &&
		      r.forest_calls + r.st.calls.unplaced == t.calls;
		if (r.forest_calls + r.st.calls.unplaced != t.calls)
			ksft_print_msg("trace %u: counter %" PRIu64 ", forest %" PRIu64 ", unplaced %" PRIu64 ", trace %" PRIu64 "\n",
				       i, r.st.calls.counter, r.forest_calls,
				       r.st.calls.unplaced, (u64)t.calls);
		scaled += r.st.calls.scaled;
		calls += t.calls;
		items += r.ci.items;
		covered += r.ci.covered;
		share += r.ci.calls_covered;
		ref_trace_free(&t);
	}
	ksft_print_msg("sparse: 95%% intervals hold %" PRIu64 " of %" PRIu64 " full contexts' exact calls, %.1f%% of the calls (mean over traces; most full contexts are in no burst, [0, 0])\n",
		       covered, items, 100 * share / TRACES);
	ksft_print_msg("sparse: %" PRIu64 " of %" PRIu64 " calls scaled\n",
		       scaled, calls);
	ksft_test_result(ok == TRACES && scaled,
			 "scaled bursts add up to the counter's total exactly (%u/%u)\n",
			 ok, TRACES);
}

/* The calls counts of STATUS as kcc.ko would export @sr's. */
static const struct kcc_status *exported(const struct stitcher *sr)
{
	static struct kcc_status status;

	memset(&status, 0, sizeof(status));
	kcc_stitch_calls_export(&status, &sr->st.calls);
	return &status;
}

/* Every call placed: the exact and the scaled make the counter's. */
static bool all_placed(const struct kcc_status *st)
{
	return !st->calls_unplaced &&
	       st->calls_exact + st->calls_scaled == st->calls_counter;
}

/*
 * The hybrid estimate (KCC_SAMPLE_CALLS_POOL, _DRAW, ABI 1.5): a
 * sample of the sampled event counts its newest records exactly and
 * keeps the calls above them in the pool; a sample of the calls event
 * spreads the pool over its own call records.
 */
static void test_hybrid(void)
{
	const u32 pool = KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_POOL;
	struct stitcher sr;
	bool ok;

	/*
	 * 11 calls over 3 records: 3 exact, 8 wait (unplaced until drawn);
	 * then the calls event's burst, 2 calls of its own: the newest two
	 * exact, and 8 over 3 records, 2, 3, 3 oldest first: 2 + 4 + 4.
	 */
	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(pool, 11));
	ok = dump_is(&sr, "top 1105;2000 3 1 1\n") && var_is(&sr, 0) &&
	     sr.st.calls.exact == 3 && sr.st.calls.pool == 8 &&
	     !sr.st.calls.scaled && sr.st.calls.counter == 11 &&
	     exported(&sr)->calls_unplaced == 8;
	ksft_test_result(ok, "hybrid: count 11 over 3 records: 3 exact, 8 in the pool, unplaced until drawn\n");
	apply(&sr, three_calls(pool | KCC_SAMPLE_CALLS_DRAW, 2));
	/* Variance: the pool's 8 alone, over 3 activations: 8 * (8 - 3). */
	ok = dump_is(&sr, "top 1105;2000 13 2 2\n") && var_is(&sr, 40) &&
	     sr.st.calls.exact == 5 && sr.st.calls.scaled == 8 &&
	     !sr.st.calls.pool && sr.st.calls.counter == 13 &&
	     all_placed(exported(&sr));
	ksft_test_result(ok, "hybrid: the calls event's burst draws the pool: 13 of 13 calls, 5 exact, 8 scaled, variance 40 of the pool's share only\n");
	stitcher__exit(&sr);

	/*
	 * A pool smaller than the records (1 over 3): the newest gets it;
	 * a weight under 1 adds no variance (nor wraps around); a burst
	 * without a count's own calls (0) still draws.  A sample without
	 * records keeps its calls in the pool.
	 */
	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(pool, 4));
	apply(&sr, three_calls(pool | KCC_SAMPLE_CALLS_DRAW, 3));
	ok = dump_is(&sr, "top 1105;2000 7 2 2\n") && var_is(&sr, 0) &&
	     sr.st.calls.scaled == 1 && !sr.st.calls.pool;
	sample_buf__init(&sb, pool, 1);
	sb.hdr.calls = 4;
	sample_buf__push_stack(&sb, 0x2010);
	sample_buf__push_stack(&sb, 0x1105);
	apply(&sr, &sb.hdr);
	ok = ok && sr.st.calls.pool == 4 && !sr.st.calls.unplaced;
	apply(&sr, three_calls(KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_DRAW, 0));
	ok = ok && dump_is(&sr, "top 1105;2000 11 3 3\ntop 1105;2010 0 1 1\n") &&
	     sr.st.calls.counter == 11 && !sr.st.calls.pool &&
	     sr.st.calls.exact + sr.st.calls.scaled == 11;
	ksft_test_result(ok, "hybrid: a pool under the records' number, a sample without records, a draw with no calls of its own: 11 of 11\n");
	stitcher__exit(&sr);

	ok = kcc_sample_check(three_calls(KCC_SAMPLE_CALLS_POOL, 0), sb.hdr.size) < 0 &&
	     kcc_sample_check(three_calls(KCC_SAMPLE_CALLS_DRAW, 0), sb.hdr.size) < 0;
	ksft_test_result(ok, "hybrid: POOL or DRAW without KCC_SAMPLE_CALLS is refused\n");
}

/*
 * main called r0 .. r@n-1 (at 0x2000, 0x3000, ...) in turn, each
 * returning; the sample is in the last.  Records newest first.
 */
static const struct kcc_sample *calls_in_turn(u32 n, u32 flags, u32 calls)
{
	u32 i;

	sample_buf__init(&sb, flags, 1);
	sb.hdr.calls = calls;
	sample_buf__push_stack(&sb, 0x2010 + (u64)(n - 1) * 0x1000);
	sample_buf__push_stack(&sb, 0x1105);
	for (i = n; i > 0; i--) {
		u64 r = 0x2000 + (u64)(i - 1) * 0x1000;

		if (i < n)
			sample_buf__push_branch(&sb, r + 0xfff, 0x1105,
						KCC_BR_RET);
		sample_buf__push_branch(&sb, 0x1100, r, KCC_BR_CALL);
	}
	return &sb.hdr;
}

/* Dump lines of r0 .. r11, the last sampled @samples times. */
static char *twelve(const u32 *calls, u32 samples)
{
	static char buf[512];
	size_t n = 0;
	u32 i;

	for (i = 0; i < 12; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "top 1105;%x %u %u %u\n",
				      0x2000 + i * 0x1000, calls[i],
				      i == 11 ? samples : 0,
				      i == 11 ? samples : 0);
	return buf;
}

/*
 * A burst taken at a retired call (KCC_SAMPLE_CALLS_DRAW) with more
 * calls than records counts its records once each and spreads the
 * calls before them over its newest KCC_STITCH_DRAW_NEWEST records; one
 * at another event's sample spreads all its calls over all records.
 */
static void test_draw_newest(void)
{
	/* 120 over 12: 10 each. */
	static const u32 all[12] = { 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10 };
	/* 12 exact, 108 over the newest 6: 18 each. */
	static const u32 newest[12] = { 1, 1, 1, 1, 1, 1, 19, 19, 19, 19, 19, 19 };
	/* Twice 12 exact, then a pool of 120 over the newest 6: 20 each. */
	static const u32 pooled[12] = { 2, 2, 2, 2, 2, 2, 22, 22, 22, 22, 22, 22 };
	/* The same with 12 more before the draw's window: 22 each. */
	static const u32 mixed[12] = { 2, 2, 2, 2, 2, 2, 24, 24, 24, 24, 24, 24 };
	struct stitcher sr;
	bool ok;

	start(&sr, KCC_K_INF);
	apply(&sr, calls_in_turn(12, KCC_SAMPLE_CALLS, 120));
	ok = dump_is(&sr, twelve(all, 1)) && sr.st.calls.scaled == 120;
	stitcher__exit(&sr);
	start(&sr, KCC_K_INF);
	apply(&sr, calls_in_turn(12, KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_DRAW, 120));
	/* Variance of the shares alone: 6 * 18 * 17. */
	ok = ok && dump_is(&sr, twelve(newest, 1)) &&
	     sr.st.calls.exact == 12 && sr.st.calls.scaled == 108 &&
	     var_is(&sr, 6 * 18 * 17);
	ksft_test_result(ok, "120 calls over 12 records: 10 each at another event's sample; at a retired call's, 1 each and 108 over the newest %d\n",
			 KCC_STITCH_DRAW_NEWEST);
	stitcher__exit(&sr);

	start(&sr, KCC_K_INF);
	apply(&sr, calls_in_turn(12, KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_POOL, 132));
	apply(&sr, calls_in_turn(12, KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_POOL |
				 KCC_SAMPLE_CALLS_DRAW, 12));
	ok = dump_is(&sr, twelve(pooled, 2)) && sr.st.calls.exact == 24 &&
	     sr.st.calls.scaled == 120 && !sr.st.calls.pool;
	stitcher__exit(&sr);

	/*
	 * A draw with more calls than records (24) and a pool (120): the
	 * 12 before its window and the pool in one spread, 22 each.
	 */
	start(&sr, KCC_K_INF);
	apply(&sr, calls_in_turn(12, KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_POOL, 132));
	apply(&sr, calls_in_turn(12, KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_DRAW, 24));
	ok = ok && dump_is(&sr, twelve(mixed, 2)) && sr.st.calls.exact == 24 &&
	     sr.st.calls.scaled == 132 && sr.st.calls.counter == 156 &&
	     !sr.st.calls.pool;
	ksft_test_result(ok, "hybrid: the pool (120) drawn by a burst of 12 records goes to its newest %d, with the calls before a draw's window too\n",
			 KCC_STITCH_DRAW_NEWEST);
	stitcher__exit(&sr);
}

/*
 * The end of a task's samples (kcc_stitch_finish()): a pool that no
 * burst of the calls event drew goes to the call records of the last
 * burst that pooled or drew, as a draw would, once.
 */
static void test_hybrid_finish(void)
{
	const u32 pool = KCC_SAMPLE_CALLS | KCC_SAMPLE_CALLS_POOL;
	struct stitcher sr;
	bool ok;

	/*
	 * f's burst: 3 of 11 exact, 8 pooled; g's: 3 of 10 exact, 7 more;
	 * a sample without records: 5 more.  The end: 20 over g's three
	 * records, 6, 7, 7 oldest first; f keeps its 3.
	 */
	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(pool, 11));
	apply(&sr, three_calls_of(0x3000, pool, 10));
	apply(&sr, no_records(pool, 5));
	ok = sr.st.calls.pool == 20 &&
	     dump_is(&sr, "top 1105;2000 3 1 1\ntop 1105;3000 3 1 1\ntop 1105;3010 0 1 1\n");
	stitcher__finish(&sr);
	/* Variance: 20 over 3 activations, one cluster: 20 * (20 - 3). */
	ok = ok && dump_is(&sr, "top 1105;2000 3 1 1\ntop 1105;3000 23 1 1\ntop 1105;3010 0 1 1\n") &&
	     var_is(&sr, 340) && !sr.st.calls.pool &&
	     sr.st.calls.scaled == 20 && sr.st.calls.counter == 26 &&
	     all_placed(exported(&sr));
	stitcher__finish(&sr);
	ok = ok && dump_is(&sr, "top 1105;2000 3 1 1\ntop 1105;3000 23 1 1\ntop 1105;3010 0 1 1\n") &&
	     sr.st.calls.scaled == 20;
	ksft_test_result(ok, "hybrid end: a pool never drawn (20) goes to the last burst's records, once: 26 of 26 calls\n");
	stitcher__exit(&sr);

	/* Counted bursts without the hybrid keep no tail: nothing moves. */
	start(&sr, KCC_K_INF);
	apply(&sr, three_calls(KCC_SAMPLE_CALLS, 11));
	stitcher__finish(&sr);
	ok = dump_is(&sr, "top 1105;2000 11 1 1\n") && !sr.st.nr_tail &&
	     sr.st.calls.scaled == 11;
	/* A pool with no burst of records at all stays unplaced. */
	stitcher__exit(&sr);
	start(&sr, KCC_K_INF);
	apply(&sr, no_records(pool, 5));
	stitcher__finish(&sr);
	ok = ok && sr.st.calls.pool == 5 && !sr.st.calls.scaled;
	ksft_test_result(ok, "hybrid end: the counter alone, or a pool without a burst: nothing spread\n");
	stitcher__exit(&sr);
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(20);
	test_hand();
	test_dense();
	test_scaled();
	test_hybrid();
	test_hybrid_finish();
	test_draw_newest();
	ksft_finished();
}
