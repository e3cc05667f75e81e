// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_stitch.c - stitch a burst of LBR call/return records onto the user
 * stack of its sample and replay it into the task's k-SF (the algorithm
 * is described in kcc_stitch.h).
 *
 * Runs in kcc.ko's worker (process context, one task's state at a time)
 * and in the userspace tools.  Nothing here allocates or blocks; all
 * memory is the caller's and every write is bounded by frames_cap,
 * stack_cap or KCC_STITCH_JOIN_MAX.
 */
#include "kcc_stitch.h"

/* A call instruction is 1..15 bytes long (SDM Vol. 2, 2.3.11). */
#define KCC_INSN_MAX	15

int kcc_stitch_init(struct kcc_stitch *st, struct kcc_forest *f, u32 k,
		    struct kcc_frame *stack, u32 stack_cap,
		    struct kcc_stitch_frame *frames, u32 frames_cap,
		    struct kcc_burst *burst)
{
	int ret;

	if (!st || !f || !frames || !frames_cap ||
	    f->nmetrics != KCC_NR_CTRS - 1)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	ret = kcc_ksf_init(&st->ksf, f, k, stack, stack_cap);
	if (ret)
		return ret;
	st->frames = frames;
	st->frames_cap = frames_cap;
	st->burst = burst;
	return 0;
}

void kcc_stitch_break(struct kcc_stitch *st)
{
	st->nr_last = 0;
}

u32 kcc_sample_why(const struct kcc_sample *s, size_t len, u32 *size)
{
	const struct kcc_branch *br;
	size_t want;
	u32 i;

	if (len < sizeof(*s))
		return KCC_SAMPLE_E_SHORT;
	if ((unsigned long)s & 7)
		return KCC_SAMPLE_E_ALIGN;
	if (s->size < sizeof(*s) || s->size > len)
		return KCC_SAMPLE_E_SHORT;
	if (s->size & 7)
		return KCC_SAMPLE_E_ALIGN;
	if (s->flags & ~KCC_SAMPLE_FLAGS_ALL)
		return KCC_SAMPLE_E_FLAGS;
	if (s->__reserved)
		return KCC_SAMPLE_E_RESERVED;
	if (s->nr_stack > KCC_INJECT_MAX_STACK)
		return KCC_SAMPLE_E_STACK;
	if (s->nr_branches > KCC_INJECT_MAX_BRANCHES)
		return KCC_SAMPLE_E_BRANCHES;
	want = sizeof(*s) + (size_t)s->nr_stack * sizeof(u64) +
	       (size_t)s->nr_branches * sizeof(struct kcc_branch);
	if (s->size != want)
		return KCC_SAMPLE_E_SIZE;
	br = kcc_sample_branches(s);
	for (i = 0; i < s->nr_branches; i++) {
		if (br[i].kind > KCC_BR_RET)
			return KCC_SAMPLE_E_KIND;
		if (br[i].__reserved)
			return KCC_SAMPLE_E_BR_RESERVED;
	}
	if (size)
		*size = s->size;
	return KCC_SAMPLE_OK;
}

int kcc_sample_check(const struct kcc_sample *s, size_t len)
{
	u32 size;

	if (kcc_sample_why(s, len, &size) != KCC_SAMPLE_OK)
		return -EINVAL;
	return size;
}

/*
 * Anchor the sampled stack itself, bottom first, without the scratch
 * frames: used to charge a sample whose burst is not replayed.
 */
static void kcc_stitch_anchor_sample(struct kcc_stitch *st,
				     const struct kcc_sample *s)
{
	const u64 *stack = kcc_sample_stack(s);
	u32 i;

	kcc_ksf_clear_stack(&st->ksf);
	if (s->flags & KCC_SAMPLE_TRUNCATED)
		kcc_ksf_enter(&st->ksf, KCC_LABEL_UNKNOWN);
	for (i = s->nr_stack; i > 0; i--)
		kcc_ksf_enter(&st->ksf, stack[i - 1]);
}

static void kcc_stitch_charge(struct kcc_stitch *st, const struct kcc_sample *s)
{
	kcc_ksf_charge(&st->ksf, KCC_CTR_EVENTS, s->delta);
	kcc_ksf_charge(&st->ksf, KCC_CTR_SAMPLES, 1);
}

/*
 * Step 1: from the sampled stack back to the stack at the oldest record.
 * frames[] holds the frames bottom first.  Returns the number of frames
 * left, or -EINVAL when the burst does not fit the stack.
 */
static int kcc_stitch_undo(struct kcc_stitch *st, const struct kcc_sample *s)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	const u64 *stack = kcc_sample_stack(s);
	struct kcc_stitch_frame *fr = st->frames;
	u32 n = s->nr_stack, i;

	if (n > st->frames_cap)
		return -EINVAL;
	/* frames[i] is stack entry n - 1 - i; its caller's return address
	 * is the entry below it, unknown for the bottom of the walk.
	 */
	for (i = 0; i < n; i++) {
		u32 e = n - 1 - i;

		fr[i].label = stack[e];
		fr[i].ret = e + 1 < n ? stack[e + 1] : 0;
	}

	for (i = 0; i < s->nr_branches; i++) {
		const struct kcc_branch *b = &br[i];

		switch (b->kind) {
		case KCC_BR_RET:
			/* Before the return its routine was on top again. */
			if (n >= st->frames_cap)
				return -EINVAL;
			fr[n].label = b->from;
			fr[n].ret = b->to;
			n++;
			break;
		case KCC_BR_CALL:
			/* The call created the top frame: its return
			 * address follows the call instruction.
			 */
			if (!n)
				return -EINVAL;
			if (fr[n - 1].ret &&
			    (fr[n - 1].ret <= b->from ||
			     fr[n - 1].ret - b->from > KCC_INSN_MAX))
				return -EINVAL;
			n--;
			break;
		default:
			return -EINVAL;
		}
	}
	return n;
}

static bool kcc_branch_eq(const struct kcc_branch *a, const struct kcc_branch *b)
{
	return a->from == b->from && a->to == b->to && a->kind == b->kind;
}

/*
 * Step 3's overlap: the L oldest records of the new burst that the
 * previous burst already replayed (the only one that qualifies, or with
 * KCC_JOIN_LONGEST the longest), 0 for none.
 * @start_depth: k-SF depth of the anchored stack before the oldest record.
 */
static u32 kcc_stitch_overlap(struct kcc_stitch *st, const struct kcc_sample *s,
			      u32 start_depth)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	u32 r = s->nr_branches, max = r < st->nr_last ? r : st->nr_last;
	bool depth_known = !((s->flags | st->last_flags) & KCC_SAMPLE_TRUNCATED);
	u32 depth = start_depth, found = 0, matches = 0, len, i;

	if (st->join_policy == KCC_JOIN_NONE)
		return 0;
	for (len = 1; len <= max; len++) {
		const struct kcc_branch *old = &br[r - len];

		/* Depth after the len oldest records of the new burst. */
		if (old->kind == KCC_BR_CALL)
			depth++;
		else
			depth--;
		if (depth_known && depth != st->last_depth)
			continue;
		for (i = 0; i < len; i++)
			if (!kcc_branch_eq(&br[r - len + i], &st->last[i]))
				break;
		if (i < len)
			continue;
		found = len;
		matches++;
	}
	if (matches > 1) {
		st->join_ambiguous++;
		if (st->join_policy != KCC_JOIN_LONGEST)
			return 0;
	}
	return found;
}

/**
 * kcc_stitch_sample() - apply one sample to the task's forest
 * @st:	the task's stitcher
 * @s:	a sample kcc_sample_check() accepted
 *
 * Return: 0, or -EINVAL for counts above the KCC_INJECT_MAX_* limits.
 */
int kcc_stitch_sample(struct kcc_stitch *st, const struct kcc_sample *s)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	u32 r = s->nr_branches, w = 1, start, overlap, i, keep;
	struct kcc_ksf *ksf = &st->ksf;
	int n;

	if (s->nr_stack > KCC_INJECT_MAX_STACK ||
	    r > KCC_INJECT_MAX_BRANCHES)
		return -EINVAL;
	st->samples++;

	if (!r) {
		/* No records (a frame-pointer sample): nothing to join. */
		st->nr_last = 0;
		goto charge_only;
	}
	if (st->burst)
		w = kcc_burst_decide(st->burst, kcc_sample_stack(s),
				     s->nr_stack);
	if (!w) {
		st->bursts_skipped++;
		st->nr_last = 0;
		goto charge_only;
	}
	n = kcc_stitch_undo(st, s);
	if (n < 0) {
		st->stitch_errors++;
		st->nr_last = 0;
		goto charge_only;
	}

	/* Step 2: anchor the stack at the oldest record, absolute depth. */
	kcc_ksf_clear_stack(ksf);
	if (s->flags & KCC_SAMPLE_TRUNCATED)
		kcc_ksf_enter(ksf, KCC_LABEL_UNKNOWN);
	for (i = 0; i < (u32)n; i++)
		kcc_ksf_enter(ksf, st->frames[i].label);
	start = ksf->depth;

	overlap = st->nr_last ? kcc_stitch_overlap(st, s, start) : 0;
	if (overlap)
		st->bursts_joined++;

	/* Step 3: replay, oldest first; the overlap was counted before. */
	for (i = r; i > 0; i--) {
		const struct kcc_branch *b = &br[i - 1];

		if (b->kind == KCC_BR_RET)
			kcc_ksf_return(ksf);
		else if (i > r - overlap)
			kcc_ksf_enter(ksf, b->to);
		else
			kcc_ksf_call_w(ksf, b->to, w);
	}
	st->bursts_replayed++;
	st->branches += r;

	keep = r < KCC_STITCH_JOIN_MAX ? r : KCC_STITCH_JOIN_MAX;
	memcpy(st->last, br, keep * sizeof(*br));
	st->nr_last = keep;
	st->last_depth = ksf->depth;
	st->last_flags = s->flags;

	/* Step 4. */
	kcc_stitch_charge(st, s);
	return 0;

charge_only:
	kcc_stitch_anchor_sample(st, s);
	kcc_stitch_charge(st, s);
	return 0;
}
