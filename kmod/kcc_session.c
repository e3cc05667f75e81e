// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_session.c - the profiling sessions of /dev/kcc: their
 * configuration, their life cycle (ready, running, stopped), their
 * counters, their readers and the snapshot read() serves (the memory
 * budget they share is kcc_budget.c's, who may have one kcc_perm.c's).
 *
 * A session belongs to the file that configured it and dies with it
 * (the autostart session belongs to no file and dies at unload).  Any
 * number of files may read it; an exited task's data stays until every
 * one of them has had a snapshot with it.  Everything here runs in
 * process context with kcc_g.lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/percpu.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_budget.h"
#include "kcc_perm.h"
#include "kcc_valence.h"
#include "kcc_watch.h"
#include "kcc_maps.h"
#include "kcc_task.h"
#include "kcc_sample.h"
#include "kcc_session.h"
#include "wrapper/cgroup.h"

#define KCC_PERIOD_MAX		BIT_ULL(40)
#define KCC_CLOCK_PERIOD_MIN	10000ull	/* ns: 100 kHz at most */
#define KCC_CLOCK_PERIOD_DEF	1000000ull	/* ns: 1 kHz */
#define KCC_HW_PERIOD_DEF	10007ull
#define KCC_MAX_TASKS_MAX	65536u
#define KCC_TASK_NODES_MIN	16u
#define KCC_TASK_NODES_MAX	BIT(24)
#define KCC_BURST_TABLE_MAX	BIT(20)
#define KCC_BURST_TABLE_DEF	1024u

static const char *const kcc_hw_names[] = {
	[PERF_COUNT_HW_CPU_CYCLES]		= "cycles",
	[PERF_COUNT_HW_INSTRUCTIONS]		= "instructions",
	[PERF_COUNT_HW_CACHE_REFERENCES]	= "cache-references",
	[PERF_COUNT_HW_CACHE_MISSES]		= "cache-misses",
	[PERF_COUNT_HW_BRANCH_INSTRUCTIONS]	= "branches",
	[PERF_COUNT_HW_BRANCH_MISSES]		= "branch-misses",
	[PERF_COUNT_HW_BUS_CYCLES]		= "bus-cycles",
};

static bool kcc_is_clock(const struct kcc_evsel *ev)
{
	return ev->type == PERF_TYPE_SOFTWARE;
}

/*
 * The event metric's name: the user's, else a perf name for the generic
 * events, else the name of the PMU that took the event ("cpu", ...).
 */
static void kcc_event_name(struct kcc_session *s, const char *user,
			   const char *pmu)
{
	const struct kcc_evsel *ev = &s->ev;
	const char *n = ev->type >= PERF_TYPE_MAX && pmu[0] ? pmu : "raw";

	if (user[0])
		n = user;
	else if (s->source == KCC_SOURCE_INJECT)
		n = "events";
	else if (ev->type == PERF_TYPE_HARDWARE &&
		 ev->config < ARRAY_SIZE(kcc_hw_names) &&
		 kcc_hw_names[ev->config])
		n = kcc_hw_names[ev->config];
	else if (ev->type == PERF_TYPE_SOFTWARE)
		n = ev->config == PERF_COUNT_SW_CPU_CLOCK ? "cpu-clock" :
							   "task-clock";
	else if (ev->type == PERF_TYPE_HW_CACHE)
		n = "hw-cache";
	strscpy(s->ev_name, n, sizeof(s->ev_name));
}

static bool kcc_no_pmu(int err)
{
	return err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP ||
	       err == -EINVAL;
}

/*
 * The calls event of a two-event session: checked, then probed with a
 * branch stack; or the calls counter beside the sampled event
 * (KCC_CALLS_COUNTER), per thread only, probed as a counting event.
 * 0 with s->calls_on (s->calls_counter) set; 0 with s->calls_fallback set
 * where no PMU takes it (the session then runs on the one event); or
 * the errno CONFIGURE fails with.  Before the main event's resolution,
 * which then samples without records.
 */
static int kcc_calls_resolve(struct kcc_session *s, const struct kcc_config *in)
{
	struct kcc_config *c = &s->cfg;
	bool task = c->target == KCC_TARGET_PID;
	bool counter;
	int ret;

	if (in->calls_flags & ~KCC_CALLS_FLAGS_ALL)
		return -EINVAL;
	/* No calls event: no other calls field either (a counter too). */
	if (!(in->calls_flags & KCC_CALLS_EVENT)) {
		if (in->calls_flags ||
		    in->calls_event_type || in->calls_event_config ||
		    in->calls_event_config1 || in->calls_sample_period)
			return -EINVAL;
		return 0;
	}
	counter = in->calls_flags & KCC_CALLS_COUNTER;
	/* Pools are per thread: a CPU's event mixes its threads' calls. */
	if ((in->calls_flags & KCC_CALLS_HYBRID) && (counter || !task))
		return -EINVAL;
	if (in->calls_sample_period > KCC_PERIOD_MAX ||
	    (in->calls_sample_period &&
	     in->calls_sample_period < kcc_param_period_min) ||
	    (counter && in->calls_sample_period))
		return -EINVAL;
	/* perf's software events carry no branch stack. */
	if (in->calls_event_type == PERF_TYPE_SOFTWARE ||
	    in->calls_event_type == PERF_TYPE_TRACEPOINT ||
	    in->calls_event_type == PERF_TYPE_BREAKPOINT)
		return -EINVAL;
	/* Bursts need the LBR source; injected samples bring their own. */
	if (c->source == KCC_SOURCE_INJECT)
		return -EINVAL;
	if (c->source == KCC_SOURCE_FP && in->source == KCC_SOURCE_FP)
		return -EINVAL;
	if (c->source == KCC_SOURCE_VALENCE)
		return -EINVAL;
	if (!c->calls_sample_period && !counter)
		c->calls_sample_period = KCC_HW_PERIOD_DEF;
	s->cev.type = c->calls_event_type;
	s->cev.config = c->calls_event_config;
	s->cev.config1 = c->calls_event_config1;
	/*
	 * A CPU's counter counts every thread that runs there: it is
	 * taken off at every switch, which needs the sched_switch probe.
	 */
	if (s->source != KCC_SOURCE_LBR || (counter && !task && !kcc_tp_switch))
		ret = -EOPNOTSUPP;
	else if (counter)
		ret = kcc_probe_counter(&s->cev, task);
	else
		ret = kcc_probe_event(&s->cev, true, task, NULL, 0, NULL);
	if (ret && !kcc_no_pmu(ret))
		return ret;
	/*
	 * ABI 1.9: a hybrid whose calls event cannot be sampled with
	 * branch stacks counts the calls beside the sampled event
	 * instead, where the PMU can count them (header: counter and
	 * fallback, not hybrid).
	 */
	if (ret && (in->calls_flags & KCC_CALLS_HYBRID) &&
	    !kcc_probe_counter(&s->cev, task)) {
		s->calls_fallback = true;
		counter = true;
		c->calls_sample_period = 0;
		c->calls_flags = KCC_CALLS_EVENT | KCC_CALLS_COUNTER;
		ret = 0;
	} else if (ret) {
		/* Said in the stream header; the period is the one event's. */
		s->calls_fallback = true;
		return 0;
	}
	if (counter)
		s->calls_counter = true;
	else
		s->calls_on = true;
	s->calls_hybrid = c->calls_flags & KCC_CALLS_HYBRID;
	return 0;
}

/*
 * Check every field of @in and resolve the defaults into @s.  Returns 0
 * or the errno CONFIGURE fails with.
 */
static int kcc_config_resolve(struct kcc_session *s, const struct kcc_config *in)
{
	struct kcc_config *c = &s->cfg;
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	char pmu[KCC_METRIC_NAME_LEN] = "";
	bool dflt_event, lbr, task;
	size_t i;
	int ret;

	if (in->flags & ~KCC_CFG_FLAGS_ALL || in->__reserved0)
		return -EINVAL;
	if (!memchr(in->event_name, 0, sizeof(in->event_name)))
		return -EINVAL;
	if ((in->flags & KCC_CFG_JOIN_UNIQUE) &&
	    (in->flags & KCC_CFG_JOIN_LONGEST))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(in->__reserved); i++)
		if (in->__reserved[i])
			return -EINVAL;
	*c = *in;

	if (!c->k)
		c->k = kcc_param_k;
	if (c->k > KCC_K_MAX && c->k != KCC_K_INF)
		return -EINVAL;

	if (c->target == KCC_TARGET_PID) {
		if (c->pid <= 0 || (c->flags & KCC_CFG_CGROUP))
			return -EINVAL;
	} else if (c->target == KCC_TARGET_ALL) {
		/* A cgroup's directory fd (KCC_CFG_CGROUP) may be 0. */
		if (c->pid < 0 || (c->pid && !(c->flags & KCC_CFG_CGROUP)))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	/* Probe what the session will open: CPU-wide or per-task events. */
	task = c->target == KCC_TARGET_PID;

	if (!c->max_bytes)
		c->max_bytes = kcc_param_max_bytes;
	if (c->max_bytes > ram / 2)
		return -EINVAL;
	if (!c->max_tasks)
		c->max_tasks = kcc_param_max_tasks;
	if (c->max_tasks > KCC_MAX_TASKS_MAX)
		return -EINVAL;
	if (!c->task_nodes)
		c->task_nodes = kcc_param_task_nodes;
	if (c->task_nodes < KCC_TASK_NODES_MIN ||
	    c->task_nodes > KCC_TASK_NODES_MAX)
		return -EINVAL;
	if (!c->stack_depth)
		c->stack_depth = kcc_param_stack_depth;
	if (c->stack_depth < 1 || c->stack_depth > KCC_INJECT_MAX_STACK)
		return -EINVAL;
	if (!c->burst_table)
		c->burst_table = kcc_param_burst_table ?: KCC_BURST_TABLE_DEF;
	if (!is_power_of_2(c->burst_table) ||
	    c->burst_table > KCC_BURST_TABLE_MAX)
		return -EINVAL;
	if (!c->burst_sig_depth)
		c->burst_sig_depth = kcc_param_burst_sig_depth;
	if (c->burst_sig_depth > KCC_INJECT_MAX_STACK)
		return -EINVAL;
	if (c->sample_period > KCC_PERIOD_MAX)
		return -EINVAL;

	switch (c->source) {
	case KCC_SOURCE_AUTO:
		s->source = kcc_g.lbr ? KCC_SOURCE_LBR : KCC_SOURCE_FP;
		break;
	case KCC_SOURCE_LBR:
		/* Any PMU whose event delivers branch stacks: probed below. */
		s->source = KCC_SOURCE_LBR;
		break;
	case KCC_SOURCE_FP:
		s->source = KCC_SOURCE_FP;
		break;
	case KCC_SOURCE_VALENCE:	/* fp for threads without an area */
		s->source = KCC_SOURCE_VALENCE;
		break;
	case KCC_SOURCE_INJECT:
		if (!kcc_param_inject)
			return -EPERM;
		s->source = KCC_SOURCE_INJECT;
		break;
	default:
		return -EINVAL;
	}
	c->source = s->source;

	/* Injected samples bring their own stacks, up to the uapi limit. */
	s->stack_cap = (s->source == KCC_SOURCE_INJECT ?
			KCC_INJECT_MAX_STACK : c->stack_depth) +
		       KCC_INJECT_MAX_BRANCHES + 1;
	s->frames_cap = s->stack_cap + KCC_INJECT_MAX_BRANCHES;

	ret = kcc_calls_resolve(s, in);
	if (ret)
		return ret;

	if (s->source == KCC_SOURCE_INJECT) {
		/* Injected samples come at no rate of the kernel's. */
		if (c->flags & KCC_CFG_FREQ)
			return -EINVAL;
		s->ev.type = ~0u;
		kcc_event_name(s, c->event_name, pmu);
		if (!c->sample_period)
			c->sample_period = 1;
		return 0;
	}

	/*
	 * Type 0 config 0 without KCC_CFG_EVENT asks for the default:
	 * cache misses, or cpu-clock where there is no PMU and the
	 * source is fp.
	 */
	dflt_event = !c->event_type && !c->event_config &&
		     !(c->flags & KCC_CFG_EVENT);
	if (dflt_event)
		c->event_config = PERF_COUNT_HW_CACHE_MISSES;
	switch (c->event_type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		break;
	case PERF_TYPE_SOFTWARE:
		/* perf's software events never carry a branch stack. */
		if (c->event_config != PERF_COUNT_SW_CPU_CLOCK &&
		    c->event_config != PERF_COUNT_SW_TASK_CLOCK)
			return -EINVAL;
		if (s->source == KCC_SOURCE_LBR && !s->calls_on)
			return -EINVAL;
		break;
	default:
		/* A PMU registered with a dynamic type (sysfs type file). */
		if (c->event_type < PERF_TYPE_MAX)
			return -EINVAL;
		break;
	}
	s->ev.type = c->event_type;
	s->ev.config = c->event_config;
	s->ev.config1 = c->event_config1;
	s->ev.config2 = c->event_config2;
	/* With a calls event, this one is sampled without records. */
	lbr = s->source == KCC_SOURCE_LBR && !s->calls_on;
	ret = kcc_probe_event(&s->ev, lbr, task, pmu, sizeof(pmu), NULL);
	if (ret && dflt_event && !lbr && kcc_no_pmu(ret)) {
		c->event_type = PERF_TYPE_SOFTWARE;
		c->event_config = PERF_COUNT_SW_CPU_CLOCK;
		s->ev.type = c->event_type;
		s->ev.config = c->event_config;
		ret = kcc_probe_event(&s->ev, false, task, pmu,
				      sizeof(pmu), NULL);
	}
	if (ret)
		return kcc_no_pmu(ret) ? -EOPNOTSUPP : ret;
	kcc_event_name(s, c->event_name, pmu);

	/*
	 * The period floors bound the handler's share of a CPU: each sample
	 * costs at most stack_depth user reads and KCC_INJECT_MAX_BRANCHES
	 * records, and comes at least KCC_CLOCK_PERIOD_MIN ns or
	 * kcc_param_period_min events apart.  A frequency is bounded as the
	 * clock's period is; the perf core throttles an event whose samples
	 * take too long.
	 */
	if (c->flags & KCC_CFG_FREQ) {
		if (!c->sample_period ||
		    c->sample_period > KCC_FREQ_MAX)
			return -EINVAL;
	} else if (kcc_is_clock(&s->ev)) {
		if (!c->sample_period)
			c->sample_period = kcc_param_period ?: KCC_CLOCK_PERIOD_DEF;
		if (c->sample_period < KCC_CLOCK_PERIOD_MIN)
			return -EINVAL;
	} else {
		if (!c->sample_period)
			c->sample_period = kcc_param_period ?: KCC_HW_PERIOD_DEF;
		if (c->sample_period < kcc_param_period_min)
			return -EINVAL;
	}
	if (c->sample_period > KCC_PERIOD_MAX)
		return -EINVAL;
	return 0;
}

static void kcc_counters_zero(struct kcc_session *s)
{
	s->consumed = 0;
	s->processed = 0;
	memset(s->dropped, 0, sizeof(s->dropped));
	memset(&s->retired, 0, sizeof(s->retired));
	kcc_handler_drops(s, s->base);
	s->ring_drops_seen = s->base[KCC_DROP_RING_FULL];
	s->map_drops = 0;
	s->work_ns = 0;
	s->work_batches = 0;
	s->wakeups_base = atomic64_read(&kcc_g.wakeups);
	kcc_valence_counters_zero(s);
}

/* ---- sessions ----------------------------------------------------------- */

static u32 kcc_session_new_id(void)
{
	do {
		kcc_g.next_id++;
	} while (!kcc_g.next_id || kcc_session_find(kcc_g.next_id));
	return kcc_g.next_id;
}

/*
 * CONFIGURE from @file (NULL: autostart): a new session, which replaces
 * the one @file owned unless that one is running (-EBUSY).  Permissions
 * are the caller's (kcc_dev.c).  Returns the session or an ERR_PTR:
 * -EBUSY beyond max_sessions, -EDQUOT beyond the caller's user_sessions.
 */
struct kcc_session *kcc_configure(struct file *file,
				  const struct kcc_config *cfg)
{
	struct kcc_session *s, *old = NULL, *it;
	int ret;

	list_for_each_entry(it, &kcc_g.sessions, node)
		if (file && it->owner == file)
			old = it;
	if (old && old->state == KCC_STATE_RUNNING)
		return ERR_PTR(-EBUSY);
	if (!old && kcc_g.nr_sessions >= kcc_param_max_sessions)
		return ERR_PTR(-EBUSY);
	if (!old && file && !kcc_user_room())
		return ERR_PTR(-EDQUOT);

	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->hc = alloc_percpu(struct kcc_hcount);
	if (!s->hc) {
		kvfree(s);
		return ERR_PTR(-ENOMEM);
	}
	ret = kcc_config_resolve(s, cfg);
	if (!ret && s->cfg.target == KCC_TARGET_PID) {
		/* In the namespace of the process that configures. */
		s->target = find_get_pid(s->cfg.pid);
		if (!s->target)
			ret = -ESRCH;
	}
	if (!ret && (s->cfg.flags & KCC_CFG_CGROUP)) {
		/* The caller's file: no path to resolve, as perf -G. */
		s->cgrp = kcc_cgroup_get_fd(s->cfg.pid);
		if (IS_ERR(s->cgrp)) {
			ret = PTR_ERR(s->cgrp);
			s->cgrp = NULL;
		}
	}
	if (ret) {
		free_percpu(s->hc);
		kvfree(s);
		return ERR_PTR(ret);
	}
	if (old)
		kcc_session_destroy(old);

	s->owner = file;
	s->uid = file ? current_euid() : GLOBAL_ROOT_UID;
	s->id = kcc_session_new_id();
	s->state = KCC_STATE_READY;
	s->stack_depth = s->cfg.stack_depth;
	hash_init(s->tasks);
	INIT_LIST_HEAD(&s->task_list);
	INIT_LIST_HEAD(&s->procs);
	INIT_LIST_HEAD(&s->readers);
	kcc_counters_zero(s);
	if (!kcc_g.nr_sessions) {
		raw_spin_lock_irq(&kcc_g.ev_lock);
		kcc_g.nr_ev = 0;
		kcc_g.ev_on = true;
		raw_spin_unlock_irq(&kcc_g.ev_lock);
	}
	list_add_tail(&s->node, &kcc_g.sessions);
	kcc_g.nr_sessions++;
	return s;
}

int kcc_start(struct kcc_session *s)
{
	int ret;

	if (s->state == KCC_STATE_RUNNING)
		return -EBUSY;
	s->state = KCC_STATE_RUNNING;
	WRITE_ONCE(s->running, true);
	kcc_maps_running(s, true);
	ret = kcc_events_start(s);
	if (ret) {
		WRITE_ONCE(s->running, false);
		kcc_maps_running(s, false);
		s->state = KCC_STATE_STOPPED;
		WRITE_ONCE(s->gen, s->gen + 1);
	}
	return ret;
}

/*
 * Samples taken before the stop are applied; anything that reaches the
 * rings later (an injection racing with the stop) is dropped as
 * KCC_DROP_STOPPED.
 */
void kcc_stop(struct kcc_session *s)
{
	if (s->state != KCC_STATE_RUNNING)
		return;
	kcc_events_stop(s);
	WRITE_ONCE(s->running, false);
	kcc_maps_running(s, false);
	kcc_drain();
	s->state = KCC_STATE_STOPPED;
	WRITE_ONCE(s->gen, s->gen + 1);
	/* No sample follows: the hybrid's pools go to their last bursts. */
	kcc_tasks_finish(s);
}

/* Frees every task, exited or not, whoever has read it. */
void kcc_reset(struct kcc_session *s)
{
	kcc_drain();
	kcc_tasks_free_all(s);
	kcc_maps_free_orphans(s, NULL, 0);
	WRITE_ONCE(s->gen, s->gen + 1);
	kcc_counters_zero(s);
}

void kcc_session_destroy(struct kcc_session *s)
{
	struct kcc_reader *r, *n;

	kcc_stop(s);
	list_del(&s->node);
	kcc_g.nr_sessions--;
	if (kcc_g.autostart == s)
		kcc_g.autostart = NULL;
	if (!kcc_g.nr_sessions) {
		raw_spin_lock_irq(&kcc_g.ev_lock);
		kcc_g.ev_on = false;
		kcc_g.nr_ev = 0;
		raw_spin_unlock_irq(&kcc_g.ev_lock);
	}
	/* Its records still in the rings find no session: discarded. */
	list_for_each_entry_safe(r, n, &s->readers, node) {
		list_del_init(&r->node);
		r->sess = NULL;
	}
	kcc_tasks_free_all(s);
	kcc_maps_free_orphans(s, NULL, 0);
	kcc_watch_session_free(s);
	put_pid(s->target);
	kcc_cgroup_put(s->cgrp);
	free_percpu(s->hc);
	kvfree(s);
}

/* ---- readers ------------------------------------------------------------ */

/*
 * Exited tasks are freed once a snapshot had them exited and every
 * reader attached now has taken such a snapshot (or on RESET).
 */
static void kcc_reap(struct kcc_session *s)
{
	struct kcc_reader *r;
	struct kcc_task *t;
	u64 min = U64_MAX;

	list_for_each_entry(r, &s->readers, node)
		min = min(min, r->seen);
	list_for_each_entry(t, &s->task_list, node)
		if (t->exit_seq && t->exit_seq <= min)
			t->delivered = true;
	kcc_tasks_reap_delivered(s);
}

void kcc_reader_attach(struct kcc_reader *r, struct kcc_session *s)
{
	kcc_reader_detach(r);
	r->sess = s;
	r->seen = 0;
	r->last_processed = 0;
	list_add_tail(&r->node, &s->readers);
	s->nr_readers++;
}

void kcc_reader_detach(struct kcc_reader *r)
{
	struct kcc_session *s = r->sess;

	if (!s)
		return;
	list_del_init(&r->node);
	r->sess = NULL;
	s->nr_readers--;
	/* What only this reader had yet to see can go. */
	kcc_reap(s);
}

void kcc_status_fill(struct kcc_session *s, struct kcc_status *st)
{
	const struct kcc_retired *rt = &s->retired;
	struct kcc_stitch_counts sc;
	struct kcc_stitch_calls ccalls;
	struct kcc_task *t;
	u64 hd[KCC_DROP_NR];
	int i;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->state = s->state;
	st->source = s->source;
	st->k = s->cfg.k;
	kcc_handler_drops(s, hd);
	st->samples = s->consumed;
	st->processed = s->processed;
	for (i = 0; i < KCC_DROP_NR; i++) {
		st->dropped[i] = s->dropped[i] + hd[i] - s->base[i];
		st->samples += hd[i] - s->base[i];
	}
	st->bursts_replayed = rt->bursts_replayed;
	st->bursts_skipped = rt->bursts_skipped;
	st->bursts_joined = rt->bursts_joined;
	st->branches = rt->branches;
	st->stitch_errors = rt->stitch_errors;
	st->node_drops = rt->node_drops;
	sc = rt->stitch;
	ccalls = rt->calls;
	list_for_each_entry(t, &s->task_list, node) {
		kcc_stitch_counts_add(&sc, &t->st.cnt);
		kcc_stitch_calls_add(&ccalls, &t->st.calls);
		st->bursts_replayed += t->st.bursts_replayed;
		st->bursts_skipped += t->st.bursts_skipped;
		st->bursts_joined += t->st.bursts_joined;
		st->branches += t->st.branches;
		st->stitch_errors += t->st.stitch_errors;
		st->node_drops += t->forest.drops;
		st->nodes += t->forest.live;
	}
	kcc_stitch_counts_export(st, &sc);
	kcc_stitch_calls_export(st, &ccalls);
	kcc_task_status(s, st);
	st->bytes = s->bytes;
	st->tasks = s->nr_tasks;
	st->tasks_exited = s->nr_exited;
	st->wakeups = atomic64_read(&kcc_g.wakeups) - s->wakeups_base;
	st->work_batches = s->work_batches;
	st->session_id = s->id;
	st->nr_readers = s->nr_readers;
	st->bytes_all = kcc_g.bytes;
	st->max_bytes_all = READ_ONCE(kcc_param_max_bytes);
	kcc_events_read(s, st);
	kcc_valence_status(s, st);
}

/* ---- the read() snapshot ----------------------------------------------- */

static size_t kcc_task_rec_size(const struct kcc_task *t)
{
	return sizeof(struct kcc_rec_task) + (size_t)kcc_task_nr_nodes(t) *
	       (sizeof(struct kcc_rec_node) + KCC_NR_CTRS * sizeof(u64));
}

static u8 *kcc_put_task(u8 *p, const struct kcc_task *t,
			struct pid_namespace *ns)
{
	struct kcc_rec_task *rt = (struct kcc_rec_task *)p;

	memset(rt, 0, sizeof(*rt));
	rt->hdr.type = KCC_REC_TASK;
	rt->hdr.size = kcc_task_rec_size(t);
	rt->pid = t->pid;
	rt->tgid = t->tgid;
	if (ns != &init_pid_ns) {
		rt->pid = pid_nr_ns(t->pid_ref, ns);
		rt->tgid = pid_nr_ns(t->tgid_ref, ns);
	}
	rt->start_time_ns = t->start;
	memcpy(rt->comm, t->comm, sizeof(rt->comm));
	rt->flags = t->flags | t->proc->image << KCC_TASK_IMAGE_SHIFT;
	rt->nr_nodes = kcc_task_nr_nodes(t);
	rt->samples = t->st.samples;
	rt->node_drops = t->forest.drops;
	rt->stack_drops = t->st.ksf.stack_drops;
	rt->stitch_errors = t->st.stitch_errors;
	rt->lost_charges = t->st.ksf.lost_charges;
	return kcc_task_put_nodes(p + sizeof(*rt), t);
}

static size_t kcc_cgroup_rec_size(const struct kcc_task *t)
{
	return t->cgroup_id ? sizeof(struct kcc_rec_cgroup) : 0;
}

static u8 *kcc_put_cgroup(u8 *p, const struct kcc_task *t)
{
	struct kcc_rec_cgroup *rc = (struct kcc_rec_cgroup *)p;

	if (!t->cgroup_id)
		return p;
	rc->hdr.type = KCC_REC_CGROUP;
	rc->hdr.size = sizeof(*rc);
	rc->cgroup_id = t->cgroup_id;
	return p + sizeof(*rc);
}

static void kcc_put_desc(struct kcc_metric_desc *d, u32 type, u64 config,
			 const char *name)
{
	memset(d, 0, sizeof(*d));
	d->type = type;
	d->config = config;
	strscpy(d->name, name, sizeof(d->name));
}

/*
 * Map records of @pr for a reader in @ns: its tgid there, none when the
 * process is not visible there.  Returns the end of what was written.
 */
static u8 *kcc_put_maps(u8 *p, const struct kcc_proc *pr,
			struct pid_namespace *ns)
{
	u32 off;

	if (ns == &init_pid_ns) {
		memcpy(p, pr->maps, pr->maps_len);
		return p + pr->maps_len;
	}
	if (!pr->ns_tgid)
		return p;
	memcpy(p, pr->maps, pr->maps_len);
	for (off = 0; off < pr->maps_len;) {
		struct kcc_rec_map *m = (struct kcc_rec_map *)(p + off);

		m->tgid = pr->ns_tgid;
		off += m->hdr.size;
	}
	return p + pr->maps_len;
}

/*
 * Everything the session of reader @r holds, in the stream format, in a
 * vmalloc()ed buffer of *@len bytes, with pids as the reader's pid
 * namespace sees them.  Exited tasks every reader has now seen are
 * freed.
 */
void *kcc_snapshot(struct kcc_reader *r, size_t *len)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct kcc_session *s = r->sess;
	struct kcc_stream_header *h;
	struct kcc_metric_desc *d;
	struct kcc_proc *pr;
	struct kcc_task *t;
	size_t size;
	struct kcc_rec *end;
	u8 *buf, *p;

	kcc_drain();
	kcc_tasks_check_alive(s);
	s->snap_seq++;
	list_for_each_entry(pr, &s->procs, node)
		pr->ns_tgid = 0;
	list_for_each_entry(t, &s->task_list, node) {
		if (t->flags & KCC_TASK_EXITED) {
			/* Its samples are over: its pool goes (kcc_stop()). */
			kcc_stitch_finish(&t->st);
			if (!t->exit_seq)
				t->exit_seq = s->snap_seq;
		}
		if (ns != &init_pid_ns && !t->proc->ns_tgid)
			t->proc->ns_tgid = pid_nr_ns(t->tgid_ref, ns);
	}

	size = sizeof(*h) + KCC_NR_CTRS * sizeof(*d);
	list_for_each_entry(t, &s->task_list, node)
		size += kcc_task_rec_size(t) + kcc_cgroup_rec_size(t) +
			kcc_valence_rec_size(t) +
			kcc_watch_rec_size(s, t);
	list_for_each_entry(pr, &s->procs, node)
		size += pr->maps_len;
	size += sizeof(struct kcc_rec);

	buf = vmalloc(size);
	if (!buf)
		return NULL;
	h = (struct kcc_stream_header *)buf;
	memset(h, 0, sizeof(*h));
	h->magic = KCC_STREAM_MAGIC;
	h->version = KCC_STREAM_VERSION;
	h->header_size = sizeof(*h) + KCC_NR_CTRS * sizeof(*d);
	if (s->source == KCC_SOURCE_LBR || s->source == KCC_SOURCE_INJECT)
		h->flags = KCC_HDR_CALLS_VALID;
	if (s->calls_on)
		h->flags |= KCC_HDR_CALLS_EVENT;
	if (s->calls_counter)
		h->flags |= KCC_HDR_CALLS_COUNTER;
	if (s->calls_hybrid)
		h->flags |= KCC_HDR_CALLS_HYBRID;
	if (s->calls_fallback)
		h->flags |= KCC_HDR_CALLS_FALLBACK;
	if (ns != &init_pid_ns)
		h->flags |= KCC_HDR_PID_NS;
	if (s->ev.br_flags || (s->calls_on && s->cev.br_flags))
		h->flags |= KCC_HDR_BR_FLAGS;
	if (s->ev.br_info || (s->calls_on && s->cev.br_info))
		h->flags |= KCC_HDR_BR_INFO;
	if (s->cfg.flags & KCC_CFG_FREQ)
		h->flags |= KCC_HDR_FREQ;
	h->k = s->cfg.k;
	h->source = s->source;
	h->nr_ctrs = KCC_NR_CTRS;
	h->lbr_depth = kcc_g.lbr_depth;
	h->sample_period = s->cfg.sample_period;
	h->time_ns = ktime_get_ns();
	kcc_status_fill(s, &h->status);

	d = (struct kcc_metric_desc *)(h + 1);
	if (s->calls_on || s->calls_counter)
		kcc_put_desc(&d[KCC_CTR_CALLS], s->cev.type, s->cev.config,
			     "calls");
	else
		kcc_put_desc(&d[KCC_CTR_CALLS], ~0u, 0, "calls");
	kcc_put_desc(&d[KCC_CTR_EVENTS], s->ev.type, s->ev.config, s->ev_name);
	kcc_put_desc(&d[KCC_CTR_SAMPLES], ~0u, 0, "samples");
	kcc_put_desc(&d[KCC_CTR_CALLS_VAR], ~0u, 0, "calls_var");
	p = (u8 *)(d + KCC_NR_CTRS);

	list_for_each_entry(t, &s->task_list, node) {
		struct kcc_rec_valence *v;
		struct kcc_rec_watch *w;

		p = kcc_put_task(p, t, ns);
		p = kcc_put_cgroup(p, t);
		v = (struct kcc_rec_valence *)p;
		p = kcc_valence_put(p, t);
		if (p != (u8 *)v && ns != &init_pid_ns) {
			v->pid = pid_nr_ns(t->pid_ref, ns);
			v->tgid = pid_nr_ns(t->tgid_ref, ns);
		}
		w = (struct kcc_rec_watch *)p;
		p = kcc_watch_put(s, t, p);
		/* Its pids as the task record has them. */
		if (p != (u8 *)w && ns != &init_pid_ns) {
			w->pid = pid_nr_ns(t->pid_ref, ns);
			w->tgid = pid_nr_ns(t->tgid_ref, ns);
		}
	}
	list_for_each_entry(pr, &s->procs, node)
		p = kcc_put_maps(p, pr, ns);
	end = (struct kcc_rec *)p;
	end->type = KCC_REC_END;
	end->size = sizeof(*end);
	/* Map records left out make the stream shorter than reserved. */
	size = (u8 *)(end + 1) - buf;

	r->seen = s->snap_seq;
	r->last_processed = s->processed;
	kcc_reap(s);
	*len = size;
	return buf;
}
