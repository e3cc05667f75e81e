// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_forest.c - node storage and the (parent, label) child index shared
 * by the CCT, the k-SF, the k-CCF and the HCCT.
 *
 * One hash table indexes every parent/child edge of the forest, roots
 * included (their parent is one of the KCC_ROOT_* values), so both the
 * roots table R and the child lookups of Figure 7 cost one probe on
 * average.  Nodes are 16 bytes plus 8 per counter and the table adds one
 * u32 per node: 28 bytes a node with the activation counter alone.
 */
#include "kcc_forest.h"
#include "kcc_hcct.h"

static u32 kcc_bucket_count(u32 capacity)
{
	u32 n = 16;

	while (n < capacity && n < 0x80000000u)
		n <<= 1;
	return n;
}

static u32 kcc_node_stride(u32 nmetrics)
{
	return sizeof(struct kcc_node) + (1 + nmetrics) * sizeof(u64);
}

size_t kcc_forest_mem_size(u32 capacity, u32 nmetrics)
{
	return (size_t)capacity * kcc_node_stride(nmetrics) +
	       (size_t)kcc_bucket_count(capacity) * sizeof(u32);
}

static void kcc_forest_index_init(struct kcc_forest *f, u32 nb)
{
	f->bucket_mask = nb - 1;
	f->hshift = 64;
	while (nb > 1) {
		nb >>= 1;
		f->hshift--;
	}
}

/**
 * kcc_forest_init() - set up an empty forest in caller memory
 * @f:		forest to initialise
 * @mem:	8-byte aligned block of at least kcc_forest_mem_size() bytes
 * @mem_size:	size of @mem
 * @capacity:	maximum number of nodes, below KCC_FREE
 * @nmetrics:	event counters per node besides the activation counter
 *
 * Return: 0, or -EINVAL for a block too small or misaligned.
 */
int kcc_forest_init(struct kcc_forest *f, void *mem, size_t mem_size,
		    u32 capacity, u32 nmetrics)
{
	u32 nb = kcc_bucket_count(capacity);

	if (!mem || ((unsigned long)mem & 7) || nmetrics > KCC_MAX_METRICS ||
	    capacity >= KCC_FREE ||
	    mem_size < kcc_forest_mem_size(capacity, nmetrics))
		return -EINVAL;
	f->stride = kcc_node_stride(nmetrics);
	f->nmetrics = nmetrics;
	f->capacity = capacity;
	f->nodes = mem;
	f->buckets = (u32 *)((u8 *)mem + (size_t)capacity * f->stride);
	kcc_forest_index_init(f, nb);
	f->pr = NULL;
	kcc_forest_reset(f);
	return kcc_forest_set_seed(f, KCC_SEED_FIXED);
}

int kcc_forest_move(struct kcc_forest *f, void *mem, size_t mem_size,
		    u32 capacity)
{
	u32 nb = kcc_bucket_count(capacity), i;

	if (!mem || ((unsigned long)mem & 7) || capacity >= KCC_FREE ||
	    capacity < f->count || f->pr ||
	    mem_size < kcc_forest_mem_size(capacity, f->nmetrics))
		return -EINVAL;
	memcpy(mem, f->nodes, (size_t)f->count * f->stride);
	f->nodes = mem;
	f->capacity = capacity;
	f->buckets = (u32 *)((u8 *)mem + (size_t)capacity * f->stride);
	kcc_forest_index_init(f, nb);
	memset(f->buckets, 0xff, (size_t)nb * sizeof(u32));
	/* Free nodes stay on the free list, linked by hnext as before. */
	for (i = 0; i < f->count; i++) {
		struct kcc_node *n = kcc_forest_node(f, i);
		u32 *head;

		if (n->parent == KCC_FREE)
			continue;
		head = &f->buckets[kcc_forest_hash(f, n->parent, n->label)];
		n->hnext = *head;
		*head = i;
	}
	return 0;
}

/* splitmix64: spreads one seed over the four hash keys. */
static u64 kcc_splitmix(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int kcc_forest_set_seed(struct kcc_forest *f, u64 seed)
{
	u32 j;

	if (f->count)
		return -EBUSY;
	for (j = 0; j < 4; j++)
		f->hkey[j] = kcc_splitmix(&seed);
	return 0;
}

void kcc_forest_reset(struct kcc_forest *f)
{
	memset(f->buckets, 0xff, (size_t)(f->bucket_mask + 1) * sizeof(u32));
	f->count = 0;
	f->live = 0;
	f->free_head = KCC_NIL;
	f->drops = 0;
}

/*
 * Here, not in kcc_hcct.c: programs that take this file alone link.
 * @s: the counter the node takes over, KCC_NIL for none.
 */
static void kcc_fprune_new(struct kcc_forest *f, u32 idx, u32 parent, u32 s)
{
	struct kcc_fprune *p = f->pr;

	p->ss.slot[idx] = s;
	if (s != KCC_NIL)
		p->ss.mon[s] = idx;
	p->nchild[idx] = 0;
	p->pin[idx] = p->pin_seq;
	if (!kcc_is_root_parent(parent))
		p->nchild[parent]++;
}

u32 kcc_forest_insert(struct kcc_forest *f, u32 parent, u64 label)
{
	return kcc_forest_insert_at(f, &f->buckets[kcc_forest_hash(f, parent,
								   label)],
				    parent, label);
}

/* A node for a new edge: a freed one, else one never used; KCC_NIL: full. */
static __always_inline u32 kcc_forest_alloc(struct kcc_forest *f)
{
	u32 i;

	if (f->free_head != KCC_NIL) {
		i = f->free_head;
		f->free_head = kcc_forest_node(f, i)->hnext;
	} else if (f->count < f->capacity) {
		i = f->count++;
	} else {
		f->drops++;
		return KCC_NIL;
	}
	f->live++;
	return i;
}

/* Node @i becomes edge (parent, label), with zero counters, at @head. */
static __always_inline u32 kcc_forest_link(struct kcc_forest *f, u32 *head,
					   u32 i, u32 parent, u64 label)
{
	struct kcc_node *n = kcc_forest_node(f, i);
	u32 j;

	n->label = label;
	n->parent = parent;
	n->hnext = *head;
	/* 1 to 9 counters: stores, not a call. */
	for (j = 0; j <= f->nmetrics; j++)
		n->ctr[j] = 0;
	*head = i;
	return i;
}

/*
 * In a pruned forest a full pool reclaims a cold leaf first.  @head
 * stays the bucket's: reclaiming a node unlinks it, moves no bucket.
 */
static u32 kcc_forest_insert_pruned(struct kcc_forest *f, u32 *head,
				    u32 parent, u64 label)
{
	u32 s = KCC_NIL, i;

	if (f->free_head == KCC_NIL && f->count == f->capacity)
		s = f->pr->reclaim(f);
	i = kcc_forest_alloc(f);
	if (i == KCC_NIL)
		return KCC_NIL;
	kcc_fprune_new(f, i, parent, s);
	return kcc_forest_link(f, head, i, parent, label);
}

u32 kcc_forest_insert_at(struct kcc_forest *f, u32 *head, u32 parent,
			 u64 label)
{
	u32 i;

	if (unlikely(f->pr))
		return kcc_forest_insert_pruned(f, head, parent, label);
	i = kcc_forest_alloc(f);
	return i == KCC_NIL ? KCC_NIL : kcc_forest_link(f, head, i, parent,
							 label);
}

void kcc_forest_del(struct kcc_forest *f, u32 idx)
{
	struct kcc_node *n = kcc_forest_node(f, idx);
	u32 *link = &f->buckets[kcc_forest_hash(f, n->parent, n->label)];

	while (*link != idx) {
		if (KCC_WARN_ON(*link == KCC_NIL))
			return;
		link = &kcc_forest_node(f, *link)->hnext;
	}
	*link = n->hnext;
	n->parent = KCC_FREE;
	n->hnext = f->free_head;
	f->free_head = idx;
	f->live--;
}

void kcc_forest_add_ctrs(struct kcc_forest *dst, u32 di,
			 const struct kcc_forest *src, u32 si)
{
	u64 *d = kcc_forest_ctr(dst, di);
	const u64 *s = kcc_forest_ctr(src, si);
	u32 n = 1 + (dst->nmetrics < src->nmetrics ? dst->nmetrics :
		     src->nmetrics);
	u32 j;

	for (j = 0; j < n; j++)
		d[j] += s[j];
}

bool kcc_forest_ctrs_zero(const struct kcc_forest *f, u32 idx)
{
	const u64 *c = kcc_forest_ctr(f, idx);
	u32 j;

	for (j = 0; j <= f->nmetrics; j++)
		if (c[j])
			return false;
	return true;
}

u32 kcc_forest_level(const struct kcc_forest *f, u32 idx)
{
	u32 level = 0;
	u32 p = kcc_forest_node(f, idx)->parent;

	while (!kcc_is_root_parent(p)) {
		level++;
		p = kcc_forest_node(f, p)->parent;
	}
	return level;
}

u32 kcc_forest_root_kind(const struct kcc_forest *f, u32 idx)
{
	u32 p = kcc_forest_node(f, idx)->parent;

	while (!kcc_is_root_parent(p))
		p = kcc_forest_node(f, p)->parent;
	return p;
}
