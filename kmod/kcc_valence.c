// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_valence.c - the Valence source (Documentation/valence.rst): the
 * threads' registered areas, their reading at each sample, and the
 * per-task tables of distinct encodings the worker keeps.
 *
 * Registration (KCC_IOC_VALENCE_REGISTER) works like rseq(2): a thread
 * hands over the address of its struct kcc_valence_area, kept in a
 * fixed table of KCC_VREG_SLOTS slots hashed by task_struct pointer,
 * at most KCC_VREG_PROBE slots from the hash.  Writers (the thread
 * itself, its exit or exec) take a raw spinlock with interrupts off and
 * bracket each slot update with the slot's seq; the sample handler, in
 * NMI or hardirq, reads the window without a lock and retries nothing:
 * a slot whose seq is odd or moves is skipped, which at worst makes one
 * sample of a thread that is (un)registering right now an fp sample.  A
 * slot is cleared when its task exits (sched_process_exit), so a freed
 * task_struct is never matched.
 *
 * The handler reads the area with copy_from_user_nmi(), never taking a
 * fault: the fixed fields first, then only the acyc_words words and the
 * rec words in use, at most 68 words.  Everything it reads is the
 * program's to choose and is checked as hostile input: a wrong size,
 * lengths out of bounds or an unreadable address is a counted sample
 * not taken, as are a torn area (odd seq, or a seq that moved during the
 * read) and an overflowed one (rec_over: the area is not exact).
 *
 * Aggregation: the kernel has no encoding table, so it does not decode.
 * Each task keeps a bounded open-addressing table keyed by the words
 * read (siphash with a per-table random key, so a program cannot aim
 * its encodings at one bucket), with the samples and events of each
 * encoding; read() exports it as KCC_REC_VALENCE and kcc record decodes
 * it with the table file.  A full table is a counted loss, like a full
 * forest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/hash.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/siphash.h>
#include <linux/random.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/cred.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_budget.h"
#include "kcc_perm.h"
#include "kcc_valence.h"

/* ---- registrations ------------------------------------------------------ */

#define KCC_VREG_BITS		12
#define KCC_VREG_SLOTS		BIT(KCC_VREG_BITS)
#define KCC_VREG_PROBE		32

struct kcc_vreg {
	u32 seq;			/* odd while being written */
	struct task_struct *task;	/* NULL: free */
	u64 area;			/* user address */
	kuid_t uid;			/* the registering thread's euid */
};

static struct kcc_vreg kcc_vregs[KCC_VREG_SLOTS];
static DEFINE_RAW_SPINLOCK(kcc_vreg_lock);
static atomic_t kcc_vreg_nr = ATOMIC_INIT(0);

static u32 kcc_vreg_hash(const struct task_struct *t)
{
	return hash_ptr((void *)t, KCC_VREG_BITS);
}

static void kcc_vreg_set(struct kcc_vreg *e, struct task_struct *t, u64 area)
{
	WRITE_ONCE(e->seq, e->seq + 1);
	smp_wmb();	/* pairs with the reader's smp_rmb() */
	WRITE_ONCE(e->task, t);
	WRITE_ONCE(e->area, area);
	/* The slot's fields before its seq goes even: see kcc_vreg_find(). */
	smp_wmb();
	WRITE_ONCE(e->seq, e->seq + 1);
}

/* The slot of @t, or NULL; under kcc_vreg_lock. */
static struct kcc_vreg *kcc_vreg_slot(const struct task_struct *t,
				      struct kcc_vreg **free)
{
	u32 h = kcc_vreg_hash(t), i;

	*free = NULL;
	for (i = 0; i < KCC_VREG_PROBE; i++) {
		struct kcc_vreg *e = &kcc_vregs[(h + i) & (KCC_VREG_SLOTS - 1)];

		if (e->task == t)
			return e;
		if (!e->task && !*free)
			*free = e;
	}
	return NULL;
}

/* Slots held by @uid's threads; under kcc_vreg_lock. */
static unsigned int kcc_vreg_held(kuid_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < KCC_VREG_SLOTS; i++)
		if (kcc_vregs[i].task && uid_eq(kcc_vregs[i].uid, uid))
			n++;
	return n;
}

/*
 * Register @area for @t (0: unregister).  @quota: the caller registers
 * itself and its user may hold that many slots (kcc_valence_quota());
 * 0: not counted.
 */
static int kcc_vreg_update(struct task_struct *t, u64 area,
			   unsigned int quota)
{
	kuid_t uid = quota ? current_euid() : GLOBAL_ROOT_UID;
	struct kcc_vreg *e, *free;
	unsigned long flags;
	int ret = 0;

	raw_spin_lock_irqsave(&kcc_vreg_lock, flags);
	e = kcc_vreg_slot(t, &free);
	if (!area) {
		if (e) {
			kcc_vreg_set(e, NULL, 0);
			atomic_dec(&kcc_vreg_nr);
		}
	} else if (e) {
		kcc_vreg_set(e, t, area);
	} else if (free && quota && kcc_vreg_held(uid) >= quota) {
		ret = -EDQUOT;
	} else if (free) {
		free->uid = uid;
		kcc_vreg_set(free, t, area);
		atomic_inc(&kcc_vreg_nr);
	} else {
		ret = -ENOSPC;
	}
	raw_spin_unlock_irqrestore(&kcc_vreg_lock, flags);
	return ret;
}

/* NMI-safe: the area registered by @t, or 0. */
static u64 kcc_vreg_find(const struct task_struct *t)
{
	u32 h = kcc_vreg_hash(t), i;

	if (!atomic_read(&kcc_vreg_nr))
		return 0;
	for (i = 0; i < KCC_VREG_PROBE; i++) {
		struct kcc_vreg *e = &kcc_vregs[(h + i) & (KCC_VREG_SLOTS - 1)];
		u32 seq = READ_ONCE(e->seq);
		struct task_struct *et;
		u64 area;

		if (seq & 1)
			continue;
		/* Pairs with kcc_vreg_set(): the fields after the seq. */
		smp_rmb();
		et = READ_ONCE(e->task);
		area = READ_ONCE(e->area);
		/* The fields before the seq is read again. */
		smp_rmb();
		if (READ_ONCE(e->seq) != seq)
			continue;
		if (et == t)
			return area;
	}
	return 0;
}

/*
 * KCC_IOC_VALENCE_REGISTER for the calling thread.  No privilege: the
 * registration is only ever read while this thread is sampled, and
 * samples are taken by whoever may profile it.
 */
long kcc_valence_register(const struct kcc_valence_reg *reg)
{
	if (reg->size != sizeof(*reg))
		return -EINVAL;
	if (!reg->area)
		return kcc_vreg_update(current, 0, 0);
	/*
	 * A slot is cleared by its thread's exit probe.  Without the
	 * probes (tracepoints=0) it would outlive the thread and match the
	 * next task given the same task_struct.
	 */
	if (!kcc_param_tracepoints)
		return -EOPNOTSUPP;
	if (reg->area_size != sizeof(struct kcc_valence_area) ||
	    !IS_ALIGNED(reg->area, 8))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(reg->area), reg->area_size))
		return -EFAULT;
	return kcc_vreg_update(current, reg->area,
			       kcc_valence_quota(KCC_VREG_SLOTS));
}

/* The task exits or execs (its area is gone with its mm): forget it. */
void kcc_valence_task_gone(struct task_struct *p)
{
	if (atomic_read(&kcc_vreg_nr))
		kcc_vreg_update(p, 0, 0);
}

/* ---- the handler -------------------------------------------------------- */

/* Indices of kcc_hcount.valence[], KCC_VC_NR of them. */
enum {
	KCC_VC_SAMPLES, KCC_VC_FALLBACK, KCC_VC_TORN, KCC_VC_BAD,
	KCC_VC_FAULT, KCC_VC_OVERFLOW,
};

/* this_cpu_inc() is one instruction: safe against NMIs on this CPU. */
#define kcc_vc_inc(s, i)	this_cpu_inc((s)->hc->valence[i])

/* The fixed fields of struct kcc_valence_area: all the NMI stack holds. */
struct kcc_varea_hdr {
	u32 size;
	u32 seq;
	u32 cur;
	u32 rec_bits;
	u32 rec_over;
	u32 acyc_words;
	u64 table_id;
	u32 root;
	u32 __reserved;
	u64 root_site;
};

/*
 * Runs in the sample handler for the current task.  Writes the key of
 * its encoding into @w (KCC_VKEY_HDR words of fixed fields, then the
 * acyc and rec words in use, at most KCC_VKEY_MAX words) and returns
 * the number of words; 0 when the task has no area (the caller walks
 * by frame pointers); -1 when the sample is not taken (counted).
 */
int kcc_valence_read(struct kcc_session *s, u64 *w)
{
	u64 area = kcc_vreg_find(current);
	struct kcc_varea_hdr hd;
	void __user *u = u64_to_user_ptr(area);
	u32 nrec, seq, lim;

	BUILD_BUG_ON(sizeof(hd) != offsetof(struct kcc_valence_area, acyc) ||
		     offsetof(struct kcc_varea_hdr, root_site) !=
		     offsetof(struct kcc_valence_area, root_site));
	if (!area) {
		kcc_vc_inc(s, KCC_VC_FALLBACK);
		return 0;
	}
	if (copy_from_user_nmi(&hd, u, sizeof(hd)))
		goto fault;
	if (hd.size != sizeof(struct kcc_valence_area) || hd.acyc_words > KCC_VALENCE_ACYC_WORDS ||
	    hd.rec_bits > 64 * KCC_VALENCE_REC_WORDS) {
		kcc_vc_inc(s, KCC_VC_BAD);
		return -1;
	}
	if (hd.seq & 1) {
		kcc_vc_inc(s, KCC_VC_TORN);
		return -1;
	}
	if (hd.rec_over) {
		kcc_vc_inc(s, KCC_VC_OVERFLOW);
		return -1;
	}
	nrec = DIV_ROUND_UP(hd.rec_bits, 64);
	if (copy_from_user_nmi(w + KCC_VKEY_HDR,
			       u + offsetof(struct kcc_valence_area, acyc),
			       hd.acyc_words * sizeof(u64)) ||
	    copy_from_user_nmi(w + KCC_VKEY_HDR + hd.acyc_words,
			       u + offsetof(struct kcc_valence_area, rec),
			       nrec * sizeof(u64)) ||
	    copy_from_user_nmi(&seq, u + offsetof(struct kcc_valence_area, seq),
			       sizeof(seq)))
		goto fault;
	/* Another thread (or a hostile one) wrote it while we read. */
	if (seq != hd.seq) {
		kcc_vc_inc(s, KCC_VC_TORN);
		return -1;
	}
	/* Bits above rec_bits are stale pushes: not part of the encoding. */
	lim = hd.rec_bits % 64;
	if (lim)
		w[KCC_VKEY_HDR + hd.acyc_words + nrec - 1] &= (1ull << lim) - 1;
	w[0] = hd.table_id;
	w[1] = hd.root_site;
	w[2] = hd.cur | (u64)hd.root << 32;
	w[3] = hd.rec_bits | (u64)hd.acyc_words << 32;
	kcc_vc_inc(s, KCC_VC_SAMPLES);
	return KCC_VKEY_HDR + hd.acyc_words + nrec;

fault:
	kcc_vc_inc(s, KCC_VC_FAULT);
	return -1;
}

/* ---- per-task tables (worker, kcc_g.lock held) -------------------------- */

#define KCC_VTAB_SLOTS		1024u	/* entries at most 3/4 of it */
#define KCC_VTAB_WORDS		(16u * 1024)

struct kcc_vent {
	u64 hash;
	u32 off;		/* in pool */
	u16 nwords;		/* 0: free slot */
	u16 __pad;
	u64 events;
	u64 samples;
};

struct kcc_vtab {
	siphash_key_t key;
	u32 nr;
	u32 used;		/* pool words */
	u64 full;		/* encodings not kept */
	struct kcc_vent ent[KCC_VTAB_SLOTS];
	u64 pool[KCC_VTAB_WORDS];
};

static void kcc_vcnt_sum(struct kcc_session *s, u64 *out)
{
	struct kcc_hcount sum;

	kcc_hcount_sum(s, &sum);
	memcpy(out, sum.valence, sizeof(sum.valence));
}

void kcc_valence_counters_zero(struct kcc_session *s)
{
	kcc_vcnt_sum(s, s->vbase);
	s->vfull_retired = 0;
}

/* Apply one encoding read by the handler to @t's table. */
void kcc_valence_apply(struct kcc_session *s, struct kcc_task *t,
		       const struct kcc_sample *smp)
{
	const u64 *w = (const u64 *)(smp + 1);
	u32 n = smp->nr_stack, i, h;
	struct kcc_vtab *vt = t->vtab;
	struct kcc_vent *e;
	u64 hash;

	if (!vt) {
		if (kcc_mem_room(s, sizeof(*vt)))
			vt = kvzalloc(sizeof(*vt), GFP_KERNEL);
		if (!vt) {
			s->vfull_retired++;
			return;
		}
		get_random_bytes(&vt->key, sizeof(vt->key));
		t->vtab = vt;
		t->bytes += sizeof(*vt);
		kcc_mem_add(s, sizeof(*vt));
	}
	hash = siphash(w, n * sizeof(u64), &vt->key);
	for (i = 0; i < KCC_VTAB_SLOTS; i++) {
		h = (hash + i) & (KCC_VTAB_SLOTS - 1);
		e = &vt->ent[h];
		if (!e->nwords)
			break;
		if (e->hash == hash && e->nwords == n &&
		    !memcmp(vt->pool + e->off, w, n * sizeof(u64)))
			goto charge;
	}
	if (vt->nr >= KCC_VTAB_SLOTS / 4 * 3 ||
	    vt->used + n > KCC_VTAB_WORDS) {
		vt->full++;
		return;
	}
	e->hash = hash;
	e->off = vt->used;
	e->nwords = n;
	memcpy(vt->pool + vt->used, w, n * sizeof(u64));
	vt->used += n;
	vt->nr++;
charge:
	e->events += smp->delta;
	e->samples++;
}

/*
 * A task freed before a reader had its record (a thread folded into its
 * process when memory is short) takes its encodings with it: counted.
 */
void kcc_valence_task_free(struct kcc_session *s, struct kcc_task *t)
{
	if (!t->vtab)
		return;
	/* Its bytes are in t->bytes, which kcc_task_release() gives back. */
	s->vfull_retired += t->vtab->full + (t->exit_seq ? 0 : t->vtab->nr);
	kvfree(t->vtab);
	t->vtab = NULL;
}

/* Bytes of @t's KCC_REC_VALENCE record, 0 when it has none. */
size_t kcc_valence_rec_size(const struct kcc_task *t)
{
	const struct kcc_vtab *vt = t->vtab;

	if (!vt)
		return 0;
	return sizeof(struct kcc_rec_valence) +
	       vt->nr * (sizeof(struct kcc_valence_ent) -
			 KCC_VKEY_HDR * sizeof(u64)) +
	       vt->used * sizeof(u64);
}

u8 *kcc_valence_put(u8 *p, const struct kcc_task *t)
{
	const struct kcc_vtab *vt = t->vtab;
	struct kcc_rec_valence *rv = (struct kcc_rec_valence *)p;
	u32 i;

	if (!vt)
		return p;
	memset(rv, 0, sizeof(*rv));
	rv->hdr.type = KCC_REC_VALENCE;
	rv->hdr.size = kcc_valence_rec_size(t);
	rv->pid = t->pid;
	rv->tgid = t->tgid;
	rv->start_time_ns = t->start;
	rv->nr_entries = vt->nr;
	rv->table_full = vt->full;
	p += sizeof(*rv);
	for (i = 0; i < KCC_VTAB_SLOTS; i++) {
		const struct kcc_vent *e = &vt->ent[i];
		const u64 *w = vt->pool + e->off;
		struct kcc_valence_ent *ve = (struct kcc_valence_ent *)p;
		u32 words = e->nwords - KCC_VKEY_HDR;

		if (!e->nwords)
			continue;
		ve->size = sizeof(*ve) + words * sizeof(u64);
		ve->table_id = w[0];
		ve->root_site = w[1];
		ve->cur = (u32)w[2];
		ve->root = w[2] >> 32;
		ve->rec_bits = (u32)w[3];
		ve->acyc_words = w[3] >> 32;
		ve->rec_words = words - ve->acyc_words;
		ve->events = e->events;
		ve->samples = e->samples;
		memcpy(ve + 1, w + KCC_VKEY_HDR, words * sizeof(u64));
		p += ve->size;
	}
	return p;
}

void kcc_valence_status(struct kcc_session *s, struct kcc_status *st)
{
	struct kcc_task *t;
	u64 c[KCC_VC_NR];

	kcc_vcnt_sum(s, c);
	st->valence_samples = c[KCC_VC_SAMPLES] - s->vbase[KCC_VC_SAMPLES];
	st->valence_fallback = c[KCC_VC_FALLBACK] - s->vbase[KCC_VC_FALLBACK];
	st->valence_torn = c[KCC_VC_TORN] - s->vbase[KCC_VC_TORN];
	st->valence_bad = c[KCC_VC_BAD] - s->vbase[KCC_VC_BAD];
	st->valence_fault = c[KCC_VC_FAULT] - s->vbase[KCC_VC_FAULT];
	st->valence_overflow = c[KCC_VC_OVERFLOW] - s->vbase[KCC_VC_OVERFLOW];
	st->valence_table_full = s->vfull_retired;
	list_for_each_entry(t, &s->task_list, node) {
		if (!t->vtab)
			continue;
		st->valence_table_full += t->vtab->full;
		st->valence_entries += t->vtab->nr;
	}
}
