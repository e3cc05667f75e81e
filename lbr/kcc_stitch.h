/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcc_stitch.h - from samples (a user stack plus a burst of LBR call and
 * return records) to k-SF updates, and adaptive bursting.
 *
 * The same code runs in kcc.ko (fed by the PMU handlers or by
 * KCC_IOC_INJECT) and in the userspace tools (fed by sample files and by
 * the LBR simulator), so an injected sample gives the same forest in both.
 *
 * Labels.  The kernel knows no symbols, so a routine is labelled by some
 * user address inside it: the sampled ip for the innermost frame, a
 * return address for the frames below it, the call target for a routine
 * entered by a replayed call record.  Userspace maps every label to its
 * routine and re-joins the forest; relabelling commutes with the k-SF
 * construction (nodes with equal relabelled root paths are merged and
 * their counters added), so the result is the k-SF of the routine-level
 * trace.
 *
 * Stitching one sample (stack S, records newest first):
 *   1. undo: starting from S as a list of frames, walk the records from
 *      the newest to the oldest; a return record pushes back the frame of
 *      the routine it left (label: the ret instruction's address, return
 *      address: its target), a call record pops the frame it created,
 *      after checking that this frame's return address lies just after
 *      the call instruction (1..15 bytes: one x86 instruction; the
 *      bottom frame of the walk, whose return address is unknown, is
 *      popped unchecked).  What is left is the stack when the burst
 *      started.
 *   2. anchor: that stack is entered into the k-SF without counting
 *      (kcc_ksf_enter()) at its absolute depth, so slabs line up with
 *      every other sample of the task.  A truncated walk (flag
 *      KCC_SAMPLE_TRUNCATED) gets one KCC_LABEL_UNKNOWN frame at the
 *      bottom instead of the frames it missed: depths are then relative,
 *      and contexts that reach past the truncation show [unknown].
 *      The frames of the task's previous stack are taken back while they
 *      are the same (kcc_ksf_keep()): it leaves what entering them would.
 *   3. replay: the records from the oldest to the newest; a call is
 *      kcc_ksf_call_w() with the burst's weight, a return kcc_ksf_return().
 *      Records already replayed by the previous burst of the same task
 *      (the windows overlap) are entered without counting.
 *      Joining: L qualifies when the oldest L records of the new burst
 *      equal the newest L records of the previous one (last[]) and,
 *      when neither stack walk was truncated, the stack depth after
 *      those L records is the depth of the previous sample.  By default
 *      (KCC_JOIN_UNIQUE) the overlap is used only when exactly one L
 *      qualifies; with several the burst counts in join_ambiguous and
 *      is counted whole.  KCC_JOIN_LONGEST uses the longest qualifying
 *      L instead: when bursts overlap (dense sampling) the true overlap
 *      always qualifies and shorter ones qualify by coincidence whenever
 *      a record recurs, so longest is exact unless the records repeat
 *      over the whole overlap (a tight loop), where it counts too few;
 *      when bursts are disjoint (the usual sampling periods) every join
 *      is a coincidence, and unique joins fewer of them.  Measurements
 *      are in Documentation/stitching.rst.  A burst that was skipped or
 *      did not fit its stack is never joined with, and
 *      kcc_stitch_break() forgets the previous burst.
 *      Counted calls (KCC_SAMPLE_CALLS, ABI 1.2) replace the joining
 *      heuristics: the sample says N calls retired since the previous
 *      sample of the task, and the burst holds C call records.  When
 *      N <= C the newest N call records are the calls since the
 *      previous sample: only they are counted, the older ones are
 *      entered without counting (every call counted once, exactly the
 *      joined window).  When N > C the burst is a sample of the N
 *      calls: each call record counts N / C, in integers, floor(N / C)
 *      each and one more for the newest N mod C, so the burst adds
 *      exactly N.  Both are multiplied by the adaptive bursting weight.
 *      A burst taken at a retired call (KCC_SAMPLE_CALLS_DRAW: a sample
 *      of the calls event) with N > C counts its C calls once each (all
 *      came since the previous sample) and spreads the N - C before
 *      them, and a hybrid pool, over its newest KCC_STITCH_DRAW_NEWEST
 *      call records only.  A call is among the newest M calls of
 *      exactly the M call positions from it on, so each has the same
 *      chance, M in N, to be one of them: the spread is unbiased while
 *      the burst holds M calls.  N / C over the whole window is not: C
 *      swings where calls and returns do (32 calls on a way down a
 *      recursion, one among 31 returns on the way back), and a call in
 *      a window of few calls is counted high (Documentation/
 *      fidelity.rst, "The newest calls of a burst").  A burst at
 *      another event's sample lands where that event goes (time,
 *      misses): there N / C over the whole window stays.
 *      A burst with no call record, not replayed or not fitting its
 *      stack counts its N in calls_unplaced.
 *      Error bars: a weighted burst (scaled, or weighted by adaptive
 *      bursting) is one cluster of the calls it stands for.  Each
 *      location it counts n activations at, adding y, gets y (y - n)
 *      in KCC_CTR_CALLS_VAR: for weight w, (w^2 - w) n^2, the Horvitz-
 *      Thompson variance of a cluster taken with probability 1 / w.
 *      The locations are gathered in the frames' scratch, free during
 *      the replay (kcc_ksf_acc_fold(); with less than KCC_ACC_BYTES of
 *      it no variance is kept); an exact burst adds nothing.
 *   4. charge: the sample's delta and one sample go to the context of the
 *      sampled routine (KCC_CTR_EVENTS, KCC_CTR_SAMPLES).
 * Bursts as hardware shapes them (Documentation/stitching.rst, "Bursts
 * that do not fit"): a call whose return address does not follow it in
 * the frame being popped is explained, in this order, as frames no
 * record created (skid, a signal frame: re-entered uncounted), a caller
 * missing from the walk (a frameless routine: the frame takes the
 * call's source as label), or, below the sampled frame of a walk that
 * did not reach the outermost frame, a garbled walk (cut there,
 * [unknown] below).  A record that is neither call nor return, or has a
 * kernel address, is skipped; a return whose frame the older call did
 * not create is re-entered or paired anyway; a call below the walk's
 * bottom frame is undone without a frame.  Each is counted in
 * kcc_stitch_counts; no record is dropped but the skipped ones.  Only a
 * burst needing more than frames_cap frames is counted in stitch_errors
 * and not replayed; the sample is still charged to its stack.
 */
#ifndef KCC_STITCH_H
#define KCC_STITCH_H

#include "kcc_forest.h"
#include <linux/kcc.h>
#include <linux/perf_event.h>

/*
 * Call records of a burst taken at a retired call that share its
 * weighted calls (the newest; step 3 above): 6 of the burst's 16 or so.
 * In the simulator 4 gave the intervals that held most and 8 the least
 * error on real programs' traces; 6 is close to the best of both
 * (Documentation/fidelity.rst, "The newest calls of a burst").
 */
#define KCC_STITCH_DRAW_NEWEST	6

/* Label of the frame standing for the part of a truncated stack walk. */
#define KCC_LABEL_UNKNOWN	0

/* Longest run of previous-burst records remembered for joining. */
#define KCC_STITCH_JOIN_MAX	64

/* kcc_stitch.join_policy: which overlap with the previous burst is used. */
#define KCC_JOIN_UNIQUE		0	/* only when exactly one qualifies */
#define KCC_JOIN_LONGEST	1	/* the longest that qualifies */
#define KCC_JOIN_NONE		2	/* never: every burst counts whole */

/*
 * Adaptive bursting (Zhuang et al., PLDI'06, Section 5.3): a history
 * table keyed by a signature of the stack at the sample.  A context not
 * in the table gets its burst, weight 1, and enters the table; a context
 * already there gets its burst only with probability RR = 1/rr_inv, and
 * then with weight rr_inv (the paper's 1/RR compensation, an integer so
 * the kernel needs no FPU).  The table is direct-mapped (a colliding
 * signature replaces the old one) and lives in caller memory.
 */
struct kcc_burst {
	u64 *table;		/* entries signatures, 0 = empty */
	u32 mask;		/* entries - 1 */
	u32 rr_inv;		/* N: re-enable 1 burst in N; 0 = always burst */
	u32 sig_depth;		/* stack entries hashed into a signature */
	u64 rng;		/* xorshift64 state: decisions are reproducible */
	u64 new_contexts;	/* bursts taken because the context was new */
	u64 reenabled;		/* bursts of seen contexts taken (weight N) */
	u64 skipped;		/* bursts of seen contexts skipped */
};

size_t kcc_burst_mem_size(u32 entries);
/* @entries: a power of two; @seed: non-zero start of the generator. */
int kcc_burst_init(struct kcc_burst *b, void *mem, size_t mem_size,
		   u32 entries, u32 rr_inv, u32 sig_depth, u64 seed);
/* Weight of the burst at a sample with this stack: 0 = skip it. */
u32 kcc_burst_decide(struct kcc_burst *b, const u64 *stack, u32 nr_stack);
/* The signature kcc_burst_decide() files a stack under; never 0. */
u64 kcc_burst_sig(const u64 *stack, u32 nr_stack, u32 sig_depth);

/* A frame of the reconstructed stack (scratch memory of the stitcher). */
struct kcc_stitch_frame {
	u64 label;		/* address inside the routine */
	u64 ret;		/* return address into its caller, 0 = unknown */
	u32 flags;		/* KCC_SF_* */
	u32 rec;		/* KCC_SF_RET: index of the return record */
};

#define KCC_SF_IP	0x1	/* the sampled ip's frame */
#define KCC_SF_RET	0x2	/* put back by a return record */
#define KCC_SF_REPAIRED	0x4	/* label taken from a call record */

/* Labels of frames, bottom first: @n u64s @stride bytes apart. */
struct kcc_stitch_labels {
	const u8 *first;
	long stride;
	u32 n;
};

/* Frames below the top that a call may skip as never recorded. */
#define KCC_STITCH_SKID_MAX	2
/* Frames re-entered among the records, per burst. */
#define KCC_STITCH_REENTER_MAX	8
/* reenter_at: after the newest record. */
#define KCC_STITCH_AT_END	0xff

/*
 * What stitching repaired or dropped, per reason.  The same fields, in
 * this order, close struct kcc_status (kcc_stitch_counts_export()).
 */
struct kcc_stitch_counts {
	u64 leaf_repaired;	/* sampled routine's caller restored from its call */
	u64 walk_repaired;	/* a deeper frame's caller restored (frameless routine) */
	u64 walk_cut;		/* walks cut under [unknown] where still inconsistent */
	u64 skid_repaired;	/* sampled frames dropped: returned after the regs */
	u64 unrecorded;		/* frames no call record made (skid, signal), re-entered */
	u64 unmatched_return;	/* returns whose frame the older call did not make */
	u64 far_skipped;	/* records neither call nor return, or kernel addresses */
	u64 below_walk;		/* calls undone below the walk's bottom frame */
};

/*
 * Calls counted at the samples (KCC_SAMPLE_CALLS, ABI 1.2).  The forest's
 * calls from counted samples are exact + scaled; with every burst taken
 * (no adaptive bursting) that is counter - unplaced.  The same fields,
 * in this order, close struct kcc_status (kcc_stitch_calls_export()).
 */
struct kcc_stitch_calls {
	u64 samples;		/* samples that carried a count */
	u64 counter;		/* calls the counts add up to */
	u64 exact;		/* counted once each: the newest N records */
	u64 scaled;		/* spread over bursts with fewer call records */
	u64 unplaced;		/* in no replayed burst (no record, error, skipped) */
	u64 bursts_exact;	/* bursts whose N calls fit: the joined window */
	u64 bursts_scaled;	/* bursts weighted to add up to N */
	/*
	 * Calls a counter saw after the task's last sample that no count
	 * carried yet (kcc_stitch_carry()): the next counted sample adds
	 * them to its own.  Not in counter until then.
	 */
	u64 pending;
	/*
	 * Hybrid estimate (KCC_SAMPLE_CALLS_POOL): calls above the records
	 * of bursts that kept them for the next KCC_SAMPLE_CALLS_DRAW
	 * burst, which spreads them (scaled).  Not placed until then:
	 * exported within calls_unplaced.
	 */
	u64 pool;
};

struct kcc_stitch {
	struct kcc_ksf ksf;		/* the task's k-SF builder */
	struct kcc_burst *burst;	/* NULL: replay every burst */
	struct kcc_stitch_frame *frames; /* scratch for undo */
	u32 frames_cap;
	u32 nr_last;			/* records remembered in last[] */
	struct kcc_branch last[KCC_STITCH_JOIN_MAX]; /* previous burst, newest first */
	u64 samples;			/* samples applied */
	u64 bursts_replayed;
	u64 bursts_skipped;		/* adaptive bursting said no */
	u64 bursts_joined;		/* overlapped the previous burst */
	u64 join_ambiguous;		/* several overlaps qualified */
	u64 branches;			/* records replayed (counted or not) */
	u64 stitch_errors;		/* bursts that did not fit the stack */
	u32 last_depth;			/* k-SF depth at the previous sample */
	u32 last_flags;			/* its KCC_SAMPLE_* flags */
	/*
	 * KCC_JOIN_*, 0 after init; set before the first sample: under
	 * KCC_JOIN_NONE no burst is remembered (last[] is not copied), so
	 * a policy set later joins from the burst after the next one.
	 */
	u32 join_policy;
	struct kcc_stitch_calls calls;	/* counted calls (ABI 1.2) */
	struct kcc_stitch_counts cnt;	/* repairs and drops, by reason */
	struct kcc_stitch_counts undo_cnt; /* those of the current undo */
	/* The replay plan of the current burst, made by the undo. */
	u64 skip;			/* bit i: record i is not replayed */
	u32 nr_reenter;
	/*
	 * The undo's frames at the bottom that are the sample's stack
	 * entries, not copied to frames[] (which holds the rest).
	 */
	u32 nr_walk;
	bool fit;			/* by kcc_stitch_undo_fit(): no copy */
	bool cut;			/* the walk was cut: [unknown] below */
	bool altered;			/* anything repaired: never joined */
	u8 reenter_at[KCC_STITCH_REENTER_MAX];	/* before record ... */
	u64 reenter_label[KCC_STITCH_REENTER_MAX]; /* ... enter this frame */
	/* Frames before the undo of record i when it popped a walk frame. */
	u16 popped_at[KCC_INJECT_MAX_BRANCHES];
	/*
	 * Hybrid estimate: where the call records of the last burst that
	 * pooled or drew were counted (top and bottom locations, oldest
	 * first), for kcc_stitch_finish(); taken when the forest had
	 * deleted tail_evicted nodes (pruning), and void once it deletes
	 * more.
	 */
	u32 nr_tail;
	u32 tail_t[KCC_INJECT_MAX_BRANCHES];
	u32 tail_b[KCC_INJECT_MAX_BRANCHES];
	u64 tail_evicted;
};

/*
 * @f, @k, @stack, @stack_cap: as kcc_ksf_init(); @f must have
 * KCC_NR_CTRS - 1 metrics (events, samples); @frames: scratch of
 * @frames_cap entries: the undo needs nr_stack plus the burst's returns,
 * so nr_stack + KCC_INJECT_MAX_BRANCHES is always enough, and a burst
 * that needs more is a stitch error; @burst: adaptive bursting state or
 * NULL.  Returns 0 or -EINVAL.
 */
int kcc_stitch_init(struct kcc_stitch *st, struct kcc_forest *f, u32 k,
		    struct kcc_frame *stack, u32 stack_cap,
		    struct kcc_stitch_frame *frames, u32 frames_cap,
		    struct kcc_burst *burst);

/*
 * Check a packed sample: sizes agree with the counts, counts within the
 * KCC_INJECT_MAX_* limits, reserved fields and unknown flags zero, branch
 * kinds known.  Returns its size (bytes to the next sample) or -EINVAL.
 */
int kcc_sample_check(const struct kcc_sample *s, size_t len);

/* What kcc_sample_why() found wrong with a sample. */
#define KCC_SAMPLE_OK		0
#define KCC_SAMPLE_E_SHORT	1	/* len below the header or below size */
#define KCC_SAMPLE_E_ALIGN	2	/* not 8-byte aligned, or size not a multiple of 8 */
#define KCC_SAMPLE_E_FLAGS	3	/* unknown flag */
#define KCC_SAMPLE_E_RESERVED	4	/* reserved field not zero */
#define KCC_SAMPLE_E_STACK	5	/* nr_stack above KCC_INJECT_MAX_STACK */
#define KCC_SAMPLE_E_BRANCHES	6	/* nr_branches above KCC_INJECT_MAX_BRANCHES */
#define KCC_SAMPLE_E_SIZE	7	/* size disagrees with the counts */
#define KCC_SAMPLE_E_KIND	8	/* branch kind unknown */
#define KCC_SAMPLE_E_BR_RESERVED 9	/* branch reserved field not zero */

/*
 * kcc_sample_check() with the reason: KCC_SAMPLE_OK or a KCC_SAMPLE_E_*
 * code; @size receives the sample's size when it is OK.
 */
u32 kcc_sample_why(const struct kcc_sample *s, size_t len, u32 *size);

static inline const u64 *kcc_sample_stack(const struct kcc_sample *s)
{
	return (const u64 *)(s + 1);
}

static inline const struct kcc_branch *kcc_sample_branches(const struct kcc_sample *s)
{
	return (const struct kcc_branch *)(kcc_sample_stack(s) + s->nr_stack);
}

/*
 * Apply one checked sample to the task's forest.  Returns 0, or -EINVAL
 * (nothing done) for counts kcc_sample_check() would have refused.
 */
int kcc_stitch_sample(struct kcc_stitch *st, const struct kcc_sample *s);

/* Forget the previous burst (a sample of the task was lost in between). */
void kcc_stitch_break(struct kcc_stitch *st);

/*
 * The task's samples are over (it exited, its image ended, or the
 * session stopped): a hybrid pool that no burst of the calls event drew
 * is spread over the call records of the task's last pooling or drawing
 * burst, as a draw would (one cluster of the error bar), so that its
 * contexts sum to the counter.  Without such a burst, or once pruning
 * deleted nodes since, the pool stays unplaced.  Idempotent.
 */
void kcc_stitch_finish(struct kcc_stitch *st);

/* @dst += @src, field by field. */
void kcc_stitch_counts_add(struct kcc_stitch_counts *dst,
			   const struct kcc_stitch_counts *src);
void kcc_stitch_calls_add(struct kcc_stitch_calls *dst,
			  const struct kcc_stitch_calls *src);
void kcc_stitch_calls_export(struct kcc_status *st,
			     const struct kcc_stitch_calls *c);

/**
 * kcc_stitch_carry() - calls of the task that its next sample's count
 * will not hold
 * @st:		the task's stitcher
 * @calls:	calls counted since its previous sample
 *
 * A system-wide counter is taken off at every context switch (kcc.ko's
 * sched_switch probe), so the calls a thread made after its last sample
 * on a CPU come apart from its next count: they are added to that
 * count, and weighted into that burst like any count above its records.
 */
void kcc_stitch_carry(struct kcc_stitch *st, u64 calls);
/* Copy @c into the stitch_* fields that close struct kcc_status. */
void kcc_stitch_counts_export(struct kcc_status *st,
			      const struct kcc_stitch_counts *c);

/*
 * The kind of a perf branch record (PERF_SAMPLE_BRANCH_TYPE_SAVE): the
 * same for kcc.ko's samples and for kcc import's perf.data.
 */
static inline u32 kcc_br_kind_perf(u32 perf_br_type)
{
	switch (perf_br_type) {
	case PERF_BR_CALL:
	case PERF_BR_IND_CALL:
	case PERF_BR_COND_CALL:
		return KCC_BR_CALL;
	case PERF_BR_RET:
	case PERF_BR_COND_RET:
		return KCC_BR_RET;
	default:
		return KCC_BR_OTHER;
	}
}

#endif /* KCC_STITCH_H */
