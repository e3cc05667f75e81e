/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_watch.h - watched k-contexts (kcc_watch.c): the upload and the
 * per-task arrays.
 */
#ifndef KCC_WATCH_H
#define KCC_WATCH_H

#include <linux/types.h>

struct file;
struct kcc_watch;
struct kcc_session;
struct kcc_task;

long kcc_watch_upload(struct file *file, const struct kcc_watch *w);
void kcc_watch_session_free(struct kcc_session *s);
void kcc_watch_task_init(struct kcc_session *s, struct kcc_task *t);
void kcc_watch_task_free(struct kcc_task *t);
size_t kcc_watch_rec_size(const struct kcc_session *s,
			  const struct kcc_task *t);
u8 *kcc_watch_put(const struct kcc_session *s, const struct kcc_task *t,
		  u8 *p);

#endif /* KCC_WATCH_H */
