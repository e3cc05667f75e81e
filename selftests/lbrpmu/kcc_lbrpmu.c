// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_lbrpmu.c - a software LBR PMU for kcc's guest tests.  Test-only:
 * built by selftests/guest/build_module.sh, never installed with kcc.
 *
 * It registers the perf PMU "kcc_lbr" (dynamic type, sysfs type, format/
 * and events/ like a real PMU) with three events:
 *
 *   clock  (event=0) time in ns, sampled by an hrtimer, like cpu-clock;
 *   calls  (event=1) the calls retired by the running thread, read from
 *          its ring (like BR_INST_RETIRED.NEAR_CALL);
 *   misses (event=2) a synthetic per-routine miss count kept by the ring.
 *
 * The branches come from the tracing runtime (tools/kcc-trace): a traced
 * thread keeps its last KCC_LBR_RECS calls and returns as LBR-shaped
 * {from, to} records in a ring in its own memory (kcc_lbrpmu.h) and
 * registers it on /dev/kcc_lbr.  Every sample of a sampling event gets a
 * branch stack copied from the ring of the running thread with
 * copy_from_user_nmi(), newest first, filtered like 6.1's
 * intel_pmu_lbr_filter() does.
 *
 * Overflow: calls and misses have no hardware counter that could raise
 * an interrupt at the N-th call.  The PMU writes into the running
 * thread's ring the counts at which its sampling events run out of
 * their periods (trap_calls, trap_misses); the runtime stops there, in
 * the entry hook of the call that reaches one, with KCC_LBR_IOC_OVERFLOW,
 * and the sample is taken at that call, as a hardware counter's
 * interrupt comes at the overflowing instruction (precise=1).  An
 * hrtimer also polls the running thread's counters every poll_us
 * microseconds (and the core's read, add and del count too).  A poll
 * that finds an overflow no trap took samples it at once when the thread
 * wrote no record since (it is between its call and its check);
 * otherwise (a stale trap: a system-wide event after a switch) the
 * traps stop the thread at its next check, and one still due at the
 * poll after that is sampled there, with the registers and the branches
 * of that moment (counted in late).  With precise=0 every overflow is
 * sampled at the poll that finds it.  A sched_switch probe counts the
 * outgoing thread's calls on the events running on the CPU, before the
 * perf core schedules them out or hands them over to the next thread.
 *
 * Like the Intel driver:
 *  - system-wide events see only the records the running thread wrote
 *    since it was last switched in (the LBR is reset at a context switch);
 *    per-task events see all of them when task_save=1 (saved and restored
 *    with the task), or the same as system-wide when task_save=0;
 *  - skid=N leaves the N newest records out of the stack, so the sampled
 *    registers are N branches past the frozen LBR;
 *  - stray=N puts a far-branch record from a kernel address, of unknown
 *    type, on top of every N-th stack read from a thread's ring (counted
 *    per thread), after the filter, as one that slipped past it would be.
 *
 * Like the AMD driver (amd/lbr.c, amd_pmu_lbr_read(), 6.1 on):
 *  - records=16 keeps the 16 newest records a stack, Zen 4's depth
 *    (1 to 32; 32 by default, Skylake's);
 *  - wrong_path=N puts a call that never retired, tagged
 *    PERF_BR_SPEC_WRONG_PATH, on top of every N-th stack (counted as for
 *    stray) when the event asked for the branch flags: from the sampled
 *    ip to KCC_LBR_WRONG_TO, an address no program maps.  The read-only
 *    wrong_paths counts them.
 *
 * Not exported to modules, found by name at load: perf_event_overflow()
 * (the overflow_addr parameter, from /proc/kallsyms, or
 * kallsyms_lookup_name(), itself found with a kprobe; kallsyms must name
 * the address either way).  The
 * interrupted registers (irq_regs) are not exported either: samples carry
 * the user registers of the running thread (task_pt_regs()), so only user
 * threads are sampled.
 *
 * Unload: every event holds a reference on the module (perf core) and
 * /dev/kcc_lbr its opener's, so rmmod is refused while either exists.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>

#include "kcc_lbrpmu.h"
#include "wrapper/brstack.h"
#include "wrapper/hrtimer.h"

#define LBRPMU_TASKS	256	/* threads registered at once */
#define LBRPMU_POLL_MIN	10	/* us */

static unsigned int skid;
module_param(skid, uint, 0644);
MODULE_PARM_DESC(skid, "records between the frozen LBR and the sampled registers (default 0)");

static unsigned int stray;
module_param(stray, uint, 0644);
MODULE_PARM_DESC(stray, "a stray far-branch record on top of every N-th stack (0: never)");

static unsigned int wrong_path;
module_param(wrong_path, uint, 0644);
MODULE_PARM_DESC(wrong_path, "a call on a wrong path (PERF_BR_SPEC_WRONG_PATH) on top of every N-th stack that asked for flags, as AMD keeps them (0: never; 6.1 on)");

static bool task_save = true;
module_param(task_save, bool, 0644);
MODULE_PARM_DESC(task_save, "per-task events keep the records across context switches (default 1)");

/* The LBR's depth: 32 on Skylake and later, 16 on AMD Zen 4 (LbrExtV2). */
static unsigned int records = KCC_LBR_RECS;

static int lbrpmu_records_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v < 1 || v > KCC_LBR_RECS)
		return -EINVAL;
	WRITE_ONCE(records, v);
	return 0;
}

static const struct kernel_param_ops lbrpmu_records_ops = {
	.set = lbrpmu_records_set,
	.get = param_get_uint,
};
module_param_cb(records, &lbrpmu_records_ops, &records, 0644);
MODULE_PARM_DESC(records, "records a stack holds at most, the LBR's depth: 1 to 32 (default 32; 16 models AMD Zen 4)");

static bool amd_filter;
module_param(amd_filter, bool, 0644);
MODULE_PARM_DESC(amd_filter, "refuse PERF_SAMPLE_BRANCH_NO_FLAGS and NO_CYCLES with -EOPNOTSUPP, as AMD's amd_pmu_lbr_setup_filter() does (default 0)");

static bool calls_sample = true;
module_param(calls_sample, bool, 0644);
MODULE_PARM_DESC(calls_sample, "0: refuse a sampling calls event with a branch stack (-EOPNOTSUPP) and count it only, as a PMU whose retired-calls event cannot take records (default 1)");

static bool intel_select;
module_param(intel_select, bool, 0644);
MODULE_PARM_DESC(intel_select, "branch-stack events share a CPU only when they ask for the same LBR_SELECT (filter, and LBR_INFO unread with NO_FLAGS and NO_CYCLES), as Intel's shared-register constraint has it; another is not scheduled meanwhile (default 0)");

static atomic_long_t lbrpmu_select_refused = ATOMIC_LONG_INIT(0);

static unsigned long overflow_addr;
module_param(overflow_addr, ulong, 0400);
MODULE_PARM_DESC(overflow_addr, "address of perf_event_overflow (/proc/kallsyms) on kernels without kprobes");

static unsigned int release_ms;
module_param(release_ms, uint, 0644);
MODULE_PARM_DESC(release_ms, "the last close of /dev/kcc_lbr sleeps this long, ms (default 0): an exiting thread is switched out after exit_mm()");

static bool precise = true;
module_param(precise, bool, 0644);
MODULE_PARM_DESC(precise, "calls and misses events overflow at the call that reaches their period, where the runtime stops in the PMU (default 1); 0: at the next poll");

/* Read-only counts, each an atomic_long_t parameter (kp->arg). */
static int lbrpmu_count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops lbrpmu_count_ops = {
	.get = lbrpmu_count_get,
};

static atomic_long_t lbrpmu_late = ATOMIC_LONG_INIT(0);
module_param_cb(late, &lbrpmu_count_ops, &lbrpmu_late, 0444);
MODULE_PARM_DESC(late, "samples of calls and misses events taken after the thread wrote more records than when their overflow was found (read only)");

static atomic_long_t lbrpmu_wrong_paths = ATOMIC_LONG_INIT(0);
module_param_cb(wrong_paths, &lbrpmu_count_ops, &lbrpmu_wrong_paths, 0444);
MODULE_PARM_DESC(wrong_paths, "wrong-path records put on stacks (wrong_path=N; read only)");

module_param_cb(select_refused, &lbrpmu_count_ops, &lbrpmu_select_refused, 0444);
MODULE_PARM_DESC(select_refused, "schedulings of a branch-stack event refused for another LBR_SELECT in use on its CPU (intel_select=1; read only)");

static atomic_long_t lbrpmu_unread = ATOMIC_LONG_INIT(0);
module_param_cb(unread, &lbrpmu_count_ops, &lbrpmu_unread, 0444);
MODULE_PARM_DESC(unread, "switch-outs of a registered thread whose ring could not be read there (read only)");

static unsigned int poll_us = 1000;
module_param(poll_us, uint, 0644);
MODULE_PARM_DESC(poll_us, "poll interval of the calls and misses counters, us (default 1000)");

/* The header of a ring, what precedes its records: small on the stack. */
struct lbrpmu_head {
	u32 magic, version;
	u64 seq, pos, calls, misses;
};

static_assert(sizeof(struct lbrpmu_head) == offsetof(struct kcc_lbr_ring, rec));

/* A registered thread. */
struct lbrpmu_task {
	struct task_struct *task;	/* holds a reference; NULL: free */
	u64 ring;			/* user address; 0 after unregister */
	u64 pos_in;			/* ring pos when last switched in */
	u64 calls_in, misses_in;	/* counters then */
	u64 calls, misses;		/* counters at the last read */
	u64 samples;			/* stacks taken of the thread */
	bool in_stale;			/* ring unread at the last switch-out */
};

static struct lbrpmu_task lbrpmu_tasks[LBRPMU_TASKS];
static DEFINE_RAW_SPINLOCK(lbrpmu_lock);
static atomic_t lbrpmu_ntasks = ATOMIC_INIT(0);

/* What a poll saw of the running thread. */
struct lbrpmu_snap {
	bool valid;		/* the thread is registered */
	u64 calls, misses;
	u64 calls_in, misses_in;	/* when it was switched in */
	u64 pos;		/* records written, 0 when the ring is unread */
	bool in_stale;		/* calls_in, misses_in are of an earlier read */
};

/* Per event, allocated at init (never in the overflow path). */
struct lbrpmu_event {
	struct list_head active;	/* on lbrpmu_cpu.active while started */
	struct perf_event *event;
	struct task_struct *seen_task;	/* whose counter @seen is */
	u64 seen;
	u64 clock_prev;			/* clock: local_clock() at the last update */
	bool due;			/* a sample waits for the next poll or trap */
	bool waited;			/* a poll left the due sample to a trap */
	u64 due_pos;			/* ring pos when the sample fell due */
	u64 pos;			/* ring pos at the last update */
	bool sel_held;			/* counted in lbrpmu_cpu.sel_users */
};

/* The branch stack of one sample: one buffer per CPU (hrtimer context). */
struct lbrpmu_cpu {
	struct list_head active;	/* started calls and misses events */
	struct kcc_lbr_ring ring;
	struct perf_branch_stack bs;
	struct perf_branch_entry e[KCC_LBR_RECS + 2];	/* + stray, wrong path */
	u64 sel;			/* LBR_SELECT of the events holding it */
	unsigned int sel_users;		/* branch-stack events added here */
};

static DEFINE_PER_CPU(struct lbrpmu_cpu, lbrpmu_cpu);

static int (*lbrpmu_overflow)(struct perf_event *event,
			      struct perf_sample_data *data,
			      struct pt_regs *regs);

static struct pmu lbrpmu_pmu;
static enum hrtimer_restart lbrpmu_hrtimer(struct hrtimer *hrtimer);
static void lbrpmu_stop(struct perf_event *event, int flags);
static long lbrpmu_trap(void);

/* ---- registered threads ------------------------------------------------ */

static struct lbrpmu_task *lbrpmu_task_find(struct task_struct *t)
{
	int i;

	lockdep_assert_held(&lbrpmu_lock);
	for (i = 0; i < LBRPMU_TASKS; i++)
		if (lbrpmu_tasks[i].task == t)
			return &lbrpmu_tasks[i];
	return NULL;
}

/* Free slot @s; the caller puts the task returned once unlocked. */
static struct task_struct *lbrpmu_task_drop(struct lbrpmu_task *s)
{
	struct task_struct *t = s->task;

	lockdep_assert_held(&lbrpmu_lock);
	memset(s, 0, sizeof(*s));
	atomic_dec(&lbrpmu_ntasks);
	return t;
}

/* Read the header of @uaddr (the running thread's ring): 0 or -EFAULT. */
static int lbrpmu_ring_head(u64 uaddr, struct lbrpmu_head *h)
{
	if (!uaddr ||
	    copy_from_user_nmi(h, (const void __user *)uaddr, sizeof(*h)))
		return -EFAULT;
	if (h->magic != KCC_LBR_MAGIC || h->version != KCC_LBR_VERSION)
		return -EFAULT;
	return 0;
}

/*
 * The counters of the running thread, under lbrpmu_lock, and its ring
 * (@ring 0 when it cannot be read).  When the ring cannot be read (the
 * thread unregistered, or exit_mm() already ran: a per-task event is
 * scheduled out after it) the values of the last read stand.
 */
static void lbrpmu_task_snap(struct lbrpmu_snap *snap, u64 *ring, u64 *pos_in)
{
	struct lbrpmu_head h;
	struct lbrpmu_task *s;
	unsigned long flags;

	snap->valid = false;
	snap->pos = 0;
	*ring = 0;
	*pos_in = 0;
	if (!atomic_read(&lbrpmu_ntasks))
		return;
	raw_spin_lock_irqsave(&lbrpmu_lock, flags);
	s = lbrpmu_task_find(current);
	if (s) {
		if (current->mm && !lbrpmu_ring_head(s->ring, &h)) {
			s->calls = h.calls;
			s->misses = h.misses;
			*ring = s->ring;
			snap->pos = h.pos;
		}
		snap->valid = true;
		snap->calls = s->calls;
		snap->misses = s->misses;
		snap->calls_in = s->calls_in;
		snap->misses_in = s->misses_in;
		snap->in_stale = s->in_stale;
		*pos_in = s->pos_in;
	}
	raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
}

static u64 lbrpmu_update(struct perf_event *event, u64 *uaddr, u64 *pos_in);

/*
 * sched_switch, in @prev's context (its ring is readable), before the
 * perf core schedules its events out or hands them over to @next (the
 * contexts of threads cloned from one parent are swapped, not
 * rescheduled): the events running here count @prev's calls up to now.
 * The ring position and counters of @prev when it leaves are where its
 * records and counts start when it is switched in again (it writes none
 * meanwhile).
 */
static void lbrpmu_probe_switch(void *data, bool preempt,
				struct task_struct *prev,
				struct task_struct *next,
				unsigned int prev_state)
{
	struct lbrpmu_cpu *c = this_cpu_ptr(&lbrpmu_cpu);
	struct lbrpmu_head h;
	struct lbrpmu_event *le;
	struct lbrpmu_task *s;
	unsigned long flags;
	u64 uaddr, pos_in;

	if (!atomic_read(&lbrpmu_ntasks) || prev == next)
		return;
	local_irq_save(flags);
	/* An exiting thread too: its last counters are in its slot. */
	list_for_each_entry(le, &c->active, active)
		lbrpmu_update(le->event, &uaddr, &pos_in);
	raw_spin_lock(&lbrpmu_lock);
	s = lbrpmu_task_find(prev);
	if (s && prev->mm && !lbrpmu_ring_head(s->ring, &h)) {
		s->pos_in = h.pos;
		s->calls = h.calls;
		s->misses = h.misses;
		s->in_stale = false;
	} else if (s && prev->mm && s->ring) {
		/*
		 * A live registered thread whose ring could not be read
		 * here (copy_from_user_nmi() does not fault: a page under
		 * migration or collapse).  The next stay's start is then
		 * the last read, not this switch-out: the event that
		 * starts counting the thread next counts from there
		 * (lbrpmu_sync()), so the calls since that read are not
		 * lost.  Counted in unread.
		 */
		s->in_stale = true;
		atomic_long_inc(&lbrpmu_unread);
	}
	/*
	 * Every switch-out moves the start of the next stay, an exiting
	 * thread's too: after exit_mm() its ring is gone but it still
	 * sleeps and migrates, and a CPU's event that last saw another
	 * thread counts it from here.  A start left at an earlier
	 * switch-out counted the calls since then once per stay.
	 */
	if (s) {
		s->calls_in = s->calls;
		s->misses_in = s->misses;
	}
	raw_spin_unlock(&lbrpmu_lock);
	local_irq_restore(flags);
}

static struct tracepoint *lbrpmu_tp_switch;

static void lbrpmu_tp_lookup(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		lbrpmu_tp_switch = tp;
}

/* ---- /dev/kcc_lbr ------------------------------------------------------ */

static long lbrpmu_register(unsigned long uaddr)
{
	struct task_struct *dead = NULL;
	struct lbrpmu_head h;
	struct lbrpmu_task *s;
	unsigned long flags;
	int i;

	if (!uaddr || !IS_ALIGNED(uaddr, 8) ||
	    !access_ok((void __user *)uaddr, sizeof(struct kcc_lbr_ring)))
		return -EINVAL;
	if (copy_from_user(&h, (void __user *)uaddr, sizeof(h)))
		return -EFAULT;
	if (h.magic != KCC_LBR_MAGIC || h.version != KCC_LBR_VERSION)
		return -EPROTO;

	raw_spin_lock_irqsave(&lbrpmu_lock, flags);
	s = lbrpmu_task_find(current);
	if (!s) {
		/* A free slot, or one whose thread is dead. */
		for (i = 0; i < LBRPMU_TASKS && !s; i++) {
			struct lbrpmu_task *c = &lbrpmu_tasks[i];

			if (c->task && !dead && READ_ONCE(c->task->exit_state))
				dead = lbrpmu_task_drop(c);
			if (!c->task)
				s = c;
		}
		if (!s) {
			raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
			if (dead)
				put_task_struct(dead);
			return -ENOSPC;
		}
		get_task_struct(current);
		s->task = current;
		atomic_inc(&lbrpmu_ntasks);
	}
	s->ring = uaddr;
	s->in_stale = false;
	s->pos_in = h.pos;
	s->calls = h.calls;
	s->misses = h.misses;
	s->calls_in = h.calls;
	s->misses_in = h.misses;
	raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
	if (dead)
		put_task_struct(dead);
	return 0;
}

static long lbrpmu_unregister(void)
{
	struct lbrpmu_head h;
	struct lbrpmu_task *s;
	unsigned long flags;
	u64 uaddr = 0;
	int ok;

	raw_spin_lock_irqsave(&lbrpmu_lock, flags);
	s = lbrpmu_task_find(current);
	if (s)
		uaddr = s->ring;
	raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
	if (!s)
		return -ENOENT;
	ok = uaddr && !copy_from_user(&h, (void __user *)uaddr, sizeof(h));
	raw_spin_lock_irqsave(&lbrpmu_lock, flags);
	/*
	 * The slot stays until the thread is dead, with its final counters:
	 * a per-task event is scheduled out after exit_mm().
	 */
	s = lbrpmu_task_find(current);
	if (s) {
		if (ok && h.magic == KCC_LBR_MAGIC) {
			s->calls = h.calls;
			s->misses = h.misses;
		}
		s->ring = 0;
	}
	raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
	return 0;
}

static long lbrpmu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case KCC_LBR_IOC_REGISTER:
		return lbrpmu_register(arg);
	case KCC_LBR_IOC_UNREGISTER:
		return lbrpmu_unregister();
	case KCC_LBR_IOC_OVERFLOW:
		return lbrpmu_trap();
	default:
		return -ENOTTY;
	}
}

/*
 * The tracing runtime keeps /dev/kcc_lbr open until its process exits,
 * and do_exit() closes files after exit_mm(): with release_ms, the
 * process's last thread sleeps there, so it is switched out and in
 * again with no ring (lbrpmu_probe_switch()).
 */
static int lbrpmu_release(struct inode *inode, struct file *file)
{
	unsigned int ms = READ_ONCE(release_ms);

	if (ms)
		msleep(ms);
	return 0;
}

static const struct file_operations lbrpmu_fops = {
	.owner = THIS_MODULE,
	.release = lbrpmu_release,
	.unlocked_ioctl = lbrpmu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice lbrpmu_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kcc_lbr",
	.fops = &lbrpmu_fops,
	.mode = 0666,
};

/* ---- branch stacks ----------------------------------------------------- */

/* The number of this stack of the running thread (1, 2, ...), or 0. */
static u64 lbrpmu_task_samples(void)
{
	struct lbrpmu_task *s;
	unsigned long flags;
	u64 n = 0;

	raw_spin_lock_irqsave(&lbrpmu_lock, flags);
	s = lbrpmu_task_find(current);
	if (s)
		n = ++s->samples;
	raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
	return n;
}

static bool lbrpmu_kernel_ip(u64 ip)
{
	return (s64)ip < 0;
}

static bool lbrpmu_event_per_task(struct perf_event *event)
{
	return event->attach_state & PERF_ATTACH_TASK;
}

/*
 * Keep @r under the branch filter @bst: the type must be asked for, the
 * target's privilege level too, and a record from a kernel address only
 * when the kernel is (intel_pmu_lbr_filter() of 6.1).
 */
static bool lbrpmu_keep(u64 bst, const struct kcc_lbr_rec *r)
{
	u64 plm = lbrpmu_kernel_ip(r->to) ? PERF_SAMPLE_BRANCH_KERNEL :
					    PERF_SAMPLE_BRANCH_USER;

	if (!(bst & plm))
		return false;
	if (lbrpmu_kernel_ip(r->from) && !(bst & PERF_SAMPLE_BRANCH_KERNEL))
		return false;
	if (bst & PERF_SAMPLE_BRANCH_ANY)
		return true;
	if (r->flags & KCC_LBR_F_RET)
		return bst & PERF_SAMPLE_BRANCH_ANY_RETURN;
	if (bst & PERF_SAMPLE_BRANCH_ANY_CALL)
		return true;
	if (r->flags & KCC_LBR_F_IND)
		return bst & PERF_SAMPLE_BRANCH_IND_CALL;
	return bst & PERF_SAMPLE_BRANCH_CALL;
}

static void lbrpmu_entry(struct perf_branch_entry *e, u64 from, u64 to,
			 int type, bool save_type)
{
	memset(e, 0, sizeof(*e));
	e->from = from;
	e->to = to;
	if (save_type)
		e->type = type;
}

/*
 * Fill the CPU's branch stack from the ring at @uaddr of the running
 * thread, whose records from @pos_in on are valid (those before were
 * wiped by a context switch).
 */
static struct perf_branch_stack *
lbrpmu_brstack(struct perf_event *event, u64 uaddr, u64 pos_in)
{
	struct lbrpmu_cpu *c = this_cpu_ptr(&lbrpmu_cpu);
	u64 bst = event->attr.branch_sample_type;
	bool save_type = bst & PERF_SAMPLE_BRANCH_TYPE_SAVE;
	struct kcc_lbr_ring *r = &c->ring;
	u64 seq, first, i, n = 0, nr, depth;

	c->bs.nr = 0;
	c->bs.hw_idx = -1ULL;
	if (uaddr && !copy_from_user_nmi(r, (const void __user *)uaddr,
					 sizeof(*r)) &&
	    r->magic == KCC_LBR_MAGIC &&
	    !copy_from_user_nmi(&seq, (const void __user *)(uaddr +
				offsetof(struct kcc_lbr_ring, seq)),
				sizeof(seq))) {
		first = r->pos > KCC_LBR_RECS ? r->pos - KCC_LBR_RECS : 0;
		/* A write in progress: its slot is the oldest one. */
		if ((r->seq & 1) || seq != r->seq)
			first = r->pos + 1 > KCC_LBR_RECS ?
				r->pos + 1 - KCC_LBR_RECS : 0;
		if ((!lbrpmu_event_per_task(event) || !task_save) &&
		    pos_in > first)
			first = pos_in;
		depth = READ_ONCE(records);
		if (r->pos - first > depth)
			first = r->pos - depth;
		for (i = r->pos; i > first; i--) {
			const struct kcc_lbr_rec *rec =
				&r->rec[(i - 1) % KCC_LBR_RECS];

			if (r->pos - i < skid)
				continue;
			if (!lbrpmu_keep(bst, rec))
				continue;
			lbrpmu_entry(&c->e[n++], rec->from, rec->to,
				     (rec->flags & KCC_LBR_F_RET) ? PERF_BR_RET :
				     (rec->flags & KCC_LBR_F_IND) ?
				     PERF_BR_IND_CALL : PERF_BR_CALL, save_type);
		}
	}
	nr = (stray || wrong_path) && uaddr ? lbrpmu_task_samples() : 0;
	if (stray && nr && !(nr % stray)) {
		/* Room: at most KCC_LBR_RECS records came from the ring. */
		memmove(&c->e[1], &c->e[0], n * sizeof(c->e[0]));
		lbrpmu_entry(&c->e[0], (u64)(unsigned long)lbrpmu_hrtimer,
			     task_pt_regs(current)->ip, PERF_BR_UNKNOWN,
			     save_type);
		n++;
	}
#ifdef LBRPMU_HAVE_BR_SPEC
	/* Room: c->e has one more beyond the stray's. */
	if (wrong_path && nr && !(nr % wrong_path) &&
	    !(bst & PERF_SAMPLE_BRANCH_NO_FLAGS)) {
		memmove(&c->e[1], &c->e[0], n * sizeof(c->e[0]));
		lbrpmu_entry(&c->e[0], task_pt_regs(current)->ip,
			     KCC_LBR_WRONG_TO, PERF_BR_CALL, save_type);
		c->e[0].spec = PERF_BR_SPEC_WRONG_PATH;
		atomic_long_inc(&lbrpmu_wrong_paths);
		n++;
	}
#endif
	c->bs.nr = n;
	return &c->bs;
}

/* ---- the PMU ----------------------------------------------------------- */

static u64 lbrpmu_config(struct perf_event *event)
{
	return event->attr.config & 0xff;
}

/*
 * The registers a sample of the running thread carries: its user
 * registers, or, while the thread runs the tracing runtime's hook, the
 * traced routine's registers at the hook call (struct kcc_lbr_ring,
 * hook_*).  @buf holds the copy.
 */
static struct pt_regs *lbrpmu_regs(u64 uaddr, struct pt_regs *buf)
{
	struct pt_regs *regs = task_pt_regs(current);
	/* hook_ip, hook_sp, hook_bp, in_hook, hook_text, hook_text_end */
	u64 h[6];

	if (!uaddr ||
	    copy_from_user_nmi(h, (const void __user *)(uaddr +
			       offsetof(struct kcc_lbr_ring, hook_ip)),
			       sizeof(h)))
		return regs;
	if (h[3] != 1)
		return regs->ip >= h[4] && regs->ip < h[5] ? NULL : regs;
	*buf = *regs;
	buf->ip = h[0];
	buf->sp = h[1];
	buf->bp = h[2];
	return buf;
}

/*
 * Take one sample now; true when the core throttled the event.  In the
 * first or last instructions of a runtime hook the sample stays due for
 * the next poll (lbrpmu_regs()).
 */
static bool lbrpmu_sample(struct perf_event *event, u64 uaddr, u64 pos_in)
{
	struct lbrpmu_event *le = event->pmu_private;
	struct perf_sample_data data;
	struct pt_regs *regs, hook_regs;

	le->due = false;
	le->waited = false;
	if (!current->mm || (current->flags & PF_EXITING))
		return false;
	if (event->attr.exclude_user)
		return false;
	regs = lbrpmu_regs(uaddr, &hook_regs);
	if (!regs) {
		le->due = true;
		return false;
	}
	perf_sample_data_init(&data, 0, event->hw.last_period);
	if (event->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
		lbrpmu_save_brstack(&data, event,
				    lbrpmu_brstack(event, uaddr, pos_in));
	/* Late: the thread wrote records after its overflowing call. */
	if (le->pos != le->due_pos)
		atomic_long_inc(&lbrpmu_late);
	return lbrpmu_overflow(event, &data, regs);
}

/* Did @delta more events cross the period?  Then the period restarts. */
static bool lbrpmu_period(struct perf_event *event, u64 delta)
{
	struct hw_perf_event *hwc = &event->hw;
	s64 left;

	if (!is_sampling_event(event) || !delta)
		return false;
	left = local64_sub_return(delta, &hwc->period_left);
	if (left > 0)
		return false;
	left += (div64_u64(-left, hwc->sample_period) + 1) *
		hwc->sample_period;
	local64_set(&hwc->period_left, left);
	hwc->last_period = hwc->sample_period;
	return true;
}

/*
 * Bring the count of a calls or misses event up to date with the running
 * thread; the new events counted, or 0.  A thread the event has not seen
 * since it was switched in counts from its counters at the switch (or at
 * its registration): the event was running since then, on this thread or
 * handed over with its context.  Every count a sampling event adds runs
 * down its period, whoever added it (a poll, a trap, a read, a switch):
 * one that runs out makes a sample due.  With @count false nothing is
 * added: the event starts counting the running thread from now
 * (lbrpmu_start()).
 */
static u64 lbrpmu_sync(struct perf_event *event, u64 *uaddr, u64 *pos_in,
		       bool count)
{
	struct lbrpmu_event *le = event->pmu_private;
	bool calls = lbrpmu_config(event) == KCC_LBR_EV_CALLS;
	struct lbrpmu_snap snap;
	u64 v, in, delta;

	lbrpmu_task_snap(&snap, uaddr, pos_in);
	if (!snap.valid) {
		le->seen_task = NULL;
		return 0;
	}
	v = calls ? snap.calls : snap.misses;
	in = calls ? snap.calls_in : snap.misses_in;
	/*
	 * Count from this switch-in, or from the last update of this event
	 * since then.  A @seen of the same thread older than its switch-in
	 * is from an earlier stay on this CPU: what it counted elsewhere in
	 * between belongs to the other CPU's event.
	 */
	if (le->seen_task == current && le->seen > in)
		delta = v - le->seen;
	else
		delta = v - in;
	le->seen_task = current;
	/*
	 * Starting (@count false) counts from now, except after a
	 * switch-out whose read failed: from the stay's start, the last
	 * read, which the events running then did not count past.
	 */
	le->seen = !count && snap.in_stale ? in : v;
	le->pos = snap.pos;
	if (!count)
		return 0;
	local64_add(delta, &event->count);
	if (lbrpmu_period(event, delta) && !le->due) {
		le->due = true;
		le->due_pos = snap.pos;
	}
	return delta;
}

static u64 lbrpmu_update(struct perf_event *event, u64 *uaddr, u64 *pos_in)
{
	return lbrpmu_sync(event, uaddr, pos_in, true);
}

static void lbrpmu_clock_update(struct perf_event *event)
{
	struct lbrpmu_event *le = event->pmu_private;
	u64 now = local_clock();

	local64_add(now - le->clock_prev, &event->count);
	le->clock_prev = now;
}

/* A stopped (throttled) counter holds its value, as hardware's does. */
static void lbrpmu_read(struct perf_event *event)
{
	u64 uaddr, pos_in;

	if (event->hw.state & PERF_HES_STOPPED)
		return;
	if (lbrpmu_config(event) == KCC_LBR_EV_CLOCK)
		lbrpmu_clock_update(event);
	else
		lbrpmu_update(event, &uaddr, &pos_in);
}

/*
 * Write @trap at @u, the running thread's trap_calls and trap_misses,
 * from any context: copy_to_user_nofault() may not be called in hard
 * interrupt context (access_ok() warns there on kernels with
 * DEBUG_ATOMIC_SLEEP).  The words are read first with
 * copy_from_user_nmi(), which fails unless the thread's memory is the
 * one this CPU runs on and the page is there, and interrupts are off
 * from that read to the write; an unchanged value is not written.
 */
static void lbrpmu_put_traps(u64 __user *u, const u64 trap[2])
{
	u64 old[2];
	unsigned long left;

	lockdep_assert_irqs_disabled();
	if (copy_from_user_nmi(old, u, sizeof(old)) ||
	    (old[0] == trap[0] && old[1] == trap[1]))
		return;
	pagefault_disable();
	left = __copy_to_user_inatomic(u, trap, 2 * sizeof(*trap));
	pagefault_enable();
	/* Not written: the old traps stand until the next poll or trap. */
	(void)left;
}

/*
 * Write the running thread's traps (struct kcc_lbr_ring, trap_*): the
 * lowest count of calls, and of misses, at which a sampling event
 * started on this CPU and counting the thread runs out of its period,
 * or its count now when its sample is due already (the thread then
 * stops at its next check); ~0 where none does, or with precise=0.
 * Interrupts off (lbrpmu_put_traps()).
 */
static void lbrpmu_retrap(struct lbrpmu_cpu *c)
{
	u64 trap[2] = { ~0ULL, ~0ULL }, ring = 0;
	struct lbrpmu_event *le;
	struct lbrpmu_task *s;
	int i;

	if (!atomic_read(&lbrpmu_ntasks) || !current->mm ||
	    (current->flags & PF_EXITING))
		return;
	raw_spin_lock(&lbrpmu_lock);
	s = lbrpmu_task_find(current);
	if (s)
		ring = s->ring;
	raw_spin_unlock(&lbrpmu_lock);
	if (!ring)
		return;
	list_for_each_entry(le, &c->active, active) {
		struct perf_event *ev = le->event;
		s64 left;

		if (!READ_ONCE(precise))
			break;
		if (!is_sampling_event(ev) ||
		    (ev->hw.state & PERF_HES_STOPPED) ||
		    le->seen_task != current)
			continue;
		left = local64_read(&ev->hw.period_left);
		i = lbrpmu_config(ev) == KCC_LBR_EV_MISSES;
		trap[i] = min_t(u64, trap[i], le->due ? le->seen :
					      le->seen + max_t(s64, left, 1));
	}
	lbrpmu_put_traps((void __user *)(unsigned long)(ring +
			 offsetof(struct kcc_lbr_ring, trap_calls)), trap);
}

static enum hrtimer_restart lbrpmu_hrtimer(struct hrtimer *hrtimer)
{
	struct perf_event *event = container_of(hrtimer, struct perf_event,
						hw.hrtimer);
	bool clock = lbrpmu_config(event) == KCC_LBR_EV_CLOCK;
	struct lbrpmu_event *le = event->pmu_private;
	u64 uaddr = 0, pos_in = 0, period;
	struct lbrpmu_snap snap;
	bool fire;

	if (event->state != PERF_EVENT_STATE_ACTIVE ||
	    (event->hw.state & PERF_HES_STOPPED))
		return HRTIMER_NORESTART;
	if (clock) {
		lbrpmu_clock_update(event);
		lbrpmu_task_snap(&snap, &uaddr, &pos_in);
		fire = true;
		period = max_t(u64, 10000, event->hw.sample_period);
	} else {
		lbrpmu_update(event, &uaddr, &pos_in);
		fire = le->due;
		/*
		 * A period ran out that no trap took.  With no record
		 * since (the thread is between its call and its check),
		 * the sample is the trap's: taken now.  After a stale
		 * trap, the traps now stop the thread at its next check,
		 * where the sample comes; one still due at the next poll
		 * is taken there, late.
		 */
		if (fire && uaddr && READ_ONCE(precise) &&
		    le->pos != le->due_pos && !le->waited) {
			le->waited = true;
			fire = false;
		}
		lbrpmu_retrap(this_cpu_ptr(&lbrpmu_cpu));
		period = max_t(u64, LBRPMU_POLL_MIN, READ_ONCE(poll_us)) *
			 NSEC_PER_USEC;
	}
	if (fire && lbrpmu_sample(event, uaddr, pos_in)) {
		/*
		 * Throttled: stop counting, as the x86 drivers stop a
		 * throttled counter (x86_pmu_stop()); the core's unthrottle
		 * starts it again (before 6.16 with start() alone, since
		 * then after its own stop()).
		 */
		lbrpmu_stop(event, 0);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(hrtimer, ns_to_ktime(period));
	return HRTIMER_RESTART;
}

/*
 * KCC_LBR_IOC_OVERFLOW: the running thread made the call that reaches
 * one of its traps, and stopped in its entry hook right after that
 * call's record (the registers of the hook call stand for the thread's).
 * Every sampling event started here is brought up to date; those whose
 * period ran out take their sample now, as at the overflow interrupt of
 * a hardware counter; then the traps are written anew.  The sample is
 * taken in process context with interrupts off, where the hrtimer's are
 * taken in hard interrupt context: the perf core and the overflow
 * handler see the same CPU-local state either way.
 */
static long lbrpmu_trap(void)
{
	struct lbrpmu_event *le, *next;
	u64 uaddr = 0, pos_in = 0;
	struct lbrpmu_cpu *c;
	unsigned long flags;

	local_irq_save(flags);
	c = this_cpu_ptr(&lbrpmu_cpu);
	list_for_each_entry_safe(le, next, &c->active, active) {
		struct perf_event *ev = le->event;

		if (!is_sampling_event(ev) ||
		    ev->state != PERF_EVENT_STATE_ACTIVE)
			continue;
		lbrpmu_update(ev, &uaddr, &pos_in);
		/* Throttled: stopped as at the hrtimer (off the list). */
		if (le->due && lbrpmu_sample(ev, uaddr, pos_in))
			lbrpmu_stop(ev, 0);
	}
	lbrpmu_retrap(c);
	local_irq_restore(flags);
	return 0;
}

/*
 * Start counting: from now, like a hardware counter that is enabled (or
 * unthrottled): the running thread's earlier calls are not this event's.
 * A started event is left as it is (the core unthrottles with start()
 * alone before 6.16).
 */
static void lbrpmu_start(struct perf_event *event, int flags)
{
	struct lbrpmu_event *le = event->pmu_private;
	struct hw_perf_event *hwc = &event->hw;
	u64 uaddr, pos_in, ns;

	if (!(hwc->state & PERF_HES_STOPPED))
		return;
	hwc->state = 0;
	if (lbrpmu_config(event) == KCC_LBR_EV_CLOCK) {
		le->clock_prev = local_clock();
		if (!is_sampling_event(event))
			return;
		ns = max_t(u64, 10000, hwc->sample_period);
	} else {
		lbrpmu_sync(event, &uaddr, &pos_in, false);
		list_add(&le->active, &this_cpu_ptr(&lbrpmu_cpu)->active);
		/* Counting alone needs no poll: read, stop and switches count. */
		if (!is_sampling_event(event))
			return;
		lbrpmu_retrap(this_cpu_ptr(&lbrpmu_cpu));
		ns = max_t(u64, LBRPMU_POLL_MIN, READ_ONCE(poll_us)) *
		     NSEC_PER_USEC;
	}
	hrtimer_start(&hwc->hrtimer, ns_to_ktime(ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Stop counting.  Also called by the event's own hrtimer when the core
 * throttles it, and by the core after that (6.16 on): the timer is
 * cancelled without waiting for it (a callback waiting for itself would
 * never return).  The timer is pinned to this CPU and the core calls
 * stop() with interrupts off, so no other instance of the callback runs.
 */
static void lbrpmu_stop(struct perf_event *event, int flags)
{
	struct lbrpmu_event *le = event->pmu_private;
	struct hw_perf_event *hwc = &event->hw;

	if (hwc->state & PERF_HES_STOPPED)
		return;
	hrtimer_try_to_cancel(&hwc->hrtimer);
	lbrpmu_read(event);
	hwc->state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (lbrpmu_config(event) != KCC_LBR_EV_CLOCK)
		list_del_init(&le->active);
}

/*
 * The LBR_SELECT an Intel PMU would program for @event, as a key: the
 * filter bits of its branch_sample_type, and LBR_NO_INFO (bit 63 here)
 * when it asks for neither flags nor cycles (intel_pmu_setup_hw_lbr_filter()).
 * Events share the one register only with an equal value
 * (__intel_shared_reg_get_constraints()); the others get no counter
 * while it is held.  On hardware the core then multiplexes them; this
 * PMU, in the software context, has no multiplexing, so an event
 * refused here waits for its next scheduling (a context switch).
 */
static u64 lbrpmu_select(const struct perf_event *event)
{
	u64 bst = event->attr.branch_sample_type;
	u64 sel = bst & (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL |
			 PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_ANY_CALL |
			 PERF_SAMPLE_BRANCH_ANY_RETURN |
			 PERF_SAMPLE_BRANCH_IND_CALL | PERF_SAMPLE_BRANCH_CALL);

	if ((bst & PERF_SAMPLE_BRANCH_NO_FLAGS) &&
	    (bst & PERF_SAMPLE_BRANCH_NO_CYCLES))
		sel |= BIT_ULL(63);
	return sel;
}

/* add() and del() run on the event's CPU with interrupts off. */
static int lbrpmu_add(struct perf_event *event, int flags)
{
	struct lbrpmu_event *le = event->pmu_private;
	struct lbrpmu_cpu *c = this_cpu_ptr(&lbrpmu_cpu);

	if (READ_ONCE(intel_select) && has_branch_stack(event)) {
		u64 sel = lbrpmu_select(event);

		if (c->sel_users && c->sel != sel) {
			atomic_long_inc(&lbrpmu_select_refused);
			return -EBUSY;
		}
		c->sel = sel;
		c->sel_users++;
		le->sel_held = true;
	}
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		lbrpmu_start(event, flags);
	return 0;
}

static void lbrpmu_del(struct perf_event *event, int flags)
{
	struct lbrpmu_event *le = event->pmu_private;

	lbrpmu_stop(event, PERF_EF_UPDATE);
	if (le->sel_held) {
		this_cpu_ptr(&lbrpmu_cpu)->sel_users--;
		le->sel_held = false;
	}
}

static void lbrpmu_destroy(struct perf_event *event)
{
	kfree(event->pmu_private);
	event->pmu_private = NULL;
}

#define LBRPMU_BRANCH_OK (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | \
	PERF_SAMPLE_BRANCH_HV | PERF_SAMPLE_BRANCH_ANY | \
	PERF_SAMPLE_BRANCH_ANY_CALL | PERF_SAMPLE_BRANCH_ANY_RETURN | \
	PERF_SAMPLE_BRANCH_IND_CALL | PERF_SAMPLE_BRANCH_CALL | \
	PERF_SAMPLE_BRANCH_NO_FLAGS | PERF_SAMPLE_BRANCH_NO_CYCLES | \
	PERF_SAMPLE_BRANCH_TYPE_SAVE | PERF_SAMPLE_BRANCH_HW_INDEX)

static int lbrpmu_event_init(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 config = event->attr.config;
	struct lbrpmu_event *le;

	if (event->attr.type != lbrpmu_pmu.type)
		return -ENOENT;
	if (config > KCC_LBR_EV_MISSES || event->attr.config1 ||
	    event->attr.config2)
		return -EINVAL;
	if (has_branch_stack(event) &&
	    (event->attr.branch_sample_type & ~LBRPMU_BRANCH_OK))
		return -EOPNOTSUPP;
	if (config == KCC_LBR_EV_CALLS && has_branch_stack(event) &&
	    is_sampling_event(event) && !READ_ONCE(calls_sample))
		return -EOPNOTSUPP;
	if (has_branch_stack(event) && READ_ONCE(amd_filter) &&
	    (event->attr.branch_sample_type &
	     (PERF_SAMPLE_BRANCH_NO_FLAGS | PERF_SAMPLE_BRANCH_NO_CYCLES)))
		return -EOPNOTSUPP;
	le = kzalloc(sizeof(*le), GFP_KERNEL);
	if (!le)
		return -ENOMEM;
	INIT_LIST_HEAD(&le->active);
	le->event = event;
	event->pmu_private = le;
	event->destroy = lbrpmu_destroy;
	lbrpmu_hrtimer_setup(&hwc->hrtimer, lbrpmu_hrtimer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_HARD);
	/* A clock at a frequency is a clock with a period (cpu-clock). */
	if (config == KCC_LBR_EV_CLOCK && is_sampling_event(event) &&
	    event->attr.freq) {
		event->attr.sample_period = NSEC_PER_SEC /
			max_t(u64, 1, event->attr.sample_freq);
		hwc->sample_period = event->attr.sample_period;
		local64_set(&hwc->period_left, hwc->sample_period);
		hwc->last_period = hwc->sample_period;
		event->attr.freq = 0;
	}
	return 0;
}

PMU_FORMAT_ATTR(event, "config:0-7");

static struct attribute *lbrpmu_format_attrs[] = {
	&format_attr_event.attr,
	NULL,
};

static const struct attribute_group lbrpmu_format_group = {
	.name = "format",
	.attrs = lbrpmu_format_attrs,
};

PMU_EVENT_ATTR_STRING(clock, lbrpmu_ev_clock, "event=0x00");
PMU_EVENT_ATTR_STRING(calls, lbrpmu_ev_calls, "event=0x01");
PMU_EVENT_ATTR_STRING(misses, lbrpmu_ev_misses, "event=0x02");

static struct attribute *lbrpmu_events_attrs[] = {
	&lbrpmu_ev_clock.attr.attr,
	&lbrpmu_ev_calls.attr.attr,
	&lbrpmu_ev_misses.attr.attr,
	NULL,
};

static const struct attribute_group lbrpmu_events_group = {
	.name = "events",
	.attrs = lbrpmu_events_attrs,
};

static const struct attribute_group *lbrpmu_attr_groups[] = {
	&lbrpmu_format_group,
	&lbrpmu_events_group,
	NULL,
};

static struct pmu lbrpmu_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_sw_context,
	.attr_groups	= lbrpmu_attr_groups,
	.event_init	= lbrpmu_event_init,
	.add		= lbrpmu_add,
	.del		= lbrpmu_del,
	.start		= lbrpmu_start,
	.stop		= lbrpmu_stop,
	.read		= lbrpmu_read,
};

/* ---- load and unload --------------------------------------------------- */

/* Is @addr the entry of perf_event_overflow()?  Asks kallsyms. */
static bool lbrpmu_is_overflow(unsigned long addr)
{
	static const char name[] = "perf_event_overflow+0x0/";
	char buf[KSYM_SYMBOL_LEN];

	if (!addr)
		return false;
	sprint_symbol(buf, addr);
	return !strncmp(buf, name, sizeof(name) - 1);
}

/*
 * perf_event_overflow() is not exported: take it from overflow_addr (the
 * loader read it from /proc/kallsyms), else from kallsyms_lookup_name(),
 * found with a kprobe (kernels with CONFIG_KPROBES).  Either way kallsyms
 * must name the address perf_event_overflow.
 */
static int lbrpmu_find_overflow(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long (*lookup)(const char *name);
	unsigned long addr = overflow_addr;
	int ret;

	if (!addr) {
		ret = register_kprobe(&kp);
		if (ret)
			return ret;
		lookup = (void *)kp.addr;
		unregister_kprobe(&kp);
		if (lookup)
			addr = lookup("perf_event_overflow");
	}
	if (!lbrpmu_is_overflow(addr))
		return -ENOENT;
	lbrpmu_overflow = (void *)addr;
	return 0;
}

static void lbrpmu_tasks_drop(void)
{
	struct task_struct *t;
	unsigned long flags;
	int i;

	for (i = 0; i < LBRPMU_TASKS; i++) {
		raw_spin_lock_irqsave(&lbrpmu_lock, flags);
		t = lbrpmu_tasks[i].task ? lbrpmu_task_drop(&lbrpmu_tasks[i]) :
					   NULL;
		raw_spin_unlock_irqrestore(&lbrpmu_lock, flags);
		if (t)
			put_task_struct(t);
	}
}

static int __init lbrpmu_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu)
		INIT_LIST_HEAD(&per_cpu_ptr(&lbrpmu_cpu, cpu)->active);
	ret = lbrpmu_find_overflow();
	if (ret) {
		pr_err("perf_event_overflow not found (%d): give overflow_addr from /proc/kallsyms\n",
		       ret);
		return ret;
	}
	for_each_kernel_tracepoint(lbrpmu_tp_lookup, NULL);
	if (!lbrpmu_tp_switch) {
		pr_err("tracepoint sched_switch not found\n");
		return -ENOENT;
	}
	ret = tracepoint_probe_register(lbrpmu_tp_switch,
					lbrpmu_probe_switch, NULL);
	if (ret)
		return ret;
	ret = perf_pmu_register(&lbrpmu_pmu, "kcc_lbr", -1);
	if (ret)
		goto err_tp;
	ret = misc_register(&lbrpmu_misc);
	if (ret)
		goto err_pmu;
	pr_info("PMU kcc_lbr type %d, %u records, skid %u, stray %u, task_save %d\n",
		lbrpmu_pmu.type, records, skid, stray, task_save);
	return 0;

err_pmu:
	perf_pmu_unregister(&lbrpmu_pmu);
err_tp:
	tracepoint_probe_unregister(lbrpmu_tp_switch, lbrpmu_probe_switch,
				    NULL);
	tracepoint_synchronize_unregister();
	return ret;
}

static void __exit lbrpmu_exit(void)
{
	misc_deregister(&lbrpmu_misc);
	perf_pmu_unregister(&lbrpmu_pmu);
	tracepoint_probe_unregister(lbrpmu_tp_switch, lbrpmu_probe_switch,
				    NULL);
	tracepoint_synchronize_unregister();
	lbrpmu_tasks_drop();
}

module_init(lbrpmu_init);
module_exit(lbrpmu_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kcc test: a software LBR PMU fed by the tracing runtime");
