/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_maps.h - the processes of a session and their executable mappings
 * (kcc_maps.c): the records, their capture, the mapping hook.
 */
#ifndef KCC_MAPS_H
#define KCC_MAPS_H

#include <linux/types.h>

struct task_struct;
struct kcc_session;
struct kcc_proc;
struct kcc_tev;

struct kcc_proc *kcc_proc_find(struct kcc_session *s, u32 tgid, u64 start,
			       u32 exec_id);
struct kcc_proc *kcc_proc_get(struct kcc_session *s, u32 tgid, u64 start,
			      u32 exec_id, struct task_struct *live);
void kcc_proc_free(struct kcc_session *s, struct kcc_proc *pr);
void kcc_maps_capture(struct kcc_session *s, struct kcc_proc *pr,
		      struct task_struct *p);

void kcc_maps_init(void);
void kcc_maps_running(struct kcc_session *s, bool on);
bool kcc_maps_concerns(struct task_struct *p);
void kcc_maps_exit(void);
void kcc_maps_fold(void);
void kcc_maps_free_orphans(struct kcc_session *s, const struct kcc_tev *ev,
			   u32 nr);
int kcc_maps_show(char *buf);

#endif /* KCC_MAPS_H */
