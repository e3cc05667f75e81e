/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcc_forest.h - labelled forests with counters: the storage under the CCT,
 * the k-slab forest (k-SF) and the k-calling-context forest (k-CCF).
 *
 * Terminology follows "k-Calling Context Profiling" (D'Elia, Demetrescu,
 * Finocchi): a path's length is its number of call edges, so a k-context
 * holds at most k + 1 routines; k = 0 is a vertex profile, k = 1 an edge
 * profile and k = KCC_K_INF the full calling context tree.
 *
 * A forest lives in one caller-provided block of memory sized by
 * kcc_forest_mem_size().  Nodes are addressed by 32-bit index, children are
 * found through one hash table keyed by (parent, label), so a child lookup
 * is constant time whatever the degree.  When the block is full, creating
 * a node fails, returns KCC_NIL and counts a drop; nothing already stored
 * is touched.
 */
#ifndef KCC_FOREST_H
#define KCC_FOREST_H

#include "kcc_shim.h"

#define KCC_NIL		0xffffffffu	/* no node */
#define KCC_K_INF	0xffffffffu	/* k = infinity: the full CCT */

/*
 * Parent values of roots.  A k-SF keeps the trees that start at context
 * depth 0 apart from the trees that start at deeper slab boundaries, even
 * when their root labels are equal (a recursive main, a thread function
 * re-entered): the counters in the top region of the former are real
 * short contexts, those of the latter are copies of bottom-region counters
 * of the tree above and must not be counted twice (see kcc_inv_k()).
 */
#define KCC_ROOT_TOP	0xfffffffeu	/* root of a tree starting at depth 0 */
#define KCC_ROOT_SLAB	0xfffffffdu	/* root at a slab boundary, depth >= k */
#define KCC_FREE	0xfffffffcu	/* parent of a free node (HCCT only) */

static inline bool kcc_is_root_parent(u32 parent)
{
	return parent >= KCC_ROOT_SLAB;
}

/* Counter 0 of every node counts activations; 1..nmetrics count events. */
#define KCC_CTR_CALLS	0
#define KCC_MAX_METRICS	8

struct kcc_node {
	u64 label;	/* routine identity: user address or interned name id */
	u32 parent;	/* node index, or KCC_ROOT_TOP / KCC_ROOT_SLAB */
	u32 hnext;	/* next node in the same hash bucket (or free list) */
	u64 ctr[];	/* 1 + nmetrics counters */
};

struct kcc_fprune;

struct kcc_forest {
	u8 *nodes;		/* capacity * stride bytes */
	u32 *buckets;		/* bucket_mask + 1 chain heads */
	u32 stride;		/* bytes per node */
	u32 nmetrics;		/* event counters per node after calls */
	u32 capacity;		/* nodes the block can hold */
	u32 count;		/* nodes handed out (high-water mark) */
	u32 live;		/* nodes in use (count minus freed) */
	u32 bucket_mask;
	u32 hshift;		/* 64 - log2(bucket_mask + 1) */
	u32 free_head;		/* freed nodes, linked through hnext */
	u64 drops;		/* node creations refused: block full */
	u64 hkey[4];		/* hash keys, from kcc_forest_set_seed() */
	struct kcc_fprune *pr;	/* hot contexts only (kcc_hcct.h), or NULL */
};

size_t kcc_forest_mem_size(u32 capacity, u32 nmetrics);
int kcc_forest_init(struct kcc_forest *f, void *mem, size_t mem_size,
		    u32 capacity, u32 nmetrics);
void kcc_forest_reset(struct kcc_forest *f);
/*
 * Move @f into a new block of @capacity nodes (at least f->count): the
 * nodes keep their indices, the index is rebuilt.  The caller frees the
 * old block.  -EINVAL as kcc_forest_init(), or for a pruned forest.
 */
int kcc_forest_move(struct kcc_forest *f, void *mem, size_t mem_size,
		    u32 capacity);
/*
 * Labels are addresses the profiled program chooses, so a fixed hash
 * lets it put every edge in one bucket.  kcc_forest_init() keys the hash
 * with a fixed seed (reproducible runs); a caller exposed to untrusted
 * labels passes a random one here (the kernel: get_random_u64()) before
 * the first node is created.  The seed changes where edges are hashed,
 * never which nodes a forest holds or their order.  -EBUSY when the
 * forest is not empty.
 */
#define KCC_SEED_FIXED	0
int kcc_forest_set_seed(struct kcc_forest *f, u64 seed);

static inline struct kcc_node *kcc_forest_node(const struct kcc_forest *f,
					       u32 idx)
{
	return (struct kcc_node *)(f->nodes + (size_t)idx * f->stride);
}

static inline u64 *kcc_forest_ctr(const struct kcc_forest *f, u32 idx)
{
	return kcc_forest_node(f, idx)->ctr;
}

/*
 * The bucket of edge (parent, label).  The keyed part is vector
 * multiply-shift (Dietzfelbinger; Thorup, "High Speed Hashing for
 * Integers and Strings", 2015) over the three 32-bit words of the key:
 * with the four 64-bit keys uniformly random,
 *	a0 + a1 * label_lo + a2 * label_hi + a3 * parent   (mod 2^64)
 * puts two distinct edges in the same top l bits with probability
 * 2^-l, whatever labels the profiled program chose, as long as it does
 * not know the keys.  That bounds the mean only: a label set built to
 * collide under one key is a lattice, and some other keys still crowd
 * it (one key in 2000 gave 60 times the mean chain cost on the labels
 * of selftests/kcc/hashflood.c).
 * A fixed xor-shift-multiply round mixes all 64 bits into the bucket
 * bits and removes that tail.  The three keyed products are
 * independent, so the critical path is two multiplies, as before.
 */
/*
 * The hash in two steps: the label's terms, which a push that looks
 * the same label up under two parents (its top and bottom locations)
 * works out once, then the parent's and the mixing round.
 */
static inline u64 kcc_forest_hash_label(const struct kcc_forest *f, u64 label)
{
	return f->hkey[0] + f->hkey[1] * (u32)label +
	       f->hkey[2] * (u32)(label >> 32);
}

static inline u32 kcc_forest_hash_parent(const struct kcc_forest *f, u64 hl,
					 u32 parent)
{
	u64 h = hl + f->hkey[3] * parent;

	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ull;
	return (u32)(h >> f->hshift);
}

static inline u32 kcc_forest_hash(const struct kcc_forest *f, u32 parent,
				  u64 label)
{
	return kcc_forest_hash_parent(f, kcc_forest_hash_label(f, label),
				      parent);
}

/* The node of the chain from @i that is edge (parent, label), or KCC_NIL. */
static inline u32 kcc_forest_chain(const struct kcc_forest *f, u32 i,
				   u32 parent, u64 label)
{
	while (i != KCC_NIL) {
		const struct kcc_node *n = kcc_forest_node(f, i);

		if (n->label == label && n->parent == parent)
			return i;
		i = n->hnext;
	}
	return KCC_NIL;
}

/* Child of @parent (or root, for the KCC_ROOT_* values) labelled @label. */
static inline u32 kcc_forest_find(const struct kcc_forest *f, u32 parent,
				  u64 label)
{
	return kcc_forest_chain(f, f->buckets[kcc_forest_hash(f, parent, label)],
				parent, label);
}

/* Slow path of kcc_forest_get(): the child is known to be absent. */
u32 kcc_forest_insert(struct kcc_forest *f, u32 parent, u64 label);
/* The same, with the bucket of (parent, label) already found. */
u32 kcc_forest_insert_at(struct kcc_forest *f, u32 *head, u32 parent,
			 u64 label);

/*
 * The same, created with zero counters when absent; KCC_NIL when full.
 * Inline: the lookup is the inner loop of every forest construction.
 */
static inline u32 kcc_forest_get(struct kcc_forest *f, u32 parent,
				 u64 label)
{
	u32 *head = &f->buckets[kcc_forest_hash(f, parent, label)];
	u32 i = kcc_forest_chain(f, *head, parent, label);

	return i != KCC_NIL ? i : kcc_forest_insert_at(f, head, parent, label);
}

/* The same, @hl being kcc_forest_hash_label(f, label). */
static inline u32 kcc_forest_get_hl(struct kcc_forest *f, u32 parent,
				    u64 label, u64 hl)
{
	u32 *head = &f->buckets[kcc_forest_hash_parent(f, hl, parent)];
	u32 i = kcc_forest_chain(f, *head, parent, label);

	return i != KCC_NIL ? i : kcc_forest_insert_at(f, head, parent, label);
}

/* Slow path of kcc_forest_bump() in a pruned forest (kcc_hcct.c). */
void kcc_fprune_touch(struct kcc_forest *f, u32 idx, u32 ctr, u64 inc);

/*
 * Add @inc to counter @ctr of node @idx.  The builders count through
 * this: a pruned forest (f->pr) sees every occurrence.
 */
static inline void kcc_forest_bump(struct kcc_forest *f, u32 idx, u32 ctr,
				   u64 inc)
{
	kcc_forest_ctr(f, idx)[ctr] += inc;
	if (unlikely(f->pr))
		kcc_fprune_touch(f, idx, ctr, inc);
}

/* Unlink a node that has no children.  Only the HCCT deletes nodes. */
void kcc_forest_del(struct kcc_forest *f, u32 idx);
/* Add all counters of node @si of @src to node @di of @dst. */
void kcc_forest_add_ctrs(struct kcc_forest *dst, u32 di,
			 const struct kcc_forest *src, u32 si);
bool kcc_forest_ctrs_zero(const struct kcc_forest *f, u32 idx);
/* Number of edges from @idx up to its root. */
u32 kcc_forest_level(const struct kcc_forest *f, u32 idx);
/* Parent value of the root of the tree holding @idx. */
u32 kcc_forest_root_kind(const struct kcc_forest *f, u32 idx);

/*
 * Online k-SF construction: Figure 7 of the k-CCF paper, with the roots
 * table R and the child lookups both served by the forest's hash index.
 * With k = KCC_K_INF the only slab boundary is depth 0 and the result is
 * exactly the CCT, so one code path builds both.
 *
 * The shadow stack is caller memory too.  Calls deeper than stack_cap are
 * counted in @stack_drops and otherwise ignored until the matching returns
 * bring the depth back under the cap, so the slab alignment of everything
 * recorded stays right.
 */
struct kcc_frame {
	u32 t;		/* top location (KCC_NIL when lost: pool full) */
	u32 b;		/* bottom location (KCC_NIL above depth k) */
	/*
	 * The last call this activation made and the locations it reached:
	 * a loop calling the same routine again skips both lookups.
	 * memo_t == KCC_NIL when there is none.
	 */
	u64 memo_label;
	u32 memo_t;
	u32 memo_b;
};

/* One location's share of a weighted burst: n activations adding y. */
struct kcc_ksf_acc_ent {
	u32 node;
	u32 n;
	u64 y;
};

/*
 * The locations of one weighted burst (scratch the caller provides):
 * ent[0 .. n), found through slot[], an open-addressed table of entry
 * numbers plus one (0: empty) hashed on the node.  cap <= KCC_ACC_MAX.
 */
#define KCC_ACC_SLOTS	64
#define KCC_ACC_MAX	48	/* entries before a fold: the table 3/4 full */
struct kcc_ksf_acc {
	u32 n;
	u32 cap;
	union {
		u8 slot[KCC_ACC_SLOTS];
		u64 words[KCC_ACC_SLOTS / 8];	/* cleared a word at a time */
	};
	struct kcc_ksf_acc_ent ent[];
};

/* Scratch a full table takes: 840 bytes, 35 stitcher frames. */
#define KCC_ACC_BYTES	(sizeof(struct kcc_ksf_acc) + \
			 KCC_ACC_MAX * sizeof(struct kcc_ksf_acc_ent))

struct kcc_ksf {
	struct kcc_forest *f;
	struct kcc_frame *stack;	/* stack[d - 1] is the frame at depth d */
	u32 stack_cap;
	u32 k;
	u32 depth;		/* pending activations (|S| - 1 in the paper) */
	u32 slab_pos;		/* depth % k, kept without dividing */
	u32 max_depth;		/* deepest depth seen */
	u32 lost_at;		/* lowest pending frame that lost a location */
	u64 calls;		/* call events counted */
	u64 returns;		/* return events applied */
	u64 stack_drops;	/* calls deeper than stack_cap */
	u64 lost_calls;		/* calls whose top location was lost */
	u64 bad_returns;	/* returns with an empty stack (ignored) */
	u64 lost_charges;	/* kcc_ksf_charge() with no context to charge */
	/*
	 * 1 + (2^64 - 1) / k, 0 for KCC_K_INF: a depth d below 2^32 is a
	 * multiple of k exactly when d * slab_div mod 2^64 is at most
	 * slab_div - 1 (Lemire, Kaser and Kurz, "Faster remainder by
	 * direct computation", 2019), which the batch loops test at a
	 * lookup instead of stepping slab_pos at every event.
	 */
	u64 slab_div;
	/*
	 * The variance of weighted calls (kcc_stitch.h, "Error bars"):
	 * while acc is set, every counted activation adds its weight to
	 * the entry of each location it is counted at, and
	 * kcc_ksf_acc_fold() turns the entries into var_ctr counts.
	 */
	u32 var_ctr;		/* counter index, 0: no variance kept */
	/*
	 * Of the next activation's weight, the part that is exact and no
	 * sample of anything (a counted call beside its share of a pool):
	 * kept out of the entries, the activation still counted.
	 */
	u32 acc_exact;
	struct kcc_ksf_acc *acc;
	/* Watched contexts counted beside the forest (kcc_ppp.h), or NULL. */
	struct kcc_ppp_run *ppp;
};

/*
 * O(stack_cap): it forgets every frame's memo.  A forest that is reset
 * (kcc_forest_reset()) needs its builder initialised again.
 */
int kcc_ksf_init(struct kcc_ksf *s, struct kcc_forest *f, u32 k,
		 struct kcc_frame *stack, u32 stack_cap);
/*
 * Pin the nodes of the pending frames (kcc_fprune_pin()) before an
 * operation on a pruned forest: they must outlive it.  O(depth).
 */
void kcc_ksf_pin(struct kcc_ksf *s);
/* Forget the pending activations; the forest is kept. */
void kcc_ksf_clear_stack(struct kcc_ksf *s);
/*
 * Anchoring a stack again (kcc_stitch.c): kcc_ksf_clear_stack(), and how
 * many of the frames that were pending, bottom first, kcc_ksf_keep() may
 * take back instead of entering them.  Each pending frame was pushed on
 * top of the frames below it as they are now, and a node's label and
 * parent never change in a forest that does not prune, so entering its
 * label again finds the same locations and keeps its caller's memo.
 * None in a pruned forest (an entered frame pins its nodes, and a node
 * may have been deleted) or with watched contexts (their stack is not
 * kept), and none from the first frame whose push lost a location (a
 * full pool: it may have grown since; the frames above it lost one too,
 * or hang under it).
 */
u32 kcc_ksf_rewind(struct kcc_ksf *s);

/*
 * Take back the frames from the current depth up, while the next of the
 * @n labels (u64, the first at @label, the next ones @stride bytes apart) is
 * the one the frame was pushed with: the frame is then what
 * kcc_ksf_enter() would leave.  Only frames below @top, what
 * kcc_ksf_rewind() returned, which are frames whose push lost no
 * location, and only while the frames below were taken back too.
 * Returns how many.
 */
u32 kcc_ksf_keep(struct kcc_ksf *s, u32 top, const void *label, long stride,
		 u32 n);
/*
 * Add the variance of the activations gathered in s->acc since the last
 * fold, y^2 - y n for each location (for n activations of weight w:
 * (w^2 - w) n^2, the burst taken as one cluster), and empty it.
 */
void kcc_ksf_acc_fold(const struct kcc_ksf *s);
/* An empty table in @acc of @cap entries, for a new burst. */
void kcc_ksf_acc_start(struct kcc_ksf_acc *acc, u32 cap);
/*
 * Count @w more activations at locations @t and @b (either KCC_NIL),
 * where an earlier push put one: no move, no new node.  Gathered in
 * s->acc when it is set, as a push is.
 */
void kcc_ksf_add_at(struct kcc_ksf *s, u32 t, u32 b, u64 w);
/* A call event: move to @label's node and count one activation. */
void kcc_ksf_call(struct kcc_ksf *s, u64 label);
/*
 * The same with @weight activations: a burst replayed under adaptive
 * bursting stands for 1/RR bursts.  s->calls still counts one event.
 */
void kcc_ksf_call_w(struct kcc_ksf *s, u64 label, u64 weight);
/*
 * Push a frame without counting it: used to anchor a sampled stack at its
 * absolute depth before replaying a burst of branch records.
 */
void kcc_ksf_enter(struct kcc_ksf *s, u64 label);
/* kcc_ksf_enter() of @n labels, @label and @stride as kcc_ksf_keep()'s. */
void kcc_ksf_enter_n(struct kcc_ksf *s, const void *label, long stride,
		     u32 n);
/* A return event; -EINVAL (and bad_returns++) on an empty stack. */
int kcc_ksf_return(struct kcc_ksf *s);
/*
 * A batch of events, each a call of that label or, for KCC_EV_RET, a
 * return: the same result as one kcc_ksf_call() or kcc_ksf_return() per
 * event, with the builder's depth and slab position kept in registers.
 */
#define KCC_EV_RET	(~0ull)
void kcc_ksf_replay(struct kcc_ksf *s, const u64 *ev, size_t n);
/* Add @delta to event counter @metric (1-based) of the current context. */
void kcc_ksf_charge(struct kcc_ksf *s, u32 metric, u64 delta);
/*
 * kcc_ksf_charge() of @da to @ma, then of @db to @mb (a sample's event
 * count and the sample), finding the current context once.
 */
void kcc_ksf_charge2(struct kcc_ksf *s, u32 ma, u64 da, u32 mb, u64 db);

/*
 * inv_k (Lemma 1): the k-CCF of a CCT (@src_k = KCC_K_INF) or of a k'-SF
 * (@src_k = k', with k <= k').  Each source node joins the reversal of the
 * last k edges of its root path into @dst, adding its counters to every
 * node on the way.  Following the note after Property 2, the nodes in the
 * top region of a slab tree (root kind KCC_ROOT_SLAB, level < k') count as
 * zero: the same activations are counted in the bottom region of the tree
 * above, with their full k-context.  Nodes whose counters are all zero
 * (frames anchored by kcc_ksf_enter() and never called) add nothing.
 *
 * @witness, when not NULL, has room for dst->capacity entries and receives
 * for every k-CCF node one source node whose root path spells it, which is
 * what a pruned chain needs to be rebuilt (kcc_prune_chains()).
 *
 * Returns 0, -EINVAL for k > src_k, or -ENOSPC when @dst filled up (the
 * paths that fit are joined and dst->drops counts the rest).
 */
int kcc_inv_k(const struct kcc_forest *src, u32 src_k, u32 k,
	      struct kcc_forest *dst, u32 *witness);

/*
 * Pruned views of a k-CCF (Section 6 of the paper).  Both rely on nodes
 * being stored after their parents, which holds for any forest built
 * without kcc_forest_del().  @keep receives one flag per node index.
 *
 * x%-similar: keep node u of the tree rooted at r iff
 * c(u) >= x/100 * c(r), tested on counter @ctr, with x given in basis
 * points (9000 = 90%).  Counter monotonicity makes the kept set a set of
 * root-paths.  @scratch has room for f->count u32.
 */
u32 kcc_prune_similar(const struct kcc_forest *f, u32 ctr, u32 x_bp,
		      u8 *keep, u32 *scratch);
/*
 * Chain pruning: every maximal chain that ends in a leaf keeps only its
 * first node.  For each kept chain head with pruned nodes below it,
 * @chain_len receives how many were pruned and @chain_leaf (when not NULL)
 * the index of the chain's leaf; elsewhere 0 and KCC_NIL.  With the
 * witnesses of kcc_inv_k(), the pruned labels are the ancestors of
 * witness[leaf] in the source forest, from level(head) + 1 on, which is
 * what lets a reader rebuild the chain.  @scratch has room for 2 *
 * f->count u32.  Returns the number of nodes kept.
 */
u32 kcc_prune_chains(const struct kcc_forest *f, u8 *keep, u32 *chain_len,
		     u32 *chain_leaf, u32 *scratch);

#endif /* KCC_FOREST_H */
