/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcc.h - the contract between kcc.ko and its users: the ioctls of
 * /dev/kcc, the records of its read() stream and the synthetic samples
 * accepted by KCC_IOC_INJECT.  Documentation/kcc-abi.rst describes each
 * command and record.
 *
 * Rules: only fixed-size types; pointers travel as __u64; every struct
 * starts with its size so it can grow by appending (the kernel accepts a
 * shorter struct from an older user, with the missing tail read as zero,
 * and a longer one when the extra tail is zero); every reserved field must
 * be zero (-EINVAL otherwise).  Unknown commands return -ENOTTY.
 */
#ifndef _UAPI_LINUX_KCC_H
#define _UAPI_LINUX_KCC_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KCC_ABI_MAJOR		1	/* incompatible changes */
#define KCC_ABI_MINOR		9	/* compatible additions */

#define KCC_DEVICE		"/dev/kcc"
/*
 * Free in Documentation/userspace-api/ioctl/ioctl-number.rst of Linux
 * 6.1 and 6.12 (0xCC, used before ABI 1.1 was released, is the pseries
 * VMC driver's).
 */
#define KCC_IOC_MAGIC		0xD4

/* k = infinity: the module keeps full calling context trees. */
#define KCC_K_INF		0xffffffffu
#define KCC_K_MAX		64	/* largest finite k accepted */

#define KCC_METRIC_NAME_LEN	24	/* metric and event names, NUL included */

/* ---- sources of samples and branch records -------------------------- */
#define KCC_SOURCE_AUTO		0	/* lbr when available, else fp */
#define KCC_SOURCE_LBR		1	/* PMU event + its branch stacks (calls, returns) */
#define KCC_SOURCE_FP		2	/* sampled event + frame-pointer walk */
#define KCC_SOURCE_INJECT	3	/* KCC_IOC_INJECT only (inject=1 param) */

/* ---- targets --------------------------------------------------------- */
#define KCC_TARGET_PID		0	/* one process, its threads and children */
#define KCC_TARGET_ALL		1	/* every task on every CPU */

/*
 * Counters of a node: calls first, then the metrics, in this order.  The
 * stream header repeats them as descriptors so readers need not hardcode.
 */
#define KCC_CTR_CALLS		0	/* activations seen in replayed bursts */
#define KCC_CTR_EVENTS		1	/* sampled event count (e.g. misses) */
#define KCC_CTR_SAMPLES		2	/* samples attributed to the context */
/*
 * ABI 1.4: the variance of the calls estimate ("calls_var").  A burst
 * weighted w (N / C when it holds C call records of N calls, times
 * adaptive bursting's 1/RR) adds, at each location it counts n
 * activations at, y (y - n) with y = n w their weights summed: the
 * Horvitz-Thompson variance of the burst taken as one cluster with
 * probability 1 / w.  0 where every count was exact; 2^64 - 1: no bound
 * (saturated).  Documentation/fidelity.rst, "Error bars".
 */
#define KCC_CTR_CALLS_VAR	3
#define KCC_NR_CTRS		4
/* Counters of a watched context (struct kcc_rec_watch): calls, events, samples. */
#define KCC_WATCH_NR_CTRS	3

/* ---- commands: identification ---------------------------------------- */

struct kcc_version {
	__u32 size;		/* In: sizeof(struct kcc_version) */
	__u32 major;		/* Out: KCC_ABI_MAJOR */
	__u32 minor;		/* Out: KCC_ABI_MINOR */
	__u32 lbr_depth;	/* Out: LBR entries per CPU, 0 if none */
	__u32 sources;		/* Out: bit (1 << KCC_SOURCE_*) per source usable */
	__u32 __reserved;	/* In/Out: zero */
};

#define KCC_IOC_VERSION		_IOWR(KCC_IOC_MAGIC, 0x00, struct kcc_version)

/* ---- commands: session control ---------------------------------------- */

#define KCC_CFG_KERNEL		(1u << 0)	/* reserved: kernel frames, not yet */
/*
 * Joining consecutive bursts of a task whose LBR windows overlap (only
 * possible when samples are fewer than LBR-depth branches apart).  Off by
 * default: records carry no time, so at ordinary periods every "overlap"
 * found is a coincidence of repeated records and joining would lose
 * calls.  UNIQUE joins only when a single overlap fits; LONGEST takes the
 * longest that fits.  At most one of the two.
 */
#define KCC_CFG_JOIN_UNIQUE	(1u << 1)
#define KCC_CFG_JOIN_LONGEST	(1u << 2)
/*
 * event_type and event_config name the event even when both are zero
 * (PERF_TYPE_HARDWARE/PERF_COUNT_HW_CPU_CYCLES).  Without it, 0/0 means
 * the default: cache misses, or cpu-clock where there is no PMU.
 */
#define KCC_CFG_EVENT		(1u << 3)
/*
 * ABI 1.3: sample_period is a frequency, samples per second of each
 * thread (or CPU), 1 .. KCC_FREQ_MAX: the perf core adjusts the period
 * to it (perf_event_attr.freq), and each sample charges the period it
 * came at.  Not for the calls event of two-event sessions.
 */
#define KCC_CFG_FREQ		(1u << 4)
#define KCC_FREQ_MAX		100000
/*
 * ABI 1.7, with KCC_TARGET_ALL: only the tasks of one cgroup v2 and of
 * its descendants, as perf's PERF_FLAG_PID_CGROUP: pid holds a file
 * descriptor of the cgroup's directory in the cgroup2 file system.  The
 * events still count on every CPU; samples of other tasks are counted
 * in kcc_status.cgroup_other and kept nowhere.
 */
#define KCC_CFG_CGROUP		(1u << 5)
#define KCC_CFG_FLAGS_ALL	(KCC_CFG_JOIN_UNIQUE | KCC_CFG_JOIN_LONGEST | \
				 KCC_CFG_EVENT | KCC_CFG_FREQ | KCC_CFG_CGROUP)

/*
 * A zero field means "the module default" (see the module parameters)
 * wherever a zero value would make no sense.
 */
struct kcc_config {
	__u32 size;		/* In: sizeof(struct kcc_config) */
	__u32 flags;		/* In: KCC_CFG_*, must be within KCC_CFG_FLAGS_ALL */
	__u32 k;		/* In: slab height 1..KCC_K_MAX or KCC_K_INF */
	__u32 source;		/* In: KCC_SOURCE_* */
	__u32 target;		/* In: KCC_TARGET_* */
	/* In: process for KCC_TARGET_PID, cgroup fd for KCC_CFG_CGROUP, else 0 */
	__s32 pid;
	__u32 event_type;	/* In: perf_event_attr.type (PERF_TYPE_*) */
	__u32 __reserved0;	/* In: zero */
	__u64 event_config;	/* In: perf_event_attr.config */
	__u64 sample_period;	/* In: events per sample, 0 = default */
	__u64 max_bytes;	/* In: cap on all forest memory, 0 = default */
	__u32 max_tasks;	/* In: tasks with a forest, 0 = default */
	__u32 task_nodes;	/* In: nodes per task forest, 0 = default */
	__u32 stack_depth;	/* In: user frames walked per sample, 0 = default */
	/*
	 * In: adaptive bursting: re-enable 1 in N bursts of already-seen
	 * contexts, weighted N; 0 = off, every burst replayed.
	 */
	__u32 burst_rr_inv;
	__u32 burst_table;	/* In: history table entries (power of 2), 0 = default */
	__u32 burst_sig_depth;	/* In: frames hashed into a signature, 0 = default */
	__u64 __reserved[4];	/* In: zero */
	/* ABI 1.1: events of any PMU (event_type may be a dynamic PMU type) */
	__u64 event_config1;	/* In: perf_event_attr.config1 */
	__u64 event_config2;	/* In: perf_event_attr.config2 */
	char event_name[KCC_METRIC_NAME_LEN]; /* In: metric name or "", NUL-terminated */
	/*
	 * Two events (LBR source): with KCC_CALLS_EVENT, a second sampled
	 * event, retired calls, takes the branch stacks and gives the
	 * calls counter at its own period; the event above is sampled
	 * without records and only charges its events to the sampled
	 * stack.  Where the calls event cannot be opened the session
	 * falls back to the one event (KCC_HDR_CALLS_FALLBACK).
	 */
	__u32 calls_flags;		/* In: KCC_CALLS_* */
	__u32 calls_event_type;		/* In: perf_event_attr.type */
	__u64 calls_event_config;	/* In: perf_event_attr.config */
	__u64 calls_event_config1;	/* In: perf_event_attr.config1 */
	__u64 calls_sample_period;	/* In: calls per sample, 0 = default */
};

#define KCC_CALLS_EVENT		(1u << 0)	/* the calls_* fields name an event */
/*
 * ABI 1.3, with KCC_CALLS_EVENT: the calls event is not sampled but
 * counted beside the sampled event, on the same thread (or CPU), and
 * read at each of its samples: the sampled event keeps its branch
 * stacks, and each sample carries the calls since the thread's
 * previous one (KCC_SAMPLE_CALLS).  calls_sample_period must be zero.
 */
#define KCC_CALLS_COUNTER	(1u << 1)
/*
 * ABI 1.5, with KCC_CALLS_EVENT, the hybrid estimate: the calls event is
 * sampled with branch stacks at calls_sample_period and the sampled
 * event keeps its own; the calls event's count, taken and zeroed at
 * every sample of either, gives each the calls since the thread's
 * previous one.  The sampled event's bursts count their newest records
 * exactly and pool the calls above them (KCC_SAMPLE_CALLS_POOL); the
 * calls event's bursts, one every so many calls wherever the time
 * goes, spread the pool (KCC_SAMPLE_CALLS_DRAW).  Per thread
 * (KCC_TARGET_PID) only; not with KCC_CALLS_COUNTER.  ABI 1.9: where
 * the calls event can be counted but not sampled, the session counts it
 * as KCC_CALLS_COUNTER does (KCC_HDR_CALLS_COUNTER and
 * KCC_HDR_CALLS_FALLBACK in the stream header).
 */
#define KCC_CALLS_HYBRID	(1u << 2)
#define KCC_CALLS_FLAGS_ALL	(KCC_CALLS_EVENT | KCC_CALLS_COUNTER | \
				 KCC_CALLS_HYBRID)

#define KCC_IOC_CONFIGURE	_IOW(KCC_IOC_MAGIC, 0x01, struct kcc_config)
#define KCC_IOC_START		_IO(KCC_IOC_MAGIC, 0x02)
#define KCC_IOC_STOP		_IO(KCC_IOC_MAGIC, 0x03)
/* Drop every forest and counter of the session; the configuration stays. */
#define KCC_IOC_RESET		_IO(KCC_IOC_MAGIC, 0x04)

/* ---- commands: status ------------------------------------------------- */

/* Why a sample did not reach a forest.  Indices of kcc_status.dropped[]. */
#define KCC_DROP_RING_FULL	0	/* per-CPU ring full in the handler */
#define KCC_DROP_NO_TASK	1	/* task gone before processing */
#define KCC_DROP_TASK_CAP	2	/* max_tasks reached */
#define KCC_DROP_MEM_CAP	3	/* max_bytes reached for a new forest */
#define KCC_DROP_BAD_SAMPLE	4	/* malformed injected sample */
#define KCC_DROP_NO_STACK	5	/* empty user stack (kernel thread, ...) */
#define KCC_DROP_STOPPED	6	/* arrived after stop or reset */
/* Worker time budget: the task used its share of one drain (task_budget_us) */
#define KCC_DROP_BUDGET		7
#define KCC_DROP_NR		8

#define KCC_STATE_IDLE		0	/* no configuration */
#define KCC_STATE_READY		1	/* configured, not sampling */
#define KCC_STATE_RUNNING	2
#define KCC_STATE_STOPPED	3

struct kcc_status {
	__u32 size;		/* In: sizeof(struct kcc_status) */
	__u32 state;		/* Out: KCC_STATE_* */
	__u32 source;		/* Out: source in use (never AUTO once configured) */
	__u32 k;		/* Out: configured k */
	__u64 samples;		/* Out: samples taken by the handlers */
	__u64 processed;	/* Out: samples applied to a forest */
	__u64 dropped[KCC_DROP_NR]; /* Out: samples dropped, by KCC_DROP_* */
	__u64 bursts_replayed;	/* Out: bursts replayed into a forest */
	__u64 bursts_skipped;	/* Out: bursts skipped by adaptive bursting */
	__u64 bursts_joined;	/* Out: bursts overlapping the previous one */
	__u64 branches;		/* Out: branch records replayed */
	__u64 stitch_errors;	/* Out: bursts inconsistent with the stack */
	__u64 nodes;		/* Out: forest nodes in use, all tasks */
	__u64 node_drops;	/* Out: node creations refused (forest full) */
	__u64 bytes;		/* Out: forest memory allocated */
	__u32 tasks;		/* Out: tasks with a forest */
	__u32 tasks_exited;	/* Out: of which have exited */
	__u64 __reserved[4];	/* Out: zero */
	/* ABI 1.1: the sampled perf events, summed over all of them */
	__u64 ev_config1;	/* Out: perf_event_attr.config1 of the event */
	__u64 ev_config2;	/* Out: perf_event_attr.config2 of the event */
	__u64 ev_count;		/* Out: events counted (perf_event_read_value()) */
	__u64 ev_enabled_ns;	/* Out: time the events were enabled */
	__u64 ev_running_ns;	/* Out: time they counted: less when descheduled */
	__u64 ev_throttles;	/* Out: overflows that throttled an event until a tick */
	__u64 ev_depth_capped;	/* Out: samples whose stack walk hit stack_depth */
	__u32 ev_nr;		/* Out: perf events opened (one per CPU or thread) */
	__u32 ev_errors;	/* Out: of which in the ERROR state: never counted */
	/* Out: stitching repairs and drops by reason (Documentation/stitching.rst) */
	__u64 stitch_leaf_repaired;	/* Out: sampled routine's caller restored from its call */
	__u64 stitch_walk_repaired;	/* Out: a deeper frameless routine's caller restored */
	__u64 stitch_walk_cut;		/* Out: walks cut under [unknown] where inconsistent */
	__u64 stitch_skid_repaired;	/* Out: sampled frames that returned after the regs */
	__u64 stitch_unrecorded;	/* Out: frames no call record made (skid, signal) */
	__u64 stitch_unmatched_return;	/* Out: returns whose frame the older call did not make */
	__u64 stitch_far_skipped;	/* Out: records not call/return or with kernel addresses */
	__u64 stitch_below_walk;	/* Out: calls undone below the walk's bottom frame */
	/* Batched hand-off: how often the handlers woke the worker */
	__u64 wakeups;		/* Out: worker wakeups (watermark, new process, flush timer) */
	__u64 work_batches;	/* Out: worker runs that applied samples */
	/*
	 * Several sessions: each configuring file owns one; the module
	 * parameter max_bytes is the budget all of them share.
	 */
	__u32 session_id;	/* Out: id of the session (KCC_IOC_ATTACH) */
	__u32 nr_readers;	/* Out: files attached to read it */
	__u64 bytes_all;	/* Out: forest memory of every session */
	__u64 max_bytes_all;	/* Out: the budget they share */
	/*
	 * Memory that follows the work: forests grow from the max_bytes
	 * budget, exited threads are folded into their process's forest
	 * and a forest that cannot grow keeps its hot contexts
	 * (Space-Saving, the HCCT's phi and epsilon; kcc-abi.rst).
	 */
	__u64 max_bytes;	/* Out: the budget that bytes is kept under */
	__u64 tasks_created;	/* Out: task forests created since configure */
	__u64 tasks_folded;	/* Out: exited threads folded (KCC_TASK_FOLDED) */
	__u64 forests_pruned;	/* Out: forests keeping hot contexts only */
	__u64 nodes_evicted;	/* Out: cold nodes deleted by those forests */
	__u32 hcct_phi_ppm;	/* Out: phi of the guarantee, ppm; 0: none pruned */
	__u32 hcct_eps_ppm;	/* Out: the largest epsilon of those forests, ppm */
	/*
	 * Valence source (KCC_SOURCE_VALENCE): samples read from the
	 * thread's registered area, and why others were not.  Torn, bad,
	 * fault and overflow samples are not taken: they are not in
	 * samples or dropped[].
	 */
	__u64 valence_samples;		/* Out: encodings read and queued */
	__u64 valence_fallback;		/* Out: no area registered: fp walk */
	__u64 valence_torn;		/* Out: odd or changing seq */
	__u64 valence_bad;		/* Out: wrong size or lengths out of bounds */
	__u64 valence_fault;		/* Out: area not readable (unmapped) */
	__u64 valence_overflow;		/* Out: rec_over set: no exact encoding */
	__u64 valence_table_full;	/* Out: encodings a task's table could not keep */
	__u64 valence_entries;		/* Out: distinct encodings held, all tasks */
	/*
	 * ABI 1.2: calls counted at the samples (KCC_SAMPLE_CALLS).  A
	 * burst whose count fits its call records counts only the newest
	 * (exact); one with fewer records than calls is weighted to add
	 * up to the count (scaled).  The forests' calls from counted
	 * samples are calls_exact + calls_scaled.
	 */
	__u64 calls_samples;		/* Out: samples that carried a count */
	__u64 calls_counter;		/* Out: calls the counts add up to */
	__u64 calls_exact;		/* Out: counted once each (joined windows) */
	__u64 calls_scaled;		/* Out: estimated: weighted over fewer records */
	__u64 calls_unplaced;		/* Out: in no replayed burst (no call record, error) */
	__u64 calls_bursts_exact;	/* Out: bursts whose count fit their records */
	__u64 calls_bursts_scaled;	/* Out: bursts weighted to their count */
	/*
	 * ABI 1.3, a calls counter (KCC_CALLS_COUNTER): the calls it saw
	 * after each thread's last sample, which no sample carries, and
	 * the samples that carried no count because the counter was not
	 * counting there (multiplexed out on a busy PMU).
	 */
	__u64 calls_after_last;		/* Out: counted after the last samples */
	__u64 calls_unread;		/* Out: samples without a count: counter not running */
	/*
	 * ABI 1.6: branch records the PMU tagged as on a wrong path
	 * (PERF_BR_SPEC_WRONG_PATH: AMD keeps speculative entries), left
	 * out of the samples.
	 */
	__u64 br_wrong_path;		/* Out: records left out */
	/* ABI 1.7: samples outside a KCC_CFG_CGROUP session's cgroup */
	__u64 cgroup_other;		/* Out: samples of other tasks, not kept */
};

#define KCC_IOC_STATUS		_IOWR(KCC_IOC_MAGIC, 0x05, struct kcc_status)

/* ---- commands: several sessions and their readers --------------------- */

/*
 * Read session @session_id from now on: STATUS, read() and poll() of
 * this file concern it.  0 names the session this file owns, or, when
 * it owns none, the one autostart=1 made.  Reading another user's
 * session needs CAP_PERFMON (or CAP_SYS_ADMIN).  A file is attached to
 * the session it configures, and to the default one at its first
 * read() or poll() if it is attached to none.
 */
struct kcc_attach {
	__u32 size;		/* In: sizeof(struct kcc_attach) */
	__u32 session_id;	/* In: KCC_STATUS's session_id, or 0 */
	__u64 __reserved;	/* In: zero */
};

#define KCC_IOC_ATTACH		_IOW(KCC_IOC_MAGIC, 0x0A, struct kcc_attach)

/* ---- commands: synthetic samples (tests) ------------------------------ */

/* Branch kinds of struct kcc_branch. */
#define KCC_BR_OTHER		0
#define KCC_BR_CALL		1	/* direct or indirect call */
#define KCC_BR_RET		2	/* return */

struct kcc_branch {
	__u64 from;		/* address of the branch instruction */
	__u64 to;		/* its target */
	__u32 kind;		/* KCC_BR_* */
	__u32 __reserved;	/* zero */
};

#define KCC_SAMPLE_TRUNCATED	(1u << 0)	/* stack walk stopped at a cap or fault */
/*
 * ABI 1.2: calls holds the calls the task retired since its previous
 * sample (a calls counter read at the sample, or the period of a calls
 * event).  Without it calls is zero and a burst counts whole.
 */
#define KCC_SAMPLE_CALLS	(1u << 1)
/* With KCC_SAMPLE_CALLS: more calls than fit; calls is 0xffffffff. */
#define KCC_SAMPLE_CALLS_SAT	(1u << 2)
/*
 * ABI 1.5, with KCC_SAMPLE_CALLS, the hybrid estimate: the calls above
 * the burst's call records are not weighted into this burst but kept in
 * the task's pool (CALLS_POOL), and a sample of the calls event, taken
 * every so many calls whatever the code does, spreads the pool over its
 * own call records (CALLS_DRAW).  CALLS_DRAW marks every counted
 * sample of the calls event (two events as well): a burst taken at a
 * retired call, whose weighted calls go to its newest call records.
 * A burst that fits counts exactly as without them; the pool's calls
 * go where the calls event's samples fall, not where the sampled
 * event's do.
 */
#define KCC_SAMPLE_CALLS_POOL	(1u << 3)
#define KCC_SAMPLE_CALLS_DRAW	(1u << 4)
#define KCC_SAMPLE_FLAGS_ALL	(KCC_SAMPLE_TRUNCATED | KCC_SAMPLE_CALLS | \
				 KCC_SAMPLE_CALLS_SAT | KCC_SAMPLE_CALLS_POOL | \
				 KCC_SAMPLE_CALLS_DRAW)

/*
 * One sample as the handlers capture it: followed by nr_stack __u64 (the
 * sampled user ip, then the return addresses found by the frame-pointer
 * walk, innermost first) and nr_branches struct kcc_branch (newest first,
 * as the LBR and perf report them).  size covers all of it and is a
 * multiple of 8.
 */
struct kcc_sample {
	__u32 size;		/* bytes of this sample, arrays included */
	__u32 flags;		/* KCC_SAMPLE_* */
	__u16 nr_stack;		/* entries of the stack array */
	__u16 nr_branches;	/* entries of the branch array */
	__u32 calls;		/* KCC_SAMPLE_CALLS: calls since the previous sample, else zero */
	__u64 delta;		/* events since the previous sample (period) */
};

#define KCC_INJECT_MAX_STACK	512
#define KCC_INJECT_MAX_BRANCHES	64

struct kcc_inject {
	__u32 size;		/* In: sizeof(struct kcc_inject) */
	__u32 count;		/* In: samples in the buffer */
	__u64 data;		/* In: user pointer to count packed kcc_sample */
	__u64 len;		/* In: bytes at data */
	__u32 done;		/* Out: samples accepted (all or an error) */
	__u32 __reserved;	/* In: zero */
};

/*
 * Injected samples are charged to the calling thread, through the same
 * per-CPU ring and worker as the handlers' samples.  Needs inject=1.
 */
#define KCC_IOC_INJECT		_IOWR(KCC_IOC_MAGIC, 0x06, struct kcc_inject)

/* ---- the read() stream ------------------------------------------------ */

/*
 * read() returns a snapshot taken when a read starts at offset 0 (or
 * after lseek(fd, 0, SEEK_SET)): one header, then records, each starting
 * with struct kcc_rec.  Readers skip record types they do not know.
 * All fields are little-endian host order, 8-byte aligned.
 */
#define KCC_STREAM_MAGIC	0x5354434bu	/* "KCTS" in memory order */
#define KCC_STREAM_VERSION	1

struct kcc_metric_desc {
	__u32 type;		/* perf type of the event, or ~0 for calls/samples */
	__u32 __reserved;
	__u64 config;		/* perf config */
	char name[KCC_METRIC_NAME_LEN]; /* "calls", "samples", "cache-misses", ... */
};

#define KCC_HDR_CALLS_VALID	(1u << 0)	/* bursts were replayed: calls mean calls */
/*
 * Two events: the calls counter comes from bursts taken at the samples of
 * the calls event, which the calls descriptor names (type, config; its
 * name stays "calls"); the events descriptor names the other event.
 */
#define KCC_HDR_CALLS_EVENT	(1u << 1)
/*
 * A calls event was asked for but could not be opened: one event; with
 * KCC_HDR_CALLS_COUNTER (ABI 1.9), a hybrid's calls event that could
 * only be counted: the counter.
 */
#define KCC_HDR_CALLS_FALLBACK	(1u << 2)
/*
 * The reader is in another pid namespace than the initial one: the pid
 * and tgid of task and map records are as that namespace sees them, 0
 * for tasks it does not see (their map records are left out).
 */
#define KCC_HDR_PID_NS		(1u << 3)
/*
 * The PMU refused branch records without flags and cycles
 * (PERF_SAMPLE_BRANCH_NO_FLAGS, NO_CYCLES: AMD's LBR does), so kcc asked
 * for them with: the same records, read at a higher cost.
 */
#define KCC_HDR_BR_FLAGS	(1u << 4)
/*
 * ABI 1.3: the calls event (the calls descriptor) was counted beside the
 * sampled event and read at its samples (KCC_CALLS_COUNTER): the bursts
 * are the sampled event's, each with the calls since the previous one.
 */
#define KCC_HDR_CALLS_COUNTER	(1u << 5)
/* ABI 1.3: sample_period is a frequency in Hz (KCC_CFG_FREQ). */
#define KCC_HDR_FREQ		(1u << 6)
/*
 * Never set by kcc.ko: kcc import wrote the stream from a perf.data
 * file, which has no value for calls_after_last (0 there, unknown).
 */
#define KCC_HDR_IMPORTED	(1u << 7)
/* ABI 1.5: the calls event ran as the hybrid estimate (KCC_CALLS_HYBRID). */
#define KCC_HDR_CALLS_HYBRID	(1u << 8)
/*
 * ABI 1.8: kcc.ko's lbr_info=1 had the branch records asked for with
 * their flags and cycles, as perf record -j any_call,any_ret,u asks, so
 * that on Intel both program one LBR_SELECT and share the LBR.
 */
#define KCC_HDR_BR_INFO		(1u << 9)

struct kcc_stream_header {
	__u32 magic;		/* KCC_STREAM_MAGIC */
	__u32 version;		/* KCC_STREAM_VERSION */
	__u32 header_size;	/* bytes, descriptors included */
	__u32 flags;		/* KCC_HDR_* */
	__u32 k;		/* slab height of the forests */
	__u32 source;		/* KCC_SOURCE_* actually used */
	__u32 nr_ctrs;		/* counters per node (KCC_NR_CTRS today, 3 before ABI 1.4) */
	__u32 lbr_depth;	/* LBR entries, 0 without LBR */
	__u64 sample_period;
	__u64 time_ns;		/* CLOCK_MONOTONIC at the snapshot */
	struct kcc_status status; /* counters at the snapshot */
	/* followed by nr_ctrs struct kcc_metric_desc */
};

#define KCC_REC_TASK		1	/* struct kcc_rec_task, then its nodes */
#define KCC_REC_MAP		2	/* struct kcc_rec_map */
#define KCC_REC_END		3	/* struct kcc_rec (no payload): last */

struct kcc_rec {
	__u32 type;		/* KCC_REC_* */
	__u32 size;		/* bytes of the record, this header included */
};

#define KCC_TASK_EXITED		(1u << 0)
/*
 * Ended by an exec (exited is set too): the same pid and start go on in
 * a later image, in a task record of their own.
 */
#define KCC_TASK_EXEC		(1u << 1)
/*
 * Bits 16-31 of flags: the image of the task's process the record
 * belongs to, 0 for the first this session saw, one more after each
 * exec; its map records carry the same number.
 */
#define KCC_TASK_IMAGE_SHIFT	16
#define KCC_TASK_FLAGS_MASK	0xffffu
/* Memory that follows the work (see kcc_status.tasks_folded) */
#define KCC_TASK_FOLDED		(1u << 2)	/* exited threads of tgid, pid = tgid */
#define KCC_TASK_PRUNED		(1u << 3)	/* hot contexts only: counts within eps N */

struct kcc_rec_task {
	struct kcc_rec hdr;
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id */
	__u64 start_time_ns;	/* task start (boot-based): with pid, the key */
	char comm[16];
	__u32 flags;		/* KCC_TASK_* */
	__u32 nr_nodes;		/* struct kcc_rec_node following */
	__u64 samples;		/* samples applied to this forest */
	__u64 node_drops;	/* nodes refused: the forest was full */
	__u64 stack_drops;	/* frames deeper than the shadow stack */
	__u64 stitch_errors;	/* bursts that did not fit the stack */
	__u64 lost_charges;	/* samples with no context to charge */
	/* followed by nr_nodes struct kcc_rec_node, then nr_ctrs __u64 each */
};

/* Roots have parent KCC_NODE_ROOT_TOP (depth 0) or KCC_NODE_ROOT_SLAB. */
#define KCC_NODE_ROOT_TOP	0xfffffffeu
#define KCC_NODE_ROOT_SLAB	0xfffffffdu

struct kcc_rec_node {
	__u32 parent;		/* index in this task's node array, or a root */
	__u32 __reserved;
	__u64 label;		/* user address inside the routine */
	/* followed by nr_ctrs __u64 counters */
};

/*
 * ABI 1.7: right after the KCC_REC_TASK of a task of a system-wide
 * session, the cgroup v2 the task was in when kcc.ko first saw it: the
 * id of the cgroup's directory (its inode number in the cgroup2 file
 * system, as perf's PERF_SAMPLE_CGROUP).  None when it is not known (the
 * task had exited, a kernel without cgroups, threads of several cgroups
 * folded together).
 */
#define KCC_REC_CGROUP		6	/* struct kcc_rec_cgroup */

struct kcc_rec_cgroup {
	struct kcc_rec hdr;
	__u64 cgroup_id;
};

/*
 * An executable file mapping of a process (tgid), captured while the
 * process ran so exited processes can still be symbolized.  ABI 1.6:
 * the vDSO too, whose path is KCC_MAP_VDSO (pgoff and ino 0).
 */
#define KCC_MAP_VDSO		"[vdso]"

struct kcc_rec_map {
	struct kcc_rec hdr;
	__u32 tgid;
	__u32 image;		/* image of the process (KCC_TASK_IMAGE_SHIFT) */
	__u64 start;		/* first address */
	__u64 end;		/* one past the last */
	__u64 pgoff;		/* file offset of start */
	__u64 ino;		/* inode number, to tell files apart */
	char path[];		/* NUL-terminated, padded to 8 bytes */
};

/*
 * Valence context encoding (Documentation/valence.rst).  A program built
 * with kcc's instrumentation keeps its calling context, encoded as in
 * Valence (Zhou et al.), in one struct kcc_valence_area per thread.  The
 * thread is the only writer; it makes seq odd before and even after every
 * update, so a reader that interrupts it (a PMU sample) sees an even seq
 * only on a consistent area, and counts an odd one as torn.
 *
 * CONFIGURE with KCC_SOURCE_VALENCE reads, at each sample of the event,
 * the sampled thread's registered area (bounded: the fixed fields, then
 * acyc_words and the rec words in use); threads without one get the fp
 * walk.  Each task keeps a bounded table of distinct encodings with
 * their counts, exported as KCC_REC_VALENCE records after its
 * KCC_REC_TASK and decoded in userspace with the encoding table.
 */
#define KCC_SOURCE_VALENCE		4	/* sampled event + the thread's area */
#define KCC_VALENCE_ACYC_WORDS		8	/* bits [0, 512) of the acyclic id */
#define KCC_VALENCE_REC_WORDS		56	/* the recursion/escape bit stack */
#define KCC_VALENCE_NO_NODE		0xffffffffu

struct kcc_valence_area {
	__u32 size;		/* Input: sizeof(struct kcc_valence_area) */
	__u32 seq;		/* Input: odd while the area is being updated */
	__u32 cur;		/* Input: table node of the running routine */
	__u32 rec_bits;		/* Input: bits of rec[] in use, <= 64 * REC_WORDS */
	__u32 rec_over;		/* Input: pushes that did not fit (0: exact) */
	__u32 acyc_words;	/* Input: words of acyc[] the table uses */
	__u64 table_id;		/* Input: identifies the encoding table */
	__u32 root;		/* Input: node the thread's outermost call entered */
	__u32 __reserved;	/* Input: zero */
	__u64 root_site;	/* Input: return address of that call */
	__u64 acyc[KCC_VALENCE_ACYC_WORDS];	/* Input: acyclic id, bit 0 first */
	__u64 rec[KCC_VALENCE_REC_WORDS];	/* Input: bit stack, bit 0 bottom */
};

/* Registers the calling thread's area (like rseq(2)); area 0 unregisters. */
struct kcc_valence_reg {
	__u32 size;		/* Input: sizeof(struct kcc_valence_reg) */
	__u32 area_size;	/* Input: sizeof(struct kcc_valence_area) */
	__u64 area;		/* Input: user address of the area, or 0 */
};

/*
 * Needs only a descriptor of /dev/kcc, no profiling privilege: it
 * concerns the caller's own thread.  -EINVAL: a size field is not the
 * kernel's, or the area is not 8-byte aligned; -EFAULT: not a user
 * range; -ENOSPC: the module's table of registered threads is full.
 * A registration ends with the thread, at exec and with area 0.
 */
#define KCC_IOC_VALENCE_REGISTER	_IOW(KCC_IOC_MAGIC, 0x09, struct kcc_valence_reg)

#define KCC_REC_VALENCE		5	/* struct kcc_rec_valence, then entries */

/* The encodings one task was sampled in, after its KCC_REC_TASK. */
struct kcc_rec_valence {
	struct kcc_rec hdr;
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id */
	__u64 start_time_ns;	/* with pid, the task of a KCC_REC_TASK */
	__u32 nr_entries;	/* struct kcc_valence_ent following */
	__u32 __reserved;
	__u64 table_full;	/* encodings of this task not kept */
};

/* One distinct encoding: the area's fixed fields as read, then words. */
struct kcc_valence_ent {
	__u32 size;		/* bytes of the entry, words included */
	__u32 cur;
	__u32 root;
	__u32 rec_bits;
	__u32 acyc_words;	/* acyc[] words following */
	__u32 rec_words;	/* rec[] words following: (rec_bits + 63) / 64 */
	__u64 table_id;
	__u64 root_site;
	__u64 events;		/* sampled event charged to the encoding */
	__u64 samples;		/* samples read with it */
	/* followed by acyc_words __u64, then rec_words __u64 */
};

/*
 * Watched k-contexts (preferential path profiling, Documentation/ppp.rst).
 * KCC_IOC_WATCH, after CONFIGURE and before START, gives the session a
 * set I of k-contexts, each a path of 1 to KCC_WATCH_K_MAX + 1 routines,
 * outermost first, and the address ranges of those routines in the
 * target.  kcc.ko numbers I with lbr/kcc_ppp (the numbering userspace
 * computes, whose size @range the upload must state) and counts the
 * watched contexts of every task in arrays beside its forest: calls at
 * each replayed call, events and samples at each sample's context.  The
 * read() stream then carries one KCC_REC_WATCH per task.  nr_contexts 0
 * removes the set.  A refused upload changes nothing.
 */
#define KCC_WATCH_K_MAX		8	/* call edges per context */
#define KCC_WATCH_MAX_CONTEXTS	65536	/* |I| */
#define KCC_WATCH_MAX_RANGES	1048576	/* address ranges */
#define KCC_WATCH_MAX_RANGE	1048576	/* numbers: delta * |I| */
#define KCC_WATCH_FLAGS_ALL	0u

/* Routine @routine spans [start, end); ranges sorted by start, disjoint. */
struct kcc_watch_range {
	__u64 start;
	__u64 end;
	__u32 routine;		/* In: < nr_routines */
	__u32 __reserved;	/* In: zero */
};

struct kcc_watch {
	__u32 size;		/* In: sizeof(struct kcc_watch) */
	__u32 flags;		/* In: zero (KCC_WATCH_FLAGS_ALL) */
	__u32 k;		/* In: longest context, call edges, <= KCC_WATCH_K_MAX */
	__u32 range;		/* In: numbers of I's numbering (delta * |I|) */
	__u32 nr_routines;	/* In: routine ids are 0 .. nr_routines - 1 */
	__u32 nr_ranges;	/* In: entries at ranges */
	__u32 nr_contexts;	/* In: |I|, 0: no watched set */
	__u32 nr_labels;	/* In: entries at paths: the lengths summed */
	__u64 ranges;		/* In: user pointer, struct kcc_watch_range[] */
	__u64 lens;		/* In: user pointer, __u32[nr_contexts]: routines */
	__u64 paths;		/* In: user pointer, __u32[nr_labels]: routine ids */
	__u64 __reserved[2];	/* In: zero */
};

#define KCC_IOC_WATCH		_IOW(KCC_IOC_MAGIC, 0x08, struct kcc_watch)

#define KCC_REC_WATCH		4	/* struct kcc_rec_watch */

/*
 * The watched counts of one task (the task of the KCC_REC_TASK with the
 * same pid and start_time_ns): per context of the upload, in its order,
 * nr_ctrs (KCC_WATCH_NR_CTRS) __u64: calls, events, samples.  A context
 * counts every activation (calls) and every sample (events, samples)
 * whose call stack ends with it, as the k-CCF does.
 */
struct kcc_rec_watch {
	struct kcc_rec hdr;
	__u32 pid;
	__u32 tgid;
	__u64 start_time_ns;
	__u32 nr_contexts;	/* contexts following */
	__u32 nr_ctrs;		/* counters per context */
	__u32 range;		/* numbers of the array */
	__u32 __reserved;
	__u64 totals[KCC_WATCH_NR_CTRS];	/* calls (weighted), events, samples seen */
	__u64 residual[KCC_WATCH_NR_CTRS];	/* of which no watched context took */
	__u64 aliased;		/* numbers in range refused by the check */
	__u64 stack_drops;	/* calls deeper than the shadow stack */
	/* followed by nr_contexts * nr_ctrs __u64 */
};

#endif /* _UAPI_LINUX_KCC_H */
