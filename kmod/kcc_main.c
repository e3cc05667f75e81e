// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_main.c - kcc.ko entry points (its parameters shared by several
 * rooms are kcc_param.c's).
 *
 * Load order: the rings and their irq_works, the workqueue, the LBR
 * probe, the sched tracepoints, then /dev/kcc.  Unload (only possible
 * with /dev/kcc closed, which has already destroyed any session) goes
 * the other way: the device, the tracepoint probes (unregistered and
 * synchronized), the irq_works (synced) and the flush timer they arm
 * (cancelled, synced), the workqueue (drained and destroyed), the rings.
 *
 * With selftest=1 the module first checks the portable lbr/ core
 * against the running example of the k-CCF paper (Figure 2): the code
 * the userspace tests exercise, built here with the kernel's compiler
 * flags, shim and allocator, where a difference between the two builds
 * would show.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/mm.h>

#include <linux/workqueue.h>

#include "kcc_forest.h"
#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_maps.h"
#include "kcc_task.h"
#include "kcc_sample.h"
#include "kcc_session.h"
#include "kcc_dev.h"

static bool selftest;
module_param(selftest, bool, 0444);
MODULE_PARM_DESC(selftest, "check the lbr core on the k-CCF paper's example at load time");

static bool autostart;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "start a system-wide session with the defaults at load, the default session of readers (kccread /dev/kcc)");

/*
 * Figure 2(a) of the paper: routines are labelled by their one-letter
 * names, 0 is a return.
 */
static const char kcc_fig2_trace[] = {
	'r', 'a', 'b', 0, 'c', 0, 0, 'c', 'a', 'b', 0, 'b', 0, 0, 0, 0,
};

/*
 * Figure 2(b): every path activated by that trace, in calling order, with
 * its activation count c(pi).  The paths that start at r (starred in the
 * paper) are the CCT.
 */
struct kcc_fig2_path {
	const char *path;
	u64 calls;
};

static const struct kcc_fig2_path kcc_fig2_paths[] = {
	{ "r", 1 }, { "a", 2 }, { "b", 3 }, { "c", 2 },
	{ "ra", 1 }, { "ab", 3 }, { "ac", 1 }, { "rc", 1 }, { "ca", 1 },
	{ "rab", 1 }, { "rac", 1 }, { "rca", 1 }, { "cab", 2 },
	{ "rcab", 2 },
};

#define KCC_FIG2_CAP	64	/* nodes per forest: far more than needed */
#define KCC_FIG2_DEPTH	8	/* shadow stack frames: the trace is 4 deep */

struct kcc_selftest {
	struct kcc_forest src;	/* k-SF or CCT */
	struct kcc_forest dst;	/* k-CCF */
	struct kcc_frame *stack;
	void *src_mem;
	void *dst_mem;
	size_t mem_size;
};

static const char *kcc_kname(u32 k, char *buf, size_t len)
{
	if (k == KCC_K_INF)
		return "inf";
	snprintf(buf, len, "%u", k);
	return buf;
}

/* Build the k-SF (the CCT for KCC_K_INF) of the trace into t->src. */
static int kcc_selftest_build(struct kcc_selftest *t, u32 k)
{
	struct kcc_ksf s;
	size_t i;
	int ret;

	ret = kcc_forest_init(&t->src, t->src_mem, t->mem_size,
			      KCC_FIG2_CAP, 0);
	if (ret)
		return ret;
	ret = kcc_ksf_init(&s, &t->src, k, t->stack, KCC_FIG2_DEPTH);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(kcc_fig2_trace); i++) {
		if (kcc_fig2_trace[i])
			kcc_ksf_call(&s, kcc_fig2_trace[i]);
		else if (kcc_ksf_return(&s))
			return -EINVAL;
	}
	if (s.depth || s.calls != 8 || s.lost_calls || s.stack_drops ||
	    t->src.drops)
		return -EINVAL;
	return 0;
}

/*
 * Node of @f reached from a root along @labels[0..len-1], with roots of
 * kind @root, or KCC_NIL.  @step is +1 to follow the labels in order and
 * -1 to follow them backwards, which is how a k-CCF stores a path.
 */
static u32 kcc_selftest_find(const struct kcc_forest *f, u32 root,
			     const char *labels, int len, int step)
{
	int i = step > 0 ? 0 : len - 1;
	u32 n = root;

	for (; i >= 0 && i < len; i += step) {
		n = kcc_forest_find(f, n, labels[i]);
		if (n == KCC_NIL)
			return KCC_NIL;
	}
	return n;
}

/*
 * Compare @f with the paths of Figure 2(b) that it should hold: those of
 * at most k edges, reversed, for a k-CCF (@ccf), or those starting at r
 * for the CCT.  Matching every expected path and the node count proves
 * there is nothing else in the forest.
 */
static int kcc_selftest_compare(const struct kcc_forest *f, bool ccf, u32 k,
				const char *what)
{
	u32 expected = 0;
	char kb[12];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kcc_fig2_paths); i++) {
		const struct kcc_fig2_path *p = &kcc_fig2_paths[i];
		int len = strlen(p->path);
		u32 n;

		if (ccf && (u32)(len - 1) > k)
			continue;
		if (!ccf && p->path[0] != 'r')
			continue;
		expected++;
		n = kcc_selftest_find(f, KCC_ROOT_TOP, p->path, len,
				      ccf ? -1 : 1);
		if (n == KCC_NIL) {
			pr_err("selftest FAILED: %s k=%s: path %s missing\n",
			       what, kcc_kname(k, kb, sizeof(kb)), p->path);
			return -EINVAL;
		}
		if (kcc_forest_ctr(f, n)[KCC_CTR_CALLS] != p->calls) {
			pr_err("selftest FAILED: %s k=%s: path %s counts %llu calls, expected %llu\n",
			       what, kcc_kname(k, kb, sizeof(kb)), p->path,
			       kcc_forest_ctr(f, n)[KCC_CTR_CALLS], p->calls);
			return -EINVAL;
		}
	}
	if (f->count != expected || f->drops) {
		pr_err("selftest FAILED: %s k=%s: %u nodes, expected %u\n",
		       what, kcc_kname(k, kb, sizeof(kb)), f->count, expected);
		return -EINVAL;
	}
	return 0;
}

/* inv_k of t->src (built with @src_k) for context length @k, checked. */
static int kcc_selftest_invk(struct kcc_selftest *t, u32 src_k, u32 k,
			     const char *what)
{
	char kb[12];
	int ret;

	ret = kcc_forest_init(&t->dst, t->dst_mem, t->mem_size,
			      KCC_FIG2_CAP, 0);
	if (ret) {
		pr_err("selftest FAILED: kcc_forest_init returned %d\n", ret);
		return ret;
	}
	ret = kcc_inv_k(&t->src, src_k, k, &t->dst, NULL);
	if (ret) {
		pr_err("selftest FAILED: %s k=%s: kcc_inv_k returned %d\n",
		       what, kcc_kname(k, kb, sizeof(kb)), ret);
		return ret;
	}
	return kcc_selftest_compare(&t->dst, true, k, what);
}

static int kcc_selftest_run(struct kcc_selftest *t)
{
	static const u32 ks[] = { 1, 2, 3 };
	char kb[12];
	size_t i;
	u32 k;
	int ret;

	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		ret = kcc_selftest_build(t, ks[i]);
		if (ret) {
			pr_err("selftest FAILED: k-SF k=%s: construction error %d\n",
			       kcc_kname(ks[i], kb, sizeof(kb)), ret);
			return ret;
		}
		ret = kcc_selftest_invk(t, ks[i], ks[i], "inv_k(k-SF)");
		if (ret)
			return ret;
	}

	ret = kcc_selftest_build(t, KCC_K_INF);
	if (ret) {
		pr_err("selftest FAILED: CCT: construction error %d\n", ret);
		return ret;
	}
	ret = kcc_selftest_compare(&t->src, false, KCC_K_INF, "CCT");
	if (ret)
		return ret;
	/* k = 4 is past the deepest path: it must equal k = 3 (Property 5). */
	for (k = 0; k <= 4; k++) {
		ret = kcc_selftest_invk(t, KCC_K_INF, k, "inv_k(CCT)");
		if (ret)
			return ret;
	}
	return 0;
}

static int kcc_selftest(void)
{
	struct kcc_selftest *t;
	int ret = -ENOMEM;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		goto err_t;
	t->mem_size = kcc_forest_mem_size(KCC_FIG2_CAP, 0);
	t->src_mem = kvmalloc(t->mem_size, GFP_KERNEL);
	if (!t->src_mem)
		goto err_src;
	t->dst_mem = kvmalloc(t->mem_size, GFP_KERNEL);
	if (!t->dst_mem)
		goto err_dst;
	t->stack = kvmalloc_array(KCC_FIG2_DEPTH, sizeof(*t->stack),
				  GFP_KERNEL);
	if (!t->stack)
		goto err_stack;

	ret = kcc_selftest_run(t);
	if (!ret)
		pr_info("selftest passed\n");

	kvfree(t->stack);
err_stack:
	kvfree(t->dst_mem);
err_dst:
	kvfree(t->src_mem);
err_src:
	kfree(t);
	if (ret != -ENOMEM)
		return ret ? -EINVAL : 0;
err_t:
	pr_err("selftest FAILED: out of memory\n");
	return -ENOMEM;
}

/*
 * autostart=1: a system-wide session with the module defaults, owned by
 * no file, so insmod, kccread and kcc report are all it takes.  Files can
 * read it but not control it; rmmod ends it.  A failure is reported and
 * leaves the module loaded without a session.
 */
static void __init kcc_autostart(void)
{
	struct kcc_config c = {
		.size = sizeof(c),
		.source = KCC_SOURCE_AUTO,
		.target = KCC_TARGET_ALL,
	};
	struct kcc_session *s;
	long ret;

	mutex_lock(&kcc_g.lock);
	s = kcc_configure(NULL, &c);
	ret = PTR_ERR_OR_ZERO(s);
	if (!ret) {
		ret = kcc_start(s);
		if (ret)
			kcc_session_destroy(s);
		else
			kcc_g.autostart = s;
	}
	mutex_unlock(&kcc_g.lock);
	if (ret)
		pr_err("autostart failed: %ld\n", ret);
	else
		pr_info("autostart: system-wide session %u running\n", s->id);
}

static int __init kcc_init(void)
{
	int ret;

	if (selftest) {
		ret = kcc_selftest();
		if (ret)
			return ret;
	}

	mutex_init(&kcc_g.lock);
	INIT_LIST_HEAD(&kcc_g.sessions);
	raw_spin_lock_init(&kcc_g.ev_lock);
	init_waitqueue_head(&kcc_g.wait);
	INIT_WORK(&kcc_g.work, kcc_work_fn);
	INIT_DELAYED_WORK(&kcc_g.flush, kcc_flush_fn);

	ret = kcc_rings_init();
	if (ret)
		goto err_rings;
	kcc_g.wq = alloc_ordered_workqueue("kcc", 0);
	if (!kcc_g.wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	kcc_lbr_detect();
	ret = kcc_tp_init();
	if (ret)
		goto err_tp;
	kcc_maps_init();
	ret = kcc_dev_init();
	if (ret)
		goto err_dev;
	pr_info("ready: lbr %s (depth %u), inject %s\n",
		kcc_g.lbr ? "available" : "not available", kcc_g.lbr_depth,
		kcc_param_inject ? "on" : "off");
	if (autostart)
		kcc_autostart();
	return 0;

err_dev:
	kcc_tp_exit();
err_tp:
	kcc_rings_sync();
	destroy_workqueue(kcc_g.wq);
err_wq:
	kcc_rings_exit();
err_rings:
	return ret;
}

static void __exit kcc_exit(void)
{
	kcc_dev_exit();
	/*
	 * Open files pin the module, so the only session left is the one
	 * autostart=1 made, which no file owns.
	 */
	mutex_lock(&kcc_g.lock);
	while (!list_empty(&kcc_g.sessions)) {
		struct kcc_session *s = list_first_entry(&kcc_g.sessions,
							 struct kcc_session,
							 node);

		WARN_ON_ONCE(s->owner);
		kcc_session_destroy(s);
	}
	mutex_unlock(&kcc_g.lock);
	kcc_maps_exit();
	kcc_tp_exit();
	kcc_rings_sync();
	destroy_workqueue(kcc_g.wq);
	kcc_rings_exit();
}

module_init(kcc_init);
module_exit(kcc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("k-calling-context profiler");
