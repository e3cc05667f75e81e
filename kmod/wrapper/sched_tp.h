/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/sched_tp.h - prototypes of the sched tracepoint probes kcc.ko
 * attaches to.  The tracepoints are not exported to modules: they are
 * found by name (for_each_kernel_tracepoint()) and their probes must
 * match TP_PROTO of the running kernel exactly.
 *
 * sched_process_exit gained a group_dead argument in 6.16.  kcc_sample.c
 * attaches sched_switch only while a system-wide session counts calls.
 */
#ifndef KCC_WRAPPER_SCHED_TP_H
#define KCC_WRAPPER_SCHED_TP_H

#include <linux/version.h>
#include <linux/sched.h>

struct linux_binprm;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define KCC_TP_EXIT_PROTO	void *data, struct task_struct *p, bool group_dead
#else
#define KCC_TP_EXIT_PROTO	void *data, struct task_struct *p
#endif

#define KCC_TP_EXEC_PROTO	void *data, struct task_struct *p, \
				pid_t old_pid, struct linux_binprm *bprm

/* sched_switch gained prev_state in 5.18. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define KCC_TP_SWITCH_PROTO	void *data, bool preempt, \
				struct task_struct *prev, \
				struct task_struct *next, \
				unsigned int prev_state
#else
#define KCC_TP_SWITCH_PROTO	void *data, bool preempt, \
				struct task_struct *prev, \
				struct task_struct *next
#endif

#endif /* KCC_WRAPPER_SCHED_TP_H */
