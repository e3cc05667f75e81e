// SPDX-License-Identifier: GPL-2.0
/*
 * anchor.c - anchoring a sample's stack takes back the frames of the
 * task's previous stack (kcc_ksf_rewind(), kcc_ksf_keep()) only where
 * entering them again would leave the same frames.
 *
 * The builder: a stack that shares a prefix with the previous one, then
 * differs (the frames above the first difference are never taken back,
 * even with the same labels: they hang under another caller); frames
 * above the depth of the previous stack; a frame whose push lost a
 * location (either one) in a full pool, and the same frame entered
 * again once the pool has grown; a pruned forest and watched contexts
 * (nothing taken back); a builder initialised again.
 *
 * The stitcher, over seeded random traces through kcc's LBR simulator
 * (every effect, truncated walks, counted calls, adaptive bursting):
 * one stitcher as kcc.ko runs it, one whose stack is cleared before
 * every sample so that nothing can be taken back, the way every sample
 * was anchored before.  Their forests must be equal node for node and
 * counter for counter, and so must their shadow stacks (locations and
 * memos), statistics and repairs, with pools that grow, pools that fill
 * (lost locations) and then grow, and pools that fill and are pruned
 * (nodes deleted and their indices reused between samples), as kcc.ko
 * does, and with the samples dealt to two tasks in turn (a task's
 * previous sample is then far from the current one).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "ref.h"
#include "kcc_hcct.h"
#include "kcc_ppp.h"
#include "kcc_stitch.h"
#include "ksfdump.h"
#include "lbrsim.h"
#include "samples.h"

#define A	0x1000ull
#define B	0x2000ull
#define C	0x3000ull
#define X	0x4000ull

struct bld {
	struct pool pool;
	struct kcc_frame stack[16];
	struct kcc_ksf s;
};

static void bld_init(struct bld *b, u32 cap, u32 k)
{
	if (ksf__pool_init(&b->pool, cap, KCC_NR_CTRS - 1) ||
	    kcc_ksf_init(&b->s, &b->pool.f, k, b->stack, 16))
		ksft_exit_fail_msg("out of memory\n");
}

static void enter_all(struct kcc_ksf *s, const u64 *l, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		kcc_ksf_enter(s, l[i]);
}

/* Frames taken back of @l (@stride bytes apart) after a stack of @old. */
static u32 kept(struct kcc_ksf *s, const u64 *old, u32 nold, const u64 *l,
		long stride, u32 n)
{
	u32 top;

	kcc_ksf_clear_stack(s);
	enter_all(s, old, nold);
	top = kcc_ksf_rewind(s);
	return kcc_ksf_keep(s, top, l, stride, n);
}

/*
 * Frames taken back of @abc after entering it at k = 1 in a pool of @cap
 * nodes, grown to 64 after the rewind.
 */
static u32 kept_full(struct bld *b, u32 cap, const u64 *abc)
{
	u32 top;

	bld_init(b, cap, 1);
	enter_all(&b->s, abc, 3);
	top = kcc_ksf_rewind(&b->s);
	if (ksf__pool_grow(&b->pool, 64))
		ksft_exit_fail_msg("out of memory\n");
	return kcc_ksf_keep(&b->s, top, abc, sizeof(u64), 3);
}

static void test_builder(void)
{
	static const u64 abc[] = { A, B, C }, axc[] = { A, X, C };
	static const u64 abcx[] = { A, B, C, X }, down[] = { C, B, A };
	struct bld b;
	struct kcc_ppp_run *ppp;
	struct kcc_fprune *pr;
	u32 n, top;

	bld_init(&b, 64, 2);
	n = kept(&b.s, abc, 3, axc, sizeof(u64), 3);
	ksft_test_result(n == 1 && b.s.depth == 1 && b.s.slab_pos == 1,
			 "a stack that differs at depth 2: only the frame below is taken back (%u)\n",
			 n);

	/* A X C is pending now: A X C X must keep 3, A B C only A. */
	kcc_ksf_enter(&b.s, X);
	kcc_ksf_enter(&b.s, C);
	top = kcc_ksf_rewind(&b.s);
	n = kcc_ksf_keep(&b.s, top, abcx, sizeof(u64), 4);
	ksft_test_result(top == 3 && n == 1,
			 "the frames of an older stack above the first difference are not taken back (top %u, kept %u)\n",
			 top, n);

	n = kept(&b.s, abc, 2, abcx, sizeof(u64), 4);
	ksft_test_result(n == 2 && b.s.depth == 2 && b.s.slab_pos == 0,
			 "frames above the previous stack's depth are not taken back (%u)\n",
			 n);

	n = kept(&b.s, down, 3, &down[2], -(long)sizeof(u64), 3);
	ksft_test_result(n == 0, "labels walked downwards, a stack in the other order: none (%u)\n",
			 n);
	n = kept(&b.s, abc, 3, &down[2], -(long)sizeof(u64), 3);
	ksft_test_result(n == 3 && b.s.depth == 3 && b.s.slab_pos == 1,
			 "labels walked downwards: the same stack is taken back whole (%u)\n",
			 n);
	pool__exit(&b.pool);

	/*
	 * k = 1, 3 nodes: A (t), B (t and b: 2 nodes), C lost.  After the
	 * pool grows, entering C again finds room: its frame is entered.
	 */
	n = kept_full(&b, 3, abc);
	ksft_test_result(n == 2 && b.pool.f.drops > 0,
			 "a frame whose push lost a location is not taken back (kept %u)\n",
			 n);
	/* C is entered now: its frame holds both locations again. */
	kcc_ksf_enter(&b.s, C);
	n = kept(&b.s, abc, 3, abc, sizeof(u64), 3);
	ksft_test_result(n == 3,
			 "the frame entered again without a loss is taken back (kept %u)\n",
			 n);
	pool__exit(&b.pool);

	/*
	 * k = 1, 4 nodes: A, B (2), C's top location (a slab root) and no
	 * room for its bottom one: the frame keeps t, loses b, and is not
	 * taken back once the pool has grown either.
	 */
	n = kept_full(&b, 4, abc);
	ksft_test_result(n == 2 && b.s.stack[2].t != KCC_NIL &&
			 b.s.stack[2].b == KCC_NIL,
			 "a frame that lost its bottom location only is not taken back (kept %u)\n",
			 n);
	pool__exit(&b.pool);

	/*
	 * k = 1, 5 nodes: A, B and X fill the pool, C at X's depth is
	 * lost; X pushed again there hits B's memo, which the lost push
	 * did not change, and no frame of A B X lost anything since:
	 * all three are taken back.
	 */
	{
		static const u64 abx[] = { A, B, X };

		bld_init(&b, 5, 1);
		enter_all(&b.s, abx, 3);
		kcc_ksf_return(&b.s);
		kcc_ksf_enter(&b.s, C);
		kcc_ksf_return(&b.s);
		kcc_ksf_enter(&b.s, X);
		top = kcc_ksf_rewind(&b.s);
		n = kcc_ksf_keep(&b.s, top, abx, sizeof(u64), 3);
		ksft_test_result(b.pool.f.drops > 0 && n == 3,
				 "a frame pushed by its caller's memo after a loss at its depth is taken back (kept %u)\n",
				 n);
		pool__exit(&b.pool);
	}

	bld_init(&b, 64, 3);
	enter_all(&b.s, abc, 3);
	if (kcc_ksf_init(&b.s, &b.pool.f, 3, b.stack, 16))
		ksft_exit_fail_msg("kcc_ksf_init failed\n");
	ksft_test_result(kcc_ksf_rewind(&b.s) == 0,
			 "a builder initialised again takes nothing back\n");

	/* kcc_ksf_rewind() tests the watched contexts' run for NULL only. */
	ppp = calloc(1, 4096);
	if (!ppp)
		ksft_exit_fail_msg("out of memory\n");
	enter_all(&b.s, abc, 3);
	b.s.ppp = ppp;
	top = kcc_ksf_rewind(&b.s);
	b.s.ppp = NULL;
	ksft_test_result(top == 0, "with watched contexts nothing is taken back\n");
	free(ppp);

	pr = calloc(1, sizeof(*pr) + kcc_fprune_mem_size(64));
	if (!pr)
		ksft_exit_fail_msg("out of memory\n");
	enter_all(&b.s, abc, 3);
	if (kcc_fprune_start(pr, pr + 1, kcc_fprune_mem_size(64), &b.pool.f,
			     KCC_CTR_SAMPLES))
		ksft_exit_fail_msg("kcc_fprune_start failed\n");
	ksft_test_result(kcc_ksf_rewind(&b.s) == 0,
			 "in a pruned forest nothing is taken back\n");
	pool__exit(&b.pool);
	free(pr);
}

/* ---- the batch entry points against one event at a time ---------------- */

/*
 * kcc_ksf_replay() and kcc_ksf_enter_n() run loops compiled for a plain
 * forest of a CCT or of a k-SF, find slab boundaries from the depth in
 * the latter (not stepping the slab position), and count calls and
 * returns from the depth; and
 * kcc_ksf_charge2() finds the context once for two metrics.  Each must
 * leave what one kcc_ksf_call(), kcc_ksf_return(), kcc_ksf_enter() or
 * kcc_ksf_charge() per event leaves: the forest node for node, the
 * shadow stack with its memos, the slab position and the statistics,
 * here with frames entered among the events, stacks cleared as
 * anchoring does, samples charged, stray returns, full pools and stack
 * caps.
 */

struct ops_side {
	struct kcc_forest f;
	void *mem;
	struct kcc_frame *stack;
	struct kcc_ksf s;
};

static void ops_init(struct ops_side *o, u32 k, u32 cap, u32 stack_cap)
{
	o->mem = ref_forest_new(&o->f, cap, KCC_NR_CTRS - 1);
	o->stack = ref_alloc((size_t)stack_cap * sizeof(*o->stack));
	if (kcc_ksf_init(&o->s, &o->f, k, o->stack, stack_cap))
		ksft_exit_fail_msg("kcc_ksf_init failed\n");
}

static bool ops_equal(const struct ops_side *a, const struct ops_side *b)
{
	const struct kcc_ksf *x = &a->s, *y = &b->s;

	return a->f.count == b->f.count && a->f.drops == b->f.drops &&
	       !memcmp(a->f.nodes, b->f.nodes, (size_t)a->f.count * a->f.stride) &&
	       !memcmp(a->stack, b->stack, x->stack_cap * sizeof(*a->stack)) &&
	       x->depth == y->depth && x->slab_pos == y->slab_pos &&
	       x->max_depth == y->max_depth && x->lost_at == y->lost_at &&
	       x->calls == y->calls && x->returns == y->returns &&
	       x->bad_returns == y->bad_returns &&
	       x->lost_calls == y->lost_calls &&
	       x->stack_drops == y->stack_drops &&
	       x->lost_charges == y->lost_charges;
}

/* One trace with runs of entered frames and clears woven in, both ways. */
static bool ops_run(const struct ref_trace *t, u32 k, u32 cap, u32 stack_cap,
		    u64 *rng)
{
	struct ops_side one, batch;
	u64 *ev = ref_alloc((t->n + 64) * sizeof(*ev));
	size_t i = 0, n;
	bool ok;

	ops_init(&one, k, cap, stack_cap);
	ops_init(&batch, k, cap, stack_cap);
	while (i < t->n) {
		u32 what = ref_below(rng, 8), j;

		if (what == 0) {
			/* Frames entered, labels of the trace's routines. */
			n = ref_below(rng, 12);
			for (j = 0; j < n; j++) {
				ev[j] = ref_label(ref_below(rng, t->nr));
				kcc_ksf_enter(&one.s, ev[j]);
			}
			kcc_ksf_enter_n(&batch.s, ev, sizeof(*ev), (u32)n);
			continue;
		}
		if (what == 1) {
			kcc_ksf_clear_stack(&one.s);
			kcc_ksf_clear_stack(&batch.s);
			continue;
		}
		if (what == 3) {
			/* A sample charged: two metrics, one look. */
			u64 delta = ref_rand(rng) >> 40;

			kcc_ksf_charge(&one.s, KCC_CTR_EVENTS, delta);
			kcc_ksf_charge(&one.s, KCC_CTR_SAMPLES, 1);
			kcc_ksf_charge2(&batch.s, KCC_CTR_EVENTS, delta,
					KCC_CTR_SAMPLES, 1);
		}
		/* A batch of events, a stray return first now and then. */
		n = 0;
		if (what == 2)
			ev[n++] = KCC_EV_RET;
		for (j = ref_below(rng, 64); j > 0 && i < t->n; j--, i++)
			ev[n++] = t->ev[i] == REF_RET ? KCC_EV_RET :
				  ref_label(t->ev[i]);
		for (j = 0; j < n; j++)
			if (ev[j] == KCC_EV_RET)
				kcc_ksf_return(&one.s);
			else
				kcc_ksf_call(&one.s, ev[j]);
		kcc_ksf_replay(&batch.s, ev, n);
	}
	ok = ops_equal(&one, &batch);
	free(one.mem);
	free(one.stack);
	free(batch.mem);
	free(batch.stack);
	free(ev);
	return ok;
}

static void test_batches(void)
{
	static const u32 kk[] = { 1, 2, 3, 4, 5, 7, 16, KCC_K_INF };
	u64 rng = 0xba7c4ull;
	u32 ok = 0, runs = 0, i, ki;

	for (i = 0; i < 60; i++) {
		struct ref_trace t;
		struct ref_gen g;

		ref_gen_random(&g, &rng);
		ref_gen_trace(&t, &g, &rng);
		for (ki = 0; ki < sizeof(kk) / sizeof(kk[0]); ki++) {
			/* A pool that holds it, one that fills; a cap or none. */
			u32 cap = ref_below(&rng, 2) ? 2 * (u32)t.calls + 64 :
				  1 + ref_below(&rng, 64);
			u32 stack_cap = ref_below(&rng, 2) ? t.max_depth + 16 :
					1 + ref_below(&rng, 8);

			runs++;
			if (ops_run(&t, kk[ki], cap, stack_cap, &rng))
				ok++;
			else
				ksft_print_msg("trace %u, k %u, %u nodes, stack %u: the batches left another forest, stack or statistics\n",
					       i, kk[ki], cap, stack_cap);
		}
		ref_trace_free(&t);
	}
	ksft_test_result(ok == runs,
			 "kcc_ksf_replay(), kcc_ksf_enter_n() and kcc_ksf_charge2() leave what one event at a time leaves (%u/%u runs)\n",
			 ok, runs);
}

/* ---- the stitcher, with and without frames taken back ------------------ */

enum pool_mode {
	POOL_GROW, POOL_FULL_GROW, POOL_FULL_PRUNE, TWO_TASKS, NR_MODES
};

struct twin {
	/* Per task: [2t + 1] has its stack cleared before every sample. */
	struct stitcher sr[4];
	void *pmem[4];
	enum pool_mode mode;
	u64 samples;
	u64 grow_at;
	int err;
};

static const char *const mode_name[NR_MODES] = {
	"pools that grow", "pools that fill, then grow",
	"pools that fill and are pruned",
	"two tasks' samples in turn, each its own forest",
};

/* As kcc.ko's kcc_task_prune_start(): prune from now on. */
static int twin_prune(struct stitcher *sr, void **pmem)
{
	struct kcc_forest *f = &sr->pool.f;
	size_t sz = kcc_fprune_mem_size(f->capacity);
	struct kcc_fprune *p = calloc(1, sizeof(*p) + sz);

	if (!p)
		return -ENOMEM;
	*pmem = p;
	if (kcc_fprune_start(p, p + 1, sz, f, KCC_CTR_SAMPLES))
		return -EINVAL;
	kcc_fprune_begin(f);
	kcc_ksf_pin(&sr->st.ksf);
	kcc_fprune_sweep(f);
	return 0;
}

/*
 * kcc_ksf_keep() reads the label of a pending frame above the bottom
 * one from its caller's memo, not from the frame's node: below the
 * lowest frame that lost a location the two must be the same.
 */
static struct ksft_prop memo_prop;

static void memo_check(const struct kcc_ksf *s)
{
	u32 n = s->depth < s->stack_cap ? s->depth : s->stack_cap, d;

	if (s->f->pr || s->ppp)
		return;
	if (n > s->lost_at)
		n = s->lost_at;
	for (d = 1; d < n; d++) {
		u64 label = kcc_forest_node(s->f, s->stack[d].t)->label;

		ksft_prop_check(&memo_prop, s->stack[d - 1].memo_label == label,
				"depth %u of %u: memo label %#" PRIx64 ", frame label %#" PRIx64,
				d + 1, n, s->stack[d - 1].memo_label, label);
	}
}

static int twin_emit(void *arg, const struct kcc_sample *s)
{
	struct twin *tw = arg;
	u32 need = 2 * (s->nr_stack + s->nr_branches) + 2, i;
	u32 task = tw->mode == TWO_TASKS ? 2 * (tw->samples & 1) : 0;

	tw->samples++;
	for (i = task; i < task + 2 && !tw->err; i++) {
		struct stitcher *sr = &tw->sr[i];
		struct kcc_forest *f = &sr->pool.f;

		if (tw->mode == POOL_FULL_GROW && tw->samples == tw->grow_at &&
		    ksf__pool_grow(&sr->pool, 4 * f->capacity + need))
			tw->err = -ENOMEM;
		if (tw->mode == POOL_FULL_PRUNE && !f->pr &&
		    f->capacity - f->count < need)
			tw->err = twin_prune(sr, &tw->pmem[i]);
		if (f->pr) {
			kcc_fprune_begin(f);
			kcc_ksf_pin(&sr->st.ksf);
		}
		if (i & 1)
			kcc_ksf_clear_stack(&sr->st.ksf);
		if (!tw->err)
			tw->err = stitcher__sample(sr, s);
		if (!tw->err && !(i & 1))
			memo_check(&sr->st.ksf);
	}
	return tw->err;
}

#define EQ(field) (a->field == b->field)

static bool twin_equal(const struct twin *tw, u32 task, char *why, size_t len)
{
	const struct kcc_stitch *a = &tw->sr[2 * task].st;
	const struct kcc_stitch *b = &tw->sr[2 * task + 1].st;
	const struct kcc_forest *fa = a->ksf.f, *fb = b->ksf.f;
	const struct kcc_ksf *sa = &a->ksf, *sb = &b->ksf;

	if (fa->count != fb->count || fa->live != fb->live ||
	    fa->drops != fb->drops ||
	    memcmp(fa->nodes, fb->nodes, (size_t)fa->count * fa->stride)) {
		snprintf(why, len, "forests differ (%u/%u nodes)", fa->count,
			 fb->count);
		return false;
	}
	if (fa->pr && (!fb->pr || fa->pr->evicted != fb->pr->evicted)) {
		snprintf(why, len, "evictions differ");
		return false;
	}
	if (memcmp(sa->stack, sb->stack, sa->stack_cap * sizeof(*sa->stack))) {
		snprintf(why, len, "shadow stacks differ");
		return false;
	}
	if (!(sa->depth == sb->depth && sa->slab_pos == sb->slab_pos &&
	      sa->max_depth == sb->max_depth && sa->calls == sb->calls &&
	      sa->returns == sb->returns && sa->stack_drops == sb->stack_drops &&
	      sa->lost_calls == sb->lost_calls &&
	      sa->bad_returns == sb->bad_returns &&
	      sa->lost_charges == sb->lost_charges)) {
		snprintf(why, len, "builder statistics differ");
		return false;
	}
	if (!(EQ(samples) && EQ(bursts_replayed) && EQ(bursts_skipped) &&
	      EQ(bursts_joined) && EQ(join_ambiguous) && EQ(branches) &&
	      EQ(stitch_errors) &&
	      !memcmp(&a->calls, &b->calls, sizeof(a->calls)) &&
	      !memcmp(&a->cnt, &b->cnt, sizeof(a->cnt)))) {
		snprintf(why, len, "stitcher statistics differ");
		return false;
	}
	return true;
}

static const u32 ks[] = { 1, 2, 3, 4, 7, KCC_K_INF };

/* One trace, one setting drawn from @rng: true when the twins agree. */
static bool twin_run(const struct ref_trace *t, enum pool_mode mode,
		     u64 *rng, char *why, size_t len)
{
	struct lbrsim_opts so = {
		.period = 1 + ref_below(rng, 40),
		.lbr_depth = ref_below(rng, KCC_INJECT_MAX_BRANCHES + 1),
		.stack_depth = ref_below(rng, 3) ? KCC_INJECT_MAX_STACK :
			       1 + ref_below(rng, 24),
		.seed = ref_rand(rng),
		.effects = ref_below(rng, 2) ? 0 : (u32)ref_rand(rng) &
			   LBRSIM_FX_ALL,
		.count_calls = ref_below(rng, 2),
	};
	struct stitcher_opts o = {
		.k = ks[ref_below(rng, sizeof(ks) / sizeof(ks[0]))],
		.rr_inv = ref_below(rng, 3) ? 0 : 2 + ref_below(rng, 4),
		.table = 64, .sig_depth = 4, .seed = 1 + ref_rand(rng),
		.no_join = ref_below(rng, 4) == 0,
		.max_nodes = mode == POOL_FULL_GROW || mode == POOL_FULL_PRUNE ?
			     8 + ref_below(rng, 200) : 0,
	};
	struct twin tw = { .mode = mode };
	struct lbrsim sim;
	bool ok;
	u32 i;
	int ret;

	tw.grow_at = 1 + ref_below(rng, t->calls / so.period + 2);
	for (i = 0; i < 4; i++)
		if (stitcher__init(&tw.sr[i], &o))
			ksft_exit_fail_msg("out of memory\n");
	if (lbrsim__init(&sim, t->nr, &so, twin_emit, &tw))
		ksft_exit_fail_msg("out of memory\n");
	ret = lbrsim__run(&sim, t->ev, t->n);
	if (!ret)
		ret = lbrsim__finish(&sim);
	if (ret || tw.err) {
		snprintf(why, len, "simulation failed: %d %d", ret, tw.err);
		ok = false;
	} else {
		ok = twin_equal(&tw, 0, why, len) &&
		     (mode != TWO_TASKS || twin_equal(&tw, 1, why, len));
	}
	if (!ok)
		snprintf(why + strlen(why), len - strlen(why),
			 " (k %u, period %u, lbr %u, walk %u, effects 0x%x, counted %d, rr %u, nodes %u)",
			 o.k, so.period, so.lbr_depth, so.stack_depth,
			 so.effects, so.count_calls, o.rr_inv, o.max_nodes);
	lbrsim__exit(&sim);
	for (i = 0; i < 4; i++) {
		stitcher__exit(&tw.sr[i]);
		free(tw.pmem[i]);
	}
	return ok;
}

#define TWIN_TRACES	150

static void test_twins(enum pool_mode mode)
{
	u64 rng = 0xa2c40ull + mode;
	u32 ok = 0, i;
	char why[256];

	for (i = 0; i < TWIN_TRACES; i++) {
		struct ref_trace t;
		struct ref_gen g;

		ref_gen_random(&g, &rng);
		ref_gen_trace(&t, &g, &rng);
		if (twin_run(&t, mode, &rng, why, sizeof(why)))
			ok++;
		else
			ksft_print_msg("trace %u: %s\n", i, why);
		ref_trace_free(&t);
	}
	ksft_test_result(ok == TWIN_TRACES,
			 "%s: frames taken back leave the forest, stack and statistics of anchoring from scratch (%u/%u traces)\n",
			 mode_name[mode], ok, TWIN_TRACES);
}

int main(void)
{
	int m;

	ksft_print_header();
	ksft_set_plan(14 + NR_MODES);
	test_builder();
	test_batches();
	for (m = 0; m < NR_MODES; m++)
		test_twins(m);
	ksft_prop_result(&memo_prop, "below the lowest frame that lost a location, a caller's memo names the frame above it");
	ksft_finished();
}
