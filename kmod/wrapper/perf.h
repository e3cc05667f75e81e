/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/perf.h - perf events across kernel versions.
 *
 * Since 6.1 a PMU driver says which fields of perf_sample_data it filled
 * in sample_flags; before, br_stack was valid whenever the event asked
 * for a branch stack (KCC_HAVE_SAMPLE_FLAGS, from the header: Kbuild).
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
#include <linux/device.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/string.h>

/*
 * Whether @p holds per-task perf events, anyone's: the threads a
 * per-task session samples do, and their children from fork on
 * (inherit).  Before 6.2 a task had a context per kind, hardware and
 * software (perf_event_ctxp[perf_nr_task_contexts]: KCC_HAVE_PERF_CTX_ARRAY);
 * since, one.
 * Read without a lock, as a hint: a stale answer only sends the mapping
 * hook (kcc_maps.c) to kcc's lock, which decides.
 */
static inline bool kcc_task_has_perf_events(struct task_struct *p)
{
#ifdef KCC_HAVE_PERF_CTX_ARRAY
	int i;

	for (i = 0; i < perf_nr_task_contexts; i++)
		if (READ_ONCE(p->perf_event_ctxp[i]))
			return true;
	return false;
#else
	return READ_ONCE(p->perf_event_ctxp);
#endif
}

/*
 * A record of a branch that never retired: AMD's driver keeps the
 * speculative entries of a mispredicted path and tags them (6.1 on,
 * KCC_HAVE_BR_SPEC).  Only with the flags asked for (not NO_FLAGS):
 * without them the field is not filled in.
 */
static inline bool kcc_br_wrong_path(const struct perf_branch_entry *e)
{
#ifdef KCC_HAVE_BR_SPEC
	return e->spec == PERF_BR_SPEC_WRONG_PATH;
#else
	return false;
#endif
}

static inline const struct perf_branch_stack *
kcc_sample_br_stack(const struct perf_sample_data *data)
{
#ifdef KCC_HAVE_SAMPLE_FLAGS
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

/*
 * The LBR depth of @pmu as perf tells user space:
 * /sys/bus/event_source/devices/<pmu>/caps/branches, which the Intel
 * (intel/core.c, lbr_attrs) and AMD (amd/core.c, Zen 4 LbrExtV2) drivers
 * show when they have an LBR.  x86_perf_get_lbr() gave the same number
 * but is exported only to KVM's modules since late 2025 ("x86: Restrict
 * KVM-induced symbol exports to KVM modules"), so modpost refuses it;
 * the attribute is reached through the PMU's own groups instead (any
 * kernel since 5.4 has attr_update), and shown with its own show().
 * Returns 0 when @pmu has no such attribute or it is hidden.  Process
 * context (the show callback may sleep).
 */
static inline u32 kcc_pmu_caps_branches(struct pmu *pmu)
{
	const struct attribute_group **lists[2] = {
		pmu->attr_groups, pmu->attr_update,
	};
	const struct attribute_group *g;
	struct device_attribute *da;
	struct attribute *a;
	unsigned int l, i, j;
	char *buf;
	u32 nr = 0;

	if (!pmu->dev)
		return 0;
	for (l = 0; l < ARRAY_SIZE(lists); l++) {
		for (i = 0; lists[l] && (g = lists[l][i]); i++) {
			if (!g->name || strcmp(g->name, "caps") || !g->attrs)
				continue;
			for (j = 0; (a = g->attrs[j]); j++) {
				if (strcmp(a->name, "branches"))
					continue;
				if (g->is_visible &&
				    !g->is_visible(&pmu->dev->kobj, a, j))
					continue;
				da = container_of(a, struct device_attribute,
						  attr);
				if (!da->show)
					continue;
				buf = (char *)get_zeroed_page(GFP_KERNEL);
				if (!buf)
					return 0;
				if (da->show(pmu->dev, da, buf) <= 0 ||
				    kstrtou32(strim(buf), 10, &nr))
					nr = 0;
				free_page((unsigned long)buf);
				return nr;
			}
		}
	}
	return 0;
}

#define KCC_PERF_THROTTLED	(~0ULL)

/* Called from the overflow handler: did this overflow throttle @event? */
static inline bool kcc_event_throttled(const struct perf_event *event)
{
	return READ_ONCE(event->hw.interrupts) == KCC_PERF_THROTTLED;
}

#endif /* KCC_WRAPPER_PERF_H */
