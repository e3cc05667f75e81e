// SPDX-License-Identifier: GPL-2.0
/*
 * timesim.c - time between calls in the fidelity simulator (lbrsim.h,
 * "Time"; evalsim.h): samples land inside the stretches a routine runs
 * on top of the stack, and dense sampling with and without the calls
 * since the previous sample (KCC_SAMPLE_CALLS).
 *
 * A hand-made run checks where the samples land: m calls a, so m's
 * two stretches and a's one take cost(m), cost(a) and cost(m) samples
 * at one sample a unit, each seeing the stack of its stretch.
 *
 * Then, on seeded synthetic programs (lbrsim__gen_trace()) sampled 16
 * times a call on average by time, by misses over time and, at every
 * call, by calls, kcc's lbr method is compared with the exact k-CCF:
 * with the counts, the calls add up to the trace's exactly (calls_ratio
 * 1) and, where every burst reaches back to the previous one, the
 * k-CCF is the exact one node for node; without them every call is
 * counted once per burst that holds it (calls_ratio above 2).
 *
 * One reading of the stitcher is left out of the node-for-node check:
 * a sample in a routine just after a direct recursive call returned to
 * it, from the call site its own caller used, has a newest record that
 * also fits skid (the sampled routine returned after its registers were
 * read), and kcc_stitch_undo_best() takes skid when both readings fit.
 * The simulator has no skid here, so every skid repair is that
 * misreading; samples at calls never meet it, samples between calls
 * do.  Traces where it happened are counted and printed, not checked
 * node for node (their call totals still are).
 */
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "ccf.h"
#include "evalsim.h"
#include "ktap.h"
#include "lbrsim.h"

/* ---- where samples land ----------------------------------------------- */

#define HAND_MAX	4096

struct landing {
	const struct lbrsim *sim;
	u32 top[HAND_MAX];	/* routine sampled */
	u32 depth[HAND_MAX];	/* frames walked */
	u64 delta_bad;		/* samples whose delta is not one period */
	u32 n;
};

static int land(void *arg, const struct kcc_sample *s)
{
	struct landing *l = arg;

	if (l->n == HAND_MAX || !s->nr_stack)
		return -E2BIG;
	l->top[l->n] = lbrsim__routine_of(l->sim, kcc_sample_stack(s)[0]);
	l->depth[l->n] = s->nr_stack;
	l->delta_bad += s->delta != 1;
	l->n++;
	return 0;
}

static void test_landing(void)
{
	static const u32 ev[] = { 0, 1, LBRSIM_RET, LBRSIM_RET };
	struct lbrsim_opts o = {
		.period = 1, .lbr_depth = 8, .stack_depth = 8, .seed = 3,
		.max_cost = 1000,
	};
	struct landing *l = calloc(1, sizeof(*l));
	struct lbrsim sim;
	u32 cm, ca, i;
	bool ok;

	if (!l || lbrsim__init(&sim, 2, &o, land, l))
		ksft_exit_fail_msg("lbrsim__init failed\n");
	l->sim = &sim;
	cm = sim.rt[0].cost;
	ca = sim.rt[1].cost;
	if (2 * cm + ca > HAND_MAX)
		ksft_exit_fail_msg("costs %u, %u: too many samples\n", cm, ca);
	if (lbrsim__run(&sim, ev, 4))
		ksft_exit_fail_msg("lbrsim__run failed\n");
	ok = l->n == 2 * cm + ca && sim.time == 2 * cm + ca &&
	     sim.events == sim.time && !l->delta_bad;
	for (i = 0; ok && i < l->n; i++) {
		bool in_a = i >= cm && i < cm + ca;

		ok = l->top[i] == (in_a ? 1u : 0u) &&
		     l->depth[i] == (in_a ? 2u : 1u);
		if (!ok)
			ksft_print_msg("sample %u: routine %u, %u frames\n",
				       i, l->top[i], l->depth[i]);
	}
	if (l->n != 2 * cm + ca)
		ksft_print_msg("%u samples, want %u (cost(m) %u, cost(a) %u)\n",
			       l->n, 2 * cm + ca, cm, ca);
	ksft_test_result(ok, "one sample a unit: cost(m) %u in m, cost(a) %u in a under m, cost(m) in m again\n",
			 cm, ca);
	lbrsim__exit(&sim);
	free(l);
}

/* Costs: in 1..max, spread over its powers of two, layout untouched. */
static void test_costs(void)
{
	struct lbrsim_opts o = {
		.period = 1, .stack_depth = 1, .seed = 11, .max_cost = 4096,
	};
	struct lbrsim_opts plain = o;
	struct lbrsim a, b;
	u32 lo = ~0u, hi = 0, short_ = 0, r;
	bool same = true;

	plain.max_cost = 0;
	if (lbrsim__init(&a, 1000, &o, land, NULL) ||
	    lbrsim__init(&b, 1000, &plain, land, NULL))
		ksft_exit_fail_msg("lbrsim__init failed\n");
	for (r = 0; r < 1000; r++) {
		u32 c = a.rt[r].cost;

		lo = c < lo ? c : lo;
		hi = c > hi ? c : hi;
		short_ += c < 64;
		same &= a.rt[r].start == b.rt[r].start &&
			a.rt[r].end == b.rt[r].end &&
			a.rt[r].rate == b.rt[r].rate;
	}
	ksft_test_result(lo >= 1 && hi <= 4096 && lo < 4 && hi > 2048 &&
			 short_ > 300 && short_ < 700 && same,
			 "costs in 1..4096 (%u..%u, %u of 1000 below 64), layout as without time\n",
			 lo, hi, short_);
	lbrsim__exit(&a);
	lbrsim__exit(&b);
}

/* ---- dense sampling, counted and not ---------------------------------- */

#define TRACES	24

enum source { SRC_TIME, SRC_MISSES, SRC_CALLS, SRC_NR };

static const char *const source_name[SRC_NR] = {
	[SRC_TIME] = "time", [SRC_MISSES] = "misses", [SRC_CALLS] = "calls",
};

struct tally {
	struct ksft_prop ratio;		/* counted: W1 == W2 */
	struct ksft_prop equal;		/* counted, covered: the exact k-CCF */
	struct ksft_prop over;		/* uncounted: W1 > 2 W2 */
	u32 covered;
	u32 misread;			/* of which skid was taken */
	u32 misread_differ;		/* and the k-CCF differs */
	u64 samples, calls;
	double min_over;
};

static void run_one(const struct trace *t, const struct ccf *exact,
		    enum source src, bool counted, u32 k, u64 seed,
		    struct evalsim_result *r, struct accuracy *acc,
		    int64_t *diff)
{
	struct evalsim_opts o = {
		.k = k, .period = 1, .period_div = 16, .jitter = 50,
		.lbr_depth = 32, .stack_depth = KCC_INJECT_MAX_STACK,
		.burst = 16, .rr_inv = 20, .table = 2048, .sig_depth = 8,
		.seed = seed, .count_calls = counted,
	};
	struct acc_opts ao = { .k = k, .nr_t = 1, .t = { 0.1 },
			       .approx_ctr = KCC_CTR_CALLS };

	if (src == SRC_MISSES)
		o.max_rate = 16;
	if (src == SRC_CALLS)
		o.period_div = 1;	/* a sample at every call */
	else
		o.max_cost = 256;
	if (evalsim__run(t, EM_LBR, &o, r))
		ksft_exit_fail_msg("evalsim__run failed\n");
	if (accuracy__compare(&exact->kccf.f, &r->kccf.f, &ao, acc))
		ksft_exit_fail_msg("accuracy__compare failed\n");
	*diff = accuracy__diff(&exact->kccf.f, &r->kccf.f, KCC_CTR_CALLS);
}

static void test_dense(void)
{
	static const u32 ks[] = { 1, 2, 3, 5 };
	struct tally tl[SRC_NR];
	u64 rng = 0x7133ull;
	u32 i, s;

	memset(tl, 0, sizeof(tl));
	for (s = 0; s < SRC_NR; s++)
		tl[s].min_over = 1e9;
	for (i = 0; i < TRACES; i++) {
		struct lbrsim_gen g = {
			.events = 2000 + 200 * i, .routines = 20 + 3 * i,
			.max_depth = 12 + i,
		};
		u32 k = ks[i % (sizeof(ks) / sizeof(ks[0]))];
		struct ccf_opts co = { .k = k };
		struct ccf exact;
		struct trace t;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		g.seed = rng >> 16 | 1;
		if (lbrsim__gen_trace(&t, &g) || ccf__build(&exact, &t, &co))
			ksft_exit_fail_msg("trace %u: cannot generate\n", i);
		for (s = 0; s < SRC_NR; s++) {
			struct evalsim_result c, u;
			struct accuracy ac, au;
			int64_t dc, du;
			bool covered;

			run_one(&t, &exact, s, true, k, g.seed, &c, &ac, &dc);
			run_one(&t, &exact, s, false, k, g.seed, &u, &au, &du);
			covered = !c.uncovered;
			tl[s].covered += covered;
			if (covered && c.cnt.skid_repaired) {
				tl[s].misread++;
				tl[s].misread_differ += dc != 0;
				covered = false;
			}
			tl[s].samples += c.samples;
			tl[s].calls += t.calls;
			ksft_prop_check(&tl[s].ratio,
					!c.counted.unplaced &&
					ac.weight_approx == ac.weight_exact &&
					ac.calls_ratio == 1 && !c.stitch_errors,
					"%s, trace %u (k=%u): %" PRIu64 " of %" PRIu64 " calls counted, %" PRIu64 " unplaced",
					source_name[s], i, k, ac.weight_approx,
					ac.weight_exact, c.counted.unplaced);
			if (covered)
				ksft_prop_check(&tl[s].equal,
						dc == 0 && ac.abs_diff == 0,
						"%s, trace %u (k=%u): %" PRId64 " contexts differ, abs_err %.4f",
						source_name[s], i, k, dc,
						ac.abs_err);
			ksft_prop_check(&tl[s].over, au.calls_ratio > 2,
					"%s, trace %u (k=%u): uncounted calls_ratio %.3f",
					source_name[s], i, k, au.calls_ratio);
			if (au.calls_ratio < tl[s].min_over)
				tl[s].min_over = au.calls_ratio;
			evalsim__exit(&c);
			evalsim__exit(&u);
		}
		ccf__exit(&exact);
		trace__exit(&t);
	}
	for (s = 0; s < SRC_NR; s++) {
		char what[160];

		ksft_print_msg("%s: %" PRIu64 " samples for %" PRIu64 " calls; every burst reached back on %u/%u traces, of which %u with a recursive return read as skid (%u of them off the exact k-CCF); uncounted calls_ratio >= %.2f\n",
			       source_name[s], tl[s].samples, tl[s].calls,
			       tl[s].covered, TRACES, tl[s].misread,
			       tl[s].misread_differ, tl[s].min_over);
		snprintf(what, sizeof(what),
			 "%s, dense, counted: calls_ratio exactly 1, no call unplaced",
			 source_name[s]);
		ksft_prop_result(&tl[s].ratio, what);
		snprintf(what, sizeof(what),
			 "%s, dense, counted, every burst reaching back: the exact k-CCF",
			 source_name[s]);
		/* Most traces must be covered, or the check says little. */
		if (2 * (tl[s].covered - tl[s].misread) < TRACES)
			tl[s].equal.failed++;
		ksft_prop_result(&tl[s].equal, what);
		snprintf(what, sizeof(what),
			 "%s, dense, bursts counted whole: calls_ratio above 2",
			 source_name[s]);
		ksft_prop_result(&tl[s].over, what);
	}
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(2 + 3 * SRC_NR);
	test_landing();
	test_costs();
	test_dense();
	ksft_finished();
}
