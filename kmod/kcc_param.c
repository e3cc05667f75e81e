// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_param.c - the module parameters more than one room of kcc.ko
 * reads (kcc_param.h).  A parameter only one room reads is that room's
 * own (maps_fallback in kcc_maps.c, hcct_phi_ppm in kcc_task.c, the
 * per-user quotas in kcc_perm.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kcc.h>

#include "kcc_param.h"

#define KCC_HW_PERIOD_MIN_DEF	1000ul

bool kcc_param_inject;
module_param_named(inject, kcc_param_inject, bool, 0444);
MODULE_PARM_DESC(inject, "accept KCC_IOC_INJECT (synthetic samples, tests only; default 0)");

/*
 * The default k stands in for a configuration's k = 0, so it must be a k
 * CONFIGURE would accept: 0 is refused at load, or every task would
 * later fail to get a forest.
 */
static int kcc_param_k_set(const char *val, const struct kernel_param *kp)
{
	unsigned int k;
	int ret;

	ret = kstrtouint(val, 0, &k);
	if (ret)
		return ret;
	if (!k || (k > KCC_K_MAX && k != KCC_K_INF))
		return -EINVAL;
	*(unsigned int *)kp->arg = k;
	return 0;
}

static const struct kernel_param_ops kcc_param_k_ops = {
	.set = kcc_param_k_set,
	.get = param_get_uint,
};

unsigned int kcc_param_k = 3;
module_param_cb(k, &kcc_param_k_ops, &kcc_param_k, 0444);
MODULE_PARM_DESC(k, "default k when a configuration says 0: 1..64 or 4294967295 for infinity (default 3)");

/* The per-task share of worker time per drain, KCC_DROP_BUDGET beyond it. */
unsigned int kcc_param_task_budget_us = 250000;
module_param_named(task_budget_us, kcc_param_task_budget_us, uint, 0444);
MODULE_PARM_DESC(task_budget_us, "worker time one task may use per drain, in us; 0: no bound (default 250000)");

/*
 * The batched hand-off (kcc_sample.c): the handlers wake the worker when
 * a ring is half full or a process is new to it, else a timer does
 * flush_ms after the first sample it has not seen.  4 ms: a ring of the
 * default 256 KiB holds about 1,300 samples of 20 frames, a thousand
 * times what a 1 ms period gives in that time, and a reader's poll()
 * sees new samples within a few ms.
 */
unsigned int kcc_param_flush_ms = 4;
module_param_named(flush_ms, kcc_param_flush_ms, uint, 0644);
MODULE_PARM_DESC(flush_ms, "ms after a sample before the worker applies it, unless its ring is half full or its process new; 1..10000 (default 4)");

bool kcc_param_batch = true;
module_param_named(batch, kcc_param_batch, bool, 0644);
MODULE_PARM_DESC(batch, "batched hand-off; 0: wake the worker at every sample (comparisons only; default 1)");

bool kcc_param_fixed_seed;
module_param_named(fixed_seed, kcc_param_fixed_seed, bool, 0444);
MODULE_PARM_DESC(fixed_seed, "key every forest's hash with the fixed seed, not a random one (reproducible runs and flooding tests; default 0)");

unsigned long kcc_param_period;
module_param_named(period, kcc_param_period, ulong, 0444);
MODULE_PARM_DESC(period, "default sample period, 0: 10007 events or 1 ms of cpu-clock");

/*
 * The floor of a counting event's sample period (hardware and PMU
 * events; the clock's is 10 us).  1000 events bound the handler's share
 * of a CPU; root may lower it at load for sessions whose samples must
 * come closer than the LBR's records (dense calls or misses sampling),
 * as perf's own floor is perf_event_max_sample_rate.
 */
static int kcc_param_period_min_set(const char *val,
				    const struct kernel_param *kp)
{
	unsigned long n;
	int ret;

	ret = kstrtoul(val, 0, &n);
	if (ret)
		return ret;
	if (!n || n > KCC_HW_PERIOD_MIN_DEF)
		return -EINVAL;
	*(unsigned long *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops kcc_param_period_min_ops = {
	.set = kcc_param_period_min_set,
	.get = param_get_ulong,
};

unsigned long kcc_param_period_min = KCC_HW_PERIOD_MIN_DEF;
module_param_cb(period_min, &kcc_param_period_min_ops,
		&kcc_param_period_min, 0444);
MODULE_PARM_DESC(period_min, "least sample period of a counting event, events: 1..1000 (default 1000)");

unsigned long kcc_param_max_bytes = 64ul << 20;
module_param_named(max_bytes, kcc_param_max_bytes, ulong, 0444);
MODULE_PARM_DESC(max_bytes, "cap on the memory of all forests of all sessions, and a session's default cap (default 64 MiB)");

unsigned int kcc_param_max_sessions = 16;
module_param_named(max_sessions, kcc_param_max_sessions, uint, 0444);
MODULE_PARM_DESC(max_sessions, "sessions that may exist at once, the autostart one included (default 16)");

unsigned int kcc_param_max_tasks = 16384;
module_param_named(max_tasks, kcc_param_max_tasks, uint, 0444);
MODULE_PARM_DESC(max_tasks, "default cap on tasks with a forest (default 16384)");

unsigned int kcc_param_task_nodes = 4096;
module_param_named(task_nodes, kcc_param_task_nodes, uint, 0444);
MODULE_PARM_DESC(task_nodes, "default nodes per task forest (default 4096)");

unsigned int kcc_param_stack_depth = 128;
module_param_named(stack_depth, kcc_param_stack_depth, uint, 0444);
MODULE_PARM_DESC(stack_depth, "default user frames walked per sample (default 128, at most 512)");

unsigned int kcc_param_ring_kb = 256;
module_param_named(ring_kb, kcc_param_ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "KiB per sample ring; 3 rings per CPU (default 256)");

unsigned int kcc_param_burst_table = 1024;
module_param_named(burst_table, kcc_param_burst_table, uint, 0444);
MODULE_PARM_DESC(burst_table, "default adaptive-bursting history entries (default 1024)");

unsigned int kcc_param_burst_sig_depth = 8;
module_param_named(burst_sig_depth, kcc_param_burst_sig_depth, uint, 0444);
MODULE_PARM_DESC(burst_sig_depth, "default stack entries in a context signature (default 8)");

bool kcc_param_lbr_info;
module_param_named(lbr_info, kcc_param_lbr_info, bool, 0644);
MODULE_PARM_DESC(lbr_info, "lbr: ask for the records' flags and cycles, as perf record -j any_call,any_ret,u does, so that on Intel both program the same LBR_SELECT and share the LBR; costs the LBR_INFO reads (default 0: NO_FLAGS, NO_CYCLES)");

/*
 * Tests only: tracepoints=0 loads without the probes, so that a kernel
 * problem can be told from the tracepoint patching they cause
 * (Documentation/testing.rst, multi-threaded TCG).  Exits and execs then
 * go unseen: forests of exited tasks stay until the session ends.  The
 * mapping probe of kcc_maps.c stays off too.
 */
bool kcc_param_tracepoints = true;
module_param_named(tracepoints, kcc_param_tracepoints, bool, 0444);
MODULE_PARM_DESC(tracepoints, "attach the sched exit/exec and mapping probes (default 1; 0 is for tests only)");
