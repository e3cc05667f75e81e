/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_valence.h - the Valence source (kcc_valence.c): registrations, the
 * handler's read of an area, the per-task tables of encodings.
 */
#ifndef KCC_VALENCE_H
#define KCC_VALENCE_H

#include <linux/types.h>
#include <linux/kcc.h>

struct task_struct;
struct kcc_valence_reg;
struct kcc_session;
struct kcc_task;
struct kcc_sample;
struct kcc_status;
struct kcc_vtab;

/* A Valence key: table_id, root_site, cur|root, rec_bits|acyc_words, words */
#define KCC_VKEY_HDR		4
#define KCC_VKEY_MAX		(KCC_VKEY_HDR + KCC_VALENCE_ACYC_WORDS + \
				 KCC_VALENCE_REC_WORDS)

long kcc_valence_register(const struct kcc_valence_reg *reg);
void kcc_valence_task_gone(struct task_struct *p);
int kcc_valence_read(struct kcc_session *s, u64 *w);
void kcc_valence_counters_zero(struct kcc_session *s);
void kcc_valence_apply(struct kcc_session *s, struct kcc_task *t,
		       const struct kcc_sample *smp);
void kcc_valence_task_free(struct kcc_session *s, struct kcc_task *t);
size_t kcc_valence_rec_size(const struct kcc_task *t);
u8 *kcc_valence_put(u8 *p, const struct kcc_task *t);
void kcc_valence_status(struct kcc_session *s, struct kcc_status *st);

#endif /* KCC_VALENCE_H */
