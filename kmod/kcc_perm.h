/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_perm.h - the permission model (kcc_perm.c): who may configure,
 * attach, read, and the quotas of one user.
 */
#ifndef KCC_PERM_H
#define KCC_PERM_H

#include <linux/types.h>

struct file;
struct task_struct;
struct kcc_config;
struct kcc_session;

void kcc_perm_init(void);
void kcc_perm_exit(void);
int kcc_may_configure(const struct kcc_config *c);
int kcc_may_attach(struct task_struct *p);
bool kcc_may_read(struct file *file, const struct kcc_session *s);
bool kcc_user_room(void);
unsigned int kcc_valence_quota(unsigned int slots);

#endif /* KCC_PERM_H */
