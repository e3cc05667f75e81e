// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_dev.c - /dev/kcc: the misc device, its ioctls, the read() stream,
 * poll and the read-only counters under /sys/class/misc/kcc/.
 *
 * Structs travel size first (include/uapi/linux/kcc.h): the size field
 * is read, then copy_struct_from_user() takes what both sides know and
 * insists that a longer tail from a newer user is zero.  The size baked
 * into the ioctl number must equal that size field: a newer user with a
 * grown struct sends another number for the same command, and what
 * strace, seccomp or an LSM read from the number is what is copied.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/miscdevice.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/device.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_perm.h"
#include "kcc_valence.h"
#include "kcc_watch.h"
#include "kcc_maps.h"
#include "kcc_sample.h"
#include "kcc_session.h"
#include "kcc_dev.h"

/* What a file holds besides the session it may own. */
struct kcc_file {
	struct mutex lock;	/* threads sharing the file: its session, snap */
	void *snap;		/* the stream served by read() */
	size_t snap_len;
	struct kcc_reader rd;	/* the session it reads (kcc_g.lock) */
};

/* Smallest sizes accepted: the structs of ABI 1.0. */
#define KCC_VERSION_SIZE0	sizeof(struct kcc_version)
#define KCC_CONFIG_SIZE0	offsetofend(struct kcc_config, __reserved)
#define KCC_STATUS_SIZE0	offsetofend(struct kcc_status, __reserved)
#define KCC_INJECT_SIZE0	sizeof(struct kcc_inject)
#define KCC_ATTACH_SIZE0	sizeof(struct kcc_attach)

#define KCC_INJECT_MAX_LEN	(64u << 20)	/* bytes per KCC_IOC_INJECT */
#define KCC_INJECT_MAX_COUNT	BIT(20)

/*
 * Copy a size-first struct of kernel size @ksize from @u for ioctl @cmd.
 * Returns the user's size or -EFAULT, -EINVAL (size below @min, absurd
 * or not the size encoded in @cmd) or -E2BIG (a longer struct whose
 * extra tail is not zero).
 */
static int kcc_copy_in(void *k, size_t ksize, size_t min, void __user *u,
		       unsigned int cmd)
{
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)u))
		return -EFAULT;
	if (usize < min || usize > PAGE_SIZE || usize != _IOC_SIZE(cmd))
		return -EINVAL;
	ret = copy_struct_from_user(k, ksize, u, usize);
	if (ret)
		return ret;
	return usize;
}

/* Copy an output struct back, no more than the user's size. */
static int kcc_copy_out(void __user *u, u32 usize, void *k, size_t ksize)
{
	size_t n = min_t(size_t, usize, ksize);

	*(u32 *)k = n;
	return copy_to_user(u, k, n) ? -EFAULT : 0;
}

static long kcc_ioc_version(void __user *u, unsigned int cmd)
{
	struct kcc_version v;
	int usize;

	usize = kcc_copy_in(&v, sizeof(v), KCC_VERSION_SIZE0, u, cmd);
	if (usize < 0)
		return usize;
	if (v.major || v.minor || v.lbr_depth || v.sources || v.__reserved)
		return -EINVAL;
	v.major = KCC_ABI_MAJOR;
	v.minor = KCC_ABI_MINOR;
	v.lbr_depth = kcc_g.lbr ? kcc_g.lbr_depth : 0;
	v.sources = 1u << KCC_SOURCE_AUTO | 1u << KCC_SOURCE_FP;
	if (kcc_g.lbr)
		v.sources |= 1u << KCC_SOURCE_LBR;
	if (kcc_param_inject)
		v.sources |= 1u << KCC_SOURCE_INJECT;
	v.sources |= 1u << KCC_SOURCE_VALENCE;
	return kcc_copy_out(u, usize, &v, sizeof(v));
}

static struct kcc_session *kcc_owned(struct file *file)
{
	return kcc_session_owned(file);
}

/* The session of @file for control, -EINVAL if it owns none. */
static struct kcc_session *kcc_own(struct file *file)
{
	return kcc_owned(file) ?: ERR_PTR(-EINVAL);
}

/*
 * The session @file reads: the one it is attached to, else the one it
 * owns, else the autostart session.  -ENODEV when there is none (or it
 * went away with its owner), -EACCES when the default is not the
 * caller's to read.  With @attach, the file becomes its reader.
 */
static struct kcc_session *kcc_view(struct file *file, bool attach)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s = kf->rd.sess;

	if (s)
		return s;
	s = kcc_owned(file) ?: kcc_g.autostart;
	if (!s)
		return ERR_PTR(-ENODEV);
	if (!kcc_may_read(file, s))
		return ERR_PTR(-EACCES);
	if (attach)
		kcc_reader_attach(&kf->rd, s);
	return s;
}

static long kcc_ioc_configure(struct file *file, void __user *u,
			      unsigned int cmd)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s;
	struct kcc_config c;
	long ret;

	ret = kcc_copy_in(&c, sizeof(c), KCC_CONFIG_SIZE0, u, cmd);
	if (ret < 0)
		return ret;
	ret = kcc_may_configure(&c);
	if (ret)
		return ret;
	mutex_lock(&kf->lock);
	mutex_lock(&kcc_g.lock);
	s = kcc_configure(file, &c);
	ret = PTR_ERR_OR_ZERO(s);
	/* The file reads what it configured. */
	if (!ret)
		kcc_reader_attach(&kf->rd, s);
	mutex_unlock(&kcc_g.lock);
	mutex_unlock(&kf->lock);
	return ret;
}

static long kcc_ioc_attach(struct file *file, void __user *u,
			   unsigned int cmd)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s;
	struct kcc_attach a;
	int usize;
	long ret = 0;

	usize = kcc_copy_in(&a, sizeof(a), KCC_ATTACH_SIZE0, u, cmd);
	if (usize < 0)
		return usize;
	if (a.__reserved)
		return -EINVAL;
	mutex_lock(&kf->lock);
	mutex_lock(&kcc_g.lock);
	if (a.session_id)
		s = kcc_session_find(a.session_id);
	else
		s = kcc_owned(file) ?: kcc_g.autostart;
	if (!s)
		ret = -ENOENT;
	else if (!kcc_may_read(file, s))
		ret = -EACCES;
	else if (kf->rd.sess != s)
		kcc_reader_attach(&kf->rd, s);
	mutex_unlock(&kcc_g.lock);
	mutex_unlock(&kf->lock);
	return ret;
}

static long kcc_ioc_session(struct file *file, unsigned int nr)
{
	struct kcc_session *s;
	long ret = 0;

	mutex_lock(&kcc_g.lock);
	s = kcc_own(file);
	if (IS_ERR(s)) {
		ret = PTR_ERR(s);
		goto out;
	}
	switch (nr) {
	case _IOC_NR(KCC_IOC_START):
		ret = kcc_start(s);
		break;
	case _IOC_NR(KCC_IOC_STOP):
		if (s->state != KCC_STATE_RUNNING)
			ret = -EINVAL;
		else
			kcc_stop(s);
		break;
	case _IOC_NR(KCC_IOC_RESET):
		kcc_reset(s);
		break;
	}
out:
	mutex_unlock(&kcc_g.lock);
	return ret;
}

static long kcc_ioc_status(struct file *file, void __user *u,
			   unsigned int cmd)
{
	struct kcc_session *s;
	struct kcc_status st;
	int usize;

	usize = kcc_copy_in(&st, sizeof(st), KCC_STATUS_SIZE0, u, cmd);
	if (usize < 0)
		return usize;
	mutex_lock(&kcc_g.lock);
	s = kcc_view(file, false);
	if (IS_ERR(s)) {
		mutex_unlock(&kcc_g.lock);
		if (PTR_ERR(s) != -ENODEV)
			return PTR_ERR(s);
		/* No session: an idle status. */
		memset(&st, 0, sizeof(st));
		st.max_bytes_all = READ_ONCE(kcc_param_max_bytes);
		return kcc_copy_out(u, usize, &st, sizeof(st));
	}
	kcc_drain();
	kcc_status_fill(s, &st);
	mutex_unlock(&kcc_g.lock);
	return kcc_copy_out(u, usize, &st, sizeof(st));
}

/*
 * Injected samples take the handlers' path: this CPU's task-level ring,
 * then the worker.  A full ring is emptied synchronously (this is
 * process context) rather than dropping test input.
 */
static int kcc_inject_push(const struct kcc_sample *smp)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
		if (!kcc_push_task(smp))
			return 0;
		kcc_kick();
		flush_work(&kcc_g.work);
	}
	return -ENOSPC;
}

static long kcc_ioc_inject(struct file *file, void __user *u,
			   unsigned int cmd)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s;
	struct kcc_inject in;
	size_t off = 0;
	u8 *buf = NULL;
	long ret;
	int usize;
	u32 i;

	usize = kcc_copy_in(&in, sizeof(in), KCC_INJECT_SIZE0, u, cmd);
	if (usize < 0)
		return usize;
	if (in.__reserved || in.len > KCC_INJECT_MAX_LEN ||
	    in.count > KCC_INJECT_MAX_COUNT ||
	    in.len < (u64)in.count * sizeof(struct kcc_sample))
		return -EINVAL;
	if (!kcc_param_inject)
		return -EPERM;

	/* The file's lock keeps its session from a concurrent CONFIGURE. */
	if (mutex_lock_interruptible(&kf->lock))
		return -ERESTARTSYS;
	mutex_lock(&kcc_g.lock);
	s = kcc_own(file);
	if (IS_ERR(s))
		ret = PTR_ERR(s);
	else if (s->source != KCC_SOURCE_INJECT ||
		 s->state != KCC_STATE_RUNNING)
		ret = -EINVAL;
	else
		ret = 0;
	mutex_unlock(&kcc_g.lock);
	if (ret)
		goto out;

	if (in.len) {
		buf = kvmalloc(in.len, GFP_KERNEL);
		if (!buf) {
			ret = -ENOMEM;
			goto out;
		}
		if (copy_from_user(buf, u64_to_user_ptr(in.data), in.len)) {
			ret = -EFAULT;
			goto out;
		}
	}
	/* All or nothing: every sample is checked before any is queued. */
	for (i = 0; i < in.count; i++) {
		int n = kcc_sample_check((struct kcc_sample *)(buf + off),
					 in.len - off);

		if (n < 0 || (n & 7)) {
			ret = -EINVAL;
			goto out;
		}
		off += n;
	}
	if (off != in.len) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0, off = 0; i < in.count; i++) {
		const struct kcc_sample *smp = (const void *)(buf + off);

		if (!READ_ONCE(s->running))
			break;
		ret = kcc_inject_push(smp);
		if (ret)
			break;
		off += smp->size;
	}
	kcc_kick();
	if (!ret && i < in.count)
		ret = -EINVAL;	/* stopped meanwhile */
	in.done = i;
	if (put_user(in.done, (u32 __user *)(u + offsetof(struct kcc_inject,
							  done))))
		ret = -EFAULT;
out:
	mutex_unlock(&kf->lock);
	kvfree(buf);
	return ret;
}

/* No privilege needed: see kcc_valence_register(). */
static long kcc_ioc_valence_register(void __user *u, unsigned int cmd)
{
	struct kcc_valence_reg reg;
	int usize;

	usize = kcc_copy_in(&reg, sizeof(reg), sizeof(reg), u, cmd);
	if (usize < 0)
		return usize;
	return kcc_valence_register(&reg);
}

static long kcc_ioc_watch(struct file *file, void __user *u, unsigned int cmd)
{
	struct kcc_watch w;
	int ret;

	ret = kcc_copy_in(&w, sizeof(w), sizeof(w), u, cmd);
	return ret < 0 ? ret : kcc_watch_upload(file, &w);
}

#define KCC_CMD(c)	((c) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long kcc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *u = (void __user *)arg;

	switch (KCC_CMD(cmd)) {
	case KCC_CMD(KCC_IOC_VERSION):
		return kcc_ioc_version(u, cmd);
	case KCC_CMD(KCC_IOC_CONFIGURE):
		return kcc_ioc_configure(file, u, cmd);
	case KCC_IOC_START:
	case KCC_IOC_STOP:
	case KCC_IOC_RESET:
		return kcc_ioc_session(file, _IOC_NR(cmd));
	case KCC_CMD(KCC_IOC_STATUS):
		return kcc_ioc_status(file, u, cmd);
	case KCC_CMD(KCC_IOC_INJECT):
		return kcc_ioc_inject(file, u, cmd);
	case KCC_CMD(KCC_IOC_VALENCE_REGISTER):
		return kcc_ioc_valence_register(u, cmd);
	case KCC_CMD(KCC_IOC_ATTACH):
		return kcc_ioc_attach(file, u, cmd);
	case KCC_CMD(KCC_IOC_WATCH):
		return kcc_ioc_watch(file, u, cmd);
	default:
		return -ENOTTY;
	}
}

static ssize_t kcc_read(struct file *file, char __user *ubuf, size_t count,
			loff_t *ppos)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s;
	ssize_t ret;

	/*
	 * Threads may share the file: the swap of the snapshot and every
	 * copy out of it happen under the file's lock, or one thread could
	 * free the buffer another is reading (a double vfree() was seen).
	 */
	if (mutex_lock_interruptible(&kf->lock))
		return -ERESTARTSYS;
	if (*ppos == 0) {
		void *snap;
		size_t len;

		mutex_lock(&kcc_g.lock);
		s = kcc_view(file, true);
		if (IS_ERR(s)) {
			mutex_unlock(&kcc_g.lock);
			ret = PTR_ERR(s);
			goto out;
		}
		snap = kcc_snapshot(&kf->rd, &len);
		mutex_unlock(&kcc_g.lock);
		if (!snap) {
			ret = -ENOMEM;
			goto out;
		}
		vfree(kf->snap);
		kf->snap = snap;
		kf->snap_len = len;
	}
	ret = 0;
	if (kf->snap)
		ret = simple_read_from_buffer(ubuf, count, ppos, kf->snap,
					      kf->snap_len);
out:
	mutex_unlock(&kf->lock);
	return ret;
}

/*
 * Readable when samples were applied to the file's session since this
 * file's last snapshot, or the session is not running; EPOLLERR when
 * there is no session to read (or it went away with its owner).
 */
static __poll_t kcc_poll(struct file *file, poll_table *wait)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s;
	__poll_t mask = 0;

	poll_wait(file, &kcc_g.wait, wait);
	mutex_lock(&kcc_g.lock);
	s = kcc_view(file, true);
	if (IS_ERR(s))
		mask = EPOLLERR;
	else if (s->processed != kf->rd.last_processed ||
		 s->state != KCC_STATE_RUNNING)
		mask = EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&kcc_g.lock);
	return mask;
}

/*
 * Anyone may open: what a file may do is decided when it configures a
 * session (kcc_may_configure()) or reads one (kcc_may_read()), as
 * perf_event_open() decides it per event.
 */
static int kcc_open(struct inode *inode, struct file *file)
{
	struct kcc_file *kf;

	kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	if (!kf)
		return -ENOMEM;
	mutex_init(&kf->lock);
	INIT_LIST_HEAD(&kf->rd.node);
	file->private_data = kf;
	return 0;
}

static int kcc_release(struct inode *inode, struct file *file)
{
	struct kcc_file *kf = file->private_data;
	struct kcc_session *s;

	mutex_lock(&kcc_g.lock);
	kcc_reader_detach(&kf->rd);
	s = kcc_owned(file);
	if (s)
		kcc_session_destroy(s);
	mutex_unlock(&kcc_g.lock);
	vfree(kf->snap);
	mutex_destroy(&kf->lock);
	kfree(kf);
	return 0;
}

static const struct file_operations kcc_fops = {
	.owner		= THIS_MODULE,
	.open		= kcc_open,
	.release	= kcc_release,
	.read		= kcc_read,
	.poll		= kcc_poll,
	.llseek		= default_llseek,
	.unlocked_ioctl	= kcc_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

/* ---- /sys/class/misc/kcc/: read-only counters --------------------------- */

/*
 * The counters below are those of the default session: the autostart
 * one, else the oldest; "sessions" lists them all.
 */
static ssize_t kcc_show(char *buf, int what)
{
	struct kcc_status st = { 0 };
	struct kcc_session *s;
	u64 work_ns = 0, batches = 0;
	int i, n = 0;

	mutex_lock(&kcc_g.lock);
	s = kcc_g.autostart ?:
	    list_first_entry_or_null(&kcc_g.sessions, struct kcc_session, node);
	if (s) {
		kcc_status_fill(s, &st);
		work_ns = s->work_ns;
		batches = s->work_batches;
	}
	mutex_unlock(&kcc_g.lock);

	switch (what) {
	case 0:
		return sysfs_emit(buf, "%u\n", st.state);
	case 1:
		return sysfs_emit(buf, "%llu\n", st.samples);
	case 2:
		return sysfs_emit(buf, "%llu\n", st.processed);
	case 3:
		for (i = 0; i < KCC_DROP_NR; i++)
			n += sysfs_emit_at(buf, n, "%llu%c", st.dropped[i],
					   i == KCC_DROP_NR - 1 ? '\n' : ' ');
		return n;
	case 4:
		return sysfs_emit(buf, "%u %u\n", st.tasks, st.tasks_exited);
	case 5:
		return sysfs_emit(buf, "%llu\n", st.bytes);
	case 6:
		return sysfs_emit(buf, "%llu\n", st.nodes);
	case 8:
		/* Module-wide: readable after the session is gone. */
		return sysfs_emit(buf, "%lld\n",
				  (long long)atomic64_read(&kcc_g.wakeups));
	default:
		return sysfs_emit(buf, "%llu %llu\n", work_ns, batches);
	}
}

/* One line per session: id state target pid tasks bytes readers. */
static ssize_t sessions_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct kcc_session *s;
	int n = 0;

	bool all = perfmon_capable();

	mutex_lock(&kcc_g.lock);
	list_for_each_entry(s, &kcc_g.sessions, node) {
		if (n >= PAGE_SIZE - 96)
			break;
		/* Other users' sessions (their target pids) are theirs. */
		if (!all && !uid_eq(current_euid(), s->uid))
			continue;
		n += sysfs_emit_at(buf, n, "%u %u %s %d %u %llu %u%s\n", s->id,
				   s->state, s->cfg.target == KCC_TARGET_ALL ?
				   "all" : "pid",
				   s->target ? pid_nr(s->target) : 0,
				   s->nr_tasks, s->bytes, s->nr_readers,
				   s == kcc_g.autostart ? " autostart" : "");
	}
	mutex_unlock(&kcc_g.lock);
	return n;
}
static DEVICE_ATTR_RO(sessions);

static ssize_t maps_hook_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return kcc_maps_show(buf);
}
static DEVICE_ATTR_RO(maps_hook);

/*
 * The sched probes' exit and exec events: "pushed unrelated lost" (to
 * the worker; of no running session, never locked; the buffer full).
 */
static ssize_t task_events_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	unsigned long flags;
	u64 pushed, lost;

	raw_spin_lock_irqsave(&kcc_g.ev_lock, flags);
	pushed = kcc_g.ev_pushed;
	lost = kcc_g.ev_lost;
	raw_spin_unlock_irqrestore(&kcc_g.ev_lock, flags);
	return sysfs_emit(buf, "%llu %lld %llu\n", pushed,
			  (long long)atomic64_read(&kcc_g.ev_unrelated), lost);
}
static DEVICE_ATTR_RO(task_events);

#define KCC_ATTR(name, what)						\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return kcc_show(buf, what);					\
}									\
static DEVICE_ATTR_RO(name)

KCC_ATTR(state, 0);
KCC_ATTR(samples, 1);
KCC_ATTR(processed, 2);
KCC_ATTR(dropped, 3);
KCC_ATTR(tasks, 4);
KCC_ATTR(bytes, 5);
KCC_ATTR(nodes, 6);
KCC_ATTR(work_ns, 7);
KCC_ATTR(wakeups, 8);

static struct attribute *kcc_attrs[] = {
	&dev_attr_state.attr,
	&dev_attr_samples.attr,
	&dev_attr_processed.attr,
	&dev_attr_dropped.attr,
	&dev_attr_tasks.attr,
	&dev_attr_bytes.attr,
	&dev_attr_nodes.attr,
	&dev_attr_work_ns.attr,
	&dev_attr_sessions.attr,
	&dev_attr_maps_hook.attr,
	&dev_attr_task_events.attr,
	&dev_attr_wakeups.attr,
	NULL,
};
ATTRIBUTE_GROUPS(kcc);

/*
 * Mode 0666: permission is decided per session, at CONFIGURE and when a
 * file starts reading one (kcc_may_configure(), kcc_may_read()).
 */
static struct miscdevice kcc_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "kcc",
	.fops	= &kcc_fops,
	.groups	= kcc_groups,
	.mode	= 0666,
};

int kcc_dev_init(void)
{
	int ret;

	kcc_perm_init();
	ret = misc_register(&kcc_misc);
	if (ret)
		kcc_perm_exit();
	return ret;
}

void kcc_dev_exit(void)
{
	misc_deregister(&kcc_misc);
	kcc_perm_exit();
}
