/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/brstack.h - handing a branch stack to the perf core across
 * kernel versions.
 *
 * Before 6.1 (5.10) perf_sample_data has no sample_flags: the core
 * outputs br_stack whenever the event asked for a branch stack and the
 * pointer is set.  6.1 has the sample_flags but no helper: the driver
 * sets br_stack and the flag (as 6.1's intel_pmu_handle_irq() does).
 * LBRPMU_HAVE_SAMPLE_FLAGS comes from the header (Kbuild).
 * From 6.3 perf_sample_save_brstack() does both and sizes the record;
 * 6.8 gave it a fourth argument, the per-branch event counters.
 */
#ifndef KCC_LBRPMU_WRAPPER_BRSTACK_H
#define KCC_LBRPMU_WRAPPER_BRSTACK_H

#include <linux/version.h>
#include <linux/perf_event.h>

static inline void lbrpmu_save_brstack(struct perf_sample_data *data,
				       struct perf_event *event,
				       struct perf_branch_stack *brs)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	perf_sample_save_brstack(data, event, brs, NULL);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	perf_sample_save_brstack(data, event, brs);
#elif defined(LBRPMU_HAVE_SAMPLE_FLAGS)
	data->br_stack = brs;
	data->sample_flags |= PERF_SAMPLE_BRANCH_STACK;
#else
	data->br_stack = brs;
#endif
}

#endif /* KCC_LBRPMU_WRAPPER_BRSTACK_H */
