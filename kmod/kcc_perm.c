// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_perm.c - the permission model of /dev/kcc: who may configure a
 * session of which target, attach its events, read it, and how many
 * sessions and Valence registrations one user may hold.  The rules are
 * perf_event_open()'s, point for point where a module can reach them
 * (Documentation/kcc-abi.rst, "Permissions"): the paranoid level from
 * the kernel, CAP_PERFMON, and the ptrace credential check on a target,
 * made again where the events attach.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_perm.h"
#include "wrapper/dumpable.h"
#include "wrapper/fs.h"

static unsigned int kcc_param_user_sessions;
module_param_named(user_sessions, kcc_param_user_sessions, uint, 0444);
MODULE_PARM_DESC(user_sessions, "sessions one user without CAP_PERFMON may have at once (default 0: half of max_sessions, at least 1)");

/*
 * One user cannot take the Valence table from the others: without
 * CAP_PERFMON a user's threads hold at most valence_per_user slots (0: a
 * quarter of the table), and the next registration gets -EDQUOT.
 */
static unsigned int kcc_param_valence_per_user;
module_param_named(valence_per_user, kcc_param_valence_per_user, uint, 0444);
MODULE_PARM_DESC(valence_per_user, "Valence registrations one user without CAP_PERFMON may hold (default 0: a quarter of the 4096 slots)");

/*
 * kernel.perf_event_paranoid, from the kernel, never from a path the
 * caller can redirect.  perf reads the variable (perf_allow_cpu()); it
 * is not exported to modules, and neither is security_perf_event_open().
 * A path lookup from the caller's root and mount namespace could be
 * faked by any user (unshare -Urm and a bind mount over the sysctl, or
 * a chroot after open()).  So kcc reads the sysctl through a procfs
 * instance of its own, mounted at load by the kernel (kern_mount(): in
 * no mount namespace, so nobody can mount over it) and looked up from
 * that mount's root (file_open_root()).  Where it cannot be read the
 * caller needs CAP_SYS_ADMIN (KCC_PARANOID_MAX).
 */
/*
 * A level that could not be read: stricter than any, CAP_SYS_ADMIN only
 * (kcc_paranoid_refuses()), whether or not the kernel has Debian's 3.
 */
#define KCC_PARANOID_MAX	INT_MAX

static struct vfsmount *kcc_proc_mnt;

static int kcc_perf_paranoid(void)
{
	struct file *f;
	char buf[16] = "";
	loff_t pos = 0;
	ssize_t n;
	int level;

	if (IS_ERR_OR_NULL(kcc_proc_mnt))
		return KCC_PARANOID_MAX;
	f = kcc_file_open_root_mnt(kcc_proc_mnt,
				   "sys/kernel/perf_event_paranoid",
				   O_RDONLY | O_NOFOLLOW);
	if (IS_ERR(f))
		return KCC_PARANOID_MAX;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0 || kstrtoint(strim(buf), 10, &level))
		return KCC_PARANOID_MAX;
	return level;
}

/*
 * At load, before /dev/kcc exists: the private procfs instance; without
 * one only CAP_SYS_ADMIN may configure.
 */
void kcc_perm_init(void)
{
	struct file_system_type *t = get_fs_type("proc");

	kcc_proc_mnt = t ? kern_mount(t) : ERR_PTR(-ENODEV);
	if (t)
		module_put(t->owner);	/* put_filesystem(), not exported */
	if (IS_ERR(kcc_proc_mnt))
		pr_warn("no private procfs (%ld): perf_event_paranoid unknown, CAP_SYS_ADMIN needed\n",
			PTR_ERR(kcc_proc_mnt));
}

/*
 * Debian's kernels (as Ubuntu's and Android's) add a level 3 to
 * perf_event_paranoid: perf_event_open() then refuses every event to a
 * caller without CAP_SYS_ADMIN (perf_paranoid_any(), a patch mainline
 * does not have, where a level above 2 acts as 2).  kcc refuses what
 * the kernel it was built for refuses: the patch is found in the
 * headers (Kbuild, KCC_HAVE_PERF_PARANOID_ANY).  A level that could not
 * be read (KCC_PARANOID_MAX) refuses on every kernel.
 */
static bool kcc_paranoid_refuses(int paranoid)
{
#ifdef KCC_HAVE_PERF_PARANOID_ANY
	const int any = 2;
#else
	const int any = KCC_PARANOID_MAX - 1;
#endif
	return paranoid > any && !capable(CAP_SYS_ADMIN);
}

/*
 * May the caller profile @task?  perf_event_open() lets a per-task event
 * through when the caller is perfmon_capable() or passes
 * ptrace_may_access(PTRACE_MODE_READ_REALCREDS) (perf_check_permission()
 * in kernel/events/core.c).  ptrace_may_access() is not exported to
 * modules, so this is its credential part (kernel/ptrace.c): the
 * caller's real uid and gid are each of the target's, and the target is
 * dumpable, or the caller has CAP_SYS_PTRACE.  Both capabilities are
 * asked of the initial user namespace, not of the target's as ptrace
 * does: kcc's events are the kernel's own counters, so a capability a
 * user holds only in a namespace of its own grants nothing here.  The
 * ptrace LSM hook (Yama) is not consulted.  0 or -EACCES.
 */
static int kcc_may_profile_task(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	bool same, dumpable = true;
	int ret = 0;

	if (task == current || perfmon_capable())
		return 0;
	tcred = get_task_cred(task);
	same = uid_eq(cred->uid, tcred->euid) &&
	       uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) &&
	       gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) &&
	       gid_eq(cred->gid, tcred->gid);
	task_lock(task);
	if (task->mm)
		dumpable = kcc_task_dumpable(task);
	task_unlock(task);
	if (!(same && dumpable) && !capable(CAP_SYS_PTRACE))
		ret = -EACCES;
	put_cred(tcred);
	return ret;
}

/* The same of process @nr: 0, -ESRCH or -EACCES. */
static int kcc_may_profile(pid_t nr)
{
	struct pid *pid = find_get_pid(nr);
	struct task_struct *task;
	int ret;

	task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!task)
		return -ESRCH;
	ret = kcc_may_profile_task(task);
	put_task_struct(task);
	return ret;
}

/*
 * START's check of a per-task target, where its events attach: the
 * CONFIGURE rules again, with the caller's credentials, on the process
 * as it is now.  The caller holds @p's exec_update_lock, as
 * perf_event_open() does around its check and the attach, so that an
 * exec of a setuid or otherwise undumpable image cannot come between
 * them: a target that became one since CONFIGURE is refused (-EACCES).
 */
int kcc_may_attach(struct task_struct *p)
{
	lockdep_assert_held(&p->signal->exec_update_lock);
	if (kcc_paranoid_refuses(kcc_perf_paranoid()))
		return -EACCES;
	return kcc_may_profile_task(p);
}

/*
 * Who may configure what, as perf_event_open() decides for the events
 * kcc opens (user-space only, exclude_kernel): nobody without
 * CAP_SYS_ADMIN at Debian's level 3 (kcc_paranoid_refuses()); every
 * task needs perf_event_paranoid <= 0 or CAP_PERFMON (perf_allow_cpu());
 * one process needs CAP_PERFMON or the ptrace credential check on it
 * (perf_check_permission()).  -EACCES, or 0.
 */
int kcc_may_configure(const struct kcc_config *c)
{
	int paranoid = kcc_perf_paranoid();
	int ret;

	if (c->target != KCC_TARGET_ALL &&
	    (c->target != KCC_TARGET_PID || c->pid <= 0))
		return 0;	/* CONFIGURE's -EINVAL */
	if (kcc_paranoid_refuses(paranoid))
		return -EACCES;
	if (c->target == KCC_TARGET_ALL)
		return paranoid > 0 && !perfmon_capable() ? -EACCES : 0;
	ret = kcc_may_profile(c->pid);
	/* A missing process is CONFIGURE's to report, as before. */
	return ret == -EACCES ? ret : 0;
}

/* At unload, after /dev/kcc is gone. */
void kcc_perm_exit(void)
{
	if (!IS_ERR(kcc_proc_mnt))
		kern_unmount(kcc_proc_mnt);
	kcc_proc_mnt = NULL;
}

/*
 * Whether the caller may read @s: its creator (same effective uid), a
 * CAP_PERFMON (or CAP_SYS_ADMIN) holder, or the file that owns it, which
 * may have been passed to another process as a perf event fd can be.
 */
bool kcc_may_read(struct file *file, const struct kcc_session *s)
{
	return s->owner == file || perfmon_capable() ||
	       uid_eq(current_euid(), s->uid);
}

/*
 * May the caller have one more session?  A user without CAP_PERFMON may
 * have user_sessions of them (0: half of max_sessions, at least one),
 * so that one user cannot take every slot from the others.
 */
bool kcc_user_room(void)
{
	unsigned int cap = kcc_param_user_sessions ?:
			   max(1u, kcc_param_max_sessions / 2);
	struct kcc_session *it;
	unsigned int n = 0;

	if (perfmon_capable())
		return true;
	list_for_each_entry(it, &kcc_g.sessions, node)
		if (it->owner && uid_eq(it->uid, current_euid()))
			n++;
	return n < cap;
}

/*
 * The Valence slots the caller's user may hold, of a table of @slots:
 * 0 when its registrations are not counted (CAP_PERFMON).
 */
unsigned int kcc_valence_quota(unsigned int slots)
{
	if (perfmon_capable())
		return 0;
	return kcc_param_valence_per_user ?: slots / 4;
}
