/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_guest.h - helpers of the guest tests kcc_abi, kcc_fp, kcc_inject
 * and kcc_bench on top of kcc_prog.h: configuring a session in one call,
 * walking the task records of a stream, and printing a binary blob on
 * the console (base64 between marker lines) for the host to check.
 */
#ifndef KCC_GUEST_H
#define KCC_GUEST_H

#include <grp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "kcc_prog.h"

static inline void kcc_cfg_init(struct kcc_config *c, uint32_t source,
				uint32_t target, int32_t pid, uint32_t k)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->source = source;
	c->target = target;
	c->pid = pid;
	c->k = k;
}

/* ioctl() as 0 or -errno. */
static inline int kcc_ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* /dev/kcc opened read-write on a module with inject=1, else a skip. */
static inline int kcc_open_inject(void)
{
	struct kcc_version v = { .size = sizeof(v) };
	int fd = open(KCC_DEVICE, O_RDWR);

	if (fd < 0)
		tap_skip_all("no /dev/kcc");
	if (kcc_ioc(fd, KCC_IOC_VERSION, &v) ||
	    !(v.sources & 1u << KCC_SOURCE_INJECT))
		tap_skip_all("kcc.ko without inject=1");
	return fd;
}

/* A task record of a stream and its nodes. */
struct gtask {
	const struct kcc_rec_task *rec;
	const char *nodes;		/* first struct kcc_rec_node */
	size_t node_sz;			/* bytes per node, counters included */
};

static inline const struct kcc_rec_node *gtask_node(const struct gtask *t,
						    uint32_t i)
{
	return (const struct kcc_rec_node *)(t->nodes + i * t->node_sz);
}

static inline const uint64_t *gtask_ctr(const struct gtask *t, uint32_t i)
{
	return (const uint64_t *)(gtask_node(t, i) + 1);
}

/*
 * Call @fn for every task record of a checked stream (kcc_stream_check()
 * returned NULL) and @mfn for every map record; either may be NULL.
 */
static inline void kcc_stream_walk(const char *buf, size_t len,
				   void (*fn)(const struct gtask *, void *),
				   void (*mfn)(const struct kcc_rec_map *, void *),
				   void *arg)
{
	const struct kcc_stream_header *h = (const void *)buf;
	size_t off = h->header_size;

	while (off < len) {
		const struct kcc_rec *r = (const void *)(buf + off);

		if (r->type == KCC_REC_END)
			break;
		if (r->type == KCC_REC_TASK && fn) {
			struct gtask t;

			t.rec = (const void *)r;
			t.nodes = (const char *)(t.rec + 1);
			t.node_sz = sizeof(struct kcc_rec_node) + h->nr_ctrs * 8;
			fn(&t, arg);
		} else if (r->type == KCC_REC_MAP && mfn) {
			mfn((const void *)r, arg);
		}
		off += r->size;
	}
}

/*
 * Print @len bytes as base64 lines between "KCC-BLOB-BEGIN name" and
 * "KCC-BLOB-END name" (selftests/guest/run.sh -b extracts them).
 */
static inline void kcc_blob_print(const char *name, const void *data,
				  size_t len)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = data;
	size_t i, col = 0;

	printf("KCC-BLOB-BEGIN %s %zu\n", name, len);
	for (i = 0; i < len; i += 3) {
		uint32_t v = p[i] << 16;
		int n = len - i;

		if (n > 1)
			v |= p[i + 1] << 8;
		if (n > 2)
			v |= p[i + 2];
		putchar(tbl[v >> 18 & 63]);
		putchar(tbl[v >> 12 & 63]);
		putchar(n > 1 ? tbl[v >> 6 & 63] : '=');
		putchar(n > 2 ? tbl[v & 63] : '=');
		col += 4;
		if (col >= 76) {
			putchar('\n');
			col = 0;
		}
	}
	if (col)
		putchar('\n');
	printf("KCC-BLOB-END %s\n", name);
	fflush(stdout);
}

/* The accounting identity, reported as one TAP result. */
static inline void kcc_check_accounting(int fd, const char *what)
{
	struct kcc_status st;
	int r = kcc_accounting_settles(fd, &st, 5000);

	if (r)
		kcc_status_diag(&st);
	tap_result(r == 0, "%s: samples %llu = processed %llu + dropped %llu",
		   what, (unsigned long long)st.samples,
		   (unsigned long long)st.processed,
		   (unsigned long long)kcc_dropped_sum(&st));
}

/*
 * Become @uid (and gid @uid) holding exactly the capabilities of @caps
 * (bits 1 << CAP_*), with neither setuid nor capsh, which the busybox
 * guest lacks: PR_SET_KEEPCAPS keeps the permitted set across the uid
 * change, capset() then sets permitted and effective to @caps.  For a
 * forked child of a root test; 0 or -errno.
 */
static inline int kcc_become(uid_t uid, uint64_t caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) ||
	    setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = (uint32_t)caps;
	d[1].permitted = d[1].effective = (uint32_t)(caps >> 32);
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

#endif /* KCC_GUEST_H */
