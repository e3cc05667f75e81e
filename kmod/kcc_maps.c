// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_maps.c - the processes of a session and their executable
 * mappings: the records the stream's map records come from, and the
 * hook that captures mappings when they appear, so that code a process
 * maps after its first sample (dlopen()) and processes that exit before
 * the worker looks at them can still be symbolized.
 *
 * A tracepoint tells when a process may have new executable code: the
 * return of mmap() or mprotect() with PROT_EXEC, or of execve() (sys_exit,
 * where the kernel has syscall tracepoints: every x86 kernel, the debug
 * one included), else the release of its mmap lock taken for writing
 * (mmap_lock_released; wrapper/maps_tp.h), which the test-only parameter
 * maps_fallback=1 chooses where both exist.  The probe cannot sleep, so it only
 * queues a task_work on the task; that runs in the task itself before
 * it returns to user space, where it may sleep and allocate: it copies
 * the process's file-backed executable mappings into a capture of its
 * own while they are certainly there.
 *
 * The probe is attached while a session runs (from the first START to
 * the last STOP): a syscall tracepoint sends every syscall of the
 * machine through the slow exit path.  The task_works come from a fixed
 * pool (no allocation in the probe, which may run with preemption off,
 * on PREEMPT_RT too): one per task at a time; a full pool is counted in
 * maps_lost (sysfs maps_hook).
 *
 * No work takes kcc_g.lock, which the worker holds through whole drains
 * (up to task_budget_us per task): a work captures only for a process
 * that may concern a running session (kcc_maps_concerns(), without a
 * lock, over a copy of the running sessions' targets kept under
 * kcc_g.lock: while a system-wide one runs, every process; else one
 * with per-task perf events, which a sampled process and its children
 * carry, or a descendant of a running per-task session's target), and
 * queues the capture on a queue of its own.  That queue's spinlock is
 * held to add a capture or to splice the queue away, never across an
 * allocation or a capture.  The queue is bounded (KCC_MAPQ_NR captures,
 * and the bytes kcc_pending_charge() allows); a capture beyond, or one
 * without memory, is a counted drop.  With the capture go the task
 * (held) and the running targets it descends from (their pids held, so
 * that a pid compared later is the same one), decided while the task is
 * current and its ancestry certain.
 *
 * The worker folds the queue into its kcc_proc records at the start of
 * every drain (kcc_maps_fold(), kcc_g.lock held), which every snapshot,
 * STOP and RESET makes first, so nothing captured before them is lost:
 * a running session takes a capture when it knows the process already,
 * or when it profiles it (every task of its cgroup, asked of the held
 * task; a target the capture names).  A queue half full wakes the
 * worker.  sysfs maps_hook counts the works that found no session
 * concerned, that took kcc_g.lock (none), that queued a capture and
 * whose capture was dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/mman.h>
#include <linux/compat.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/wait_bit.h>
#include <linux/rcupdate.h>
#include <linux/err.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/fs.h>
#include <linux/dcache.h>
#include <asm/syscall.h>
#include <asm/unistd.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_budget.h"
#include "kcc_maps.h"
#include "wrapper/cgroup.h"
#include "wrapper/dumpable.h"
#include "wrapper/maps_tp.h"
#include "wrapper/perf.h"

/* ---- the processes and their mappings (worker, kcc_g.lock held) -------- */

#define KCC_MAPS_MAX_BYTES	(256u << 10)	/* per process */

static bool kcc_map_known(const struct kcc_proc *pr,
			  const struct kcc_rec_map *m)
{
	u32 off = 0;

	while (off < pr->maps_len) {
		const struct kcc_rec_map *o = (const void *)(pr->maps + off);

		if (o->start == m->start && o->end == m->end &&
		    o->pgoff == m->pgoff && o->ino == m->ino)
			return true;
		off += o->hdr.size;
	}
	return false;
}

/*
 * The vDSO: a special mapping without a file, named as /proc/PID/maps
 * names it.  Recorded under that name (pgoff and ino 0); user space
 * reads its symbols from its own vDSO, the kernel's same image.
 */
static bool kcc_vma_vdso(struct vm_area_struct *vma)
{
	const char *name;

	if (vma->vm_file || !vma->vm_ops || !vma->vm_ops->name)
		return false;
	name = vma->vm_ops->name(vma);
	return name && !strcmp(name, KCC_MAP_VDSO);
}

/*
 * The record of @vma, without its process's tgid and image, and its
 * path (in @buf, PATH_MAX bytes, for a file).
 */
static const char *kcc_map_rec(struct vm_area_struct *vma, char *buf,
			       struct kcc_rec_map *m)
{
	const char *path = KCC_MAP_VDSO;

	memset(m, 0, sizeof(*m));
	m->hdr.type = KCC_REC_MAP;
	if (vma->vm_file) {
		path = d_path(&vma->vm_file->f_path, buf, PATH_MAX);
		if (IS_ERR(path))
			path = "[unknown]";
		m->pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
		m->ino = file_inode(vma->vm_file)->i_ino;
	}
	m->start = vma->vm_start;
	m->end = vma->vm_end;
	m->hdr.size = ALIGN(sizeof(*m) + strlen(path) + 1, 8);
	return path;
}

/* Add record @in, with @path, to @pr's unless it holds the mapping. */
static int kcc_map_put(struct kcc_session *s, struct kcc_proc *pr,
		       const struct kcc_rec_map *in, const char *path)
{
	struct kcc_rec_map m = *in;
	u32 plen = strlen(path) + 1, size = m.hdr.size;

	m.tgid = pr->tgid;
	m.image = pr->image;
	if (kcc_map_known(pr, &m))
		return 0;

	if (pr->maps_len + size > pr->maps_cap) {
		u32 cap = max(pr->maps_cap * 2, 4096u);
		u8 *n;

		while (cap < pr->maps_len + size)
			cap *= 2;
		if (cap > KCC_MAPS_MAX_BYTES ||
		    !kcc_mem_room(s, cap - pr->maps_cap))
			return -ENOSPC;
		n = kvmalloc(cap, GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		if (pr->maps_len)
			memcpy(n, pr->maps, pr->maps_len);
		kvfree(pr->maps);
		kcc_mem_add(s, cap - pr->maps_cap);
		pr->maps = n;
		pr->maps_cap = cap;
	}
	memcpy(pr->maps + pr->maps_len, &m, sizeof(m));
	memset(pr->maps + pr->maps_len + sizeof(m), 0, size - sizeof(m));
	memcpy(pr->maps + pr->maps_len + sizeof(m), path, plen);
	pr->maps_len += size;
	pr->nr_maps++;
	return 0;
}

/*
 * Record the file-backed executable mappings of @p's process.  Process
 * context: takes the mmap lock for reading.
 */
void kcc_maps_capture(struct kcc_session *s, struct kcc_proc *pr,
		      struct task_struct *p)
{
	struct vm_area_struct *vma;
	struct kcc_rec_map m;
	struct mm_struct *mm;
	unsigned long addr = 0;
	const char *path;
	char *buf;

	mm = get_task_mm(p);
	if (!mm)
		return;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		goto out_mm;
	mmap_read_lock(mm);
	while ((vma = find_vma(mm, addr))) {
		addr = vma->vm_end;
		if (!(vma->vm_flags & VM_EXEC) ||
		    (!vma->vm_file && !kcc_vma_vdso(vma)))
			continue;
		path = kcc_map_rec(vma, buf, &m);
		if (kcc_map_put(s, pr, &m, path)) {
			s->map_drops++;
			break;
		}
	}
	mmap_read_unlock(mm);
	kfree(buf);
out_mm:
	mmput(mm);
}

/* The process (tgid, start) in its image @exec_id, or NULL. */
struct kcc_proc *kcc_proc_find(struct kcc_session *s, u32 tgid, u64 start,
			       u32 exec_id)
{
	struct kcc_proc *pr;

	list_for_each_entry(pr, &s->procs, node)
		if (pr->tgid == tgid && pr->start == start &&
		    pr->exec_id == exec_id)
			return pr;
	return NULL;
}

/*
 * The process of a task, created with the mappings of @live (when the
 * task is alive) if it is new.  Its images are numbered from 0, the
 * first one this session saw, so that map records say which one they
 * belong to.
 */
struct kcc_proc *kcc_proc_get(struct kcc_session *s, u32 tgid, u64 start,
			      u32 exec_id, struct task_struct *live)
{
	struct kcc_proc *pr, *o;
	u32 image = 0;

	pr = kcc_proc_find(s, tgid, start, exec_id);
	if (pr)
		return pr;
	list_for_each_entry(o, &s->procs, node)
		if (o->tgid == tgid && o->start == start && o->image >= image)
			image = o->image + 1;
	pr = kzalloc(sizeof(*pr), GFP_KERNEL);
	if (!pr)
		return NULL;
	pr->tgid = tgid;
	pr->start = start;
	pr->exec_id = exec_id;
	pr->image = image;
	list_add_tail(&pr->node, &s->procs);
	if (live)
		kcc_maps_capture(s, pr, live);
	return pr;
}

void kcc_proc_free(struct kcc_session *s, struct kcc_proc *pr)
{
	list_del(&pr->node);
	kcc_mem_add(s, -(ssize_t)pr->maps_cap);
	kvfree(pr->maps);
	kfree(pr);
}

/* ---- the mapping hook -------------------------------------------------- */

#define KCC_MAPW_NR	64
#define KCC_MAPS_TGT_NR	16	/* running per-task targets copied */

struct kcc_mapw {
	struct callback_head cb;
	struct task_struct *owner;	/* set and cleared by the owner only */
};

static struct kcc_mapw kcc_mapw[KCC_MAPW_NR];
static unsigned long kcc_mapw_busy[BITS_TO_LONGS(KCC_MAPW_NR)];
static atomic_t kcc_mapw_inflight = ATOMIC_INIT(0);
static atomic64_t kcc_maps_lost = ATOMIC64_INIT(0);

static bool kcc_param_maps_fallback;
module_param_named(maps_fallback, kcc_param_maps_fallback, bool, 0444);
MODULE_PARM_DESC(maps_fallback, "watch mappings with mmap_lock_released even where sys_exit exists (tests only; default 0)");

static struct tracepoint *kcc_tp_sys_exit;
static struct tracepoint *kcc_tp_mmap_lock;
static struct tracepoint *kcc_maps_tp;	/* the one attached, or NULL */
static void *kcc_maps_probe;

/*
 * The running sessions, as the works see them without kcc_g.lock:
 * written under it at START and STOP, read with READ_ONCE().  A target
 * is only compared, never dereferenced (the session holds its pid).
 * More running per-task sessions than slots count in tgt_over, which
 * sends every work to the lock.
 */
static struct {
	unsigned int nr_run;		/* running sessions */
	unsigned int nr_all;		/* of them system-wide */
	unsigned int tgt_over;
	struct pid *tgt[KCC_MAPS_TGT_NR];
} kcc_maps_run;
static atomic64_t kcc_maps_unrelated = ATOMIC64_INIT(0);
static atomic64_t kcc_maps_queued = ATOMIC64_INIT(0);
static atomic64_t kcc_maps_qdrops = ATOMIC64_INIT(0);

/*
 * A work's capture, waiting for the worker: the mappings as they were
 * when the task came back from its mmap(), mprotect() or execve(), and
 * what the worker needs to know which sessions want them once the
 * process may be gone.
 */
#define KCC_MAPQ_NR	256	/* captures waiting at most */

struct kcc_mapcap {
	struct list_head node;
	struct task_struct *task;	/* held: cgroup and ancestry tests */
	u32 tgid;
	u32 exec_id;
	u64 start;			/* its group leader's start_boottime */
	/* The running targets it descends from, held so never reused */
	struct pid *tgt[KCC_MAPS_TGT_NR];
	u32 nr_tgt;
	bool over;		/* tgt_over: ancestry asked again at the fold */
	bool full;		/* mappings left out at KCC_MAPS_MAX_BYTES */
	size_t bytes;		/* charged, kcc_pending_charge() */
	u32 len;
	u8 *recs;		/* struct kcc_rec_map, without tgid and image */
};

static LIST_HEAD(kcc_mapq);
static DEFINE_SPINLOCK(kcc_mapq_lock);	/* kcc_mapq, kcc_mapq_nr */
static unsigned int kcc_mapq_nr;

/*
 * Does @s profile @p: every task (of its cgroup, KCC_CFG_CGROUP), or
 * its target process and, as an inherited perf event does, that
 * process's descendants.
 */
static bool kcc_maps_targets(struct kcc_session *s, struct task_struct *p)
{
	struct task_struct *q;
	bool ret = false;

	/* A cgroup's session (KCC_CFG_CGROUP): its tasks' mappings only. */
	if (s->cfg.target == KCC_TARGET_ALL)
		return !s->cgrp || kcc_cgroup_holds(s->cgrp, p);
	rcu_read_lock();
	/* A reaped task's real_parent may be freed: no ancestry then. */
	for (q = p; pid_alive(p) && q->pid;
	     q = rcu_dereference(q->real_parent)) {
		if (task_tgid(q) == s->target) {
			ret = true;
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

/*
 * May @p concern a running session?  No lock: a session that starts
 * while this runs may be missed, as it would be by a work that took the
 * lock just before its START.  The sched exit and exec probes ask too.
 */
bool kcc_maps_concerns(struct task_struct *p)
{
	struct pid *t[KCC_MAPS_TGT_NR];
	struct task_struct *q;
	bool ret = false;
	int i, n = 0;

	if (READ_ONCE(kcc_maps_run.nr_all) || READ_ONCE(kcc_maps_run.tgt_over) ||
	    kcc_task_has_perf_events(p))
		return true;
	for (i = 0; i < KCC_MAPS_TGT_NR; i++) {
		t[n] = READ_ONCE(kcc_maps_run.tgt[i]);
		if (t[n])
			n++;
	}
	if (!n)
		return false;
	rcu_read_lock();
	for (q = p; q->pid && !ret; q = rcu_dereference(q->real_parent))
		for (i = 0; i < n; i++)
			if (task_tgid(q) == t[i])
				ret = true;
	rcu_read_unlock();
	return ret;
}

static void kcc_mapcap_free(struct kcc_mapcap *c)
{
	u32 i;

	for (i = 0; i < c->nr_tgt; i++)
		put_pid(c->tgt[i]);
	put_task_struct(c->task);
	kcc_pending_uncharge(c->bytes);
	kvfree(c->recs);
	kfree(c);
}

/*
 * The running targets @c's task descends from, as the works' copy has
 * them.  Each one matched is the tgid of a task seen in this RCU read
 * section, so its pid is not freed before get_pid() takes it.
 */
static void kcc_mapcap_targets(struct kcc_mapcap *c, struct task_struct *p)
{
	struct task_struct *q;
	struct pid *t;
	int i;

	c->over = READ_ONCE(kcc_maps_run.tgt_over);
	rcu_read_lock();
	for (q = p; q->pid; q = rcu_dereference(q->real_parent)) {
		for (i = 0; i < KCC_MAPS_TGT_NR; i++) {
			t = READ_ONCE(kcc_maps_run.tgt[i]);
			if (t && task_tgid(q) == t && c->nr_tgt < KCC_MAPS_TGT_NR)
				c->tgt[c->nr_tgt++] = get_pid(t);
		}
	}
	rcu_read_unlock();
}

/*
 * The file-backed executable mappings of @p (current) as records, in
 * a capture of its own.  Process context, no kcc lock: takes @p's mmap
 * lock for reading and allocates.  NULL without memory.
 */
static struct kcc_mapcap *kcc_mapcap_take(struct task_struct *p)
{
	struct vm_area_struct *vma;
	struct kcc_mapcap *c;
	struct kcc_rec_map m;
	unsigned long addr = 0;
	u32 cap = 4096, want;
	const char *path;
	char *buf;
	u8 *n;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	c->recs = kvmalloc(cap, GFP_KERNEL);
	if (!c->recs)
		goto err_recs;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		goto err_buf;
	mmap_read_lock(p->mm);
	while ((vma = find_vma(p->mm, addr))) {
		addr = vma->vm_end;
		if (!(vma->vm_flags & VM_EXEC) ||
		    (!vma->vm_file && !kcc_vma_vdso(vma)))
			continue;
		path = kcc_map_rec(vma, buf, &m);
		for (want = cap; c->len + m.hdr.size > want;)
			want *= 2;
		if (want > cap) {
			n = want <= KCC_MAPS_MAX_BYTES ?
			    kvmalloc(want, GFP_KERNEL) : NULL;
			if (!n) {
				c->full = true;
				break;
			}
			memcpy(n, c->recs, c->len);
			kvfree(c->recs);
			c->recs = n;
			cap = want;
		}
		memcpy(c->recs + c->len, &m, sizeof(m));
		memset(c->recs + c->len + sizeof(m), 0, m.hdr.size - sizeof(m));
		memcpy(c->recs + c->len + sizeof(m), path, strlen(path) + 1);
		c->len += m.hdr.size;
	}
	mmap_read_unlock(p->mm);
	kfree(buf);
	c->bytes = sizeof(*c) + cap;
	c->task = get_task_struct(p);
	c->tgid = p->tgid;
	c->start = p->group_leader->start_boottime;
	c->exec_id = (u32)p->self_exec_id;
	return c;

err_buf:
	kvfree(c->recs);
err_recs:
	kfree(c);
	return NULL;
}

/*
 * Queue @c for the worker, within the queue's and the budget's caps
 * (else a counted drop); a queue half full wakes the worker.
 */
static void kcc_mapcap_queue(struct kcc_mapcap *c)
{
	bool kick = false, ok = false;

	if (kcc_pending_charge(c->bytes)) {
		spin_lock(&kcc_mapq_lock);
		if (kcc_mapq_nr < KCC_MAPQ_NR) {
			list_add_tail(&c->node, &kcc_mapq);
			kick = ++kcc_mapq_nr == KCC_MAPQ_NR / 2;
			ok = true;
		}
		spin_unlock(&kcc_mapq_lock);
		if (!ok)
			kcc_pending_uncharge(c->bytes);
	}
	if (!ok) {
		c->bytes = 0;
		kcc_mapcap_free(c);
		atomic64_inc(&kcc_maps_qdrops);
		return;
	}
	atomic64_inc(&kcc_maps_queued);
	if (kick)
		kcc_kick();
}

static void kcc_maps_work(struct callback_head *cb)
{
	struct kcc_mapw *w = container_of(cb, struct kcc_mapw, cb);
	struct task_struct *p = current;
	struct kcc_mapcap *c;

	/*
	 * Exiting tasks run their works too, without mappings to read.  An
	 * image its user may not trace (setuid, setgid, file capabilities)
	 * is not recorded, as perf stops at such an exec (@p is current:
	 * its mm cannot change under it, so no task_lock()).
	 */
	if ((p->flags & PF_EXITING) || !p->mm || !kcc_task_dumpable(p))
		goto out;
	if (!kcc_maps_concerns(p)) {
		atomic64_inc(&kcc_maps_unrelated);
		goto out;
	}
	/*
	 * Captured now, while the mappings are certainly there; which
	 * sessions keep them is the worker's to decide (kcc_maps_fold()),
	 * so that this task never waits for kcc_g.lock, which the worker
	 * holds through its drains.
	 */
	c = kcc_mapcap_take(p);
	if (!c) {
		atomic64_inc(&kcc_maps_qdrops);
		goto out;
	}
	kcc_mapcap_targets(c, p);
	kcc_mapcap_queue(c);
out:
	WRITE_ONCE(w->owner, NULL);
	clear_bit_unlock(w - kcc_mapw, kcc_mapw_busy);
	if (atomic_dec_and_test(&kcc_mapw_inflight))
		wake_up_var(&kcc_mapw_inflight);
}

/* Does @s want capture @c of a process it does not know yet? */
static bool kcc_mapcap_wanted(struct kcc_session *s, struct kcc_mapcap *c)
{
	u32 i;

	if (s->cfg.target == KCC_TARGET_ALL)
		return kcc_maps_targets(s, c->task);
	for (i = 0; i < c->nr_tgt; i++)
		if (c->tgt[i] == s->target)
			return true;
	/* A session the works' copy had no slot for: asked now. */
	return c->over && kcc_maps_targets(s, c->task);
}

/*
 * The worker, kcc_g.lock held, at the start of every drain (and so
 * before every snapshot, STOP and RESET): the queued captures go to
 * the running sessions that know their process or profile it, as the
 * works once recorded them themselves.  The queue's lock is held for
 * the splice only.
 */
void kcc_maps_fold(void)
{
	struct kcc_mapcap *c, *n;
	struct kcc_rec_map *m;
	struct kcc_session *s;
	struct kcc_proc *pr;
	LIST_HEAD(q);
	u32 off;

	spin_lock(&kcc_mapq_lock);
	list_splice_init(&kcc_mapq, &q);
	kcc_mapq_nr = 0;
	spin_unlock(&kcc_mapq_lock);

	list_for_each_entry_safe(c, n, &q, node) {
		list_for_each_entry(s, &kcc_g.sessions, node) {
			if (s->state != KCC_STATE_RUNNING)
				continue;
			pr = kcc_proc_find(s, c->tgid, c->start, c->exec_id);
			if (!pr && kcc_mapcap_wanted(s, c))
				pr = kcc_proc_get(s, c->tgid, c->start,
						  c->exec_id, NULL);
			if (!pr)
				continue;
			for (off = 0; off < c->len; off += m->hdr.size) {
				m = (struct kcc_rec_map *)(c->recs + off);
				if (kcc_map_put(s, pr, m, m->path)) {
					s->map_drops++;
					break;
				}
			}
			if (c->full && off == c->len)
				s->map_drops++;
		}
		list_del(&c->node);
		kcc_mapcap_free(c);
	}
}

/* Probe context: queue one capture on the current task. */
static void kcc_maps_queue(void)
{
	struct task_struct *p = current;
	int i;

	if (!READ_ONCE(kcc_g.ev_on) || (p->flags & (PF_KTHREAD | PF_EXITING)))
		return;
	for (i = 0; i < KCC_MAPW_NR; i++)
		if (READ_ONCE(kcc_mapw[i].owner) == p)
			return;		/* one pending already */
	for (i = 0; i < KCC_MAPW_NR; i++)
		if (!test_and_set_bit_lock(i, kcc_mapw_busy))
			break;
	if (i == KCC_MAPW_NR) {
		atomic64_inc(&kcc_maps_lost);
		return;
	}
	WRITE_ONCE(kcc_mapw[i].owner, p);
	atomic_inc(&kcc_mapw_inflight);
	init_task_work(&kcc_mapw[i].cb, kcc_maps_work);
	if (task_work_add(p, &kcc_mapw[i].cb, TWA_RESUME)) {
		WRITE_ONCE(kcc_mapw[i].owner, NULL);
		clear_bit_unlock(i, kcc_mapw_busy);
		if (atomic_dec_and_test(&kcc_mapw_inflight))
			wake_up_var(&kcc_mapw_inflight);
	}
}

static void kcc_probe_sys_exit(KCC_TP_SYS_EXIT_PROTO)
{
	unsigned long args[6];

	/* kcc samples 64-bit tasks only. */
	if (in_compat_syscall())
		return;
	switch (syscall_get_nr(current, regs)) {
	case __NR_mmap:
	case __NR_mprotect:
		if (IS_ERR_VALUE(ret))
			return;
		syscall_get_arguments(current, regs, args);
		if (!(args[2] & PROT_EXEC))
			return;
		break;
	case __NR_execve:
	case __NR_execveat:
		if (ret)
			return;
		break;
	default:
		return;
	}
	kcc_maps_queue();
}

static void kcc_probe_mmap_lock(KCC_TP_MMAP_LOCK_PROTO)
{
	if (write && mm == current->mm)
		kcc_maps_queue();
}

static void kcc_maps_lookup(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sys_exit"))
		kcc_tp_sys_exit = tp;
	else if (!strcmp(tp->name, "mmap_lock_released"))
		kcc_tp_mmap_lock = tp;
}

/* At load: which tracepoint this kernel offers. */
void kcc_maps_init(void)
{
	for_each_kernel_tracepoint(kcc_maps_lookup, NULL);
	if (!kcc_tp_sys_exit && !kcc_tp_mmap_lock)
		pr_info("no mapping tracepoint: mappings are read at first sample and exec only\n");
}

/* The tracepoint to attach, or NULL. */
static struct tracepoint *kcc_maps_choice(void)
{
	if (kcc_tp_mmap_lock && (kcc_param_maps_fallback || !kcc_tp_sys_exit))
		return kcc_tp_mmap_lock;
	return kcc_tp_sys_exit;
}

static void kcc_maps_attach(void)
{
	struct tracepoint *tp = kcc_maps_choice();
	void *probe = tp == kcc_tp_sys_exit ? (void *)kcc_probe_sys_exit :
					      (void *)kcc_probe_mmap_lock;
	int ret;

	if (!tp || kcc_maps_tp || !kcc_param_tracepoints)
		return;
	ret = tracepoint_probe_register(tp, probe, NULL);
	if (ret) {
		pr_warn("tracepoint %s: cannot attach (%d): mappings are read at first sample and exec only\n",
			tp->name, ret);
		return;
	}
	kcc_maps_tp = tp;
	kcc_maps_probe = probe;
}

static void kcc_maps_detach(void)
{
	if (!kcc_maps_tp)
		return;
	tracepoint_probe_unregister(kcc_maps_tp, kcc_maps_probe, NULL);
	tracepoint_synchronize_unregister();
	kcc_maps_tp = NULL;
}

/*
 * @s starts running (@on) or stops: the works' copy of the running
 * sessions follows, and the probe is attached from the first START to
 * the last STOP.  kcc_g.lock held; the copy is written before @s's
 * events start and cleared after they stopped.
 */
void kcc_maps_running(struct kcc_session *s, bool on)
{
	int d = on ? 1 : -1, i;

	if (s->cfg.target == KCC_TARGET_ALL) {
		WRITE_ONCE(kcc_maps_run.nr_all, kcc_maps_run.nr_all + d);
	} else {
		for (i = 0; i < KCC_MAPS_TGT_NR; i++) {
			if (kcc_maps_run.tgt[i] == (on ? NULL : s->target)) {
				WRITE_ONCE(kcc_maps_run.tgt[i],
					   on ? s->target : NULL);
				break;
			}
		}
		/* A stop finds its target unless it went over. */
		if (i == KCC_MAPS_TGT_NR)
			WRITE_ONCE(kcc_maps_run.tgt_over,
				   kcc_maps_run.tgt_over + d);
	}
	kcc_maps_run.nr_run += d;
	if (on && kcc_maps_run.nr_run == 1)
		kcc_maps_attach();
	else if (!on && !kcc_maps_run.nr_run)
		kcc_maps_detach();
}

/*
 * At unload, after the last session: no probe runs any more, and the
 * works already queued (each runs as its task returns to user space or
 * exits) must have left this module's code.  The count reaching zero
 * says every work has done its last store, not that it has returned:
 * its task may still be between wake_up_var() and the return, or be
 * preempted there.  An RCU Tasks grace period ends only once every task
 * has switched voluntarily or run in user space since it began, which a
 * task inside kcc_maps_work() has not: when it ends, none is there any
 * more (the guarantee ftrace relies on to free trampolines).
 */
void kcc_maps_exit(void)
{
	struct kcc_mapcap *c, *n;
	LIST_HEAD(q);

	wait_var_event(&kcc_mapw_inflight, !atomic_read(&kcc_mapw_inflight));
	synchronize_rcu_tasks();
	/*
	 * No session is left to fold the captures into.  A worker a last
	 * work kicked may still drain: what it splices away it frees.
	 */
	spin_lock(&kcc_mapq_lock);
	list_splice_init(&kcc_mapq, &q);
	kcc_mapq_nr = 0;
	spin_unlock(&kcc_mapq_lock);
	list_for_each_entry_safe(c, n, &q, node) {
		list_del(&c->node);
		kcc_mapcap_free(c);
	}
}

/* The processes the mapping hook made that no task ever joined. */
void kcc_maps_free_orphans(struct kcc_session *s, const struct kcc_tev *ev,
			   u32 nr)
{
	struct kcc_proc *pr, *n;
	u32 i;

	list_for_each_entry_safe(pr, n, &s->procs, node) {
		if (pr->nr_tasks)
			continue;
		if (!ev) {
			kcc_proc_free(s, pr);
			continue;
		}
		/* Its group leader exited (the event of thread tgid). */
		for (i = 0; i < nr; i++) {
			if (ev[i].kind == KCC_TEV_EXIT && ev[i].pid == pr->tgid &&
			    ev[i].start == pr->start) {
				kcc_proc_free(s, pr);
				break;
			}
		}
	}
}

/*
 * sysfs maps_hook: the tracepoint kcc uses, the captures lost to a full
 * pool, whether the probe is attached now (1) or not (0), the works
 * that found no running session concerned, those that took kcc_g.lock
 * (none: they queue their captures), those that queued a capture for
 * the worker and those whose capture was dropped (the queue or the
 * budget full, or no memory).
 */
int kcc_maps_show(char *buf)
{
	const struct tracepoint *tp = kcc_param_tracepoints ?
				      kcc_maps_choice() : NULL;
	const char *name = tp ? tp->name : "none";

	return sysfs_emit(buf, "%s %lld %d %lld 0 %lld %lld\n", name,
			  atomic64_read(&kcc_maps_lost),
			  !!READ_ONCE(kcc_maps_tp),
			  atomic64_read(&kcc_maps_unrelated),
			  atomic64_read(&kcc_maps_queued),
			  atomic64_read(&kcc_maps_qdrops));
}
