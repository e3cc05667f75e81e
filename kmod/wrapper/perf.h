/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/perf.h - perf sample data across kernel versions.
 *
 * Since 6.1 a PMU driver says which fields of perf_sample_data it filled
 * in sample_flags; before, br_stack was valid whenever the event asked
 * for a branch stack.
 */
#ifndef KCC_WRAPPER_PERF_H
#define KCC_WRAPPER_PERF_H

#include <linux/version.h>
#include <linux/perf_event.h>

static inline const struct perf_branch_stack *
kcc_sample_br_stack(const struct perf_sample_data *data)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0)
	if (!(data->sample_flags & PERF_SAMPLE_BRANCH_STACK))
		return NULL;
#endif
	return data->br_stack;
}

#endif /* KCC_WRAPPER_PERF_H */
