// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_watch.c - watched k-contexts counted exactly in per-task arrays
 * (preferential path profiling, Documentation/ppp.rst).
 *
 * KCC_IOC_WATCH hands the session a set I of k-contexts over routine ids
 * and the address ranges of those routines.  The upload is copied and
 * checked, numbered by lbr/kcc_ppp (the same code, so the same numbers,
 * as the userspace tools) and installed only when all of it is valid:
 * a refused upload leaves the session as it was.  Its memory is
 * allocated here, in the ioctl, bounded by the KCC_WATCH_MAX_* caps and
 * charged to the session's max_bytes.
 *
 * Every task state created afterwards gets, in one allocation made by
 * the worker with the rest of the task (never in the handlers), a calls
 * array and an events/samples array of range entries each and a shadow
 * stack: O(delta |I|) per task and no node is ever created.  The task's
 * k-SF builder drives the counting (kcc_ksf -> kcc_ppp_call_w(),
 * kcc_ppp_return(), kcc_ppp_charge()), so the watched counts see exactly
 * the calls and charges the forest sees.  A task whose arrays do not fit
 * the budget keeps its forest and is counted in watch_task_drops (the
 * stream's records are then missing for it).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/overflow.h>

#include "kcc_ppp.h"
#include "kcc_state.h"
#include "kcc_budget.h"
#include "kcc_watch.h"

/* Metrics charged beside the calls: events and samples. */
#define KCC_WATCH_NMETRICS	(KCC_WATCH_NR_CTRS - 1)

struct kcc_watch_set {
	struct kcc_ppp p;
	void *mem;			/* the numbering's tables */
	struct kcc_ppp_range *ranges;	/* kcc_ppp_set_ranges() keeps them */
	size_t bytes;			/* charged to the session */
	u32 k;
};

struct kcc_watch_task {
	struct kcc_ppp_run run;
	/* then counts[range], metrics[range * NMETRICS], the stack */
};

/* Bytes of one task's arrays and shadow stack under @ws. */
static size_t kcc_watch_task_size(const struct kcc_session *s,
				  const struct kcc_watch_set *ws)
{
	return ALIGN(sizeof(struct kcc_watch_task), 64) +
	       (size_t)ws->p.range * (1 + KCC_WATCH_NMETRICS) * sizeof(u64) +
	       (size_t)s->stack_cap * sizeof(struct kcc_ppp_frame);
}

static void kcc_watch_set_free(struct kcc_watch_set *ws)
{
	if (!ws)
		return;
	kvfree(ws->mem);
	kvfree(ws->ranges);
	kfree(ws);
}

/* Copy a user array of @n elements of @size bytes into kvmalloc()ed memory. */
static void *kcc_watch_copy(u64 uptr, u32 n, size_t size, int *err)
{
	size_t bytes;
	void *k;

	if (check_mul_overflow((size_t)n, size, &bytes)) {
		*err = -E2BIG;
		return NULL;
	}
	k = kvmalloc(bytes, GFP_KERNEL);
	if (!k) {
		*err = -ENOMEM;
		return NULL;
	}
	if (copy_from_user(k, u64_to_user_ptr(uptr), bytes)) {
		kvfree(k);
		*err = -EFAULT;
		return NULL;
	}
	return k;
}

/*
 * Check the upload and number it: the set, or an ERR_PTR (-EINVAL for
 * anything malformed, -E2BIG over a cap, -EFAULT, -ENOMEM).
 */
static struct kcc_watch_set *kcc_watch_build(const struct kcc_watch *w)
{
	struct kcc_watch_range *ur = NULL;
	struct kcc_watch_set *ws;
	u32 *lens = NULL, *paths = NULL;
	u64 *labels = NULL;
	size_t msize;
	u32 i, sum = 0;
	int ret = 0;

	if (w->flags & ~KCC_WATCH_FLAGS_ALL || w->__reserved[0] ||
	    w->__reserved[1])
		return ERR_PTR(-EINVAL);
	if (w->nr_contexts > KCC_WATCH_MAX_CONTEXTS ||
	    w->nr_ranges > KCC_WATCH_MAX_RANGES ||
	    w->range > KCC_WATCH_MAX_RANGE ||
	    w->nr_routines > KCC_WATCH_MAX_RANGES)
		return ERR_PTR(-E2BIG);
	if (!w->k || w->k > KCC_WATCH_K_MAX || !w->range || !w->nr_routines ||
	    !w->nr_ranges || w->nr_labels < w->nr_contexts ||
	    w->nr_labels > w->nr_contexts * (KCC_WATCH_K_MAX + 1))
		return ERR_PTR(-EINVAL);

	ws = kzalloc(sizeof(*ws), GFP_KERNEL);
	if (!ws)
		return ERR_PTR(-ENOMEM);
	ur = kcc_watch_copy(w->ranges, w->nr_ranges, sizeof(*ur), &ret);
	if (ur)
		lens = kcc_watch_copy(w->lens, w->nr_contexts, sizeof(u32), &ret);
	if (lens)
		paths = kcc_watch_copy(w->paths, w->nr_labels, sizeof(u32), &ret);
	if (!paths)
		goto out;

	ws->ranges = kvmalloc_array(w->nr_ranges, sizeof(*ws->ranges),
				    GFP_KERNEL);
	labels = kvmalloc_array(w->nr_labels, sizeof(*labels), GFP_KERNEL);
	if (!ws->ranges || !labels) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nr_ranges; i++) {
		if (ur[i].__reserved || ur[i].routine >= w->nr_routines) {
			ret = -EINVAL;
			goto out;
		}
		ws->ranges[i].start = ur[i].start;
		ws->ranges[i].end = ur[i].end;
		ws->ranges[i].label = ur[i].routine;
	}
	for (i = 0; i < w->nr_contexts; i++) {
		/* Each length is checked before the sum can wrap. */
		if (!lens[i] || lens[i] > w->k + 1) {
			ret = -EINVAL;
			goto out;
		}
		sum += lens[i];
	}
	if (sum != w->nr_labels) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < w->nr_labels; i++) {
		if (paths[i] >= w->nr_routines) {
			ret = -EINVAL;
			goto out;
		}
		labels[i] = paths[i];
	}

	msize = kcc_ppp_mem_size(w->nr_contexts, w->nr_labels, w->range);
	if (!msize) {
		ret = -E2BIG;
		goto out;
	}
	ws->mem = kvmalloc(msize, GFP_KERNEL);
	if (!ws->mem) {
		ret = -ENOMEM;
		goto out;
	}
	/* Duplicates are -EINVAL, numbers over the stated range -E2BIG. */
	ret = kcc_ppp_build(&ws->p, ws->mem, msize, labels, lens,
			    w->nr_contexts, w->range);
	/* The numbering is deterministic: userspace stated its size. */
	if (!ret && (ws->p.range != w->range || ws->p.kmax > w->k))
		ret = -EINVAL;
	/* Sorted, disjoint, non-empty ranges, else -EINVAL. */
	if (!ret)
		ret = kcc_ppp_set_ranges(&ws->p, ws->ranges, w->nr_ranges);
	ws->k = w->k;
	ws->bytes = sizeof(*ws) + msize +
		    (size_t)w->nr_ranges * sizeof(*ws->ranges);
out:
	kvfree(labels);
	kvfree(paths);
	kvfree(lens);
	kvfree(ur);
	if (ret) {
		kcc_watch_set_free(ws);
		return ERR_PTR(ret);
	}
	return ws;
}

/*
 * KCC_IOC_WATCH with the session lock NOT held: ownership is checked,
 * the upload is built, then installed when the caller still owns a configured session
 * that has not started (-EINVAL otherwise: no session of its own, or started).
 */
long kcc_watch_upload(struct file *file, const struct kcc_watch *w)
{
	struct kcc_watch_set *ws = NULL;
	struct kcc_session *s;
	long ret = 0;

	/*
	 * Ownership and state first: a caller without a configured session
	 * of its own makes kcc copy and allocate nothing.  Checked again
	 * when the set is installed (the session may start meanwhile).
	 */
	mutex_lock(&kcc_g.lock);
	s = kcc_session_owned(file);
	if (!s || s->state != KCC_STATE_READY)
		ret = -EINVAL;
	mutex_unlock(&kcc_g.lock);
	if (ret)
		return ret;

	if (w->nr_contexts) {
		ws = kcc_watch_build(w);
		if (IS_ERR(ws))
			return PTR_ERR(ws);
	} else if (w->flags || w->k || w->range || w->nr_routines ||
		   w->nr_ranges || w->nr_labels || w->ranges || w->lens ||
		   w->paths || w->__reserved[0] || w->__reserved[1]) {
		return -EINVAL;
	}

	mutex_lock(&kcc_g.lock);
	s = kcc_session_owned(file);
	if (!s || s->state != KCC_STATE_READY) {
		ret = -EINVAL;
	} else if (ws && !kcc_mem_room(s, ws->bytes)) {
		ret = -E2BIG;
	} else {
		if (s->watch) {
			kcc_mem_add(s, -(ssize_t)s->watch->bytes);
			kcc_watch_set_free(s->watch);
		}
		s->watch = ws;
		if (ws)
			kcc_mem_add(s, ws->bytes);
		ws = NULL;
	}
	mutex_unlock(&kcc_g.lock);
	kcc_watch_set_free(ws);
	return ret;
}

void kcc_watch_session_free(struct kcc_session *s)
{
	if (!s->watch)
		return;
	kcc_mem_add(s, -(ssize_t)s->watch->bytes);
	kcc_watch_set_free(s->watch);
	s->watch = NULL;
}

/*
 * A new task state: its arrays, when the session watches and the budget
 * allows, else a counted drop.  Worker context, kcc_g.lock held.
 */
void kcc_watch_task_init(struct kcc_session *s, struct kcc_task *t)
{
	const struct kcc_watch_set *ws = s->watch;
	struct kcc_watch_task *wt;
	size_t size;
	u64 *counts;
	u8 *mem;

	if (!ws)
		return;
	size = kcc_watch_task_size(s, ws);
	if (!kcc_mem_room(s, size)) {
		s->watch_task_drops++;
		return;
	}
	mem = kvmalloc(size, GFP_KERNEL);
	if (!mem) {
		s->watch_task_drops++;
		return;
	}
	wt = (struct kcc_watch_task *)mem;
	mem += ALIGN(sizeof(*wt), 64);
	counts = (u64 *)mem;
	mem += (size_t)ws->p.range * (1 + KCC_WATCH_NMETRICS) * sizeof(u64);
	if (kcc_ppp_run_init(&wt->run, &ws->p, counts,
			     (struct kcc_ppp_frame *)mem, s->stack_cap) ||
	    kcc_ppp_run_metrics(&wt->run, counts + ws->p.range,
				KCC_WATCH_NMETRICS)) {
		WARN_ON_ONCE(1);
		kvfree(wt);
		s->watch_task_drops++;
		return;
	}
	t->watch = wt;
	t->st.ksf.ppp = &wt->run;
	t->bytes += size;
	kcc_mem_add(s, size);
}

/* Before the task state is freed; its bytes go with t->bytes. */
void kcc_watch_task_free(struct kcc_task *t)
{
	if (!t->watch)
		return;
	t->st.ksf.ppp = NULL;
	kvfree(t->watch);
	t->watch = NULL;
}

size_t kcc_watch_rec_size(const struct kcc_session *s,
			  const struct kcc_task *t)
{
	if (!s->watch || !t->watch)
		return 0;
	return sizeof(struct kcc_rec_watch) +
	       (size_t)s->watch->p.nctx * KCC_WATCH_NR_CTRS * sizeof(u64);
}

/* The task's KCC_REC_WATCH at @p, by context of the upload; the end. */
u8 *kcc_watch_put(const struct kcc_session *s, const struct kcc_task *t,
		  u8 *p)
{
	const struct kcc_ppp_run *r;
	const struct kcc_ppp *pp;
	struct kcc_rec_watch *rw;
	u32 m;

	if (!s->watch || !t->watch)
		return p;
	r = &t->watch->run;
	pp = &s->watch->p;
	rw = (struct kcc_rec_watch *)p;
	memset(rw, 0, sizeof(*rw));
	rw->hdr.type = KCC_REC_WATCH;
	rw->hdr.size = kcc_watch_rec_size(s, t);
	rw->pid = t->pid;
	rw->tgid = t->tgid;
	rw->start_time_ns = t->start;
	rw->nr_contexts = pp->nctx;
	rw->nr_ctrs = KCC_WATCH_NR_CTRS;
	rw->range = pp->range;
	rw->totals[KCC_CTR_CALLS] = r->weight;
	rw->residual[KCC_CTR_CALLS] = r->resid_calls;
	for (m = 0; m < KCC_WATCH_NMETRICS; m++) {
		rw->totals[m + 1] = r->charged[m];
		rw->residual[m + 1] = r->resid[m];
	}
	rw->aliased = r->aliased;
	rw->stack_drops = r->stack_drops;
	kcc_ppp_export(r, (u64 *)(rw + 1));
	return p + rw->hdr.size;
}
