/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/hrtimer.h - setting up an hrtimer across kernel versions.
 *
 * hrtimer_setup() (6.13) takes the callback; hrtimer_init() and the
 * assignment of ->function it replaces were removed in 6.15.
 * LBRPMU_HAVE_HRTIMER_SETUP comes from the header (Kbuild).
 */
#ifndef KCC_LBRPMU_WRAPPER_HRTIMER_H
#define KCC_LBRPMU_WRAPPER_HRTIMER_H

#include <linux/hrtimer.h>

static inline void
lbrpmu_hrtimer_setup(struct hrtimer *timer,
		     enum hrtimer_restart (*fn)(struct hrtimer *),
		     clockid_t clock, enum hrtimer_mode mode)
{
#ifdef LBRPMU_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

#endif /* KCC_LBRPMU_WRAPPER_HRTIMER_H */
