// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_task.c - per-task state: one k-SF per sampled thread, keyed by
 * (pid, start time) so that a recycled pid never lands in the forest of
 * the thread that had it before (its process and mappings are
 * kcc_maps.c's); the sched tracepoints that tell the worker about exits
 * and execs.
 *
 * All of it is touched by the worker (or a reader) with kcc_g.lock held.
 * The tracepoint probes only append to a small queue under a raw
 * spinlock: they run in the exiting or exec'ing task with preemption off
 * and must not sleep, even on PREEMPT_RT.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>
#include <linux/fs.h>
#include <linux/dcache.h>
#include <linux/moduleparam.h>
#include <linux/tracepoint.h>
#include <linux/random.h>

#include "kcc_hcct.h"
#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_budget.h"
#include "kcc_valence.h"
#include "kcc_watch.h"
#include "kcc_maps.h"
#include "kcc_task.h"
#include "wrapper/cgroup.h"
#include "wrapper/sched_tp.h"

/* Seed of the adaptive-bursting generator of every task (documented ABI). */
#define KCC_BURST_SEED		0x9e3779b97f4a7c15ull

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
		kcc_g.ev_pushed++;
		kick = kcc_g.nr_ev == KCC_TEV_MAX / 2;
	} else {
		kcc_g.ev_lost++;
	}
	raw_spin_unlock_irqrestore(&kcc_g.ev_lock, flags);
	if (kick)
		kcc_kick();
}

/*
 * Is the exit or exec of @p news to a session?  Only when it may concern
 * a running one (kcc_maps_concerns(): a system-wide session runs, @p has
 * per-task perf events, or it descends from a running target), so that
 * every other task of the machine passes without kcc's spinlock.  A task
 * of a stopped session whose end goes unseen here is found by the
 * snapshot's liveness check (kcc_tasks_check_alive()).
 */
static bool kcc_tev_wanted(struct task_struct *p)
{
	if (!READ_ONCE(kcc_g.ev_on))
		return false;
	if (kcc_maps_concerns(p))
		return true;
	atomic64_inc(&kcc_g.ev_unrelated);
	return false;
}

static void kcc_probe_exit(KCC_TP_EXIT_PROTO)
{
	kcc_valence_task_gone(p);
	if (!(p->flags & PF_KTHREAD) && kcc_tev_wanted(p))
		kcc_tev_push(KCC_TEV_EXIT, p->pid, p->start_boottime,
			     (u32)p->self_exec_id);
}

static void kcc_probe_exec(KCC_TP_EXEC_PROTO)
{
	kcc_valence_task_gone(p);
	if (kcc_tev_wanted(p))
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

/* sched_switch: attached by kcc_sample.c while it needs it. */
struct tracepoint *kcc_tp_switch;

static void kcc_tp_lookup(struct tracepoint *tp, void *priv)
{
	size_t i;

	if (!strcmp(tp->name, "sched_switch"))
		kcc_tp_switch = tp;
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

static void kcc_proc_put(struct kcc_session *s, struct kcc_proc *pr)
{
	if (!--pr->nr_tasks)
		kcc_proc_free(s, pr);
}

/* ---- memory that follows the work ------------------------------------ */

/*
 * A forest starts with KCC_TASK_NODES_INIT nodes and doubles, up to
 * task_nodes, whenever a sample might not fit: its memory follows the
 * contexts the thread touches.  The forests, the task states and the
 * mappings share the session's max_bytes and the module's, which all
 * sessions share (kcc_mem_add(), under kcc_g.lock); the last eighth of
 * each is kept for the Space-Saving summaries of the
 * forests that cannot grow any more (Documentation/kcc-module.rst,
 * "Memory").
 */
#define KCC_TASK_NODES_INIT	64u

static unsigned int kcc_param_hcct_phi_ppm = 1000;
module_param_named(hcct_phi_ppm, kcc_param_hcct_phi_ppm, uint, 0444);
MODULE_PARM_DESC(hcct_phi_ppm, "phi of the hot contexts a pruned forest guarantees, in ppm (default 1000: 0.1%)");

static size_t kcc_forest_bytes(u32 nodes)
{
	return ALIGN(kcc_forest_mem_size(nodes, KCC_NR_CTRS - 1), 64);
}

/* Give @t's forest a block of @cap nodes. */
static int kcc_task_forest_resize(struct kcc_session *s, struct kcc_task *t,
				  u32 cap)
{
	size_t sz = kcc_forest_bytes(cap);
	void *mem;
	int ret;

	mem = kvmalloc(sz, GFP_KERNEL);
	if (!mem)
		return -ENOMEM;
	if (t->fmem)
		ret = kcc_forest_move(&t->forest, mem, sz, cap);
	else
		ret = kcc_forest_init(&t->forest, mem, sz, cap,
				      KCC_NR_CTRS - 1);
	if (ret) {
		kvfree(mem);
		return ret;
	}
	kvfree(t->fmem);
	t->fmem = mem;
	kcc_mem_add(s, sz - t->fbytes);
	t->bytes += sz - t->fbytes;
	t->fbytes = sz;
	return 0;
}

static void kcc_task_fold_exited(struct kcc_session *s,
				 const struct kcc_task *keep);

/*
 * Room for @need more nodes in @t's forest, from the budget: exited
 * threads are folded first when it is short.  @credit: bytes about to
 * be given back (a task being folded).
 */
static int kcc_task_grow(struct kcc_session *s, struct kcc_task *t, u32 need,
			 size_t credit)
{
	u32 cap = t->forest.capacity;
	s64 add;

	if (t->forest.pr)
		return -ENOSPC;
	while (cap - t->forest.count < need && cap < s->cfg.task_nodes)
		cap = cap > s->cfg.task_nodes / 2 ? s->cfg.task_nodes : cap * 2;
	if (cap == t->forest.capacity)
		return -ENOSPC;
	add = (s64)kcc_forest_bytes(cap) - (s64)t->fbytes - (s64)credit;
	if (!kcc_budget_ok(s, add, false) && !credit) {
		kcc_task_fold_exited(s, t);
		if (!kcc_budget_ok(s, add, false))
			return -ENOSPC;
	} else if (!kcc_budget_ok(s, add, false)) {
		return -ENOSPC;
	}
	return kcc_task_forest_resize(s, t, cap);
}

/*
 * @t's forest cannot grow: from now on it keeps the contexts hot in
 * samples (where the sampled event lands, whatever the source), with
 * epsilon = 4 / capacity.  Its calls and events counters are kept, or
 * deleted, with the nodes.
 */
static void kcc_task_prune_start(struct kcc_session *s, struct kcc_task *t)
{
	size_t sz = ALIGN(sizeof(*t->prune), 8) +
		    kcc_fprune_mem_size(t->forest.capacity);
	struct kcc_fprune *p;
	u32 eps;

	if (t->prune || t->forest.capacity < KCC_TASK_NODES_INIT ||
	    !kcc_budget_ok(s, sz, true))
		return;
	p = kvmalloc(sz, GFP_KERNEL);
	if (!p)
		return;
	if (kcc_fprune_start(p, (u8 *)p + ALIGN(sizeof(*p), 8),
			     sz - ALIGN(sizeof(*p), 8), &t->forest,
			     KCC_CTR_SAMPLES)) {
		WARN_ON_ONCE(1);
		kvfree(p);
		return;
	}
	/* The nodes left without a counter go, but the pending frames. */
	kcc_fprune_begin(&t->forest);
	kcc_ksf_pin(&t->st.ksf);
	kcc_fprune_sweep(&t->forest);
	t->prune = p;
	t->pbytes = sz;
	t->bytes += sz;
	kcc_mem_add(s, sz);
	t->flags |= KCC_TASK_PRUNED;
	s->retired.forests_pruned++;
	eps = kcc_fprune_eps_ppm(&t->forest);
	if (eps > s->retired.eps_ppm_max)
		s->retired.eps_ppm_max = eps;
}

/* Before a sample: room for every node it can create, or pruning. */
static void kcc_task_make_room(struct kcc_session *s, struct kcc_task *t,
			       const struct kcc_sample *smp)
{
	/* A frame or a call creates at most its top and bottom node. */
	u32 need = 2 * ((u32)smp->nr_stack + smp->nr_branches) + 2;

	if (!t->forest.pr && t->forest.capacity - t->forest.count < need &&
	    kcc_task_grow(s, t, need, 0))
		kcc_task_prune_start(s, t);
	if (t->forest.pr) {
		kcc_fprune_begin(&t->forest);
		kcc_ksf_pin(&t->st.ksf);
	}
}

u32 kcc_task_nr_nodes(const struct kcc_task *t)
{
	return t->forest.live;
}

/*
 * @t's nodes as struct kcc_rec_node and counters, parents first (a
 * pruned forest reuses freed indices: kcc_forest_topo()).
 */
u8 *kcc_task_put_nodes(u8 *p, const struct kcc_task *t)
{
	const struct kcc_forest *f = &t->forest;
	u32 *order = NULL, *map = NULL, n = f->count, i;

	if (f->pr) {
		order = f->pr->scratch;
		map = order + f->capacity;
		n = kcc_forest_topo(f, order, map);
	}
	for (i = 0; i < n; i++) {
		u32 v = order ? order[i] : i;
		const struct kcc_node *nd = kcc_forest_node(f, v);
		struct kcc_rec_node *rn = (struct kcc_rec_node *)p;

		rn->parent = nd->parent;
		if (map && !kcc_is_root_parent(nd->parent))
			rn->parent = map[nd->parent];
		rn->__reserved = 0;
		rn->label = nd->label;
		p += sizeof(*rn);
		memcpy(p, nd->ctr, KCC_NR_CTRS * sizeof(u64));
		p += KCC_NR_CTRS * sizeof(u64);
	}
	return p;
}

void kcc_task_status(const struct kcc_session *s, struct kcc_status *st)
{
	const struct kcc_task *t;

	st->max_bytes = s->cfg.max_bytes;
	st->tasks_created = s->retired.tasks_created;
	st->tasks_folded = s->retired.tasks_folded;
	st->forests_pruned = s->retired.forests_pruned;
	st->nodes_evicted = s->retired.nodes_evicted;
	list_for_each_entry(t, &s->task_list, node)
		if (t->forest.pr)
			st->nodes_evicted += t->forest.pr->evicted;
	st->hcct_eps_ppm = s->retired.eps_ppm_max;
	st->hcct_phi_ppm = s->retired.eps_ppm_max ?
			   max(kcc_param_hcct_phi_ppm, s->retired.eps_ppm_max) : 0;
}

/* ---- task states ------------------------------------------------------- */

static size_t kcc_task_mem(const struct kcc_session *s, size_t *stack,
			   size_t *frames, size_t *burst)
{
	*stack = ALIGN(s->stack_cap * sizeof(struct kcc_frame), 64);
	*frames = ALIGN(s->frames_cap * sizeof(struct kcc_stitch_frame), 64);
	*burst = s->cfg.burst_rr_inv ?
		 ALIGN(kcc_burst_mem_size(s->cfg.burst_table), 64) : 0;
	return ALIGN(sizeof(struct kcc_task), 64) + *stack + *frames + *burst;
}

/* Bytes of a new task state under this configuration, its first forest included. */
size_t kcc_task_bytes(const struct kcc_session *s)
{
	size_t st, fr, b;

	return kcc_task_mem(s, &st, &fr, &b) +
	       kcc_forest_bytes(min(KCC_TASK_NODES_INIT, s->cfg.task_nodes));
}

static void kcc_task_link(struct kcc_session *s, struct kcc_task *t,
			  struct kcc_proc *pr)
{
	t->proc = pr;
	pr->nr_tasks++;
	list_add_tail(&t->node, &s->task_list);
	kcc_mem_add(s, t->bytes);
	s->nr_tasks++;
	s->retired.tasks_created++;
}

static struct kcc_task *kcc_task_new(struct kcc_session *s,
				     const struct kcc_rrec *r, int *why)
{
	size_t ssz, frsz, bsz, total;
	u32 cap0 = min(KCC_TASK_NODES_INIT, s->cfg.task_nodes);
	struct task_struct *live;
	struct kcc_proc *pr;
	struct kcc_task *t;
	u8 *mem;
	int ret;

	total = kcc_task_mem(s, &ssz, &frsz, &bsz);
	if ((s->nr_tasks >= s->cfg.max_tasks ||
	     !kcc_budget_ok(s, total + kcc_forest_bytes(cap0), false)) &&
	    s->nr_foldable)
		kcc_task_fold_exited(s, NULL);
	if (s->nr_tasks >= s->cfg.max_tasks) {
		*why = KCC_DROP_TASK_CAP;
		return NULL;
	}
	if (!kcc_budget_ok(s, total + kcc_forest_bytes(cap0), false)) {
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}
	mem = kvzalloc(total, GFP_KERNEL);
	if (!mem) {
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}
	t = (struct kcc_task *)mem;
	t->bytes = total;
	mem += ALIGN(sizeof(*t), 64);
	ret = kcc_task_forest_resize(s, t, cap0);
	/* The forest's bytes go to the session with the rest, below. */
	kcc_mem_add(s, -(ssize_t)t->fbytes);
	/*
	 * Labels are addresses the profiled program chooses: keyed with a
	 * seed it cannot know, its routines cannot be placed to share a
	 * bucket (Documentation/kcc-module.rst, "Hostile input").  Forests
	 * are never reset in place (RESET frees the tasks), so this is the
	 * only keying; a forest that grows keeps its keys.
	 */
	if (!ret && !kcc_param_fixed_seed)
		ret = kcc_forest_set_seed(&t->forest, get_random_u64());
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
		/* No memory, or a configuration the core refuses. */
		WARN_ON_ONCE(ret != -ENOMEM);
		kvfree(t->fmem);
		kvfree(t);
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}

	live = kcc_task_get_live(r->pid, r->start, r->exec_id);
	pr = kcc_proc_get(s, r->tgid, r->leader_start, r->exec_id, live);
	if (!pr) {
		if (live)
			put_task_struct(live);
		kvfree(t->fmem);
		kvfree(t);
		*why = KCC_DROP_MEM_CAP;
		return NULL;
	}
	t->pid = r->pid;
	t->tgid = r->tgid;
	t->start = r->start;
	t->exec_id = r->exec_id;
	memcpy(t->comm, r->comm, TASK_COMM_LEN);
	if (!live) {
		t->flags |= KCC_TASK_EXITED;
		if (kcc_task_execd(r->pid, r->start, r->exec_id))
			t->flags |= KCC_TASK_EXEC;
		s->nr_exited++;
		s->nr_foldable++;
	} else {
		t->pid_ref = get_task_pid(live, PIDTYPE_PID);
		t->tgid_ref = get_task_pid(live, PIDTYPE_TGID);
		/* Where the container groups it (KCC_REC_CGROUP). */
		if (s->cfg.target == KCC_TARGET_ALL)
			t->cgroup_id = kcc_task_cgroup_id(live);
		put_task_struct(live);
	}
	hash_add(s->tasks, &t->hnode, kcc_task_hash(t->pid, t->start));
	kcc_task_link(s, t, pr);
	kcc_watch_task_init(s, t);
	return t;
}

static void kcc_task_release(struct kcc_session *s, struct kcc_task *t)
{
	hash_del(&t->hnode);
	list_del(&t->node);
	if (t->flags & KCC_TASK_EXITED) {
		s->nr_exited--;
		if (!(t->flags & KCC_TASK_FOLDED))
			s->nr_foldable--;
	}
	if (t->proc->fold == t)
		t->proc->fold = NULL;
	if (t->forest.pr)
		s->retired.nodes_evicted += t->forest.pr->evicted;
	s->nr_tasks--;
	kcc_mem_add(s, -(ssize_t)t->bytes);
	put_pid(t->pid_ref);
	put_pid(t->tgid_ref);
	kcc_proc_put(s, t->proc);
	kcc_watch_task_free(t);
	kcc_valence_task_free(s, t);
	kvfree(t->prune);
	kvfree(t->fmem);
	kvfree(t);
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
	kcc_stitch_calls_add(&rt->calls, &t->st.calls);
	kcc_task_release(s, t);
}

/* ---- folding exited threads into their process ------------------------- */

/*
 * The forest of the exited threads of @pr: a task state of its own, in
 * the task list (so that it is read, counted and freed like the others)
 * but not in the hash (no sample is charged to it).  Its pid is the
 * tgid, its start the leader's, so it is live while the leader is.
 */
static struct kcc_task *kcc_fold_get(struct kcc_session *s,
				     struct kcc_proc *pr,
				     const struct kcc_task *from)
{
	u32 cap0 = min(KCC_TASK_NODES_INIT, s->cfg.task_nodes);
	size_t sz = ALIGN(sizeof(struct kcc_task), 64);
	struct kcc_task *f;

	if (pr->fold)
		return pr->fold;
	if (!kcc_budget_ok(s, sz + kcc_forest_bytes(cap0), true))
		return NULL;
	f = kvzalloc(sz, GFP_KERNEL);
	if (!f)
		return NULL;
	f->bytes = sz;
	if (kcc_task_forest_resize(s, f, cap0)) {
		kvfree(f);
		return NULL;
	}
	kcc_mem_add(s, -(ssize_t)f->fbytes);
	/* Its nodes come from forests already keyed; it is never hashed. */
	f->pid = pr->tgid;
	f->tgid = pr->tgid;
	f->start = pr->start;
	f->exec_id = pr->exec_id;
	f->pid_ref = get_pid(from->tgid_ref);
	f->tgid_ref = get_pid(from->tgid_ref);
	memcpy(f->comm, from->comm, TASK_COMM_LEN);
	f->cgroup_id = from->cgroup_id;
	f->flags = KCC_TASK_FOLDED;
	f->st.ksf.f = &f->forest;
	kcc_task_link(s, f, pr);
	s->retired.tasks_created--;
	pr->fold = f;
	return f;
}

/*
 * Add exited @t's forest to its process's and free @t.  A k-SF is a
 * union of labelled trees whose counters the k-CCF sums (kcc_inv_k() is
 * linear in them), so the union of two is the k-SF of both threads.
 * Nodes the fold forest cannot hold are counted in its node_drops.
 */
static int kcc_task_fold(struct kcc_session *s, struct kcc_task *t)
{
	struct kcc_forest *src = &t->forest, *dst;
	u32 *order = NULL, *dmap, n = src->count, i, j;
	struct task_struct *p;
	struct kcc_task *f;

	/* Only the dead are folded: a live thread's samples would follow. */
	p = kcc_task_get_live(t->pid, t->start, t->exec_id);
	if (WARN_ON_ONCE(p)) {
		put_task_struct(p);
		return 0;
	}
	f = kcc_fold_get(s, t->proc, t);
	if (!f)
		return -ENOMEM;
	kcc_stitch_finish(&t->st);
	dst = &f->forest;
	dmap = kvmalloc_array(max(src->count, 1u), sizeof(u32), GFP_KERNEL);
	if (!dmap)
		return -ENOMEM;
	if (src->pr) {
		order = src->pr->scratch;
		n = kcc_forest_topo(src, order, order + src->capacity);
	}
	if (!dst->pr && dst->capacity - dst->count < src->live &&
	    kcc_task_grow(s, f, src->live, t->bytes))
		kcc_task_prune_start(s, f);
	kcc_fprune_begin(dst);
	for (i = 0; i < n; i++) {
		u32 v = order ? order[i] : i;
		const struct kcc_node *nd = kcc_forest_node(src, v);
		u32 parent = nd->parent, d;

		dmap[v] = KCC_NIL;
		if (!kcc_is_root_parent(parent)) {
			parent = dmap[parent];
			if (parent == KCC_NIL) {
				dst->drops++;
				continue;
			}
		}
		d = kcc_forest_get(dst, parent, nd->label);
		dmap[v] = d;
		if (d == KCC_NIL)
			continue;
		for (j = 0; j < KCC_NR_CTRS; j++)
			kcc_forest_bump(dst, d, j, nd->ctr[j]);
	}
	kvfree(dmap);
	/* Threads of two cgroups: the folded one belongs to neither. */
	if (f->cgroup_id != t->cgroup_id)
		f->cgroup_id = 0;
	f->st.samples += t->st.samples;
	f->st.ksf.stack_drops += t->st.ksf.stack_drops;
	f->st.ksf.lost_charges += t->st.ksf.lost_charges;
	s->retired.tasks_folded++;
	kcc_task_free(s, t);
	return 0;
}

/*
 * Memory is short: fold every exited thread but @keep (the one whose
 * sample is being applied) and those a reader has had as exited (the
 * reader would count them twice; they go once every reader has them).
 * Tracepoint events can be lost, so once per drain the live ones are
 * checked first; a scan that folds nothing is not repeated in the drain.
 */
static void kcc_task_fold_exited(struct kcc_session *s,
				 const struct kcc_task *keep)
{
	struct kcc_task *t, *n;
	bool any = false;

	if (s->alive_check_batch != s->work_batches + 1) {
		s->alive_check_batch = s->work_batches + 1;
		s->fold_idle = false;
		kcc_tasks_check_alive(s);
	}
	if (!s->nr_foldable || s->fold_idle)
		return;
	list_for_each_entry_safe(t, n, &s->task_list, node) {
		if (t == keep || t->exit_seq ||
		    (t->flags & (KCC_TASK_EXITED | KCC_TASK_FOLDED)) !=
		    KCC_TASK_EXITED)
			continue;
		if (kcc_task_fold(s, t))
			break;
		any = true;
	}
	s->fold_idle = !any;
}

/*
 * The session has stopped: every task spreads what its hybrid pool
 * holds (kcc_stitch_finish()) before a reader sees it.  A snapshot does
 * the same for each task that exited or ended its image.
 */
void kcc_tasks_finish(struct kcc_session *s)
{
	struct kcc_task *t;

	list_for_each_entry(t, &s->task_list, node)
		kcc_stitch_finish(&t->st);
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
	if (!(t->flags & KCC_TASK_FOLDED))
		s->nr_foldable++;
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

/*
 * KCC_RREC_CARRY: a thread's calls since its last sample, at a switch
 * (system-wide calls counters).  Not a sample: its thread's next count
 * takes them (kcc_stitch_carry()); a thread without a forest yet, or a
 * record of a stopped session, leaves them after the last samples.
 */
static void kcc_task_carry(struct kcc_session *s, const struct kcc_rrec *r)
{
	struct kcc_task *t = NULL;

	if (r->gen == s->gen && s->state == KCC_STATE_RUNNING)
		t = kcc_task_find(s, r->pid, r->start, r->exec_id);
	if (t)
		kcc_stitch_carry(&t->st, r->s.calls);
	else
		s->retired.calls.pending += r->s.calls;
}

void kcc_task_apply(struct kcc_session *s, const struct kcc_rrec *r)
{
	size_t len = r->size - offsetof(struct kcc_rrec, s);
	struct kcc_task *t;
	u64 t0;
	int why;

	if (r->kind == KCC_RREC_CARRY) {
		kcc_task_carry(s, r);
		return;
	}
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
	/* A Valence key goes to the task's table, not its forest. */
	if (r->kind != KCC_RREC_VALENCE)
		kcc_task_make_room(s, t, &r->s);
	/*
	 * The monotonic clock, as the drain's own work_ns: local_clock()
	 * may stand still up to a tick where the TSC is not stable (a TCG
	 * guest on a loaded host), and a slow task then ran unbounded.
	 */
	t0 = ktime_get_ns();
	if (r->kind == KCC_RREC_VALENCE)
		kcc_valence_apply(s, t, &r->s);
	else
		kcc_stitch_sample(&t->st, &r->s);
	t->budget_ns += ktime_get_ns() - t0;
	s->processed++;
}
