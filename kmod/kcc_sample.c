// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_sample.c - taking samples: the perf events, their overflow handler,
 * the per-CPU rings it writes into and the work that empties them.
 *
 * The handler runs in NMI (hardware events) or hardirq (cpu-clock) and
 * does a bounded amount of work: a user frame-pointer walk of at most
 * stack_depth frames with copy_from_user_nmi(), a copy of at most
 * KCC_INJECT_MAX_BRANCHES branch records and one ring commit.  It never
 * allocates, sleeps, locks or prints; a full ring is a counted drop.
 *
 * The batched hand-off: the handler does not wake the worker per sample.
 * It raises this CPU's irq_work only when the worker is needed at once
 * (the irq_work then queues it) or when the flush timer is idle (the
 * irq_work arms it: the worker runs flush_ms later and empties every
 * ring).  At once means: the ring is half full, or the sample is of a
 * process none of the ring's last KCC_RING_RECENT processes was, whose
 * mappings the worker reads from the live process (one that lives less
 * than flush_ms after its first sample would otherwise go unnamed).  So
 * while one program is sampled, the handler's only extra work is a few
 * compares, a test of two bits, one irq_work per flush_ms and one per
 * half ring.  Both bits are set with atomic test-and-set, which is
 * NMI-safe, and cleared by the worker before it drains.  batch=0
 * restores one irq_work and one queue_work() per sample (for
 * comparisons: make bench-guest).
 *
 * Each CPU has one ring per context level (task, irq, nmi), so a ring
 * never has two writers at once: NMIs have their own ring, everybody else
 * writes with interrupts off.  The only reader is kcc_work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include <linux/ktime.h>
#include <linux/cpu.h>
#include <linux/tracepoint.h>
#include <linux/irq_work.h>
#include <asm/perf_event.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_budget.h"
#include "kcc_perm.h"
#include "kcc_valence.h"
#include "kcc_maps.h"
#include "kcc_task.h"
#include "kcc_sample.h"
#include "wrapper/cgroup.h"
#include "wrapper/perf.h"
#include "wrapper/sched_tp.h"

/* Context levels: a ring has one writer at a time per CPU. */
#define KCC_LVL_TASK		0
#define KCC_LVL_IRQ		1
#define KCC_LVL_NMI		2
#define KCC_NR_LVL		3

#define KCC_RING_RECENT		8

struct kcc_ring {
	u8 *buf;
	u32 size;		/* power of two */
	u64 head;		/* bytes committed: producer, release */
	u64 tail;		/* bytes consumed: consumer, release */
	/* Processes of the last samples (tgid, leader start): producer only */
	u64 recent[KCC_RING_RECENT];
	u32 recent_next;
};

struct kcc_cpu {
	struct kcc_ring ring[KCC_NR_LVL];
	struct irq_work iw;
	/*
	 * Wake the worker now, not at the flush timer: a ring passed its
	 * watermark or a process new to it was sampled.
	 */
	unsigned long wake;	/* bit 0; set by handlers, cleared by the drain */
};

static DEFINE_PER_CPU(struct kcc_cpu, kcc_cpus);

/* ---- rings ------------------------------------------------------------- */

/*
 * Hardirq context, on the CPU whose handler raised it.  A wake request
 * (or batch=0) wakes the worker now; a handler that found the flush
 * timer idle and took it has it armed.  One irq_work may stand for
 * both (irq_work_queue() of a pending one does nothing), so both are
 * looked at; arming an armed timer does nothing.
 */
static void kcc_irq_work(struct irq_work *iw)
{
	struct kcc_cpu *c = container_of(iw, struct kcc_cpu, iw);
	unsigned int ms = clamp(READ_ONCE(kcc_param_flush_ms), 1u, 10000u);

	if (test_bit(0, &c->wake) || !READ_ONCE(kcc_param_batch)) {
		if (queue_work(kcc_g.wq, &kcc_g.work))
			atomic64_inc(&kcc_g.wakeups);
	}
	if (test_bit(0, &kcc_g.flush_armed))
		queue_delayed_work(kcc_g.wq, &kcc_g.flush,
				   msecs_to_jiffies(ms));
}

/*
 * The flush timer expired: empty the rings.  The bit is released first,
 * so that a sample taken during the drain arms the timer again.
 */
void kcc_flush_fn(struct work_struct *work)
{
	clear_bit(0, &kcc_g.flush_armed);
	/* Orders the clear before the drain's reads of the rings' heads. */
	smp_mb__after_atomic();
	atomic64_inc(&kcc_g.wakeups);
	kcc_work_fn(work);
}

/*
 * Whether none of the last KCC_RING_RECENT samples of @r was of process
 * @key; @key is remembered.  Producer side only.
 */
static bool kcc_ring_new_proc(struct kcc_ring *r, u64 key)
{
	u32 i;

	for (i = 0; i < KCC_RING_RECENT; i++)
		if (r->recent[i] == key)
			return false;
	r->recent[r->recent_next] = key;
	r->recent_next = (r->recent_next + 1) % KCC_RING_RECENT;
	return true;
}

/*
 * Handler side, after the commit of a sample of the current task: wake
 * the worker when @r is at least half full or the task's process is new
 * to it, else make sure the flush timer runs.  NMI-safe: atomic bit
 * operations and irq_work_queue() only; at most one irq_work per CPU is
 * pending.
 */
static void kcc_handoff(struct kcc_cpu *c, struct kcc_ring *r)
{
	u64 key = (u64)current->tgid << 32 ^
		  (u32)current->group_leader->start_boottime;

	if (!READ_ONCE(kcc_param_batch)) {
		irq_work_queue(&c->iw);
		return;
	}
	if (kcc_ring_new_proc(r, key) ||
	    r->head - READ_ONCE(r->tail) >= r->size / 2) {
		if (!test_and_set_bit(0, &c->wake))
			irq_work_queue(&c->iw);
		return;
	}
	if (!test_bit(0, &kcc_g.flush_armed) &&
	    !test_and_set_bit(0, &kcc_g.flush_armed))
		irq_work_queue(&c->iw);
}

int kcc_rings_init(void)
{
	u32 size = roundup_pow_of_two(clamp(kcc_param_ring_kb, 16u, 16384u) * 1024);
	int cpu, l;

	for_each_possible_cpu(cpu) {
		struct kcc_cpu *c = per_cpu_ptr(&kcc_cpus, cpu);

		init_irq_work(&c->iw, kcc_irq_work);
		for (l = 0; l < KCC_NR_LVL; l++) {
			c->ring[l].buf = vzalloc(size);
			if (!c->ring[l].buf)
				goto err_alloc;
			c->ring[l].size = size;
		}
	}
	return 0;

err_alloc:
	kcc_rings_exit();
	return -ENOMEM;
}

/*
 * No irq_work of ours runs or is pending after this, and the flush timer
 * is neither armed nor running (the irq_works, which arm it, are done
 * first).  No handler may run any more.
 */
void kcc_rings_sync(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(&kcc_cpus, cpu)->iw);
	cancel_delayed_work_sync(&kcc_g.flush);
}

/* After kcc_rings_sync() and the workqueue's destruction. */
void kcc_rings_exit(void)
{
	int cpu, l;

	for_each_possible_cpu(cpu) {
		struct kcc_cpu *c = per_cpu_ptr(&kcc_cpus, cpu);

		for (l = 0; l < KCC_NR_LVL; l++) {
			vfree(c->ring[l].buf);
			c->ring[l].buf = NULL;
		}
	}
}

/*
 * Room for a record of @need bytes (a multiple of 8), contiguous.  When
 * the end of the buffer is too close, a padding record fills it.  Returns
 * the record or NULL when the ring is full; *@base receives the head the
 * record starts at.  Producer side only.
 */
static struct kcc_rrec *kcc_ring_reserve(struct kcc_ring *r, u32 need,
					 u64 *base)
{
	u64 head = r->head;
	/* Pairs with the consumer's release: its reads of the space are done. */
	u64 tail = smp_load_acquire(&r->tail);
	u32 off = head & (r->size - 1);
	u32 contig = r->size - off;

	if (need > r->size / 2)
		return NULL;
	if (need > contig) {
		if (head + contig + need - tail > r->size)
			return NULL;
		/* Published by the commit, together with the record. */
		((struct kcc_rrec *)(r->buf + off))->size = contig;
		((struct kcc_rrec *)(r->buf + off))->kind = KCC_RREC_PAD;
		head += contig;
		off = 0;
	} else if (head + need - tail > r->size) {
		return NULL;
	}
	*base = head;
	return (struct kcc_rrec *)(r->buf + off);
}

static void kcc_ring_commit(struct kcc_ring *r, u64 base,
			    struct kcc_rrec *rec)
{
	/* Pairs with the consumer's acquire: the record is written first. */
	smp_store_release(&r->head, base + rec->size);
}

static void kcc_rrec_fill_task(struct kcc_rrec *rec, u32 sid, u32 gen)
{
	struct task_struct *t = current;

	rec->kind = KCC_RREC_SAMPLE;
	rec->pid = t->pid;
	rec->tgid = t->tgid;
	rec->start = t->start_boottime;
	rec->leader_start = t->group_leader->start_boottime;
	rec->gen = gen;
	rec->sid = sid;
	rec->exec_id = (u32)t->self_exec_id;
	rec->__pad = 0;
	/* Racy against prctl(PR_SET_NAME): a torn name is harmless. */
	memcpy(rec->comm, t->comm, TASK_COMM_LEN);
	rec->comm[TASK_COMM_LEN - 1] = '\0';
}

static int kcc_level(void)
{
	if (in_nmi())
		return KCC_LVL_NMI;
	return in_task() ? KCC_LVL_TASK : KCC_LVL_IRQ;
}

/* ---- the handler ------------------------------------------------------- */

/*
 * Walk the user stack from @regs by frame pointers into @st (at most
 * @max entries, the sampled ip first).  NMI context: copy_from_user_nmi()
 * only, no faults taken.  Sets KCC_SAMPLE_TRUNCATED when the walk stopped
 * at the cap or at an unreadable or inconsistent frame rather than at the
 * outermost frame (a zero frame pointer or return address).
 */
static u32 kcc_walk_user(struct pt_regs *regs, u64 *st, u32 max, u32 *flags)
{
	unsigned long fp = regs->bp;
	u32 n = 0;

	st[n++] = regs->ip;
	while (fp) {
		struct {
			unsigned long next;
			unsigned long ret;
		} fr;

		if (n >= max || (fp & (sizeof(long) - 1)) ||
		    copy_from_user_nmi(&fr, (void __user *)fp, sizeof(fr))) {
			*flags |= KCC_SAMPLE_TRUNCATED;
			break;
		}
		if (!fr.ret)
			break;
		st[n++] = fr.ret;
		/* The stack grows down: a caller's frame is above. */
		if (fr.next && fr.next <= fp) {
			*flags |= KCC_SAMPLE_TRUNCATED;
			break;
		}
		fp = fr.next;
	}
	return n;
}

/*
 * The handler of a session's calls counter (KCC_CALLS_COUNTER).  A
 * counting event never overflows: the handler only marks the session's
 * counters among the other events of a perf context.
 */
static void kcc_overflow_counter(struct perf_event *event,
				 struct perf_sample_data *data,
				 struct pt_regs *regs)
{
}

/* Event active here: take its count and zero it.  Interrupts off. */
static bool kcc_counter_zero(struct perf_event *ev, u64 *calls)
{
	if (READ_ONCE(ev->state) != PERF_EVENT_STATE_ACTIVE ||
	    READ_ONCE(ev->oncpu) != smp_processor_id())
		return false;
	ev->pmu->read(ev);
	/* One exchange: the NMI handler may zero it between two steps. */
	*calls = local64_xchg(&ev->count, 0);
	return true;
}

/*
 * The calls since the previous sample, from the calls counter opened
 * (or inherited) with @event: the same thread's or the same CPU's, so in
 * the perf context of @event.  The count is taken and the counter set
 * back to zero, so that the next sample gets only what follows; when
 * perf swaps the contexts of two threads of a process at a switch, the
 * counter's count stays with its thread (inherit_stat).  What
 * perf_event_read_local() does for an event active on this CPU, which
 * is not exported: the PMU's read(), then the count.  false when the
 * counter is not counting here (multiplexed out, not found).  NMI or
 * hardirq, interrupts off; the context's event list is RCU-protected.
 */
/* The calls event's count is read at the sampled event's samples. */
static inline bool kcc_calls_read_at_samples(const struct kcc_session *s)
{
	return s->calls_counter || s->calls_hybrid;
}

static bool kcc_counter_take(struct perf_event *event,
			     struct kcc_session *s, perf_overflow_handler_t h,
			     u64 *calls)
{
	struct perf_event *ev;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(ev, &event->ctx->event_list, event_entry) {
		if (ev->overflow_handler != h ||
		    ev->overflow_handler_context != s)
			continue;
		found = kcc_counter_zero(ev, calls);
		break;
	}
	rcu_read_unlock();
	return found;
}

/*
 * System-wide calls counters (KCC_CALLS_COUNTER, target ALL): a CPU's
 * counter counts every thread that runs there, so at each context
 * switch on the CPU the count of the thread that leaves is taken off,
 * and a thread's first sample after it is switched in gets only its own
 * calls since then, as the LBR holds only its records since then (the
 * drivers and the software PMU clear it at a switch outside call-stack
 * mode).  The sessions' counters of each CPU are in slots, the same
 * slot on every CPU for one session; the sched_switch probe is attached
 * while a slot is in use.
 */
#define KCC_CTR_SLOTS	8
struct kcc_cpu_ctrs {
	struct perf_event *ev[KCC_CTR_SLOTS];
};

static DEFINE_PER_CPU(struct kcc_cpu_ctrs, kcc_cpu_ctrs);
static unsigned long kcc_ctr_slots;	/* bitmap; kcc_g.lock */

/*
 * The calls @n of the thread leaving (current) since its last sample
 * here, as a record its next sample's count will be added to.  Task-
 * level ring, interrupts off.
 */
static void kcc_carry(struct kcc_session *s, u64 n)
{
	struct kcc_cpu *cpu = this_cpu_ptr(&kcc_cpus);
	struct kcc_ring *ring = &cpu->ring[KCC_LVL_TASK];
	struct kcc_rrec *rec;
	u64 base;

	if ((current->flags & PF_KTHREAD) || !current->mm ||
	    !READ_ONCE(s->running))
		return;
	/* Another cgroup's thread: its calls are no session's. */
	if (s->cgrp && !kcc_cgroup_holds(s->cgrp, current))
		return;
	rec = kcc_ring_reserve(ring, sizeof(*rec), &base);
	if (!rec) {
		this_cpu_add(s->hc->calls_lost, n);
		return;
	}
	kcc_rrec_fill_task(rec, s->id, READ_ONCE(s->gen));
	rec->kind = KCC_RREC_CARRY;
	memset(&rec->s, 0, sizeof(rec->s));
	rec->s.size = sizeof(rec->s);
	rec->s.flags = KCC_SAMPLE_CALLS;
	if (n > U32_MAX) {
		rec->s.flags |= KCC_SAMPLE_CALLS_SAT;
		n = U32_MAX;
	}
	rec->s.calls = n;
	rec->size = sizeof(*rec);
	kcc_ring_commit(ring, base, rec);
}

static void kcc_probe_switch(KCC_TP_SWITCH_PROTO)
{
	struct perf_event **slot = this_cpu_ptr(&kcc_cpu_ctrs)->ev;
	struct perf_event *ev;
	unsigned long flags;
	u64 n;
	int i;

	if (prev == next)
		return;
	local_irq_save(flags);
	for (i = 0; i < KCC_CTR_SLOTS; i++) {
		ev = READ_ONCE(slot[i]);
		if (ev && kcc_counter_zero(ev, &n) && n)
			kcc_carry(ev->overflow_handler_context, n);
	}
	local_irq_restore(flags);
}

/*
 * A slot for the system-wide counters of @s, and the probe attached
 * with the first one.  0, or -EBUSY (every slot taken), -ENOENT (no
 * sched_switch tracepoint), or the probe's registration error.
 * kcc_g.lock held.
 */
static int kcc_ctr_slot_get(struct kcc_session *s)
{
	int slot, ret;

	if (!kcc_tp_switch)
		return -ENOENT;
	slot = find_first_zero_bit(&kcc_ctr_slots, KCC_CTR_SLOTS);
	if (slot >= KCC_CTR_SLOTS)
		return -EBUSY;
	if (!kcc_ctr_slots) {
		ret = tracepoint_probe_register(kcc_tp_switch,
						kcc_probe_switch, NULL);
		if (ret)
			return ret;
	}
	__set_bit(slot, &kcc_ctr_slots);
	s->ctr_slot = slot + 1;
	return 0;
}

/*
 * Empty the slot of @s on every CPU; once this returns no probe reads
 * its counters any more, which may then be released.  kcc_g.lock held.
 */
static void kcc_ctr_slot_put(struct kcc_session *s)
{
	int cpu, slot = (int)s->ctr_slot - 1;

	if (!s->ctr_slot)
		return;
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu_ptr(&kcc_cpu_ctrs, cpu)->ev[slot], NULL);
	__clear_bit(slot, &kcc_ctr_slots);
	s->ctr_slot = 0;
	if (!kcc_ctr_slots) {
		tracepoint_probe_unregister(kcc_tp_switch, kcc_probe_switch,
					    NULL);
		tracepoint_synchronize_unregister();
	} else {
		/* The probe runs with preemption off. */
		synchronize_rcu();
	}
}

/*
 * Runs in NMI or hardirq context.  One sample of the current task: its
 * user stack, the branch records of the PMU (LBR source) and the period.
 * A sample of the calls event (@calls) charges no events: its period
 * counts calls, which the bursts count.
 */
static void kcc_overflow_calls(struct perf_event *event,
			       struct perf_sample_data *data,
			       struct pt_regs *regs);

static void __kcc_overflow(struct perf_event *event,
			   struct perf_sample_data *data, struct pt_regs *regs,
			   bool calls)
{
	bool draw = calls;	/* a sample of the calls event */
	const struct perf_branch_stack *br = kcc_sample_br_stack(data);
	struct kcc_session *s = event->overflow_handler_context;
	bool val;
	struct kcc_cpu *cpu;
	struct kcc_ring *ring;
	u32 depth;
	struct kcc_rrec *rec;
	struct kcc_branch *b;
	unsigned long irqf = 0;
	u32 nbr = 0, nb, i, flags = 0;
	int lvl, n;
	u64 base, ncalls;

	/* The session outlives its events (kcc_events_stop()). */
	if (!s || !READ_ONCE(s->running))
		return;
	depth = READ_ONCE(s->stack_depth);
	val = s->source == KCC_SOURCE_VALENCE;

	lvl = kcc_level();
	if (lvl != KCC_LVL_NMI)
		local_irq_save(irqf);
	cpu = this_cpu_ptr(&kcc_cpus);
	ring = &cpu->ring[lvl];
	/* The sample is still taken; the event is off until the next tick. */
	if (kcc_event_throttled(event))
		this_cpu_inc(s->hc->throttles);

	if ((current->flags & PF_KTHREAD) || !current->mm) {
		this_cpu_inc(s->hc->drops[KCC_DROP_NO_STACK]);
		goto out;
	}
	/*
	 * Not the session's cgroup: not a drop, a sample of no concern.  A
	 * calls counter of the CPU is taken off at this thread's switch-out
	 * (kcc_carry()), so its calls never reach the session's threads.
	 */
	if (s->cgrp && !kcc_cgroup_holds(s->cgrp, current)) {
		this_cpu_inc(s->hc->cgroup_other);
		goto out;
	}
	if (!user_mode(regs))
		regs = task_pt_regs(current);
	if (!user_64bit_mode(regs)) {
		this_cpu_inc(s->hc->drops[KCC_DROP_NO_STACK]);
		goto out;
	}
	if (br)
		nbr = min_t(u32, br->nr, KCC_INJECT_MAX_BRANCHES);

	/* Valence: the area's key, or the fp walk for a thread without. */
	rec = kcc_ring_reserve(ring, sizeof(*rec) +
			       max(depth, val ? KCC_VKEY_MAX : 0u) * sizeof(u64) +
			       nbr * sizeof(struct kcc_branch), &base);
	if (!rec) {
		this_cpu_inc(s->hc->drops[KCC_DROP_RING_FULL]);
		goto out;
	}
	kcc_rrec_fill_task(rec, s->id, READ_ONCE(s->gen));
	n = val ? kcc_valence_read(s, (u64 *)(&rec->s + 1)) : 0;
	if (n < 0)
		goto out;	/* counted, not taken */
	if (n > 0)
		rec->kind = KCC_RREC_VALENCE;
	else
		n = kcc_walk_user(regs, (u64 *)(&rec->s + 1), depth, &flags);
	rec->s.nr_stack = n;
	rec->s.flags = flags;
	rec->s.nr_branches = nbr;
	rec->s.calls = 0;
	rec->s.delta = calls ? 0 : data->period;
	/*
	 * The calls event is per thread (inherited events count each
	 * thread apart), so its count, taken and zeroed at each of its
	 * samples, is the task's calls since its previous one: the period
	 * when the PMU samples at every period, more when one interrupt
	 * covered several or samples were throttled away.  A CPU's calls
	 * event counts every thread there: its period is the count.  A
	 * counter beside the sampled event gives the same at every sample
	 * of that one; so does the calls event of a hybrid session, read
	 * at the samples of both.
	 */
	ncalls = data->period;
	if (calls && s->cfg.target == KCC_TARGET_PID)
		ncalls = local64_xchg(&event->count, 0);
	if (calls || kcc_calls_read_at_samples(s)) {
		if (!calls &&
		    !kcc_counter_take(event, s, s->calls_hybrid ?
				      kcc_overflow_calls : kcc_overflow_counter,
				      &ncalls)) {
			this_cpu_inc(s->hc->calls_unread);
			calls = false;
		} else {
			calls = true;
		}
	}
	if (calls) {
		rec->s.flags |= KCC_SAMPLE_CALLS;
		if (s->calls_hybrid)
			rec->s.flags |= KCC_SAMPLE_CALLS_POOL;
		/* A burst at a retired call (two events, hybrid). */
		if (draw)
			rec->s.flags |= KCC_SAMPLE_CALLS_DRAW;
		if (ncalls > U32_MAX) {
			rec->s.flags |= KCC_SAMPLE_CALLS_SAT;
			rec->s.calls = U32_MAX;
		} else {
			rec->s.calls = ncalls;
		}
	}
	b = (struct kcc_branch *)((u64 *)(&rec->s + 1) + rec->s.nr_stack);
	for (i = 0, nb = 0; i < nbr; i++) {
		/* A branch that never retired is no call or return. */
		if (kcc_br_wrong_path(&br->entries[i])) {
			this_cpu_inc(s->hc->br_wrong_path);
			continue;
		}
		b[nb].from = br->entries[i].from;
		b[nb].to = br->entries[i].to;
		b[nb].kind = kcc_br_kind_perf(br->entries[i].type);
		b[nb].__reserved = 0;
		nb++;
	}
	rec->s.nr_branches = nb;
	rec->s.size = sizeof(rec->s) + rec->s.nr_stack * sizeof(u64) +
		      nb * sizeof(struct kcc_branch);
	rec->size = offsetof(struct kcc_rrec, s) + rec->s.size;
	kcc_ring_commit(ring, base, rec);
	kcc_handoff(cpu, ring);
out:
	if (lvl != KCC_LVL_NMI)
		local_irq_restore(irqf);
}

static void kcc_overflow(struct perf_event *event,
			 struct perf_sample_data *data, struct pt_regs *regs)
{
	__kcc_overflow(event, data, regs, false);
}

static void kcc_overflow_calls(struct perf_event *event,
			       struct perf_sample_data *data,
			       struct pt_regs *regs)
{
	__kcc_overflow(event, data, regs, true);
}

/*
 * KCC_IOC_INJECT: one checked sample, charged to the calling thread,
 * into this CPU's task-level ring.  Returns 0 or -ENOSPC (ring full).
 */
int kcc_push_task(const struct kcc_sample *smp)
{
	struct kcc_ring *ring;
	struct kcc_rrec *rec;
	unsigned long irqf;
	int ret = -ENOSPC;
	u64 base;

	local_irq_save(irqf);
	ring = &this_cpu_ptr(&kcc_cpus)->ring[KCC_LVL_TASK];
	rec = kcc_ring_reserve(ring, offsetof(struct kcc_rrec, s) + smp->size,
			       &base);
	if (rec) {
		kcc_rrec_fill_task(rec, 0, 0);
		/* The arrays follow rec->s: copy through the record's bytes. */
		memcpy((u8 *)rec + offsetof(struct kcc_rrec, s), smp, smp->size);
		rec->size = offsetof(struct kcc_rrec, s) + smp->size;
		kcc_ring_commit(ring, base, rec);
		ret = 0;
	}
	local_irq_restore(irqf);
	return ret;
}

/*
 * An injected record goes to every running inject session whose target
 * holds the injecting process: all tasks, or that process.
 */
static void kcc_apply_injected(const struct kcc_rrec *rec)
{
	struct kcc_session *s;

	list_for_each_entry(s, &kcc_g.sessions, node) {
		/* Stopped ones count it as KCC_DROP_STOPPED. */
		if (s->source != KCC_SOURCE_INJECT ||
		    s->state == KCC_STATE_READY)
			continue;
		if (s->cfg.target == KCC_TARGET_PID &&
		    pid_nr(s->target) != rec->tgid)
			continue;
		kcc_task_apply(s, rec);
	}
}

/*
 * Apply @rec to its session (@last: the previous record's, often the
 * same); returns the session found, NULL if it is gone.
 */
static struct kcc_session *kcc_dispatch(const struct kcc_rrec *rec,
					struct kcc_session *last)
{
	if (!rec->sid) {
		kcc_apply_injected(rec);
		return last;
	}
	if (!last || last->id != rec->sid)
		last = kcc_session_find(rec->sid);
	if (last)
		kcc_task_apply(last, rec);
	return last;
}

/*
 * Empty every ring into the sessions the records name; records of a
 * session that is gone are discarded.  Process context, kcc_g.lock
 * held.
 */
static void kcc_drain_rings(void)
{
	struct kcc_session *s, *last = NULL;
	u64 t0 = ktime_get_ns();
	int cpu, l;

	list_for_each_entry(s, &kcc_g.sessions, node)
		s->work_n0 = s->consumed;

	for_each_possible_cpu(cpu) {
		struct kcc_cpu *c = per_cpu_ptr(&kcc_cpus, cpu);

		/* A ring filling again during the drain wakes it again. */
		if (test_bit(0, &c->wake)) {
			clear_bit(0, &c->wake);
			/* The clear before the reads of the heads below. */
			smp_mb__after_atomic();
		}
		for (l = 0; l < KCC_NR_LVL; l++) {
			struct kcc_ring *r = &c->ring[l];
			u64 tail = r->tail;
			/* Pairs with kcc_ring_commit(): records are complete. */
			u64 head = smp_load_acquire(&r->head);

			while (tail != head) {
				const struct kcc_rrec *rec = (const void *)
					(r->buf + (tail & (r->size - 1)));

				if (rec->kind != KCC_RREC_PAD)
					last = kcc_dispatch(rec, last);
				tail += rec->size;
				/* Pairs with kcc_ring_reserve(): space is free. */
				smp_store_release(&r->tail, tail);
			}
		}
		cond_resched();
	}
	/* The drain's time is charged to every session it served. */
	t0 = ktime_get_ns() - t0;
	list_for_each_entry(s, &kcc_g.sessions, node) {
		if (s->consumed == s->work_n0)
			continue;
		s->work_ns += t0;
		s->work_batches++;
	}
}

/*
 * Apply everything pending to every session: the mapping hook's
 * captures, the queued task events that were already there, then the
 * samples, then those events (a thread's samples are in the rings
 * before its exit is queued, so they find it alive).
 */
void kcc_drain(void)
{
	static struct kcc_tev ev[KCC_TEV_MAX];	/* under kcc_g.lock */
	struct kcc_session *s;
	struct kcc_task *t;
	u64 hd[KCC_DROP_NR];
	u32 nr;

	kcc_maps_fold();
	nr = kcc_task_grab_events(ev);
	kcc_drain_rings();
	list_for_each_entry(s, &kcc_g.sessions, node) {
		kcc_task_events(s, ev, nr);
		kcc_maps_free_orphans(s, ev, nr);

		/* A lost sample may sit between two bursts: do not join them. */
		kcc_handler_drops(s, hd);
		if (hd[KCC_DROP_RING_FULL] != s->ring_drops_seen) {
			s->ring_drops_seen = hd[KCC_DROP_RING_FULL];
			list_for_each_entry(t, &s->task_list, node)
				kcc_stitch_break(&t->st);
		}
	}
}

void kcc_work_fn(struct work_struct *work)
{
	mutex_lock(&kcc_g.lock);
	kcc_drain();
	mutex_unlock(&kcc_g.lock);
	wake_up_interruptible(&kcc_g.wait);
}

/* ---- perf events ------------------------------------------------------- */

/*
 * The attributes perf record gives a sampling event with -j
 * any_call,any_ret,u: user only, not while a guest runs, and not pinned,
 * so that a PMU shared with other users multiplexes the event (reported
 * as running < enabled time) instead of putting it in the ERROR state.
 */
static void kcc_attr_init(struct perf_event_attr *a,
			  const struct kcc_evsel *ev, u64 period, bool lbr)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	a->config1 = ev->config1;
	a->config2 = ev->config2;
	a->sample_period = period;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	if (lbr) {
		a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY_CALL |
					PERF_SAMPLE_BRANCH_ANY_RETURN |
					PERF_SAMPLE_BRANCH_USER |
					PERF_SAMPLE_BRANCH_TYPE_SAVE;
		/*
		 * Since 7.x perf_sample_save_brstack() cuts the branch
		 * stack to sample_max_stack (0 here until set): kcc keeps
		 * at most KCC_INJECT_MAX_BRANCHES records anyway.
		 */
		a->sample_max_stack = KCC_INJECT_MAX_BRANCHES;
		/*
		 * Without flags and cycles Intel's driver skips LBR_INFO
		 * (LBR_NO_INFO in LBR_SELECT), so LBR_SELECT differs from
		 * that of perf record -j any_call,any_ret,u and the two
		 * time-share the one register; lbr_info=1 matches perf's.
		 */
		if (!ev->br_flags && !ev->br_info)
			a->branch_sample_type |= KCC_BRANCH_SAMPLE_QUIET;
	}
}

/* Where a probe opens its event: the calling thread, or this CPU. */
static int kcc_probe_cpu(bool task)
{
	int cpu;

	if (task)
		return -1;
	cpu = get_cpu();
	put_cpu();
	return cpu;
}

/*
 * Whether an event can be created here at all: one disabled counter,
 * released at once, on the current CPU (@task false) or on the calling
 * thread (@task true: what a session on one process opens, which perf
 * allows an unprivileged caller where a CPU-wide event needs
 * perf_allow_cpu()).  With @lbr, a PMU that refuses the quiet branch
 * mask is asked again without it, and @evs->br_flags says so for the
 * events opened later.  The name of the PMU that took it goes to
 * @pmu_name (@len bytes) when given, and with @lbr the PMU's LBR depth
 * (its caps/branches, 0 if it has none) to @depth when given.  Returns
 * 0 or the -errno of perf_event_create_kernel_counter().
 */
int kcc_probe_event(struct kcc_evsel *evs, bool lbr, bool task,
		    char *pmu_name, size_t len, u32 *depth)
{
	struct perf_event_attr attr;
	struct perf_event *ev;
	int cpu = kcc_probe_cpu(task);

	evs->br_flags = false;
	evs->br_info = lbr && READ_ONCE(kcc_param_lbr_info);
	kcc_attr_init(&attr, evs, 100000, lbr);
	attr.disabled = 1;
	ev = perf_event_create_kernel_counter(&attr, cpu,
					      task ? current : NULL,
					      kcc_overflow, NULL);
	/*
	 * AMD's LBR (amd_pmu_lbr_setup_filter(), Zen 4 LbrExtV2) refuses
	 * NO_FLAGS and NO_CYCLES with -EOPNOTSUPP: ask again with the
	 * records' flags, which kcc does not use, rather than lose the
	 * branch stack.
	 */
	if (lbr && KCC_BRANCH_SAMPLE_QUIET && PTR_ERR_OR_ZERO(ev) == -EOPNOTSUPP) {
		evs->br_flags = true;
		kcc_attr_init(&attr, evs, 100000, lbr);
		attr.disabled = 1;
		ev = perf_event_create_kernel_counter(&attr, cpu,
						      task ? current : NULL,
						      kcc_overflow, NULL);
		if (IS_ERR(ev))
			evs->br_flags = false;
		else
			pr_info("PMU %s refuses branch records without flags and cycles (NO_FLAGS, NO_CYCLES): asking with them\n",
				ev->pmu->name ?: "?");
	}
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	if (pmu_name)
		strscpy(pmu_name, ev->pmu->name ?: "", len);
	if (depth)
		*depth = lbr ? kcc_pmu_caps_branches(ev->pmu) : 0;
	perf_event_release_kernel(ev);
	return 0;
}

/*
 * A calls counter (KCC_CALLS_COUNTER): counting, user only like the
 * sampled event; per thread, its count follows the thread when perf
 * swaps two threads' contexts (inherit_stat).
 */
static void kcc_counter_attr_init(struct perf_event_attr *a,
				  const struct kcc_evsel *ev, bool task)
{
	kcc_attr_init(a, ev, 0, false);
	a->sample_type = 0;
	a->inherit_stat = task;
}

/*
 * Whether @ev can be counted here: as kcc_probe_event(), for a calls
 * counter.  Returns 0 or the -errno of perf_event_create_kernel_counter().
 */
int kcc_probe_counter(const struct kcc_evsel *ev, bool task)
{
	struct perf_event_attr attr;
	struct perf_event *pe;
	int cpu = kcc_probe_cpu(task);

	kcc_counter_attr_init(&attr, ev, task);
	attr.disabled = 1;
	pe = perf_event_create_kernel_counter(&attr, cpu,
					      task ? current : NULL,
					      kcc_overflow_counter, NULL);
	if (IS_ERR(pe))
		return PTR_ERR(pe);
	perf_event_release_kernel(pe);
	return 0;
}

static void kcc_event_read(struct perf_event *ev, u64 *count, u64 *enabled,
			   u64 *running, u32 *errors)
{
	u64 e = 0, r = 0;

	*count += perf_event_read_value(ev, &e, &r);
	*enabled += e;
	*running += r;
	if (READ_ONCE(ev->state) == PERF_EVENT_STATE_ERROR)
		(*errors)++;
}

/*
 * The ev_* fields of @st: the released events' totals plus what the
 * live events read now (children of inherited events included).
 * Process context.
 */
void kcc_events_read(struct kcc_session *s, struct kcc_status *st)
{
	u32 i, errors = s->ev_errors;
	struct kcc_hcount sum;
	u64 e = 0, r = 0;

	st->ev_config1 = s->ev.config1;
	st->ev_config2 = s->ev.config2;
	st->ev_count = s->ev_count;
	st->ev_enabled_ns = s->ev_enabled;
	st->ev_running_ns = s->ev_running;
	for (i = 0; i < s->nr_events; i++)
		kcc_event_read(s->events[i], &st->ev_count, &st->ev_enabled_ns,
			       &st->ev_running_ns, &errors);
	st->ev_nr = s->ev_nr;
	st->ev_errors = errors;
	kcc_hcount_sum(s, &sum);
	st->ev_throttles = sum.throttles - s->throttles_base;
	/*
	 * A counter is set back to zero at each sample it is read at:
	 * what it holds now (its threads' children included) are the
	 * calls since each thread's last sample.
	 */
	st->calls_after_last += s->calls_left;
	for (i = 0; kcc_calls_read_at_samples(s) && i < s->nr_cevents; i++)
		kcc_event_read(s->cevents[i], &st->calls_after_last, &e, &r,
			       &errors);
	st->calls_unread = sum.calls_unread;
	st->calls_after_last += sum.calls_lost;
	st->br_wrong_path = sum.br_wrong_path;
	st->cgroup_other = sum.cgroup_other;
}

/*
 * Whether the CPU's PMU gives cycles with a branch stack of calls and
 * returns, which makes the LBR source the default (KCC_SOURCE_AUTO); a
 * VM without a virtual PMU, or with KVM's LBR passthrough only, refuses
 * it.  An explicit KCC_SOURCE_LBR probes its own event instead: any PMU
 * that delivers branch stacks will do.  Called once at load.
 */
void kcc_lbr_detect(void)
{
	struct kcc_evsel cycles = {
		.type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES,
	};

	kcc_g.lbr = !kcc_probe_event(&cycles, true, false, NULL, 0,
				     &kcc_g.lbr_depth);
}

#define KCC_MAX_EVENTS	1024	/* threads of a target process */

/*
 * The session's events on @cpu or @task: the sampled event, and the
 * calls event beside it when @cattr is given.  Returns 0 or -errno.
 */
static int kcc_event_open(struct kcc_session *s, struct perf_event_attr *attr,
			  struct perf_event_attr *cattr, int cpu,
			  struct task_struct *task)
{
	struct perf_event *ev;

	ev = perf_event_create_kernel_counter(attr, cpu, task, kcc_overflow, s);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	s->events[s->nr_events++] = ev;
	s->ev_nr++;
	if (!cattr)
		return 0;
	ev = perf_event_create_kernel_counter(cattr, cpu, task,
					      s->calls_counter ?
					      kcc_overflow_counter :
					      kcc_overflow_calls, s);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	s->cevents[s->nr_cevents++] = ev;
	return 0;
}

static int kcc_events_pid(struct kcc_session *s, struct perf_event_attr *attr,
			  struct perf_event_attr *cattr)
{
	struct task_struct **tasks, *p, *t;
	u32 n = 0, i;
	int ret = 0;

	/* Resolved at CONFIGURE, in the configuring process's namespace. */
	p = get_pid_task(s->target, PIDTYPE_PID);
	if (!p)
		return -ESRCH;
	tasks = kvcalloc(KCC_MAX_EVENTS, sizeof(*tasks), GFP_KERNEL);
	s->events = kvcalloc(KCC_MAX_EVENTS, sizeof(*s->events), GFP_KERNEL);
	if (cattr)
		s->cevents = kvcalloc(KCC_MAX_EVENTS, sizeof(*s->cevents),
				      GFP_KERNEL);
	if (!tasks || !s->events || (cattr && !s->cevents)) {
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * Checked again where the events attach, and no exec of the
	 * target in between (kcc_may_attach()).
	 */
	ret = down_read_killable(&p->signal->exec_update_lock);
	if (ret)
		goto out;
	ret = kcc_may_attach(p);
	if (ret)
		goto unlock;
	/*
	 * One inherited event per thread that exists now; threads and
	 * children created later inherit it.
	 */
	rcu_read_lock();
	for_each_thread(p, t) {
		if (n == KCC_MAX_EVENTS)
			break;
		get_task_struct(t);
		tasks[n++] = t;
	}
	rcu_read_unlock();

	attr->inherit = 1;
	if (cattr)
		cattr->inherit = 1;
	for (i = 0; i < n; i++) {
		ret = kcc_event_open(s, attr, cattr, -1, tasks[i]);
		/* A thread that exits meanwhile is no error. */
		if (ret && (tasks[i]->flags & PF_EXITING))
			ret = 0;
		if (ret)
			break;
	}
	for (i = 0; i < n; i++)
		put_task_struct(tasks[i]);
unlock:
	up_read(&p->signal->exec_update_lock);
out:
	kvfree(tasks);
	put_task_struct(p);
	return ret;
}

static int kcc_events_cpus(struct kcc_session *s, struct perf_event_attr *attr,
			   struct perf_event_attr *cattr)
{
	int cpu, ret = 0;

	s->events = kvcalloc(nr_cpu_ids, sizeof(*s->events), GFP_KERNEL);
	if (!s->events)
		return -ENOMEM;
	if (cattr) {
		s->cevents = kvcalloc(nr_cpu_ids, sizeof(*s->cevents),
				      GFP_KERNEL);
		if (!s->cevents)
			return -ENOMEM;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		ret = kcc_event_open(s, attr, cattr, cpu, NULL);
		if (ret)
			break;
		if (s->ctr_slot)
			WRITE_ONCE(per_cpu_ptr(&kcc_cpu_ctrs, cpu)->ev[s->ctr_slot - 1],
				   s->cevents[s->nr_cevents - 1]);
	}
	cpus_read_unlock();
	return ret;
}

/*
 * Forget the processes the rings saw in earlier sessions, so that their
 * first samples in @s wake the worker too.  Only when no other session
 * runs: then no handler of ours does (the events of @s are not created
 * yet), and the rings' producer-only fields can be written here.
 * kcc_g.lock held.
 */
static void kcc_rings_forget(struct kcc_session *s)
{
	struct kcc_session *it;
	int cpu, l;

	list_for_each_entry(it, &kcc_g.sessions, node)
		if (it != s && READ_ONCE(it->running))
			return;
	for_each_possible_cpu(cpu) {
		struct kcc_cpu *c = per_cpu_ptr(&kcc_cpus, cpu);

		for (l = 0; l < KCC_NR_LVL; l++) {
			memset(c->ring[l].recent, 0, sizeof(c->ring[l].recent));
			c->ring[l].recent_next = 0;
		}
	}
}

int kcc_events_start(struct kcc_session *s)
{
	struct perf_event_attr attr, cattr, *ca = NULL;
	int ret;

	if (s->source == KCC_SOURCE_INJECT)
		return 0;
	kcc_rings_forget(s);
	/* With a calls event, that one takes the branch stacks (both, hybrid). */
	kcc_attr_init(&attr, &s->ev, s->cfg.sample_period,
		      s->source == KCC_SOURCE_LBR &&
		      (!s->calls_on || s->calls_hybrid));
	/* sample_period and sample_freq share their word. */
	attr.freq = !!(s->cfg.flags & KCC_CFG_FREQ);
	if (s->calls_on) {
		kcc_attr_init(&cattr, &s->cev, s->cfg.calls_sample_period,
			      true);
		/* Its count stays with its thread when contexts swap. */
		cattr.inherit_stat = s->cfg.target == KCC_TARGET_PID;
		ca = &cattr;
	} else if (s->calls_counter) {
		kcc_counter_attr_init(&cattr, &s->cev,
				      s->cfg.target == KCC_TARGET_PID);
		ca = &cattr;
		if (s->cfg.target != KCC_TARGET_PID) {
			ret = kcc_ctr_slot_get(s);
			if (ret)
				return ret;
		}
	}
	if (s->cfg.target == KCC_TARGET_PID)
		ret = kcc_events_pid(s, &attr, ca);
	else
		ret = kcc_events_cpus(s, &attr, ca);
	if (ret)
		kcc_events_stop(s);
	return ret;
}

/*
 * Release the events: once perf_event_release_kernel() returns, the
 * event is off every CPU and its handler cannot run again.
 */
void kcc_events_stop(struct kcc_session *s)
{
	u32 i;

	kcc_ctr_slot_put(s);
	for (i = 0; i < s->nr_events; i++) {
		kcc_event_read(s->events[i], &s->ev_count, &s->ev_enabled,
			       &s->ev_running, &s->ev_errors);
		perf_event_release_kernel(s->events[i]);
	}
	kvfree(s->events);
	s->events = NULL;
	s->nr_events = 0;
	for (i = 0; i < s->nr_cevents; i++) {
		u64 e = 0, r = 0;
		u32 err = 0;

		if (kcc_calls_read_at_samples(s))
			kcc_event_read(s->cevents[i], &s->calls_left, &e, &r,
				       &err);
		perf_event_release_kernel(s->cevents[i]);
	}
	kvfree(s->cevents);
	s->cevents = NULL;
	s->nr_cevents = 0;
	/*
	 * A pending flush has nothing to wait for: the caller drains every
	 * ring, other sessions' samples included.  Cancelled, its bit is
	 * released, or no later sample would arm it; one running or about
	 * to be armed by an irq_work keeps it and releases it itself.
	 */
	if (cancel_delayed_work(&kcc_g.flush))
		clear_bit(0, &kcc_g.flush_armed);
}
