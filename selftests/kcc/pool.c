// SPDX-License-Identifier: GPL-2.0
/*
 * pool - what the core promises when its caller-provided memory runs out:
 * a full node pool, a k-CCF destination that is too small and a shadow
 * stack shallower than the trace.  In the kernel these happen in NMI
 * context, where the only acceptable outcome is a counted drop that
 * leaves everything already recorded exact.
 *
 * Why "exact" can be asserted rather than merely "not above":
 *  - Nodes are never deleted from a k-SF, and once a node creation is
 *    refused the pool stays full, so no node is created afterwards.  A
 *    node X that was kept therefore existed (with all its ancestors)
 *    before any activation that maps to X could be lost on the way: the
 *    first such activation created it, every later one walks through
 *    ancestors that exist and finds it.  Kept nodes count exactly what
 *    the unbounded k-SF counts at the same root kind and label path.
 *  - The same argument holds for inv_k into a small destination: a kept
 *    k-CCF node receives the counters of every source node whose
 *    reversed suffix runs through it, so it equals the full k-CCF node.
 *    inv_k of a truncated k-SF, on the other hand, only sees part of the
 *    activations: its paths are k-CCF paths with counters at most the
 *    true ones, not equal.
 *  - A call deeper than the stack cap is not recorded, but the depth is
 *    tracked, so everything recorded is the profile of the trace with
 *    the too-deep calls (and their returns) cut out: contexts of at most
 *    cap routines keep their exact counts and slab alignment.
 */
#include <stdarg.h>
#include <inttypes.h>

#include "ktap.h"
#include "ref.h"

#define NTRACES	150

enum prop {
	P_LIVE,		/* live <= capacity, == min(capacity, |unbounded|) */
	P_DROPS,	/* drops counted iff something did not fit */
	P_EXACT,	/* kept k-SF nodes equal the unbounded ones */
	P_LOST,		/* lost_calls == calls the k-CCF lacks (brute force) */
	P_LOST_CHG,	/* lost_charges == charges the k-CCF lacks */
	P_CALLS,	/* calls and returns counted whatever was dropped */
	P_INV_NOSPC,	/* inv_k into a small dst: -ENOSPC, drops, full */
	P_INV_EXACT,	/* ... and what it kept is exact */
	P_INV_FIT,	/* inv_k into a dst of exactly the right size: 0 */
	P_INV_TRUNC,	/* inv_k of a truncated k-SF never overcounts */
	P_STK_DROPS,	/* stack_drops == calls deeper than the cap */
	P_STK_KSF,	/* capped k-SF gives the k-CCF of the cut trace */
	P_STK_CCT,	/* capped CCT is the CCT of the cut trace */
	P_REPLAY,	/* kcc_ksf_replay() == one call per event */
	P_REUSE,	/* forest reset, stack reused: same as fresh */
	NPROP
};

static const char *const prop_name[NPROP] = {
	[P_LIVE]	= "full pool: live nodes <= capacity, == min(capacity, unbounded size)",
	[P_DROPS]	= "full pool: f.drops > 0 exactly when the unbounded k-SF is larger",
	[P_EXACT]	= "full pool: every kept node has the unbounded k-SF's counters",
	[P_LOST]	= "full pool: lost_calls == calls missing from the k-CCF of the bounded k-SF (vs brute force)",
	[P_LOST_CHG]	= "full pool: lost_charges == event counts missing from the k-CCF of the bounded k-SF",
	[P_CALLS]	= "full pool: calls and returns still counted",
	[P_INV_NOSPC]	= "inv_k into a small dst: -ENOSPC, dst full, drops counted",
	[P_INV_EXACT]	= "inv_k into a small dst: kept nodes equal the full k-CCF's",
	[P_INV_FIT]	= "inv_k into a dst of exactly the k-CCF's size: 0, no drops",
	[P_INV_TRUNC]	= "inv_k of a truncated k-SF: k-CCF paths, counters never above",
	[P_STK_DROPS]	= "stack cap: stack_drops == calls deeper than the cap, nothing else lost",
	[P_STK_KSF]	= "stack cap: k-CCF == brute force on the trace without the deep calls",
	[P_STK_CCT]	= "stack cap: CCT == brute force on the trace without the deep calls",
	[P_REPLAY]	= "kcc_ksf_replay() in batches == kcc_ksf_call()/return() per event, full pools and caps included",
	[P_REUSE]	= "kcc_forest_reset() and kcc_ksf_init() over a used stack: no memo of the old forest survives",
};

static struct ksft_prop res[NPROP];
#define check(p, ok, ...)	ksft_prop_check(&res[p], ok, __VA_ARGS__)

static const u32 ks[] = { 0, 1, 2, 3, KCC_K_INF };
#define NK	(sizeof(ks) / sizeof(ks[0]))

/*
 * What a full pool loses is what the k-CCF built from it lacks: the roots
 * of a k-CCF count every call once (its 0-context), so the calls missing
 * there, compared with the brute-force k-CCF, are the calls lost.  Every
 * call also charges one event to metric 1, which must be lost exactly
 * when the call is.  No stack drops here: the stack is deep enough.
 */
static void lost_vs_ref(const struct ref_trace *t, u64 seed, u32 k, u32 cap,
			u64 ref_calls)
{
	u32 kp = k ? k : 1, i;
	struct kcc_forest f, d;
	struct kcc_frame *stk = ref_alloc(((size_t)t->max_depth + 1) *
					  sizeof(*stk));
	void *fm = ref_forest_new(&f, cap, 1), *dm;
	u64 got[2] = { 0, 0 };
	struct kcc_ksf s;
	size_t j;
	int r;

	kcc_ksf_init(&s, &f, kp, stk, t->max_depth + 1);
	for (j = 0; j < t->n; j++) {
		if (t->ev[j] == REF_RET) {
			kcc_ksf_return(&s);
		} else {
			kcc_ksf_call(&s, ref_label(t->ev[j]));
			kcc_ksf_charge(&s, 1, 1);
		}
	}
	/* A source node joins at most min(k, depth) + 1 k-CCF nodes. */
	dm = ref_forest_new(&d, ((k < t->max_depth ? k : t->max_depth) + 1) *
			    f.count + 1, 1);
	r = kcc_inv_k(&f, kp, k, &d, NULL);
	for (i = 0; i < d.count; i++) {
		if (!kcc_is_root_parent(kcc_forest_node(&d, i)->parent))
			continue;
		got[0] += kcc_forest_ctr(&d, i)[0];
		got[1] += kcc_forest_ctr(&d, i)[1];
	}
	check(P_LOST, !r && !s.stack_drops && ref_calls == t->calls &&
	      got[0] + s.lost_calls == ref_calls,
	      "seed %" PRIu64 " k=%u cap=%u: k-CCF counts %" PRIu64 " of %" PRIu64 " calls, lost_calls %" PRIu64 " (inv_k %d)",
	      seed, k, cap, got[0], ref_calls, s.lost_calls, r);
	check(P_LOST_CHG, !r && got[1] + s.lost_charges == t->calls,
	      "seed %" PRIu64 " k=%u cap=%u: k-CCF holds %" PRIu64 " of %" PRIu64 " charges, lost_charges %" PRIu64,
	      seed, k, cap, got[1], t->calls, s.lost_charges);
	free(dm);
	free(fm);
	free(stk);
}

/*
 * The batch entry point against the per-event one on the same trace,
 * pool and stack cap, with two stray returns first: the same nodes in
 * the same order, the same counters and statistics.
 */
static void replay_same(const struct ref_trace *t, u64 seed, u32 k, u32 cap,
			u32 stack_cap)
{
	u64 *ev = ref_alloc((t->n + 2) * sizeof(u64));
	struct kcc_frame *stk = ref_alloc((size_t)stack_cap * sizeof(*stk));
	struct kcc_forest f;
	void *mem = ref_forest_new(&f, cap, 0);
	struct ref_ksf one;
	struct kcc_ksf s;
	size_t j, n = t->n + 2, done;
	bool same;

	ref_ksf_build(&one, t, k, cap, stack_cap);
	kcc_ksf_return(&one.s);		/* the stray returns, after */
	kcc_ksf_return(&one.s);
	ev[0] = KCC_EV_RET;
	ev[1] = KCC_EV_RET;
	for (j = 0; j < t->n; j++)
		ev[j + 2] = t->ev[j] == REF_RET ? KCC_EV_RET :
			    ref_label(t->ev[j]);
	kcc_ksf_init(&s, &f, k, stk, stack_cap);
	/* Batches of 1 to 64 events: state must carry across them. */
	for (done = 0, j = 1; done < n; j = j % 64 + 1) {
		size_t len = n - done < j ? n - done : j;

		kcc_ksf_replay(&s, ev + done, len);
		done += len;
	}
	same = s.calls == one.s.calls && s.returns == one.s.returns &&
	       s.bad_returns == 2 && one.s.bad_returns == 2 &&
	       s.lost_calls == one.s.lost_calls &&
	       s.stack_drops == one.s.stack_drops &&
	       s.max_depth == one.s.max_depth && s.depth == one.s.depth &&
	       f.count == one.f.count && f.drops == one.f.drops &&
	       !memcmp(f.nodes, one.f.nodes, (size_t)f.count * f.stride);
	check(P_REPLAY, same,
	      "seed %" PRIu64 " k=%u cap=%u stack %u: replay calls %" PRIu64 " lost %" PRIu64 " nodes %u, per event %" PRIu64 " %" PRIu64 " %u",
	      seed, k, cap, stack_cap, s.calls, s.lost_calls, f.count,
	      one.s.calls, one.s.lost_calls, one.f.count);
	ref_ksf_free(&one);
	free(mem);
	free(stk);
	free(ev);
}

/*
 * Frames keep their memo when pushed again with the same locations, so
 * kcc_ksf_init() must forget the memos a stack holds from an earlier
 * forest: build @a, reset, build @b over the same stack and pool, and
 * compare with @b built fresh.  The node indices of the two builds
 * coincide (the same root comes first), which is where a stale memo
 * would be taken for a current one.
 */
static void reuse_stack(const struct ref_trace *a, const struct ref_trace *b,
			u64 seed, u32 k)
{
	u32 depth = (a->max_depth > b->max_depth ? a->max_depth :
		     b->max_depth) + 1;
	u32 cap = 2 * (u32)(a->calls + b->calls) + 16;
	struct kcc_frame *stk = ref_alloc((size_t)depth * sizeof(*stk));
	struct kcc_forest f;
	void *mem = ref_forest_new(&f, cap, 0);
	const struct ref_trace *tr[2] = { a, b };
	struct ref_ksf fresh;
	struct kcc_ksf s;
	size_t j;
	int i;

	for (i = 0; i < 2; i++) {
		kcc_forest_reset(&f);
		kcc_ksf_init(&s, &f, k, stk, depth);
		for (j = 0; j < tr[i]->n; j++) {
			if (tr[i]->ev[j] == REF_RET)
				kcc_ksf_return(&s);
			else
				kcc_ksf_call(&s, ref_label(tr[i]->ev[j]));
		}
	}
	ref_ksf_build(&fresh, b, k, cap, depth);
	check(P_REUSE, f.count == fresh.f.count &&
	      !memcmp(f.nodes, fresh.f.nodes, (size_t)f.count * f.stride),
	      "seed %" PRIu64 " k=%u: %u nodes after reuse, %u fresh",
	      seed, k, f.count, fresh.f.count);
	ref_ksf_free(&fresh);
	free(mem);
	free(stk);
}

static void full_pool(const struct ref_trace *t, u64 seed, u32 k)
{
	u32 kp = k ? k : 1, stack_cap = t->max_depth + 1;
	struct ref_ksf full;
	struct ref_map fm, ccf;
	u32 *fids, ci, want;
	u64 ccf_calls = 0;
	u32 caps[8];
	char why[320];

	ref_ksf_build(&full, t, kp, 2 * (u32)t->calls + 16, stack_cap);
	fids = ref_alloc(((size_t)full.f.count + 1) * sizeof(u32));
	if (ref_from_forest(&fm, &full.f, fids)) {
		check(P_EXACT, false, "seed %" PRIu64 " k=%u: unbounded k-SF has a node before its parent",
		      seed, k);
		goto out_fm;
	}
	ref_kccf(&ccf, t, REF_NOCAP);
	want = ref_map_count(&ccf, k);
	for (ci = 0; ci < ccf.n; ci++)
		if (!ccf.e[ci].len)
			ccf_calls += ccf.e[ci].cnt;

	caps[0] = 1;
	caps[1] = 2;
	caps[2] = 3;
	caps[3] = 7;
	caps[4] = full.f.count / 3 + 1;
	caps[5] = full.f.count > 1 ? full.f.count - 1 : 1;
	caps[6] = full.f.count ? full.f.count : 1;
	caps[7] = full.f.count + 5;
	for (ci = 0; ci < 8; ci++) {
		u32 cap = caps[ci], fit = full.f.count < cap ? full.f.count : cap;
		u32 *ids = ref_alloc((size_t)cap * sizeof(u32));
		struct ref_ksf b;
		bool matched;

		ref_ksf_build(&b, t, kp, cap, stack_cap);
		check(P_LIVE, b.f.live <= cap && b.f.count <= cap &&
		      b.f.live == fit,
		      "seed %" PRIu64 " k=%u cap=%u: live %u count %u, expected %u",
		      seed, k, cap, b.f.live, b.f.count, fit);
		check(P_DROPS, !!b.f.drops == (full.f.count > cap),
		      "seed %" PRIu64 " k=%u cap=%u: drops %" PRIu64 " with %u nodes needed",
		      seed, k, cap, b.f.drops, full.f.count);
		check(P_CALLS, b.s.calls == t->calls && b.s.returns == t->calls &&
		      !b.s.depth && !b.s.bad_returns,
		      "seed %" PRIu64 " k=%u cap=%u: calls %" PRIu64 "/%" PRIu64 " returns %" PRIu64,
		      seed, k, cap, b.s.calls, t->calls, b.s.returns);
		matched = !ref_match(&b.f, &fm, KCC_K_INF, REF_SUBSET | REF_KINDS,
				     ids, why, sizeof(why));
		check(P_EXACT, matched, "seed %" PRIu64 " k=%u cap=%u: %s",
		      seed, k, cap, why);
		lost_vs_ref(t, seed, k, cap, ccf_calls);
		replay_same(t, seed, kp, cap, stack_cap);

		/* Only the smallest pools: these runs cost O(k |k-SF|). */
		if (ci == 4 && want) {
			struct kcc_forest d;
			void *mem = ref_forest_new(&d, want + 16, 0);
			int r = kcc_inv_k(&b.f, kp, k, &d, NULL);

			check(P_INV_TRUNC, !r && !ref_match(&d, &ccf, k,
					REF_SUBSET | REF_AT_MOST, NULL,
					why, sizeof(why)),
			      "seed %" PRIu64 " k=%u cap=%u: ret %d, %s",
			      seed, k, cap, r, r ? "" : why);
			free(mem);
		}
		free(ids);
		ref_ksf_free(&b);
	}

	/* inv_k into destinations below, at and above the k-CCF's size. */
	for (ci = 0; ci < 4 && want; ci++) {
		u32 dcap = ci == 0 ? 1 : ci == 1 ? want / 2 + 1 :
			   ci == 2 ? want - 1 : want;
		struct kcc_forest d;
		void *mem;
		int r;

		if (!dcap || (ci < 3 && dcap >= want))
			continue;
		mem = ref_forest_new(&d, dcap, 0);
		r = kcc_inv_k(&full.f, kp, k, &d, NULL);
		if (dcap < want) {
			check(P_INV_NOSPC, r == -ENOSPC && d.drops &&
			      d.count == dcap && d.live == dcap,
			      "seed %" PRIu64 " k=%u dst %u of %u: ret %d drops %" PRIu64 " count %u",
			      seed, k, dcap, want, r, d.drops, d.count);
			check(P_INV_EXACT, !ref_match(&d, &ccf, k, REF_SUBSET,
						      NULL, why, sizeof(why)),
			      "seed %" PRIu64 " k=%u dst %u of %u: %s",
			      seed, k, dcap, want, why);
		} else {
			check(P_INV_FIT, !r && !d.drops &&
			      !ref_match(&d, &ccf, k, 0, NULL, why, sizeof(why)),
			      "seed %" PRIu64 " k=%u dst %u: ret %d drops %" PRIu64 " %s",
			      seed, k, dcap, r, d.drops, r ? "" : why);
		}
		free(mem);
	}
	ref_map_free(&ccf);
out_fm:
	ref_map_free(&fm);
	free(fids);
	ref_ksf_free(&full);
}

static void stack_cap(const struct ref_trace *t, u64 seed, u32 cap)
{
	struct ref_map ccf, cct;
	u64 deep = 0;
	u32 d = 0, ki;
	size_t j;
	char why[320];

	for (j = 0; j < t->n; j++) {
		if (t->ev[j] == REF_RET) {
			d--;
		} else if (++d > cap) {
			deep++;
		}
	}
	ref_kccf(&ccf, t, cap);
	ref_cct(&cct, t, cap);

	for (ki = 0; ki < NK; ki++) {
		u32 k = ks[ki], kp = k ? k : 1;
		u32 want = ref_map_count(&ccf, k);
		struct kcc_forest dst;
		struct ref_ksf s;
		void *mem;
		int r;

		ref_ksf_build(&s, t, kp, 2 * (u32)t->calls + 16, cap);
		replay_same(t, seed, kp, 2 * (u32)t->calls + 16, cap);
		check(P_STK_DROPS, s.s.stack_drops == deep && !s.s.lost_calls &&
		      !s.f.drops && s.s.calls == t->calls &&
		      s.s.returns == t->calls && !s.s.depth,
		      "seed %" PRIu64 " k=%u cap=%u: stack_drops %" PRIu64 "/%" PRIu64 " lost %" PRIu64 " drops %" PRIu64,
		      seed, k, cap, s.s.stack_drops, deep, s.s.lost_calls,
		      s.f.drops);
		if (k == KCC_K_INF)
			check(P_STK_CCT, !ref_match(&s.f, &cct, KCC_K_INF, 0,
						    NULL, why, sizeof(why)),
			      "seed %" PRIu64 " cap=%u: %s", seed, cap, why);
		mem = ref_forest_new(&dst, want + 16, 0);
		r = kcc_inv_k(&s.f, kp, k, &dst, NULL);
		check(P_STK_KSF, !r && !ref_match(&dst, &ccf, k, 0, NULL, why,
						  sizeof(why)),
		      "seed %" PRIu64 " k=%u cap=%u: ret %d %s", seed, k, cap,
		      r, r ? "" : why);
		free(mem);
		ref_ksf_free(&s);
	}
	ref_map_free(&ccf);
	ref_map_free(&cct);
}

/* Returns on an empty stack are counted and change nothing. */
static void bad_returns(void)
{
	struct kcc_frame stk[4];
	struct kcc_forest f;
	struct kcc_ksf s;
	void *mem = ref_forest_new(&f, 8, 0);
	int r1, r2, r3;

	kcc_ksf_init(&s, &f, 2, stk, 4);
	r1 = kcc_ksf_return(&s);
	kcc_ksf_call(&s, ref_label(1));
	r2 = kcc_ksf_return(&s);
	r3 = kcc_ksf_return(&s);
	ksft_test_result(r1 == -EINVAL && !r2 && r3 == -EINVAL &&
			 s.bad_returns == 2 && s.returns == 1 && !s.depth &&
			 f.count == 1 && kcc_forest_ctr(&f, 0)[0] == 1,
			 "return on an empty stack: -EINVAL, counted, nothing changed\n");
	free(mem);
}

int main(void)
{
	struct ref_trace prev;
	unsigned int p;
	u64 seed;

	ksft_print_header();
	ksft_set_plan(NPROP + 1);

	for (seed = 0; seed < NTRACES; seed++) {
		u64 rng = seed * 0x9e3779b97f4a7c15ull + 7;
		struct ref_trace t;
		struct ref_gen g;
		unsigned int ki;

		ref_gen_random(&g, &rng);
		if (g.len > 1500)	/* many small pools per trace */
			g.len = 1500;
		ref_gen_trace(&t, &g, &rng);
		for (ki = 0; ki < NK; ki++)
			full_pool(&t, seed, ks[ki]);
		if (seed) {
			for (ki = 1; ki < NK; ki++)
				reuse_stack(&prev, &t, seed, ks[ki]);
			ref_trace_free(&prev);
		}
		prev = t;
	}

	ref_trace_free(&prev);

	for (seed = 0; seed < 40; seed++) {
		u64 rng = seed * 0x9e3779b97f4a7c15ull + 11;
		static const u32 caps[] = { 1, 2, 3, 5, 17 };
		struct ref_trace t;
		struct ref_gen g;
		unsigned int ci;

		ref_gen_random(&g, &rng);
		g.maxd = 20 + ref_below(&rng, 100);
		g.call_pct = 80 + ref_below(&rng, 15);
		g.len = 500 + ref_below(&rng, 2000);
		g.dag = false;
		ref_gen_trace(&t, &g, &rng);
		for (ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++)
			stack_cap(&t, seed, caps[ci]);
		stack_cap(&t, seed, t.max_depth > 1 ? t.max_depth - 1 : 1);
		stack_cap(&t, seed, t.max_depth ? t.max_depth : 1);
		ref_trace_free(&t);
	}

	for (p = 0; p < NPROP; p++)
		ksft_prop_result(&res[p], prop_name[p]);
	bad_returns();
	ksft_finished();
}
