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
#include "kcc_hcct.h"
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
	st->ksf.var_ctr = KCC_CTR_CALLS_VAR;
	st->frames = frames;
	st->frames_cap = frames_cap;
	st->burst = burst;
	return 0;
}

void kcc_stitch_break(struct kcc_stitch *st)
{
	st->nr_last = 0;
}

/* Nodes the forest has deleted so far: the tail is void once it grows. */
static u64 kcc_stitch_evicted(const struct kcc_forest *f)
{
	return f->pr ? f->pr->evicted + 1 : 0;
}

void kcc_stitch_counts_add(struct kcc_stitch_counts *dst,
			   const struct kcc_stitch_counts *src)
{
	u64 *d = (u64 *)dst;
	const u64 *x = (const u64 *)src;
	size_t i;

	for (i = 0; i < sizeof(*dst) / sizeof(u64); i++)
		d[i] += x[i];
}

void kcc_stitch_counts_export(struct kcc_status *st,
			      const struct kcc_stitch_counts *c)
{
	st->stitch_leaf_repaired = c->leaf_repaired;
	st->stitch_walk_repaired = c->walk_repaired;
	st->stitch_walk_cut = c->walk_cut;
	st->stitch_skid_repaired = c->skid_repaired;
	st->stitch_unrecorded = c->unrecorded;
	st->stitch_unmatched_return = c->unmatched_return;
	st->stitch_far_skipped = c->far_skipped;
	st->stitch_below_walk = c->below_walk;
}

void kcc_stitch_calls_add(struct kcc_stitch_calls *dst,
			  const struct kcc_stitch_calls *src)
{
	u64 *d = (u64 *)dst;
	const u64 *x = (const u64 *)src;
	size_t i;

	for (i = 0; i < sizeof(*dst) / sizeof(u64); i++)
		d[i] += x[i];
}

void kcc_stitch_calls_export(struct kcc_status *st,
			     const struct kcc_stitch_calls *c)
{
	st->calls_samples = c->samples;
	st->calls_counter = c->counter;
	st->calls_exact = c->exact;
	st->calls_scaled = c->scaled;
	st->calls_unplaced = c->unplaced + c->pool;
	st->calls_bursts_exact = c->bursts_exact;
	st->calls_bursts_scaled = c->bursts_scaled;
	st->calls_after_last = c->pending;
}

void kcc_stitch_carry(struct kcc_stitch *st, u64 calls)
{
	st->calls.pending += calls;
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
	if ((s->flags & (KCC_SAMPLE_CALLS_SAT | KCC_SAMPLE_CALLS_POOL |
			 KCC_SAMPLE_CALLS_DRAW)) && !(s->flags & KCC_SAMPLE_CALLS))
		return KCC_SAMPLE_E_FLAGS;
	if (s->calls && !(s->flags & KCC_SAMPLE_CALLS))
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
 * Step 2: clear the stack and enter the labels of @nseg runs of frames,
 * bottom first, below them [unknown] when @unknown.  Consecutive samples
 * of a task share their outer frames, so the frames of the previous
 * stack are taken back while they are the same (kcc_ksf_keep()), and
 * entered from the first that differs.
 */
static void kcc_stitch_anchor(struct kcc_ksf *ksf, bool unknown,
			      const struct kcc_stitch_labels *seg, u32 nseg)
{
	static const u64 unknown_label = KCC_LABEL_UNKNOWN;
	u32 top = kcc_ksf_rewind(ksf), i, j;

	if (unknown && !kcc_ksf_keep(ksf, top, &unknown_label, 0, 1)) {
		top = 0;
		kcc_ksf_enter(ksf, KCC_LABEL_UNKNOWN);
	}
	for (j = 0; j < nseg; j++) {
		const u8 *l = seg[j].first;
		long stride = seg[j].stride;
		u32 n = seg[j].n;

		i = top ? kcc_ksf_keep(ksf, top, l, stride, n) : 0;
		if (i < n)
			top = 0;	/* nothing above is taken back */
		kcc_ksf_enter_n(ksf, l + (long)i * stride, stride, n - i);
	}
}

/* The outermost @n entries of the sample's stack, bottom first. */
static struct kcc_stitch_labels kcc_stitch_walk(const struct kcc_sample *s,
						u32 n)
{
	const u64 *stack = kcc_sample_stack(s);
	struct kcc_stitch_labels l = {
		.first = (const u8 *)(s->nr_stack ? &stack[s->nr_stack - 1] :
				      stack),
		.stride = -(long)sizeof(*stack),
		.n = n,
	};

	return l;
}

/*
 * Anchor the sampled stack itself, bottom first, without the scratch
 * frames: used to charge a sample whose burst is not replayed.
 */
static void kcc_stitch_anchor_sample(struct kcc_stitch *st,
				     const struct kcc_sample *s)
{
	struct kcc_stitch_labels walk = kcc_stitch_walk(s, s->nr_stack);

	kcc_stitch_anchor(&st->ksf, s->flags & KCC_SAMPLE_TRUNCATED, &walk, 1);
}

static void kcc_stitch_charge(struct kcc_stitch *st, const struct kcc_sample *s)
{
	kcc_ksf_charge2(&st->ksf, KCC_CTR_EVENTS, s->delta, KCC_CTR_SAMPLES, 1);
}

/* popped_at[]: the frame popped had been put back by a return record. */
#define KCC_POPPED_RET	0x8000

/* The return address @ret can follow the call at @from (0: unknown). */
static bool kcc_call_fits(u64 ret, u64 from)
{
	/*
	 * ret - from in 1..KCC_INSN_MAX, one compare: at or below @from it
	 * wraps round to 2^63 - 1 or more, @from being a user address (a record
	 * with a kernel one is skipped, or fails the fit's test after it).
	 */
	return ret - from - 1 < KCC_INSN_MAX || !ret;
}

/*
 * A record the stitcher can use: a call or a return between user
 * addresses.  x86-64 user addresses have bit 63 clear; a far branch
 * (SYSRET, IRET) the driver's filter let through has a kernel source.
 */
static bool kcc_user_addr(u64 addr)
{
	return !(addr >> 63);
}

static bool kcc_branch_usable(const struct kcc_branch *b)
{
	return (b->kind == KCC_BR_CALL || b->kind == KCC_BR_RET) &&
	       kcc_user_addr(b->from | b->to);
}

/*
 * Some frames below the top, but at most KCC_STITCH_SKID_MAX and all
 * from the walk, end at a return address that follows the call at
 * @from: the frames above were made without a call record (the
 * registers were read after calls the frozen LBR misses, or a signal
 * handler and its restorer).  Returns how many, 0 for none.
 */
static u32 kcc_stitch_unrecorded(const struct kcc_stitch_frame *fr, u32 n,
				 u64 from)
{
	u32 j;

	for (j = 1; j <= KCC_STITCH_SKID_MAX && j < n; j++) {
		const struct kcc_stitch_frame *f = &fr[n - 1 - j];

		if (fr[n - j].flags & (KCC_SF_RET | KCC_SF_REPAIRED))
			return 0;
		if (f->ret && kcc_call_fits(f->ret, from))
			return j;
	}
	return 0;
}

/*
 * A call whose callee frame fr[n - 1] does not fit (its return address
 * does not follow the call).  Returns the new frame count.
 */
static u32 kcc_stitch_misfit(struct kcc_stitch *st, u32 n, u32 i,
			     const struct kcc_branch *b, bool open)
{
	struct kcc_stitch_frame *fr = st->frames, *t = &fr[n - 1];
	struct kcc_stitch_counts *c = &st->undo_cnt;
	u32 j, m;

	st->altered = true;
	if (t->flags & KCC_SF_RET) {
		/*
		 * The return record put back a frame this call did not
		 * make.  When the frame below fits, no recorded call made
		 * it (a signal handler's return to the restorer): it is
		 * re-entered before the newest call that may have been
		 * made from it (the calls before may be the interrupted
		 * routine's: no record tells), else just before its
		 * return.  Otherwise the two pair without fitting (a
		 * retpoline).
		 */
		c->unmatched_return++;
		if (n > 1 && kcc_call_fits(fr[n - 2].ret, b->from) &&
		    fr[n - 2].ret &&
		    st->nr_reenter < KCC_STITCH_REENTER_MAX) {
			u32 at = t->rec, k;

			for (k = t->rec + 1; k < i; k++) {
				if ((st->popped_at[k] & ~KCC_POPPED_RET) ==
				    n + 1) {
					at = k;
					break;
				}
			}
			st->reenter_at[st->nr_reenter] = at;
			st->reenter_label[st->nr_reenter++] = t->label;
			n--;
		}
		return n - 1;
	}
	j = kcc_stitch_unrecorded(fr, n, b->from);
	if (j && st->nr_reenter + j <= KCC_STITCH_REENTER_MAX) {
		/*
		 * When they were made is not recorded.  A newer call that
		 * popped a walk frame right above them was made from the
		 * top one (a handler's call): they are re-entered before
		 * the oldest such call.  Otherwise after the newest record
		 * (skid: the calls came after the LBR froze; a handler run
		 * after the records).  Bottom first.
		 */
		u32 at = KCC_STITCH_AT_END, k;

		for (k = i; k-- > 0;) {
			if (st->popped_at[k] == n + 1) {	/* a walk frame */
				at = k;
				break;
			}
		}
		for (m = n - j; m < n; m++) {
			st->reenter_at[st->nr_reenter] = at;
			st->reenter_label[st->nr_reenter++] = fr[m].label;
		}
		c->unrecorded += j;
		return n - j - 1;
	}
	if ((t->flags & KCC_SF_IP) || !open) {
		/*
		 * A frameless routine does not link its frame: the walk
		 * skips its return address, so its caller is missing and
		 * it shows its caller's return address.  The call names
		 * the caller: the frame becomes the caller's, which keeps
		 * the return address the walk found.  In a complete walk
		 * a chain of frameless callers is repaired one by one.
		 */
		if ((t->flags & KCC_SF_IP) && !(t->flags & KCC_SF_REPAIRED))
			c->leaf_repaired++;
		else
			c->walk_repaired++;
		t->label = b->from;
		t->flags = KCC_SF_REPAIRED;
		return n;
	}
	/*
	 * A walk that did not end at the outermost frame and does not fit
	 * the records below the sampled frame: the frame pointer it
	 * followed was not one (library code that uses it as a
	 * register).  Keep what the records say, [unknown] below.
	 */
	c->walk_cut++;
	fr[0].label = b->from;
	fr[0].ret = 0;
	fr[0].flags = KCC_SF_REPAIRED;
	st->cut = true;
	return 1;
}

/*
 * The newest record returns to where the sampled routine would: either
 * it left the sampled routine after the registers were read (skid), or
 * a recursive call from the same call site returned.
 */
static bool kcc_stitch_skid(const struct kcc_sample *s)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	const u64 *stack = kcc_sample_stack(s);

	return s->nr_stack > 1 && s->nr_branches &&
	       br[0].kind == KCC_BR_RET && kcc_branch_usable(&br[0]) &&
	       br[0].to == stack[1];
}

/* Misfits an undo repaired (skipped records and skid are not). */
static u64 kcc_stitch_repairs(const struct kcc_stitch_counts *c)
{
	return c->leaf_repaired + c->walk_repaired + c->walk_cut +
	       c->unrecorded + c->unmatched_return + c->below_walk;
}

/*
 * The replay's events of a burst that fits, oldest first, at the end of
 * the frames' scratch (kcc_stitch_undo_fit()).
 */
static u64 *kcc_stitch_fit_ev(const struct kcc_stitch *st, u32 r)
{
	return (u64 *)(st->frames + st->frames_cap) - r;
}

/*
 * The labels of the frames a burst that fits put back, bottom first, at
 * the start of the frames' scratch (kcc_stitch_undo_fit()); their return
 * addresses follow, @r u64s on.
 */
static u64 *kcc_stitch_fit_labels(const struct kcc_stitch *st)
{
	return (u64 *)st->frames;
}

/*
 * Step 1 when every record is usable and every call fits the frame it
 * pops, the usual burst: the frames of the walk that are left stay in
 * the sample (nr_walk of them, at the bottom) and only the frames put
 * back by return records are written, their labels and their return
 * addresses in two arrays of the scratch (kcc_stitch_fit_labels()).
 * What is left, and its order, is what kcc_stitch_undo() leaves without
 * a misfit.  The replay's events are written on the way, at the end of
 * the scratch (kcc_stitch_fit_ev()).  Returns the number of frames, or
 * -1 at the first record that needs kcc_stitch_undo() (a misfit, an
 * unusable record, a call below the walk, frames_cap reached).  @skid:
 * the sampled frame is gone.
 */
static int kcc_stitch_undo_fit(struct kcc_stitch *st,
			       const struct kcc_sample *s, bool skid)
{
	const struct kcc_branch *b = kcc_sample_branches(s), *end;
	const u64 *stack = kcc_sample_stack(s);
	u32 n = s->nr_stack, r = s->nr_branches, cap = st->frames_cap, w = n;
	u64 *label = kcc_stitch_fit_labels(st), *ret = label + r;
	u64 *ev = kcc_stitch_fit_ev(st, r) + r, far = 0;
	size_t o = 0;

	/*
	 * At most w + r frames, so frames_cap is never reached; and the
	 * labels and return addresses put back, at most r each, and the r
	 * events do not meet.
	 */
	if (w + r > cap ||
	    (size_t)r * 3 * sizeof(*ev) > (size_t)cap * sizeof(*st->frames))
		return -1;
	w -= skid;
	/* Locals: the stores below may alias the records for the compiler. */
	for (end = b + r; b < end; b++) {
		u64 from = b->from, to = b->to;

		/* Kernel addresses: tested once, after the loop. */
		far |= from;
		far |= to;
		if (b->kind == KCC_BR_RET) {
			label[o] = from;
			ret[o] = to;
			o++;
			*--ev = KCC_EV_RET;
			continue;
		}
		if (b->kind != KCC_BR_CALL)
			return -1;
		/* A usable call's target is a user address: never KCC_EV_RET. */
		*--ev = to;
		/* The top frame's return address, as in the undo. */
		if (o) {
			if (!kcc_call_fits(ret[o - 1], from))
				return -1;
			o--;
		} else {
			/* The bottom frame's return address is unknown. */
			if (!w || (w > 1 &&
				   !kcc_call_fits(stack[n - w + 1], from)))
				return -1;
			w--;
		}
	}
	if (!kcc_user_addr(far))
		return -1;
	st->nr_walk = w;
	return w + (u32)o;
}

/*
 * Step 1: from the sampled stack back to the stack at the oldest record
 * replayed, and the plan of the replay (records skipped, frames to
 * re-enter), counted in undo_cnt.  @skid: the newest record may be a
 * return of the sampled routine made after its registers were read.
 * The frames, bottom first, are the sample's nr_walk outermost stack
 * entries and then frames[] (kcc_stitch_undo_fit(); nr_walk is 0 when
 * a misfit made it copy the walk).  Returns the number of frames left,
 * or -EINVAL when frames_cap is too small.
 */
static int kcc_stitch_undo(struct kcc_stitch *st, const struct kcc_sample *s,
			   bool skid)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	const u64 *stack = kcc_sample_stack(s);
	struct kcc_stitch_frame *fr = st->frames;
	u32 n = s->nr_stack, r = s->nr_branches, i;
	int ret;

	memset(&st->undo_cnt, 0, sizeof(st->undo_cnt));
	st->skip = 0;
	st->nr_reenter = 0;
	st->cut = false;
	st->altered = false;
	st->fit = false;
	if (n > st->frames_cap)
		return -EINVAL;
	skid = skid && kcc_stitch_skid(s);
	/*
	 * Skid: the newest record returns from the sampled routine itself,
	 * so the LBR froze after the registers were read.  The frame is
	 * gone at the last record; the sample goes to the caller.
	 */
	st->undo_cnt.skid_repaired = skid;
	st->altered = skid;
	ret = kcc_stitch_undo_fit(st, s, skid);
	st->fit = ret >= 0;
	if (st->fit)
		return ret;
	st->nr_walk = 0;
	/* frames[i] is stack entry n - 1 - i; its caller's return address
	 * is the entry below it, unknown for the bottom of the walk.
	 */
	for (i = 0; i < n; i++) {
		fr[i].label = stack[n - 1 - i];
		fr[i].ret = i ? stack[n - i] : 0;
		fr[i].flags = 0;
		fr[i].rec = 0;
	}
	if (n)
		fr[n - 1].flags = KCC_SF_IP;
	n -= skid;

	for (i = 0; i < r; i++) {
		const struct kcc_branch *b = &br[i];

		st->popped_at[i] = 0;
		if (!kcc_branch_usable(b)) {
			st->undo_cnt.far_skipped++;
			st->skip |= 1ull << i;
			st->altered = true;	/* joining counts every record */
			continue;
		}
		if (b->kind == KCC_BR_RET) {
			/* Before the return its routine was on top again. */
			if (n >= st->frames_cap)
				return -EINVAL;
			fr[n].label = b->from;
			fr[n].ret = b->to;
			fr[n].flags = KCC_SF_RET;
			fr[n].rec = i;
			n++;
			continue;
		}
		/* The call created the top frame. */
		if (!n) {
			/*
			 * Its callee lies in the part the walk missed: cut
			 * off, or a frameless routine at the bottom of a
			 * complete walk (whose return address the bottom
			 * frame's unchecked pop could not test).
			 */
			st->undo_cnt.below_walk++;
			st->altered = true;
			continue;
		}
		if (kcc_call_fits(fr[n - 1].ret, b->from)) {
			st->popped_at[i] = n | ((fr[n - 1].flags & KCC_SF_RET) ?
						KCC_POPPED_RET : 0);
			n--;
		} else {
			n = kcc_stitch_misfit(st, n, i, b,
					      (s->flags & KCC_SAMPLE_TRUNCATED) ||
					      st->cut);
		}
	}
	return n;
}

/*
 * Step 1, choosing between the two readings of a newest return to the
 * sampled routine's caller.  In a recursion the call that made the
 * sampled frame is an older record and fits it; under skid the return
 * is the sampled activation's own and the plain reading would put its
 * call under itself without any misfit.  So skid, unless its older
 * records need more repairs than the plain reading's.
 */
static int kcc_stitch_undo_best(struct kcc_stitch *st,
				const struct kcc_sample *s)
{
	u64 plain;
	int n;

	n = kcc_stitch_undo(st, s, false);
	if (n < 0 || !kcc_stitch_skid(s))
		return n;
	plain = kcc_stitch_repairs(&st->undo_cnt);
	n = kcc_stitch_undo(st, s, true);
	if (n >= 0 && kcc_stitch_repairs(&st->undo_cnt) <= plain)
		return n;
	return kcc_stitch_undo(st, s, false);
}

static bool kcc_branch_eq(const struct kcc_branch *a, const struct kcc_branch *b)
{
	return a->from == b->from && a->to == b->to && a->kind == b->kind;
}

/*
 * The first of br[@i..@r) whose target is @to, @r if none: four records
 * a step, one compare each, as most bursts hold none.
 */
static u32 kcc_stitch_find_to(const struct kcc_branch *br, u32 i, u32 r,
			      u64 to)
{
	const struct kcc_branch *b = &br[i], *end = &br[r];

	for (; end - b >= 4; b += 4) {
		if (b[0].to == to)
			return (u32)(b - br);
		if (b[1].to == to)
			return (u32)(b - br) + 1;
		if (b[2].to == to)
			return (u32)(b - br) + 2;
		if (b[3].to == to)
			return (u32)(b - br) + 3;
	}
	for (; b < end; b++)
		if (b->to == to)
			return (u32)(b - br);
	return r;
}

/*
 * Step 3's overlap: the L oldest records of the new burst that the
 * previous burst already replayed (the only one that qualifies, or with
 * KCC_JOIN_LONGEST the longest), 0 for none.
 * @start_depth, @end_depth: k-SF depth of the anchored stack before the
 * oldest record, and after the newest, the burst replayed.
 *
 * The newest of the L records, br[r - L], must be the previous burst's
 * newest, last[0], and the oldest, the new burst's oldest, must be
 * last[L - 1]: two compares rule out almost every L (bursts at the usual
 * periods share no record; in a loop the records that recur are not
 * where the loop began), and only the L that pass them have their depth
 * and their other records compared.  They are taken longest first, so
 * the first that qualifies is the longest and a second one makes the
 * burst ambiguous: in a tight loop, where every other L qualifies, the
 * search stops after two instead of comparing all of them.  The depth
 * is moved from one L to the next, O(r) in all.
 */
static u32 kcc_stitch_overlap(struct kcc_stitch *st, const struct kcc_sample *s,
			      u32 start_depth, u32 end_depth)
{
	const struct kcc_branch *br = kcc_sample_branches(s), *b;
	const struct kcc_branch *key = &st->last[0];
	u32 r = s->nr_branches, max = r < st->nr_last ? r : st->nr_last;
	bool depth_known = !((s->flags | st->last_flags) & KCC_SAMPLE_TRUNCATED);
	u32 depth = 0, want = st->last_depth, found = 0;
	u64 key_to = key->to;
	u32 at = KCC_NIL, i, j;

	if (st->join_policy == KCC_JOIN_NONE)
		return 0;
	for (i = r - max; (i = kcc_stitch_find_to(br, i, r, key_to)) < r; i++) {
		b = &br[i];
		if (b->from != key->from || b->kind != key->kind)
			continue;
		if (!kcc_branch_eq(&br[r - 1], &st->last[r - i - 1]))
			continue;
		/*
		 * Depth after the records from br[i] on, the r - i oldest:
		 * the start's and those, or the end's less the i newest,
		 * from the nearer end first.  Each record is a call or a
		 * return: the burst is not altered.
		 */
		if (at == KCC_NIL) {
			at = i < r - i ? 0 : r;
			depth = at ? start_depth : end_depth;
		}
		while (at > i)
			depth += br[--at].kind == KCC_BR_CALL ? 1 : -1;
		while (at < i)
			depth -= br[at++].kind == KCC_BR_CALL ? 1 : -1;
		if (depth_known && depth != want)
			continue;
		/* Both ends matched: the records between them. */
		for (j = 1; j < r - i - 1; j++)
			if (!kcc_branch_eq(&br[i + j], &st->last[j]))
				break;
		if (j < r - i - 1)
			continue;
		if (found) {
			st->join_ambiguous++;
			return st->join_policy == KCC_JOIN_LONGEST ? found : 0;
		}
		found = r - i;
	}
	return found;
}

/*
 * @n calls over @ccalls records: floor(n / ccalls) each (@base), one
 * more for the newest @extra; counted as scaled, @w times.
 */
static void kcc_stitch_spread(struct kcc_stitch *st, u64 n, u32 w,
			      u32 ccalls, u64 *base, u32 *extra)
{
	*base = kcc_div_u64(n, ccalls);
	*extra = (u32)(n - *base * ccalls);
	st->calls.bursts_scaled++;
	st->calls.scaled += n * w;
}

/*
 * A call record of a counted burst, counted @exact (0 or 1) plus @share
 * of what is weighted, times @w: the share alone is the cluster of the
 * error bar when the burst stands for itself (@w 1).
 */
static void kcc_stitch_counted(struct kcc_ksf *ksf, u64 to, u32 w, u32 exact,
			       u32 share)
{
	u64 c = exact + share;

	ksf->acc_exact = w == 1 ? exact : 0;
	if (c)
		kcc_ksf_call_w(ksf, to, c * w);
	else
		kcc_ksf_enter(ksf, to);
	ksf->acc_exact = 0;
}

/*
 * Step 3 when every record replayed is a call of weight 1 or a return:
 * one kcc_ksf_replay() of the records, oldest first, gathered in the
 * frames' scratch (free since the anchoring), which is what the
 * per-record kcc_ksf_call() and kcc_ksf_return() would do.
 */
static void kcc_stitch_replay(struct kcc_stitch *st,
			      const struct kcc_branch *br, u32 r)
{
	u64 *ev = (u64 *)st->frames;
	u32 n = 0, i;

	if (st->fit) {
		/* kcc_stitch_undo_fit() wrote them, every record. */
		kcc_ksf_replay(&st->ksf, kcc_stitch_fit_ev(st, r), r);
		st->branches += r;
		return;
	}
	for (i = r; i > 0; i--) {
		if (st->skip & (1ull << (i - 1)))
			continue;
		/* A usable call's target is a user address: never KCC_EV_RET. */
		ev[n++] = br[i - 1].kind == KCC_BR_RET ? KCC_EV_RET :
			  br[i - 1].to;
	}
	kcc_ksf_replay(&st->ksf, ev, n);
	st->branches += n;
}

/* The call record just counted: where its activation went. */
static void kcc_stitch_tail_add(struct kcc_stitch *st)
{
	const struct kcc_ksf *ksf = &st->ksf;
	const struct kcc_frame *fr;
	u32 d = ksf->depth;

	/* Deeper than the stack remembers, or lost: nothing to add to. */
	if (!d || d > ksf->stack_cap ||
	    st->nr_tail >= KCC_INJECT_MAX_BRANCHES)
		return;
	fr = &ksf->stack[d - 1];
	if ((d <= ksf->k ? fr->t : fr->b) == KCC_NIL)
		return;
	st->tail_t[st->nr_tail] = fr->t;
	st->tail_b[st->nr_tail] = fr->b;
	st->nr_tail++;
}

void kcc_stitch_finish(struct kcc_stitch *st)
{
	struct kcc_ksf *ksf = &st->ksf;
	u64 pool = st->calls.pool, base;
	u32 n = st->nr_tail, extra, i;

	if (!pool || !n || st->tail_evicted != kcc_stitch_evicted(ksf->f))
		return;
	kcc_stitch_spread(st, pool, 1, n, &base, &extra);
	if (ksf->var_ctr &&
	    st->frames_cap * sizeof(*st->frames) >= KCC_ACC_BYTES) {
		ksf->acc = (struct kcc_ksf_acc *)st->frames;
		kcc_ksf_acc_start(ksf->acc, KCC_ACC_MAX);
	}
	/* Oldest first: the newest @extra take one more, as in a draw. */
	for (i = 0; i < n; i++)
		kcc_ksf_add_at(ksf, st->tail_t[i], st->tail_b[i],
			       base + (i >= n - extra));
	if (ksf->acc) {
		kcc_ksf_acc_fold(ksf);
		ksf->acc = NULL;
	}
	st->calls.pool = 0;
	st->nr_tail = 0;
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
	struct kcc_stitch_labels seg[2];
	int n;

	bool counted = s->flags & KCC_SAMPLE_CALLS;
	bool pool = counted && (s->flags & KCC_SAMPLE_CALLS_POOL);
	bool draw = counted && (s->flags & KCC_SAMPLE_CALLS_DRAW);
	u64 ncalls = counted ? s->calls : 0, base = 0;
	u32 ccalls = 0, drop = 0, extra = 0, seen = 0, cut = 0;
	bool tail = false;

	if (s->nr_stack > KCC_INJECT_MAX_STACK ||
	    r > KCC_INJECT_MAX_BRANCHES)
		return -EINVAL;
	st->samples++;
	if (counted) {
		ncalls += st->calls.pending;
		st->calls.pending = 0;
		st->calls.samples++;
		st->calls.counter += ncalls;
	}

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
	/*
	 * A skipped burst's calls wait in the pool: none to make up for;
	 * and the pool a burst draws is every call it holds, unweighted.
	 */
	if (pool || (draw && st->calls.pool))
		w = 1;
	n = kcc_stitch_undo_best(st, s);
	/* A burst that fits repaired nothing: at most its skid is counted. */
	if (st->fit)
		st->cnt.skid_repaired += st->undo_cnt.skid_repaired;
	else
		kcc_stitch_counts_add(&st->cnt, &st->undo_cnt);
	if (n < 0) {
		st->stitch_errors++;
		st->nr_last = 0;
		goto charge_only;
	}

	/*
	 * Step 2: anchor the stack at the oldest record, absolute depth:
	 * the walk's frames left in the sample, then those in frames[].
	 */
	seg[0] = kcc_stitch_walk(s, st->nr_walk);
	if (st->fit) {
		seg[1].first = (const u8 *)kcc_stitch_fit_labels(st);
		seg[1].stride = sizeof(u64);
	} else {
		seg[1].first = (const u8 *)&st->frames[0].label;
		seg[1].stride = sizeof(*st->frames);
	}
	seg[1].n = n - st->nr_walk;
	kcc_stitch_anchor(ksf, (s->flags & KCC_SAMPLE_TRUNCATED) || st->cut,
			  seg, 2);
	start = ksf->depth;

	/*
	 * A repaired burst is not the previous one's continuation.  An
	 * undo that repaired nothing moved one frame a record, from the
	 * walk's nr_stack to n: the replay will end nr_stack - n deeper.
	 */
	overlap = st->nr_last && !st->altered && !counted ?
		  kcc_stitch_overlap(st, s, start, start + s->nr_stack - n) : 0;
	if (overlap)
		st->bursts_joined++;
	if (counted) {
		/* The call records replayed, and what each counts. */
		for (i = 0; i < r; i++)
			if (br[i].kind == KCC_BR_CALL &&
			    !(st->skip & (1ull << i)))
				ccalls++;
		/*
		 * At a retired call, the oldest records beyond the newest
		 * KCC_STITCH_DRAW_NEWEST take no share of weighted calls.
		 */
		if (draw && ccalls > KCC_STITCH_DRAW_NEWEST)
			cut = ccalls - KCC_STITCH_DRAW_NEWEST;
		if (pool && ncalls > ccalls) {
			/* The newest ccalls are exact, the rest waits. */
			st->calls.pool += ncalls - ccalls;
			ncalls = ccalls;
		}
		if (!ccalls) {
			if (!pool)
				st->calls.unplaced += ncalls;
		} else if (ncalls <= ccalls) {
			drop = ccalls - (u32)ncalls;
			st->calls.bursts_exact++;
			st->calls.exact += ncalls * w;
		} else if (draw) {
			/*
			 * At a retired call: the window's calls all came since
			 * the previous sample, once each; the N - C before it,
			 * and a pool, go to the newest records in one spread.
			 */
			drop = 0;
			st->calls.exact += ccalls * w;
			kcc_stitch_spread(st, ncalls - ccalls + st->calls.pool,
					  w, ccalls - cut, &base, &extra);
			st->calls.pool = 0;
		} else {
			/* Every record weighted: none of them is exact. */
			drop = ccalls;
			kcc_stitch_spread(st, ncalls, w, ccalls, &base, &extra);
		}
		if (draw && ccalls && st->calls.pool) {
			kcc_stitch_spread(st, st->calls.pool, w, ccalls - cut,
					  &base, &extra);
			st->calls.pool = 0;
		}
		/* A pool left at the end goes where these records went. */
		tail = (pool || draw) && ccalls;
		if (tail) {
			st->nr_tail = 0;
			st->tail_evicted = kcc_stitch_evicted(ksf->f);
		}
	}

	/*
	 * A weighted burst is one cluster of a sample (kcc_stitch.h, "Error
	 * bars"): its locations' weights are gathered in the frames'
	 * scratch, free until the next sample, and folded at the end.
	 */
	if (ksf->var_ctr && (base || extra || w > 1) &&
	    st->frames_cap * sizeof(*st->frames) >= KCC_ACC_BYTES) {
		ksf->acc = (struct kcc_ksf_acc *)st->frames;
		kcc_ksf_acc_start(ksf->acc, KCC_ACC_MAX);
	}
	/* Step 3: replay, oldest first; the overlap was counted before. */
	if (!counted && w == 1 && !overlap && !st->nr_reenter && !ksf->acc &&
	    r * sizeof(u64) <= st->frames_cap * sizeof(*st->frames)) {
		kcc_stitch_replay(st, br, r);
	} else {
		for (i = r; i > 0; i--) {
			const struct kcc_branch *b = &br[i - 1];
			u32 j;

			for (j = 0; j < st->nr_reenter; j++)
				if (st->reenter_at[j] == i - 1)
					kcc_ksf_enter(ksf, st->reenter_label[j]);
			if (st->skip & (1ull << (i - 1)))
				continue;
			if (b->kind == KCC_BR_RET) {
				kcc_ksf_return(ksf);
			} else if (i > r - overlap) {
				kcc_ksf_enter(ksf, b->to);
			} else if (!counted) {
				kcc_ksf_call_w(ksf, b->to, w);
			} else {
				seen++;		/* 1 is the oldest call record */
				kcc_stitch_counted(ksf, b->to, w, seen > drop,
						   seen <= cut ? 0 : (u32)base +
						   (seen > ccalls - extra));
				if (tail)
					kcc_stitch_tail_add(st);
			}
			st->branches++;
		}
	}
	for (i = 0; i < st->nr_reenter; i++)
		if (st->reenter_at[i] == KCC_STITCH_AT_END)
			kcc_ksf_enter(ksf, st->reenter_label[i]);
	if (ksf->acc) {
		kcc_ksf_acc_fold(ksf);
		ksf->acc = NULL;
	}
	st->bursts_replayed++;

	/* Remembered only where the next burst may join it. */
	keep = r < KCC_STITCH_JOIN_MAX ? r : KCC_STITCH_JOIN_MAX;
	if (st->altered || st->join_policy == KCC_JOIN_NONE)
		keep = 0;
	memcpy(st->last, br, keep * sizeof(*br));
	st->nr_last = keep;
	st->last_depth = ksf->depth;
	st->last_flags = s->flags;

	/* Step 4. */
	kcc_stitch_charge(st, s);
	return 0;

charge_only:
	if (pool)
		st->calls.pool += ncalls;
	else
		st->calls.unplaced += ncalls;
	kcc_stitch_anchor_sample(st, s);
	kcc_stitch_charge(st, s);
	return 0;
}
