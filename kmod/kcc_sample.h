/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_sample.h - taking samples (kcc_sample.c): the perf events, the
 * per-CPU rings, the worker and its drain.
 */
#ifndef KCC_SAMPLE_H
#define KCC_SAMPLE_H

#include <linux/types.h>

struct work_struct;
struct kcc_evsel;
struct kcc_session;
struct kcc_status;
struct kcc_sample;

int kcc_rings_init(void);
void kcc_rings_sync(void);
void kcc_rings_exit(void);
void kcc_lbr_detect(void);
int kcc_probe_event(struct kcc_evsel *ev, bool lbr, bool task,
		    char *pmu_name, size_t len, u32 *depth);
int kcc_probe_counter(const struct kcc_evsel *ev, bool task);
void kcc_events_read(struct kcc_session *s, struct kcc_status *st);
int kcc_events_start(struct kcc_session *s);
void kcc_events_stop(struct kcc_session *s);
int kcc_push_task(const struct kcc_sample *smp);
void kcc_drain(void);
void kcc_work_fn(struct work_struct *work);
void kcc_flush_fn(struct work_struct *work);

#endif /* KCC_SAMPLE_H */
