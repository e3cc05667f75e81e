/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_state.h - the state the rooms of kcc.ko share: the ring record,
 * the session, its tasks and processes, and the module-wide state
 * (kcc_state.c).  It sits above kcc_param.h and below every other room
 * (Documentation/kcc-module.rst, "Layout"): only data and the lookups
 * of kcc_state.c, no room's logic.
 *
 * Data flow:
 *
 *   perf overflow handler (NMI or hardirq)  KCC_IOC_INJECT (task)
 *        |  bounded copy of stack + branches      |
 *        |  tagged with its session's id          |  tagged 0
 *        v                                        v
 *   per-CPU ring, one per context level (task, irq, nmi): one writer,
 *   shared by every session
 *        |  batched hand-off: irq_work_queue() when the ring passes half
 *        |  full or a process new to it is sampled (-> queue_work()), or
 *        |  when the flush timer is idle (-> queue_delayed_work(),
 *        |  flush_ms); batch=0: one per sample
 *        v
 *   kcc_work (process context, kcc_g.lock held): per-task k-SF updates
 *   of the session the record names (injected ones: every running inject
 *   session whose target holds the injecting thread)
 *        |
 *        v
 *   read(): snapshot of the file's session built under kcc_g.lock,
 *   served from the file's vmalloc buffer
 */
#ifndef KCC_STATE_H
#define KCC_STATE_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/sched.h>
#include <linux/kcc.h>

#include "kcc_forest.h"
#include "kcc_stitch.h"

/* ---- ring records (kcc_sample.c writes them, kcc_task.c applies them) -- */

#define KCC_RREC_SAMPLE		1
#define KCC_RREC_PAD		2
#define KCC_RREC_VALENCE	3	/* s.nr_stack words: a Valence key */
/* s.calls: the task's calls since its last sample, at a switch-out */
#define KCC_RREC_CARRY		4

/* A sample in a ring: who it is charged to, then the uapi sample. */
struct kcc_rrec {
	u32 size;		/* bytes, this header included, multiple of 8 */
	u32 kind;		/* KCC_RREC_* */
	u32 pid;
	u32 tgid;
	u64 start;		/* task start_boottime: (pid, start) is the key */
	u64 leader_start;	/* its thread group leader's */
	u32 gen;		/* its session's gen when taken */
	u32 sid;		/* session id, 0: injected */
	u32 exec_id;		/* its self_exec_id: which image */
	u32 __pad;
	char comm[TASK_COMM_LEN];
	struct kcc_sample s;	/* then the stack and branch arrays */
};

/* Handler-side counters of one session on one CPU (this_cpu_inc()). */
#define KCC_VC_NR		6	/* Valence handler counts (kcc_valence.c) */

struct kcc_hcount {
	u64 drops[KCC_DROP_NR];
	u64 throttles;		/* overflows that throttled their event */
	u64 calls_unread;	/* samples whose calls counter was not counting */
	u64 calls_lost;		/* calls of switch-outs no ring could take */
	u64 br_wrong_path;	/* branch records left out: on a wrong path */
	u64 cgroup_other;	/* samples outside the session's cgroup */
	u64 valence[KCC_VC_NR];
};

/* ---- task events from the sched tracepoints (kcc_task.c) --------------- */
#define KCC_TEV_EXIT		1
#define KCC_TEV_EXEC		2
#define KCC_TEV_MAX		512

struct kcc_tev {
	u32 kind;
	u32 pid;		/* EXIT: thread; EXEC: thread group */
	u32 exec_id;		/* the image it ends or starts */
	u64 start;
};

/* ---- the session (kcc_session.c) --------------------------------------- */

/* A perf event as perf_event_attr names it. */
struct kcc_evsel {
	u32 type;		/* PERF_TYPE_* or a dynamic PMU type */
	u64 config;
	u64 config1;
	u64 config2;
	/*
	 * With a branch stack: the PMU refused PERF_SAMPLE_BRANCH_NO_FLAGS
	 * and NO_CYCLES (AMD's amd/lbr.c does), so the records are asked
	 * for with their flags and cycles (kcc_probe_event()).
	 */
	bool br_flags;
	/* lbr_info=1 when the session was configured: asked for them. */
	bool br_info;
};

struct kcc_proc {
	struct list_head node;
	u32 tgid;
	u32 nr_tasks;		/* task states pointing here */
	u32 ns_tgid;		/* snapshot scratch: tgid in the reader's ns */
	u64 start;		/* group leader start_boottime */
	u32 exec_id;		/* self_exec_id of the image */
	u32 image;		/* images of (tgid, start) seen before it */
	u8 *maps;		/* packed struct kcc_rec_map */
	u32 maps_len;
	u32 maps_cap;
	u32 nr_maps;
	struct kcc_task *fold;	/* exited threads folded (kcc_task.c) */
};

struct kcc_task {
	struct hlist_node hnode;
	struct list_head node;
	u32 pid;
	u32 tgid;
	u64 start;
	u32 exec_id;		/* self_exec_id of its image */
	char comm[TASK_COMM_LEN];
	u64 cgroup_id;		/* system-wide sessions: KCC_REC_CGROUP, 0 */
	u32 flags;		/* KCC_TASK_* */
	bool delivered;		/* exited and handed to every reader: free it */
	u64 exit_seq;		/* first snapshot that had it exited, 0: none */
	struct pid *pid_ref;	/* its pid and tgid, to translate them into */
	struct pid *tgid_ref;	/* a reader's namespace, NULL if seen dead */
	size_t bytes;		/* charged to the session */
	struct kcc_proc *proc;
	u64 budget_drain;	/* work_batches of the drain charged below */
	u64 budget_ns;		/* worker time used in that drain */
	struct kcc_forest forest;
	struct kcc_burst burst;
	struct kcc_stitch st;
	struct kcc_vtab *vtab;	/* Valence encodings, or NULL */
	struct kcc_watch_task *watch;	/* watched contexts (kcc_watch.c) */
	/*
	 * Memory that follows the work (kcc_task.c): the forest's block
	 * grows from the session budget, and a forest that cannot grow
	 * keeps its hot contexts (prune).  bytes above counts both.
	 */
	void *fmem;
	size_t fbytes;
	struct kcc_fprune *prune;
	size_t pbytes;
};

#define KCC_TASK_HASH_BITS	12

/* Totals of freed tasks, so that status counters never go back. */
struct kcc_retired {
	u64 bursts_replayed;
	u64 bursts_skipped;
	u64 bursts_joined;
	u64 branches;
	u64 stitch_errors;
	u64 node_drops;
	struct kcc_stitch_counts stitch;
	struct kcc_stitch_calls calls;	/* counted calls (ABI 1.2) */
	/* Memory that follows the work (kcc_task.c), since configure/reset */
	u64 tasks_created;
	u64 tasks_folded;
	u64 forests_pruned;
	u64 nodes_evicted;	/* by forests since freed */
	u32 eps_ppm_max;	/* largest epsilon of the pruned forests */
};

struct kcc_session;

/* A file's view of the session it reads (kcc_dev.c). */
struct kcc_reader {
	struct list_head node;		/* in its session's readers */
	struct kcc_session *sess;	/* NULL: attached to none */
	u64 seen;			/* snap_seq of its last snapshot */
	u64 last_processed;		/* for poll: processed at that time */
};

struct kcc_session {
	struct list_head node;	/* kcc_g.sessions */
	u32 id;			/* never 0, never reused while loaded */
	kuid_t uid;		/* creator's euid: its readers need no cap */
	struct file *owner;	/* NULL: the autostart session */
	struct pid *target;	/* KCC_TARGET_PID: the process */
	struct cgroup *cgrp;	/* KCC_CFG_CGROUP: the tasks kept */
	/* Read by the handlers, whose events carry the session. */
	bool running;
	u32 gen;		/* bumped at stop and reset */
	u32 stack_depth;	/* user frames per sample */
	struct kcc_hcount __percpu *hc;
	u64 vbase[KCC_VC_NR];	/* Valence handler counts at configure/reset */
	u64 vfull_retired;	/* Valence encodings of freed tasks not kept */
	struct list_head readers;	/* struct kcc_reader */
	u32 nr_readers;
	u64 snap_seq;		/* snapshots taken */
	u32 state;		/* KCC_STATE_* */
	struct kcc_config cfg;	/* as resolved: defaults filled in */
	u32 source;		/* never AUTO */
	struct kcc_evsel ev;	/* event actually sampled */
	char ev_name[KCC_METRIC_NAME_LEN];
	/* Two events: the calls event takes the branch stacks. */
	struct kcc_evsel cev;
	bool calls_on;		/* cev is sampled beside ev */
	bool calls_counter;	/* cev is counted beside ev, read at its samples */
	bool calls_hybrid;	/* cev sampled, and read at ev's samples too */
	bool calls_fallback;	/* cev was asked for, could not be opened */
	struct perf_event **cevents;	/* one per CPU or thread, like events */
	u32 nr_cevents;
	u32 stack_cap;		/* shadow stack of each task's k-SF */
	u32 frames_cap;		/* stitching scratch */

	struct perf_event **events;
	u32 nr_events;
	/* Totals of released events (status ev_*): since configure. */
	u64 ev_count;
	u64 ev_enabled;
	u64 ev_running;
	u32 ev_nr;
	u32 ev_errors;
	u64 throttles_base;	/* handler throttles at configure */
	u64 calls_left;		/* released calls counters' counts (after last samples) */
	u32 ctr_slot;		/* system-wide calls counters: their slot + 1, or 0 */

	DECLARE_HASHTABLE(tasks, KCC_TASK_HASH_BITS);
	struct list_head task_list;
	struct list_head procs;

	/* Worker-side counters; handler-side ones live in the rings. */
	u64 consumed;		/* ring records looked at */
	u64 processed;
	u64 dropped[KCC_DROP_NR];
	u64 base[KCC_DROP_NR];	/* handler drops at configure/reset */
	u64 ring_drops_seen;	/* RING_FULL total at the last drain */
	struct kcc_retired retired;
	u64 bytes;
	u32 nr_tasks;
	u32 nr_exited;
	u64 map_drops;		/* mappings not recorded (caps) */
	u64 work_ns;		/* time spent applying samples */
	u64 work_batches;
	u64 work_n0;		/* consumed at the start of a drain */
	u64 wakeups_base;	/* kcc_g.wakeups at configure/reset */
	/* Watched contexts (kcc_watch.c): the set, tasks left without arrays. */
	struct kcc_watch_set *watch;
	u64 watch_task_drops;
	/* Memory that follows the work (kcc_task.c) */
	u32 nr_foldable;	/* exited, not folded, not a fold itself */
	u64 alive_check_batch;	/* work_batches of the last pressure check */
	bool fold_idle;		/* nothing to fold until the next drain */
};

/* ---- module-wide state ------------------------------------------------- */
struct kcc_global {
	struct mutex lock;		/* the sessions, their tasks and counters */
	struct list_head sessions;
	u32 nr_sessions;
	u32 next_id;
	struct kcc_session *autostart;	/* the default session of readers */
	u64 bytes;			/* every session's: the shared budget */
	struct workqueue_struct *wq;
	struct work_struct work;
	/* The flush timer of the batched hand-off (kcc_sample.c). */
	struct delayed_work flush;
	unsigned long flush_armed;	/* bit 0: flush queued or being armed */
	atomic64_t wakeups;		/* worker wakeups by the handlers */
	wait_queue_head_t wait;

	bool lbr;			/* an LBR event could be created */
	u32 lbr_depth;

	raw_spinlock_t ev_lock;		/* tracepoint probes -> worker */
	bool ev_on;
	u32 nr_ev;
	u64 ev_lost;
	u64 ev_pushed;			/* under ev_lock */
	atomic64_t ev_unrelated;	/* exits and execs of no session's */
	struct kcc_tev ev[KCC_TEV_MAX];
};

extern struct kcc_global kcc_g;

/* kcc_state.c */
void kcc_kick(void);
struct kcc_session *kcc_session_find(u32 id);
struct kcc_session *kcc_session_owned(struct file *file);

#endif /* KCC_STATE_H */
