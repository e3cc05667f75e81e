/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcc_lbrpmu.h - the interface between the test LBR PMU (kcc_lbrpmu.ko)
 * and the tracing runtime (tools/kcc-trace/kcc_trace_rt.c).  Test-only:
 * not part of kcc's ABI (include/uapi/linux/kcc.h), never installed.
 *
 * A traced thread keeps one struct kcc_lbr_ring in its own memory and
 * registers its address with KCC_LBR_IOC_REGISTER on /dev/kcc_lbr.  The
 * thread is the only writer; the PMU reads the ring of the thread that
 * is running on the CPU, in interrupt context, with copy_from_user_nmi().
 *
 * Writer protocol, per record: seq becomes odd, rec[pos % KCC_LBR_RECS]
 * is written, pos (and calls, misses for a call) advance, seq becomes
 * even.  A reader that finds seq odd interrupted the writer: the slot at
 * pos % KCC_LBR_RECS is torn and is left out.
 */
#ifndef KCC_LBRPMU_H
#define KCC_LBRPMU_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KCC_LBR_MAGIC		0x4b4c4252u	/* "KLBR" */
#define KCC_LBR_VERSION		3
#define KCC_LBR_RECS		32		/* like Skylake's LBR depth */
/* Where the wrong-path calls of wrong_path=N go: under mmap_min_addr. */
#define KCC_LBR_WRONG_TO	0x1000ull

/* kcc_lbr_rec.flags */
#define KCC_LBR_F_RET		0x1	/* a return; else a call */
#define KCC_LBR_F_IND		0x2	/* an indirect call */

/* The event codes (config:0-7) of the kcc_lbr PMU. */
#define KCC_LBR_EV_CLOCK	0	/* time in ns, like cpu-clock */
#define KCC_LBR_EV_CALLS	1	/* the ring's calls counter */
#define KCC_LBR_EV_MISSES	2	/* the ring's synthetic misses */

/*
 * The synthetic misses of one call of the routine at @fn: 0..7, fixed per
 * routine, so the misses event samples some routines more than others.
 * Fixed whatever the load address too: a routine of an executable linked
 * at a fixed address (below 4 GiB: static, not PIE) by its address, one
 * of a PIE or a library, which address randomisation moves by whole
 * pages, by its offset in its page.  Hashing the whole address of those
 * gave lbr_workload 16,003 to 256,130 misses for the same 52,752 calls.
 */
static inline __u64 kcc_lbr_misses(__u64 fn)
{
	if (fn >> 32)
		fn &= 0xfff;
	return fn * 0x9e3779b97f4a7c15ull >> 61;
}

#define KCC_LBR_MISSES(fn)	kcc_lbr_misses((__u64)(fn))

struct kcc_lbr_rec {
	__u64 from;	/* call: the call instruction; return: in the callee */
	__u64 to;	/* call: the call's target; return: the return address */
	__u64 flags;	/* KCC_LBR_F_* */
};

struct kcc_lbr_ring {
	__u32 magic;		/* KCC_LBR_MAGIC */
	__u32 version;		/* KCC_LBR_VERSION */
	__u64 seq;		/* odd while a record is written */
	__u64 pos;		/* records written since registration */
	__u64 calls;		/* calls retired since registration */
	__u64 misses;		/* synthetic misses since registration */
	struct kcc_lbr_rec rec[KCC_LBR_RECS];
	/*
	 * The program's registers at the runtime's hook call, valid while
	 * in_hook is 1: an interrupt that lands inside the runtime's own
	 * code samples these, the state of the traced routine right after
	 * the hook returns, since the runtime is not part of the program
	 * being modelled (its calls are not in the records either).  The
	 * writer fills hook_* before setting in_hook and clears in_hook
	 * when the hook returns.
	 */
	__u64 hook_ip;		/* the return address of the hook call */
	__u64 hook_sp;		/* the routine's stack pointer after it */
	__u64 hook_bp;		/* the routine's frame pointer */
	__u64 in_hook;		/* 1 while the thread runs the runtime */
	/*
	 * The hooks' own code, [hook_text, hook_text_end): an interrupt
	 * there with in_hook 0 (the hook's first or last instructions)
	 * has no registers of the program to give, and the PMU takes its
	 * sample at the next poll instead.
	 */
	__u64 hook_text;
	__u64 hook_text_end;
	/*
	 * Where the thread's sampling calls and misses events overflow:
	 * the values of calls and misses at which the writer stops in the
	 * PMU (KCC_LBR_IOC_OVERFLOW) right after the call record that
	 * reaches them, in its entry hook, as a hardware counter raises
	 * its interrupt at the overflowing call.  The PMU writes them (at
	 * that ioctl, at its polls and when an event starts on the
	 * thread); they are a hint: a stale one costs an ioctl too many
	 * (the PMU finds nothing to sample and writes new ones) or leaves
	 * the overflow to the next poll.  ~0: no sampling event counts
	 * the thread; 0 (at registration): ask at the next call.
	 */
	__u64 trap_calls;
	__u64 trap_misses;
};

/* Register the calling thread's ring (argument: its address). */
#define KCC_LBR_IOC_REGISTER	_IO('L', 1)
/* The calling thread is done: its final counters are taken now. */
#define KCC_LBR_IOC_UNREGISTER	_IO('L', 2)
/*
 * The calling thread reached trap_calls or trap_misses: the sampling
 * events counting it are brought up to date, those whose period ran out
 * take their sample now, with the thread's registers at the hook call,
 * and the traps are written anew.  No argument.
 */
#define KCC_LBR_IOC_OVERFLOW	_IO('L', 3)

#endif /* KCC_LBRPMU_H */
