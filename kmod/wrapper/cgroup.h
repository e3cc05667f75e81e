/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/cgroup.h - the cgroup v2 of a session (KCC_CFG_CGROUP) and of
 * a task, on kernels with and without CONFIG_CGROUPS (the debug kernels'
 * small configs have none: -EOPNOTSUPP, and every task is in no cgroup).
 */
#ifndef KCC_WRAPPER_CGROUP_H
#define KCC_WRAPPER_CGROUP_H

#include <linux/cgroup.h>
#include <linux/err.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#ifdef CONFIG_CGROUPS
/* The cgroup v2 of directory @fd, referenced, or an ERR_PTR (-EBADF). */
static inline struct cgroup *kcc_cgroup_get_fd(int fd)
{
	return cgroup_get_from_fd(fd);
}

static inline void kcc_cgroup_put(struct cgroup *cgrp)
{
	if (cgrp)
		cgroup_put(cgrp);
}

/*
 * Is @t in @cgrp or below?  Any context, NMI included: the css_set and
 * the ancestors' array are read under RCU, without a lock.
 */
static inline bool kcc_cgroup_holds(struct cgroup *cgrp, struct task_struct *t)
{
	bool in;

	rcu_read_lock();
	in = task_under_cgroup_hierarchy(t, cgrp);
	rcu_read_unlock();
	return in;
}

/* The id of @t's cgroup v2 (its directory's inode number), or 0. */
static inline u64 kcc_task_cgroup_id(struct task_struct *t)
{
	u64 id;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(t));
	rcu_read_unlock();
	return id;
}
#else
struct cgroup;

static inline struct cgroup *kcc_cgroup_get_fd(int fd)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline void kcc_cgroup_put(struct cgroup *cgrp)
{
}

static inline bool kcc_cgroup_holds(struct cgroup *cgrp, struct task_struct *t)
{
	return true;
}

static inline u64 kcc_task_cgroup_id(struct task_struct *t)
{
	return 0;
}
#endif

#endif /* KCC_WRAPPER_CGROUP_H */
