/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_session.h - the sessions (kcc_session.c): configuration, life
 * cycle, status, readers, the read() snapshot.
 */
#ifndef KCC_SESSION_H
#define KCC_SESSION_H

#include <linux/types.h>

struct file;
struct kcc_config;
struct kcc_session;
struct kcc_status;
struct kcc_reader;

struct kcc_session *kcc_configure(struct file *file,
				  const struct kcc_config *cfg);
int kcc_start(struct kcc_session *s);
void kcc_stop(struct kcc_session *s);
void kcc_reset(struct kcc_session *s);
void kcc_session_destroy(struct kcc_session *s);
void kcc_status_fill(struct kcc_session *s, struct kcc_status *st);
void kcc_reader_attach(struct kcc_reader *r, struct kcc_session *s);
void kcc_reader_detach(struct kcc_reader *r);
void *kcc_snapshot(struct kcc_reader *r, size_t *len);

#endif /* KCC_SESSION_H */
