// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_abi - the /dev/kcc contract of include/uapi/linux/kcc.h, checked in
 * the guest: version, unknown commands, size-first structs, reserved
 * fields, ranges, bad pointers, privileges, one session at a time, the
 * sources a machine without LBR offers, STOP/START ordering, read() in
 * any chunk size and poll().
 *
 * Usage: kcc_abi [-i]	(-i: the module was loaded with inject=1)
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device.
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kcc_guest.h"

static int inject_on;

static void expect(int got, int want, const char *what)
{
	if (got != want)
		tap_diag("%s: got %d (%s), expected %d (%s)", what, got,
			 strerror(-got), want, strerror(-want));
	tap_result(got == want, "%s -> %s", what, want ? strerror(-want) : "0");
}

static void test_version(int fd)
{
	struct kcc_version v = { .size = sizeof(v) };
	int r = kcc_ioc(fd, KCC_IOC_VERSION, &v);

	tap_diag("version %u.%u lbr_depth %u sources %#x", v.major, v.minor,
		 v.lbr_depth, v.sources);
	tap_result(!r && v.major == KCC_ABI_MAJOR && v.minor == KCC_ABI_MINOR,
		   "KCC_IOC_VERSION reports ABI %d.%d", KCC_ABI_MAJOR,
		   KCC_ABI_MINOR);
	tap_result(!r && (v.sources & 1u << KCC_SOURCE_FP) &&
		   !!(v.sources & 1u << KCC_SOURCE_INJECT) == inject_on,
		   "sources: fp always, inject iff the module parameter is set");

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.__reserved = 1;
	expect(kcc_ioc(fd, KCC_IOC_VERSION, &v), -EINVAL,
	       "VERSION with reserved field set");
	memset(&v, 0, sizeof(v));
	expect(kcc_ioc(fd, KCC_IOC_VERSION, &v), -EINVAL, "VERSION with size 0");
}

static void test_unknown(int fd)
{
	char buf[64] = { 0 };

	expect(kcc_ioc(fd, _IO(KCC_IOC_MAGIC, 0x7f), NULL), -ENOTTY,
	       "unknown command number");
	expect(kcc_ioc(fd, _IOWR('x', 0x00, struct kcc_version), buf), -ENOTTY,
	       "command of another magic");
	expect(kcc_ioc(fd, _IOR(KCC_IOC_MAGIC, 0x02, int), buf), -ENOTTY,
	       "START with a direction it does not have");
}

/* KCC_IOC_CONFIGURE as a user whose struct kcc_config had @size bytes. */
#define CFG_IOC(size)	_IOC(_IOC_WRITE, KCC_IOC_MAGIC, 0x01, (size))

/*
 * The size bits of the ioctl number must equal the struct's size field
 * (Documentation/kcc-abi.rst); both obey the growth rules of kcc.h.
 */
static void test_size_bits(int fd)
{
	/* ABI 1.0: the struct up to __reserved[] of kcc_config and status */
	const uint32_t cfg0 = offsetof(struct kcc_config, event_config1);
	const uint32_t st0 = offsetof(struct kcc_status, ev_config1);
	struct kcc_config c;
	struct kcc_status st;
	struct kcc_version v;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
	c.size = cfg0;
	expect(kcc_ioc(fd, CFG_IOC(cfg0), &c), 0,
	       "CONFIGURE from an ABI 1.0 user (size bits and field both 1.0)");
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), -EINVAL,
	       "CONFIGURE with a 1.0 size field under the current size bits");
	c.size = sizeof(c);
	expect(kcc_ioc(fd, CFG_IOC(cfg0), &c), -EINVAL,
	       "CONFIGURE with size bits smaller than the size field");
	expect(kcc_ioc(fd, CFG_IOC(0), &c), -EINVAL,
	       "CONFIGURE with size bits 0");
	expect(kcc_ioc(fd, CFG_IOC(sizeof(c) + 8), &c), -EINVAL,
	       "CONFIGURE with size bits 8 more than the size field");
	expect(kcc_ioc(fd, _IOR(KCC_IOC_MAGIC, 0x01, struct kcc_config), &c),
	       -ENOTTY, "CONFIGURE with the read direction");

	memset(&st, 0xa5, sizeof(st));
	memset(&st, 0, st0);
	st.size = st0;
	expect(kcc_ioc(fd, _IOC(_IOC_READ | _IOC_WRITE, KCC_IOC_MAGIC, 0x05, st0),
			&st), 0, "STATUS from an ABI 1.0 user");
	tap_result(st.size == st0 && st.ev_config1 == 0xa5a5a5a5a5a5a5a5ull &&
		   st.stitch_below_walk == 0xa5a5a5a5a5a5a5a5ull,
		   "STATUS answers an ABI 1.0 user with its size, no more");
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	expect(kcc_ioc(fd, _IOC(_IOC_READ | _IOC_WRITE, KCC_IOC_MAGIC, 0x00,
				sizeof(v) + 8), &v), -EINVAL,
	       "VERSION with size bits other than its size field");
}

/* CONFIGURE with one field changed from a valid fp configuration. */
static int cfg_try(int fd, void (*edit)(struct kcc_config *))
{
	struct kcc_config c;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
	edit(&c);
	return kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
}

static void e_none(struct kcc_config *c) { }
static void e_res0(struct kcc_config *c) { c->__reserved0 = 1; }
static void e_res3(struct kcc_config *c) { c->__reserved[3] = 1ull << 63; }
static void e_flags(struct kcc_config *c) { c->flags = KCC_CFG_KERNEL; }
static void e_join(struct kcc_config *c) { c->flags = KCC_CFG_JOIN_LONGEST; }
static void e_join2(struct kcc_config *c)
{
	c->flags = KCC_CFG_JOIN_UNIQUE | KCC_CFG_JOIN_LONGEST;
}
/* The PMU perf exposes as "cpu"; TCG guests have none. */
static int kcc_have_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0;
}

/* Cycles asked for by name: no fallback to cpu-clock, unlike 0/0. */
static void e_cycles(struct kcc_config *c) { c->flags = KCC_CFG_EVENT; }
static void e_k65(struct kcc_config *c) { c->k = KCC_K_MAX + 1; }
static void e_kbig(struct kcc_config *c) { c->k = KCC_K_INF - 1; }
static void e_kinf(struct kcc_config *c) { c->k = KCC_K_INF; }
static void e_src(struct kcc_config *c) { c->source = 9; }
static void e_tgt(struct kcc_config *c) { c->target = 7; }
static void e_pid(struct kcc_config *c) { c->pid = 1; }
static void e_nopid(struct kcc_config *c) { c->target = KCC_TARGET_PID; }
static void e_per1(struct kcc_config *c) { c->sample_period = 1; }
static void e_perbig(struct kcc_config *c) { c->sample_period = 1ull << 62; }
static void e_nodes(struct kcc_config *c) { c->task_nodes = 1; }
static void e_depth(struct kcc_config *c) { c->stack_depth = 100000; }
static void e_table(struct kcc_config *c) { c->burst_table = 3; }
static void e_bytes(struct kcc_config *c) { c->max_bytes = ~0ull; }
static void e_type(struct kcc_config *c) { c->event_type = 2; }
static void e_dyn(struct kcc_config *c) { c->event_type = 0x7ffffff0; }
static void e_name(struct kcc_config *c)
{
	memset(c->event_name, 'x', sizeof(c->event_name));
}
static void e_lbrsw(struct kcc_config *c)
{
	c->source = KCC_SOURCE_LBR;
	c->event_type = 1;	/* PERF_TYPE_SOFTWARE */
	c->flags |= KCC_CFG_EVENT;
}
static void e_sw(struct kcc_config *c) { c->event_type = 1; c->event_config = 5; }
/* ABI 1.3: a frequency instead of a period. */
static void e_freq0(struct kcc_config *c)
{
	c->flags = KCC_CFG_FREQ;
	c->sample_period = 0;
}
static void e_freqmax(struct kcc_config *c)
{
	c->flags = KCC_CFG_FREQ;
	c->sample_period = KCC_FREQ_MAX + 1;
}
static void e_freq99(struct kcc_config *c)
{
	c->flags = KCC_CFG_FREQ;
	c->sample_period = 99;
}

/* The two-event block (calls_*). */
static void e_cflags(struct kcc_config *c) { c->calls_flags = 1u << 2; }
static void e_conly(struct kcc_config *c) { c->calls_flags = KCC_CALLS_COUNTER; }
static void e_cctrper(struct kcc_config *c)
{
	c->source = KCC_SOURCE_AUTO;
	c->calls_flags = KCC_CALLS_EVENT | KCC_CALLS_COUNTER;
	c->calls_sample_period = 1000;
}
static void e_cnoflag(struct kcc_config *c) { c->calls_event_type = 4; }
static void e_cfp(struct kcc_config *c) { c->calls_flags = KCC_CALLS_EVENT; }
static void e_cper(struct kcc_config *c)
{
	c->source = KCC_SOURCE_AUTO;
	c->calls_flags = KCC_CALLS_EVENT;
	c->calls_sample_period = 999;
}
static void e_csw(struct kcc_config *c)
{
	c->source = KCC_SOURCE_AUTO;
	c->calls_flags = KCC_CALLS_EVENT;
	c->calls_event_type = 1;	/* PERF_TYPE_SOFTWARE */
}
/* cycles as the calls event: no LBR here, so the one event. */
static void e_cauto(struct kcc_config *c)
{
	c->source = KCC_SOURCE_AUTO;
	c->calls_flags = KCC_CALLS_EVENT;
	c->calls_sample_period = 1000;
}

/*
 * The stream header's flags after CONFIGURE with @edit (which must
 * succeed), or -errno.
 */
static int cfg_hdr_flags(int fd, void (*edit)(struct kcc_config *))
{
	struct kcc_stream_header h;
	int ret = cfg_try(fd, edit);

	if (ret)
		return ret;
	lseek(fd, 0, SEEK_SET);
	if (read(fd, &h, sizeof(h)) != sizeof(h))
		return -EIO;
	return (int)h.flags;
}

static void test_calls_event(int fd)
{
	int f;

	expect(cfg_try(fd, e_cflags), -EINVAL, "CONFIGURE unknown calls_flags");
	expect(cfg_try(fd, e_conly), -EINVAL,
	       "CONFIGURE KCC_CALLS_COUNTER without KCC_CALLS_EVENT");
	expect(cfg_try(fd, e_cctrper), -EINVAL,
	       "CONFIGURE a calls counter with a calls_sample_period");
	expect(cfg_try(fd, e_cnoflag), -EINVAL,
	       "CONFIGURE calls_event_type without KCC_CALLS_EVENT");
	expect(cfg_try(fd, e_cfp), -EINVAL,
	       "CONFIGURE a calls event with source fp");
	expect(cfg_try(fd, e_cper), -EINVAL,
	       "CONFIGURE calls_sample_period 999");
	expect(cfg_try(fd, e_csw), -EINVAL,
	       "CONFIGURE a software calls event (no branch stack)");
	if (kcc_have_pmu()) {
		tap_skip("calls event fallback: this machine has a PMU");
		return;
	}
	f = cfg_hdr_flags(fd, e_cauto);
	tap_result(f >= 0 && (f & KCC_HDR_CALLS_FALLBACK) &&
		   !(f & KCC_HDR_CALLS_EVENT),
		   "CONFIGURE auto with a calls event, no LBR: one event, header says KCC_HDR_CALLS_FALLBACK (flags %d)",
		   f);
	f = cfg_hdr_flags(fd, e_none);
	tap_result(f >= 0 && !(f & (KCC_HDR_CALLS_FALLBACK | KCC_HDR_CALLS_EVENT)),
		   "CONFIGURE without a calls event: neither calls flag (flags %d)",
		   f);
}

static void test_config(int fd)
{
	struct {
		struct kcc_config c;
		uint64_t tail[4];
	} big;
	struct kcc_config c;

	expect(cfg_try(fd, e_none), 0, "CONFIGURE fp, all tasks, k=3");
	expect(cfg_try(fd, e_kinf), 0, "CONFIGURE k=KCC_K_INF");
	expect(cfg_try(fd, e_res0), -EINVAL, "CONFIGURE __reserved0 != 0");
	expect(cfg_try(fd, e_res3), -EINVAL, "CONFIGURE __reserved[3] != 0");
	expect(cfg_try(fd, e_flags), -EINVAL, "CONFIGURE unknown flag");
	expect(cfg_try(fd, e_join), 0, "CONFIGURE KCC_CFG_JOIN_LONGEST");
	expect(cfg_try(fd, e_join2), -EINVAL, "CONFIGURE both join policies");
	if (!kcc_have_pmu())
		expect(cfg_try(fd, e_cycles), -EOPNOTSUPP,
		       "CONFIGURE cycles (KCC_CFG_EVENT, 0/0) without a PMU");
	expect(cfg_try(fd, e_k65), -EINVAL, "CONFIGURE k = KCC_K_MAX + 1");
	expect(cfg_try(fd, e_kbig), -EINVAL, "CONFIGURE k = 2^32 - 2");
	expect(cfg_try(fd, e_src), -EINVAL, "CONFIGURE unknown source");
	expect(cfg_try(fd, e_tgt), -EINVAL, "CONFIGURE unknown target");
	expect(cfg_try(fd, e_pid), -EINVAL, "CONFIGURE all tasks with a pid");
	expect(cfg_try(fd, e_nopid), -EINVAL, "CONFIGURE target pid without pid");
	expect(cfg_try(fd, e_per1), -EINVAL, "CONFIGURE sample_period 1");
	expect(cfg_try(fd, e_perbig), -EINVAL, "CONFIGURE sample_period 2^62");
	expect(cfg_try(fd, e_nodes), -EINVAL, "CONFIGURE task_nodes 1");
	expect(cfg_try(fd, e_depth), -EINVAL, "CONFIGURE stack_depth 100000");
	expect(cfg_try(fd, e_table), -EINVAL, "CONFIGURE burst_table 3");
	expect(cfg_try(fd, e_bytes), -EINVAL, "CONFIGURE max_bytes 2^64 - 1");
	expect(cfg_try(fd, e_type), -EINVAL, "CONFIGURE event type 2 (tracepoint)");
	expect(cfg_try(fd, e_dyn), -EOPNOTSUPP,
	       "CONFIGURE a dynamic PMU type nobody registered");
	expect(cfg_try(fd, e_name), -EINVAL,
	       "CONFIGURE event_name not NUL-terminated");
	expect(cfg_try(fd, e_lbrsw), -EINVAL,
	       "CONFIGURE source lbr on cpu-clock (no branch stack)");
	expect(cfg_try(fd, e_sw), -EINVAL, "CONFIGURE software event other than a clock");
	expect(cfg_try(fd, e_freq0), -EINVAL, "CONFIGURE a frequency of 0");
	expect(cfg_try(fd, e_freqmax), -EINVAL,
	       "CONFIGURE a frequency above KCC_FREQ_MAX");
	{
		int f = cfg_hdr_flags(fd, e_freq99);

		tap_result(f >= 0 && (f & KCC_HDR_FREQ),
			   "CONFIGURE 99 Hz: the header says KCC_HDR_FREQ (flags %d)",
			   f);
	}

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
	c.size = 0;
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), -EINVAL, "CONFIGURE size 0");
	c.size = 4;
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), -EINVAL, "CONFIGURE size 4");
	c.size = 1u << 30;
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), -EINVAL, "CONFIGURE size 2^30");

	/* A newer user's number encodes its grown struct, size field alike. */
	memset(&big, 0, sizeof(big));
	kcc_cfg_init(&big.c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
	big.c.size = sizeof(big);
	expect(kcc_ioc(fd, CFG_IOC(sizeof(big)), &big), 0,
	       "CONFIGURE from a newer user, zero tail");
	big.tail[2] = 1;
	expect(kcc_ioc(fd, CFG_IOC(sizeof(big)), &big), -E2BIG,
	       "CONFIGURE from a newer user, nonzero tail");
	big.tail[2] = 0;
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &big), -EINVAL,
	       "CONFIGURE whose size field is larger than its number's size bits");
	test_size_bits(fd);
}

static void test_faults(int fd)
{
	void *volatile bad = (void *)8;	/* hidden from the compiler */
	struct kcc_config cc, *c;
	char *page;

	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, NULL), -EFAULT, "CONFIGURE NULL");
	expect(kcc_ioc(fd, KCC_IOC_VERSION, (void *)0xffffffff81000000ull),
	       -EFAULT, "VERSION at a kernel address");
	expect(kcc_ioc(fd, KCC_IOC_STATUS, (void *)16), -EFAULT,
	       "STATUS at address 16");

	/* A struct whose end runs into an unmapped page. */
	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(page + 4096, 4096);
	c = (struct kcc_config *)(page + 4096 - 8);
	c->size = sizeof(*c);
	c->flags = 0;
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, c), -EFAULT,
	       "CONFIGURE straddling an unmapped page");
	munmap(page, 4096);

	kcc_cfg_init(&cc, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
	kcc_ioc(fd, KCC_IOC_CONFIGURE, &cc);
	lseek(fd, 0, SEEK_SET);
	errno = 0;
	expect(read(fd, bad, 4096) < 0 ? -errno : 0, -EFAULT,
	       "read() into address 8");
}

/*
 * In a child that gave up its privileges: open() (@configure 0), or
 * open() and a system-wide CONFIGURE (1).  The errno it got.
 */
static int open_unprivileged(int to_nobody, int configure)
{
	int st;
	pid_t p = fork();

	if (p == 0) {
		struct kcc_config c;
		int fd;

		if (kcc_become(to_nobody ? 65534 : 0, 0))
			_exit(200);
		fd = open(KCC_DEVICE, O_RDWR);
		if (fd < 0)
			_exit(errno);
		kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
		_exit(configure ? -kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) : 0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1000;
	return -WEXITSTATUS(st);
}

/*
 * Anyone may open; CONFIGURE decides (kcc_perm goes through the
 * perf_event_paranoid levels: at the default, 2, an unprivileged
 * system-wide session is refused).
 */
static void test_privileges(void)
{
	expect(open_unprivileged(1, 0), 0, "open as uid nobody");
	expect(open_unprivileged(0, 0), 0, "open as root without capabilities");
	expect(open_unprivileged(1, 1), -EACCES,
	       "system-wide CONFIGURE as uid nobody");
}

/* The session id STATUS reports on @fd, 0 on error. */
static __u32 session_of(int fd)
{
	struct kcc_status st;

	return kcc_status_get(fd, &st) ? 0 : st.session_id;
}

/* read() of a stream header: 0, -errno, or -EIO if it is not one. */
static int read_header(int fd, __u32 *sid)
{
	struct kcc_stream_header h;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, &h, sizeof(h));
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(h) || h.magic != KCC_STREAM_MAGIC)
		return -EIO;
	*sid = h.status.session_id;
	return 0;
}

/*
 * Each configuring file owns a session; a file without one reads
 * nothing until it attaches to one, and loses it with its owner.
 */
static void test_sessions(int fd)
{
	struct kcc_attach a = { .size = sizeof(a) };
	struct kcc_config c;
	int fd2 = kcc_open(O_RDWR), fd3 = kcc_open(O_RDWR);
	__u32 id1, id2, hid = 0;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), 0, "first file configures");
	expect(kcc_ioc(fd2, KCC_IOC_CONFIGURE, &c), 0,
	       "second file configures a session of its own meanwhile");
	id1 = session_of(fd);
	id2 = session_of(fd2);
	expect(id1 && id2 && id1 != id2 ? 0 : -EINVAL, 0,
	       "the two sessions have ids of their own");
	expect(read_header(fd2, &hid) ?: hid == id2 ? 0 : -EINVAL, 0,
	       "second file read() gets a snapshot of its own session");
	expect(kcc_ioc(fd3, KCC_IOC_START, NULL), -EINVAL,
	       "START on a file without a session");
	expect(read_header(fd3, &hid), -ENODEV,
	       "read() on a file without a session, no autostart session");
	a.session_id = id1 + id2 + 1000;
	expect(kcc_ioc(fd3, KCC_IOC_ATTACH, &a), -ENOENT,
	       "ATTACH to a session that does not exist");
	a.session_id = id1;
	a.__reserved = 1;
	expect(kcc_ioc(fd3, KCC_IOC_ATTACH, &a), -EINVAL,
	       "ATTACH with a reserved field set");
	a.__reserved = 0;
	expect(kcc_ioc(fd3, KCC_IOC_ATTACH, &a), 0, "ATTACH to the first");
	expect(read_header(fd3, &hid) ?: hid == id1 ? 0 : -EINVAL, 0,
	       "the attached file reads the first session");
	expect(kcc_ioc(fd2, KCC_IOC_STOP, NULL), -EINVAL,
	       "second file STOP before its START");
	expect(kcc_ioc(fd, KCC_IOC_STOP, NULL), -EINVAL, "STOP before START");
	expect(kcc_ioc(fd, KCC_IOC_START, NULL), 0, "START");
	expect(kcc_ioc(fd, KCC_IOC_START, NULL), -EBUSY, "START twice");
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), -EBUSY, "CONFIGURE while running");
	expect(kcc_ioc(fd, KCC_IOC_STOP, NULL), 0, "STOP");
	expect(kcc_ioc(fd, KCC_IOC_RESET, NULL), 0, "RESET");
	close(fd);
	expect(read_header(fd3, &hid), -ENODEV,
	       "the attached file's read() once the owner is closed");
	expect(kcc_ioc(fd2, KCC_IOC_CONFIGURE, &c), 0,
	       "second file configures again once the first is closed");
	close(fd2);
	close(fd3);
}

static void test_sources(int fd)
{
	struct kcc_version v = { .size = sizeof(v) };
	struct kcc_status st;
	struct kcc_config c;
	const struct kcc_stream_header *h;
	const struct kcc_metric_desc *d;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t tasks, nodes;
	char *buf, *buf2;
	long len, len2;
	int r;

	kcc_ioc(fd, KCC_IOC_VERSION, &v);
	kcc_cfg_init(&c, KCC_SOURCE_LBR, KCC_TARGET_ALL, 0, 3);
	r = kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
	if (v.sources & 1u << KCC_SOURCE_LBR)
		tap_skip("lbr -> EOPNOTSUPP: this machine has LBR");
	else
		expect(r, -EOPNOTSUPP, "CONFIGURE source lbr without LBR");

	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, 3);
	expect(kcc_ioc(fd, KCC_IOC_CONFIGURE, &c), inject_on ? 0 : -EPERM,
	       "CONFIGURE source inject");

	kcc_cfg_init(&c, KCC_SOURCE_AUTO, KCC_TARGET_ALL, 0, 3);
	r = kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
	kcc_status_get(fd, &st);
	tap_result(!r && st.source == ((v.sources & 1u << KCC_SOURCE_LBR) ?
				       KCC_SOURCE_LBR : KCC_SOURCE_FP) &&
		   st.state == KCC_STATE_READY,
		   "auto resolves to %s in STATUS", (v.sources & 1u << KCC_SOURCE_LBR) ?
		   "lbr" : "fp");
	kcc_ioc(fd, KCC_IOC_START, NULL);
	usleep(200000);
	kcc_ioc(fd, KCC_IOC_STOP, NULL);

	len = kcc_read_stream(fd, &buf, 0);
	tap_result(len > 0 && !kcc_stream_check(buf, len, &tasks, &nodes),
		   "stream read in odd chunk sizes is well-formed (%ld bytes)", len);
	if (len <= 0)
		return;
	h = (const void *)buf;
	d = (const void *)(h + 1);
	tap_diag("stream: source %u flags %#x k %u period %llu metric 1 '%s' type %u config %llu",
		 h->source, h->flags, h->k, (unsigned long long)h->sample_period,
		 d[1].name, d[1].type, (unsigned long long)d[1].config);
	/* The events were read before their release at STOP (ABI 1.1). */
	tap_diag("events: %u, errors %u, enabled %llu ns, running %llu ns, count %llu, throttles %llu",
		 h->status.ev_nr, h->status.ev_errors,
		 (unsigned long long)h->status.ev_enabled_ns,
		 (unsigned long long)h->status.ev_running_ns,
		 (unsigned long long)h->status.ev_count,
		 (unsigned long long)h->status.ev_throttles);
	tap_result(h->status.ev_nr > 0 && !h->status.ev_errors &&
		   h->status.ev_running_ns > 0 &&
		   h->status.ev_running_ns <= h->status.ev_enabled_ns,
		   "stream status: events read at STOP, running <= enabled, none in ERROR");
	if (v.sources & 1u << KCC_SOURCE_LBR) {
		tap_skip("stream says fp: this machine has LBR");
	} else {
		tap_result(h->source == KCC_SOURCE_FP &&
			   !(h->flags & KCC_HDR_CALLS_VALID) &&
			   !strcmp(d[0].name, "calls") &&
			   !strcmp(d[2].name, "samples") && d[1].name[0],
			   "auto without LBR: the stream says fp, calls not valid");
	}
	len2 = kcc_read_stream(fd, &buf2, 1);
	tap_result(len2 == len && !memcmp(buf2 + sizeof(*h), buf + sizeof(*h),
					  len - sizeof(*h)) &&
		   !memcmp(&h->status, &((struct kcc_stream_header *)buf2)->status,
			   sizeof(h->status)),
		   "stream read 1 byte at a time equals the same snapshot");
	free(buf);
	if (len2 > 0)
		free(buf2);

	r = poll(&pfd, 1, 1000);
	tap_result(r == 1 && (pfd.revents & POLLIN),
		   "poll() says readable once stopped");
}

int main(int argc, char **argv)
{
	int fd;

	inject_on = argc > 1 && !strcmp(argv[1], "-i");
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no " KCC_DEVICE);
	printf("TAP version 13\n");
	test_version(fd);
	test_unknown(fd);
	test_config(fd);
	test_calls_event(fd);
	test_faults(fd);
	test_privileges();
	test_sessions(fd);	/* closes fd */
	fd = kcc_open(O_RDWR);
	test_sources(fd);
	close(fd);
	printf("1..%d\n", tap_nr);
	return tap_exit();
}
