// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_task.c - per-task state: one k-SF per sampled thread, keyed by
 * (pid, start time) so that a recycled pid never lands in the forest of
 * the thread that had it before; the executable mappings of each sampled
 * process, captured while it is alive; the sched tracepoints that tell
 * the worker about exits and execs.
 *
 * All of it is touched by the worker (or a reader) with kcc_g.lock held.
 * The tracepoint probes only append to a small queue under a raw
 * spinlock: they run in the exiting or exec'ing task with preemption off
 * and must not sleep, even on PREEMPT_RT.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>
#include <linux/fs.h>
#include <linux/dcache.h>
#include <linux/moduleparam.h>
#include <linux/tracepoint.h>
#include <linux/random.h>
#include <linux/sched/clock.h>

#include "kcc_mod.h"
#include "wrapper/sched_tp.h"

/* ---- sched tracepoints ------------------------------------------------- */

static void kcc_tev_push(u32 kind, u32 pid, u64 start, u32 exec_id)
{
	unsigned long flags;
	bool kick = false;

	raw_spin_lock_irqsave(&kcc_g.ev_lock, flags);
	if (!kcc_g.ev_on) {
		/* No session. */
	} else if (kcc_g.nr_ev < KCC_TEV_MAX) {
		kcc_g.ev[kcc_g.nr_ev].kind = kind;
		kcc_g.ev[kcc_g.nr_ev].pid = pid;
		kcc_g.ev[kcc_g.nr_ev].start = start;
		kcc_g.ev[kcc_g.nr_ev].exec_id = exec_id;
		kcc_g.nr_ev++;
		kick = kcc_g.nr_ev == KCC_TEV_MAX / 2;
	} else {
		kcc_g.ev_lost++;
	}
	raw_spin_unlock_irqrestore(&kcc_g.ev_lock, flags);
	if (kick)
		kcc_kick();
}

static void kcc_probe_exit(KCC_TP_EXIT_PROTO)
{
	if (READ_ONCE(kcc_g.ev_on) && !(p->flags & PF_KTHREAD))
		kcc_tev_push(KCC_TEV_EXIT, p->pid, p->start_boottime,
			     (u32)p->self_exec_id);
}

static void kcc_probe_exec(KCC_TP_EXEC_PROTO)
{
	if (READ_ONCE(kcc_g.ev_on))
		kcc_tev_push(KCC_TEV_EXEC, p->tgid,
			     p->group_leader->start_boottime,
			     (u32)p->self_exec_id);
}

struct kcc_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct kcc_tp kcc_tps[] = {
	{ "sched_process_exit", kcc_probe_exit },
	{ "sched_process_exec", kcc_probe_exec },
};

/*
 * Tests only: tracepoints=0 loads without the probes, so that a kernel
 * problem can be told from the tracepoint patching they cause
 * (Documentation/testing.rst, multi-threaded TCG).  Exits and execs then
 * go unseen: forests of exited tasks stay until the session ends.
 */
static bool kcc_param_tracepoints = true;
module_param_named(tracepoints, kcc_param_tracepoints, bool, 0444);
MODULE_PARM_DESC(tracepoints, "attach the sched exit/exec probes (default 1; 0 is for tests only)");

static void kcc_tp_lookup(struct tracepoint *tp, void *priv)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kcc_tps); i++)
		if (!strcmp(tp->name, kcc_tps[i].name))
			kcc_tps[i].tp = tp;
}

int kcc_tp_init(void)
{
	size_t i;
	int ret;

	if (!kcc_param_tracepoints)
		return 0;
	for_each_kernel_tracepoint(kcc_tp_lookup, NULL);
	for (i = 0; i < ARRAY_SIZE(kcc_tps); i++) {
		if (!kcc_tps[i].tp) {
			pr_err("tracepoint %s not found\n", kcc_tps[i].name);
			ret = -ENOENT;
			goto err_register;
		}
		ret = tracepoint_probe_register(kcc_tps[i].tp,
						kcc_tps[i].probe, NULL);
		if (ret) {
			pr_err("tracepoint %s: cannot attach (%d)\n",
			       kcc_tps[i].name, ret);
			goto err_register;
		}
	}
	return 0;

err_register:
	while (i--)
		tracepoint_probe_unregister(kcc_tps[i].tp, kcc_tps[i].probe,
					    NULL);
	tracepoint_synchronize_unregister();
	return ret;
}

void kcc_tp_exit(void)
{
	size_t i;

	if (!kcc_param_tracepoints)
		return;
	for (i = 0; i < ARRAY_SIZE(kcc_tps); i++)
		tracepoint_probe_unregister(kcc_tps[i].tp, kcc_tps[i].probe,
					    NULL);
	tracepoint_synchronize_unregister();
}

/* Take the queued events; @ev has room for KCC_TEV_MAX. */
u32 kcc_task_grab_events(struct kcc_tev *ev)
{
	unsigned long flags;
	u32 n;

	raw_spin_lock_irqsave(&kcc_g.ev_lock, flags);
	n = kcc_g.nr_ev;
	memcpy(ev, kcc_g.ev, n * sizeof(*ev));
	kcc_g.nr_ev = 0;
	raw_spin_unlock_irqrestore(&kcc_g.ev_lock, flags);
	return n;
}

/* ---- lookups ----------------------------------------------------------- */

static u32 kcc_task_hash(u32 pid, u64 start)
{
	return pid ^ (u32)start ^ (u32)(start >> 32);
}

/*
 * The state of task (pid, start) in its image @exec_id: an exec gives
 * the same task a new image, with a forest and stack state of its own.
 */
static struct kcc_task *kcc_task_find(struct kcc_session *s, u32 pid,
				      u64 start, u32 exec_id)
{
	struct kcc_task *t;

	hash_for_each_possible(s->tasks, t, hnode, kcc_task_hash(pid, start))
		if (t->pid == pid && t->start == start &&
		    t->exec_id == exec_id)
			return t;
	return NULL;
}

/*
 * The live task (pid, start) with a reference, or NULL if it is gone.
 * Ring records carry pids of the initial namespace, whoever looks them
 * up (a reader in a container included).
 */
static struct task_struct *kcc_task_get_live(u32 pid, u64 start,
					     u32 exec_id)
{
	struct task_struct *p;

	rcu_read_lock();
	p = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_PID);
	if (p)
		get_task_struct(p);
	rcu_read_unlock();
	if (p && (p->start_boottime != start || (p->flags & PF_EXITING) ||
		  (u32)p->self_exec_id != exec_id)) {
		put_task_struct(p);
		p = NULL;
	}
	return p;
}

/* Is task (pid, start) alive in an image after @exec_id? */
static bool kcc_task_execd(u32 pid, u64 start, u32 exec_id)
{
	struct task_struct *p;
	bool ret;

	rcu_read_lock();
	p = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_PID);
	ret = p && p->start_boottime == start && !(p->flags & PF_EXITING) &&
	      (u32)p->self_exec_id != exec_id;
	rcu_read_unlock();
	return ret;
}

/* ---- executable mappings ----------------------------------------------- */

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

static int kcc_map_add(struct kcc_session *s, struct kcc_proc *pr,
		       struct vm_area_struct *vma, char *buf)
{
	struct kcc_rec_map m = { .hdr.type = KCC_REC_MAP };
	const char *path;
	u32 plen, size;

	path = d_path(&vma->vm_file->f_path, buf, PATH_MAX);
	if (IS_ERR(path))
		path = "[unknown]";
	plen = strlen(path) + 1;
	size = ALIGN(sizeof(m) + plen, 8);

	m.tgid = pr->tgid;
	m.image = pr->image;
	m.start = vma->vm_start;
	m.end = vma->vm_end;
	m.pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	m.ino = file_inode(vma->vm_file)->i_ino;
	m.hdr.size = size;
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
	struct mm_struct *mm;
	unsigned long addr = 0;
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
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		if (kcc_map_add(s, pr, vma, buf)) {
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

static void kcc_proc_put(struct kcc_session *s, struct kcc_proc *pr)
{
	if (!--pr->nr_tasks)
		kcc_proc_free(s, pr);
}

void kcc_proc_free(struct kcc_session *s, struct kcc_proc *pr)
{
	list_del(&pr->node);
	kcc_mem_add(s, -(ssize_t)pr->maps_cap);
	kvfree(pr->maps);
	kfree(pr);
}

/* ---- task states ------------------------------------------------------- */

static size_t kcc_task_mem(const struct kcc_session *s, size_t *forest,
			   size_t *stack, size_t *frames, size_t *burst)
{
	*forest = ALIGN(kcc_forest_mem_size(s->cfg.task_nodes,
					    KCC_NR_CTRS - 1), 64);
	*stack = ALIGN(s->stack_cap * sizeof(struct kcc_frame), 64);
	*frames = ALIGN(s->frames_cap * sizeof(struct kcc_stitch_frame), 64);
	*burst = s->cfg.burst_rr_inv ?
		 ALIGN(kcc_burst_mem_size(s->cfg.burst_table), 64) : 0;
	return ALIGN(sizeof(struct kcc_task), 64) + *forest + *stack +
	       *frames + *burst;
}

/* Worst-case bytes of one task state under this configuration. */
size_t kcc_task_bytes(const struct kcc_session *s)
{
	size_t f, st, fr, b;

	return kcc_task_mem(s, &f, &st, &fr, &b);
}

static struct kcc_task *kcc_task_new(struct kcc_session *s,
				     const struct kcc_rrec *r, int *why)
{
	size_t fsz, ssz, frsz, bsz, total;
	struct task_struct *live;
	struct kcc_task *t;
	u8 *mem;
	int ret;

	if (s->nr_tasks >= s->cfg.max_tasks) {
		*why = KCC_DROP_TASK_CAP;
		return NULL;
	}
	total = kcc_task_mem(s, &fsz, &ssz, &frsz, &bsz);
	if (!kcc_mem_room(s, total)) {
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}
	mem = kvzalloc(total, GFP_KERNEL);
	if (!mem) {
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}
	t = (struct kcc_task *)mem;
	mem += ALIGN(sizeof(*t), 64);
	ret = kcc_forest_init(&t->forest, mem, fsz, s->cfg.task_nodes,
			      KCC_NR_CTRS - 1);
	/*
	 * Labels are addresses the profiled program chooses: keyed with a
	 * seed it cannot know, its routines cannot be placed to share a
	 * bucket (Documentation/kcc-module.rst, "Hostile input").  Forests
	 * are never reset in place (RESET frees the tasks), so this is the
	 * only keying.
	 */
	if (!ret && !kcc_param_fixed_seed)
		ret = kcc_forest_set_seed(&t->forest, get_random_u64());
	mem += fsz;
	if (!ret && bsz)
		ret = kcc_burst_init(&t->burst, mem + ssz + frsz, bsz,
				     s->cfg.burst_table, s->cfg.burst_rr_inv,
				     s->cfg.burst_sig_depth, KCC_BURST_SEED);
	if (!ret)
		ret = kcc_stitch_init(&t->st, &t->forest, s->cfg.k,
				      (struct kcc_frame *)mem, s->stack_cap,
				      (struct kcc_stitch_frame *)(mem + ssz),
				      s->frames_cap, bsz ? &t->burst : NULL);
	if (s->cfg.flags & KCC_CFG_JOIN_UNIQUE)
		t->st.join_policy = KCC_JOIN_UNIQUE;
	else if (s->cfg.flags & KCC_CFG_JOIN_LONGEST)
		t->st.join_policy = KCC_JOIN_LONGEST;
	else
		t->st.join_policy = KCC_JOIN_NONE;
	if (ret) {
		/* A configuration the core refuses: checked at configure. */
		WARN_ON_ONCE(1);
		kvfree(t);
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}

	live = kcc_task_get_live(r->pid, r->start, r->exec_id);
	t->proc = kcc_proc_get(s, r->tgid, r->leader_start, r->exec_id, live);
	if (!t->proc) {
		if (live)
			put_task_struct(live);
		kvfree(t);
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}
	t->proc->nr_tasks++;
	t->pid = r->pid;
	t->tgid = r->tgid;
	t->start = r->start;
	t->exec_id = r->exec_id;
	memcpy(t->comm, r->comm, TASK_COMM_LEN);
	t->bytes = total;
	if (!live) {
		t->flags |= KCC_TASK_EXITED;
		if (kcc_task_execd(r->pid, r->start, r->exec_id))
			t->flags |= KCC_TASK_EXEC;
		s->nr_exited++;
	} else {
		t->pid_ref = get_task_pid(live, PIDTYPE_PID);
		t->tgid_ref = get_task_pid(live, PIDTYPE_TGID);
		put_task_struct(live);
	}
	hash_add(s->tasks, &t->hnode, kcc_task_hash(t->pid, t->start));
	list_add_tail(&t->node, &s->task_list);
	kcc_mem_add(s, total);
	s->nr_tasks++;
	kcc_watch_task_init(s, t);
	return t;
}

void kcc_task_free(struct kcc_session *s, struct kcc_task *t)
{
	struct kcc_retired *rt = &s->retired;

	rt->bursts_replayed += t->st.bursts_replayed;
	rt->bursts_skipped += t->st.bursts_skipped;
	rt->bursts_joined += t->st.bursts_joined;
	rt->branches += t->st.branches;
	rt->stitch_errors += t->st.stitch_errors;
	rt->node_drops += t->forest.drops;
	kcc_stitch_counts_add(&rt->stitch, &t->st.cnt);
	hash_del(&t->hnode);
	list_del(&t->node);
	if (t->flags & KCC_TASK_EXITED)
		s->nr_exited--;
	s->nr_tasks--;
	kcc_mem_add(s, -(ssize_t)t->bytes);
	put_pid(t->pid_ref);
	put_pid(t->tgid_ref);
	kcc_proc_put(s, t->proc);
	kcc_watch_task_free(t);
	kvfree(t);
}

void kcc_tasks_free_all(struct kcc_session *s)
{
	struct kcc_task *t, *n;

	list_for_each_entry_safe(t, n, &s->task_list, node)
		kcc_task_free(s, t);
}

/* Exited tasks already handed to a reader give their memory back. */
void kcc_tasks_reap_delivered(struct kcc_session *s)
{
	struct kcc_task *t, *n;

	list_for_each_entry_safe(t, n, &s->task_list, node)
		if (t->delivered)
			kcc_task_free(s, t);
}

static void kcc_task_mark_exited(struct kcc_session *s, struct kcc_task *t)
{
	if (t->flags & KCC_TASK_EXITED)
		return;
	t->flags |= KCC_TASK_EXITED;
	s->nr_exited++;
}

/*
 * An exec ended @t's image (its pid and start go on in a later one,
 * perhaps already gone too): later samples start a new state.
 */
static void kcc_task_end_image(struct kcc_session *s, struct kcc_task *t)
{
	t->flags |= KCC_TASK_EXEC;
	kcc_task_mark_exited(s, t);
}

/*
 * Tracepoint events can be lost (a full queue); before a snapshot every
 * task still believed alive is looked up.
 */
void kcc_tasks_check_alive(struct kcc_session *s)
{
	struct task_struct *p;
	struct kcc_task *t;

	list_for_each_entry(t, &s->task_list, node) {
		if (t->flags & KCC_TASK_EXITED)
			continue;
		p = kcc_task_get_live(t->pid, t->start, t->exec_id);
		if (p)
			put_task_struct(p);
		else if (kcc_task_execd(t->pid, t->start, t->exec_id))
			kcc_task_end_image(s, t);
		else
			kcc_task_mark_exited(s, t);
	}
}

void kcc_task_events(struct kcc_session *s, struct kcc_tev *ev, u32 nr)
{
	struct task_struct *p;
	struct kcc_proc *pr;
	struct kcc_task *t;
	u32 i;

	for (i = 0; i < nr; i++) {
		if (ev[i].kind == KCC_TEV_EXIT) {
			t = kcc_task_find(s, ev[i].pid, ev[i].start,
					  ev[i].exec_id);
			if (t)
				kcc_task_mark_exited(s, t);
			continue;
		}
		/*
		 * exec: the old image of the process's leader pid is over
		 * (the other threads exit, their events say so).
		 */
		list_for_each_entry(t, &s->task_list, node)
			if (t->pid == ev[i].pid && t->start == ev[i].start &&
			    t->exec_id != ev[i].exec_id)
				kcc_task_end_image(s, t);
		/* The new image's mappings, if it is known already. */
		pr = kcc_proc_find(s, ev[i].pid, ev[i].start, ev[i].exec_id);
		p = pr ? kcc_task_get_live(ev[i].pid, ev[i].start,
					   ev[i].exec_id) : NULL;
		if (p) {
			kcc_maps_capture(s, pr, p);
			put_task_struct(p);
		}
	}
}

/*
 * One ring record: find or create the task's state and stitch the
 * sample into its k-SF.  Every record ends up either processed or in
 * exactly one dropped[] reason.
 */
/*
 * Whether @t has used its share of this drain (task_budget_us): its
 * further samples in the drain are dropped, so a task whose samples are
 * slow to apply cannot hold the worker, and the other tasks' samples
 * behind it in the rings, for longer than that.  work_batches counts
 * the drains that applied something, so it names the current one.
 */
static bool kcc_task_over_budget(struct kcc_session *s, struct kcc_task *t)
{
	u64 limit = (u64)READ_ONCE(kcc_param_task_budget_us) * NSEC_PER_USEC;

	if (t->budget_drain != s->work_batches) {
		t->budget_drain = s->work_batches;
		t->budget_ns = 0;
	}
	return limit && t->budget_ns >= limit;
}

void kcc_task_apply(struct kcc_session *s, const struct kcc_rrec *r)
{
	size_t len = r->size - offsetof(struct kcc_rrec, s);
	struct kcc_task *t;
	u64 t0;
	int why;

	s->consumed++;
	/* Injected records (sid 0) serve several sessions: state only. */
	if ((r->sid && r->gen != s->gen) || s->state != KCC_STATE_RUNNING) {
		s->dropped[KCC_DROP_STOPPED]++;
		return;
	}
	if (r->size < sizeof(*r) || kcc_sample_check(&r->s, len) < 0) {
		s->dropped[KCC_DROP_BAD_SAMPLE]++;
		return;
	}
	/*
	 * The handlers drop samples without a user context at capture
	 * (KCC_DROP_NO_STACK); an injected sample may still have an empty
	 * stack, which the stitcher anchors at depth 0 exactly as the
	 * userspace replay does.
	 */
	t = kcc_task_find(s, r->pid, r->start, r->exec_id);
	if (!t) {
		struct kcc_task *o;

		/* An image of this task before an exec is over. */
		hash_for_each_possible(s->tasks, o, hnode,
				       kcc_task_hash(r->pid, r->start))
			if (o->pid == r->pid && o->start == r->start)
				kcc_task_end_image(s, o);
		t = kcc_task_new(s, r, &why);
		if (!t) {
			s->dropped[why]++;
			return;
		}
	}
	if (kcc_task_over_budget(s, t)) {
		s->dropped[KCC_DROP_BUDGET]++;
		return;
	}
	t0 = local_clock();
	kcc_stitch_sample(&t->st, &r->s);
	t->budget_ns += local_clock() - t0;
	s->processed++;
}
