/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_task.h - per-task state (kcc_task.c): the threads' forests, the
 * sched tracepoints.
 */
#ifndef KCC_TASK_H
#define KCC_TASK_H

#include <linux/types.h>

struct tracepoint;
struct kcc_session;
struct kcc_task;
struct kcc_tev;
struct kcc_rrec;
struct kcc_status;

int kcc_tp_init(void);
extern struct tracepoint *kcc_tp_switch;	/* NULL: not found or tracepoints=0 */
void kcc_tp_exit(void);
void kcc_task_events(struct kcc_session *s, struct kcc_tev *ev, u32 nr);
u32 kcc_task_grab_events(struct kcc_tev *ev);
void kcc_task_apply(struct kcc_session *s, const struct kcc_rrec *r);
void kcc_task_free(struct kcc_session *s, struct kcc_task *t);
void kcc_tasks_finish(struct kcc_session *s);
void kcc_tasks_free_all(struct kcc_session *s);
void kcc_tasks_check_alive(struct kcc_session *s);
void kcc_tasks_reap_delivered(struct kcc_session *s);
size_t kcc_task_bytes(const struct kcc_session *s);
u32 kcc_task_nr_nodes(const struct kcc_task *t);
u8 *kcc_task_put_nodes(u8 *p, const struct kcc_task *t);
void kcc_task_status(const struct kcc_session *s, struct kcc_status *st);

#endif /* KCC_TASK_H */
