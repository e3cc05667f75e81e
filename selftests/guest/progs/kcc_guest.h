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
#include <sys/io.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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
 * Hand @len bytes back to the host as a blob: base64 lines of 76
 * characters between "KCC-BLOB-BEGIN name len" and "KCC-BLOB-END name"
 * (selftests/guest/run.sh -b extracts them).  They go to QEMU's debug
 * console (isa-debugcon at I/O port 0xe9, which run.sh attaches to a
 * file of its own) when the guest has one and the caller may use the
 * port (root: ioperm()); else to standard output, the serial console.
 * The serial console is a 16550 under TCG, one interrupt per 16 bytes,
 * about 33 KB/s, for the 6.1 suite's 3.7 MB of blobs; the debug console
 * takes one OUT a byte and no interrupt, and the suite went from 313 s
 * to 246 s on a quiet machine (Documentation/testing.rst).
 */
#define KCC_DEBUGCON 0xe9	/* QEMU's default iobase; reads back 0xe9 */

struct kcc_blob_out {
	int port;
	size_t n;
	char buf[4096];
};

static inline void kcc_blob_flush(struct kcc_blob_out *o)
{
	size_t i;

	if (o->port)
		for (i = 0; i < o->n; i++)
			outb((unsigned char)o->buf[i], KCC_DEBUGCON);
	else
		fwrite(o->buf, 1, o->n, stdout);
	o->n = 0;
}

static inline void kcc_blob_put(struct kcc_blob_out *o, const char *s,
				size_t n)
{
	while (n--) {
		if (o->n == sizeof(o->buf))
			kcc_blob_flush(o);
		o->buf[o->n++] = *s++;
	}
}

static inline void kcc_blob_print(const char *name, const void *data,
				  size_t len)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static struct kcc_blob_out o;
	const unsigned char *p = data;
	size_t i, col = 0;
	char line[300];

	fflush(stdout);
	o.n = 0;
	o.port = ioperm(KCC_DEBUGCON, 1, 1) == 0 && inb(KCC_DEBUGCON) == KCC_DEBUGCON;
	kcc_blob_put(&o, line, snprintf(line, sizeof(line),
					"KCC-BLOB-BEGIN %.200s %zu\n", name, len));
	for (i = 0; i < len; i += 3) {
		uint32_t v = p[i] << 16;
		size_t n = len - i;
		char q[4];

		if (n > 1)
			v |= p[i + 1] << 8;
		if (n > 2)
			v |= p[i + 2];
		q[0] = tbl[v >> 18 & 63];
		q[1] = tbl[v >> 12 & 63];
		q[2] = n > 1 ? tbl[v >> 6 & 63] : '=';
		q[3] = n > 2 ? tbl[v & 63] : '=';
		kcc_blob_put(&o, q, 4);
		col += 4;
		if (col >= 76) {
			kcc_blob_put(&o, "\n", 1);
			col = 0;
		}
	}
	if (col)
		kcc_blob_put(&o, "\n", 1);
	kcc_blob_put(&o, line, snprintf(line, sizeof(line),
					"KCC-BLOB-END %.200s\n", name));
	kcc_blob_flush(&o);
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

/* Write @s to @path (made 0644 if it is not there); 0 or -1. */
static inline int kcc_put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	return (close(fd) || n != (ssize_t)strlen(s)) ? -1 : 0;
}

#define KCC_PARANOID	"/proc/sys/kernel/perf_event_paranoid"

/* kernel.perf_event_paranoid, or 99 where it cannot be read. */
static inline int kcc_paranoid(void)
{
	FILE *f = fopen(KCC_PARANOID, "r");
	int l = 99;

	if (f) {
		if (fscanf(f, "%d", &l) != 1)
			l = 99;
		fclose(f);
	}
	return l;
}

/*
 * The start of a root test that changes the paranoid level: skips
 * unless root, with /dev/kcc and the sysctl; the level to put back.
 */
static inline int kcc_root_paranoid(void)
{
	int fd, l;

	if (geteuid())
		tap_skip_all("not root");
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no /dev/kcc");
	close(fd);
	l = kcc_paranoid();
	if (l == 99)
		tap_skip_all("no " KCC_PARANOID);
	return l;
}

/* Copy @from to @to with @mode, owner root; 0 or -1. */
static inline int kcc_install(const char *from, const char *to, mode_t mode)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp %s %s", from, to);
	if (system(cmd) || chown(to, 0, 0) || chmod(to, mode))
		return -1;
	return 0;
}

#endif /* KCC_GUEST_H */
