/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/perf.h - perf events across kernel versions.
 *
 * Since 6.1 a PMU driver says which fields of perf_sample_data it filled
 * in sample_flags; before, br_stack was valid whenever the event asked
 * for a branch stack.
 *
 * PERF_SAMPLE_BRANCH_NO_FLAGS and NO_CYCLES (4.7) let the Intel driver
 * skip the LBR_INFO MSRs, which kcc never reads: perf record sets them
 * the same way when the consumer needs neither.
 *
 * The throttle marker of kernel/events/core.c (MAX_INTERRUPTS, the same
 * value from 4.x to 6.12) is private to it: an overflow that throttles its
 * event leaves hw.interrupts at this value while the overflow handler
 * runs, until the next tick unthrottles it.
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

#if LINUX_VERSION_CODE >= KERNEL_VERSION(4, 7, 0)
#define KCC_BRANCH_SAMPLE_QUIET	(PERF_SAMPLE_BRANCH_NO_FLAGS | \
				 PERF_SAMPLE_BRANCH_NO_CYCLES)
#else
#define KCC_BRANCH_SAMPLE_QUIET	0
#endif

#define KCC_PERF_THROTTLED	(~0ULL)

/* Called from the overflow handler: did this overflow throttle @event? */
static inline bool kcc_event_throttled(const struct perf_event *event)
{
	return READ_ONCE(event->hw.interrupts) == KCC_PERF_THROTTLED;
}

#endif /* KCC_WRAPPER_PERF_H */
