/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/dumpable.h - whether a task is dumpable by its owner (what
 * ptrace and perf let a user of the same uid do to it), across kernels.
 *
 * Up to 7.1 the mode lives in the mm (get_dumpable(mm), SUID_DUMP_USER).
 * 7.2 moved it to task->exec_state (include/linux/sched/exec_state.h,
 * TASK_DUMPABLE_OWNER), whose accessor task_exec_state_get_dumpable() is
 * not exported: the struct is public, so it is read here under RCU as
 * the accessor does.  Kbuild tests for the header, not for a version
 * (the change may be backported): KCC_HAVE_EXEC_STATE.
 *
 * Call with task_lock(@task) held and @task->mm set: a task without an
 * mm (a kernel thread, or one that exited) is never dumpable here.
 */
#ifndef KCC_WRAPPER_DUMPABLE_H
#define KCC_WRAPPER_DUMPABLE_H

#include <linux/sched.h>

#ifdef KCC_HAVE_EXEC_STATE
#include <linux/rcupdate.h>
#include <linux/sched/exec_state.h>

static inline bool kcc_task_dumpable(struct task_struct *task)
{
	struct task_exec_state *es;
	bool owner;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	owner = es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return owner;
}
#else
#include <linux/sched/coredump.h>

static inline bool kcc_task_dumpable(struct task_struct *task)
{
	return get_dumpable(task->mm) == SUID_DUMP_USER;
}
#endif

#endif /* KCC_WRAPPER_DUMPABLE_H */
