// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_state.c - the module-wide state (kcc_g), the worker's kick and
 * the lookups of the session list that rooms below the sessions need:
 * the ring drain names a record's session by id, the watch upload
 * checks that its file owns one.  kcc_g.lock held for the lookups.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/workqueue.h>

#include "kcc_state.h"

struct kcc_global kcc_g;

/* Wake the worker, from rooms below the one that runs it (kcc_sample.c). */
void kcc_kick(void)
{
	queue_work(kcc_g.wq, &kcc_g.work);
}

struct kcc_session *kcc_session_find(u32 id)
{
	struct kcc_session *s;

	list_for_each_entry(s, &kcc_g.sessions, node)
		if (s->id == id)
			return s;
	return NULL;
}

/* The session @file owns, or NULL. */
struct kcc_session *kcc_session_owned(struct file *file)
{
	struct kcc_session *s;

	list_for_each_entry(s, &kcc_g.sessions, node)
		if (s->owner == file)
			return s;
	return NULL;
}
