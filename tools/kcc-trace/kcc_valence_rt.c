// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_valence_rt.c - the Valence runtime of kcc, for C programs built
 * with -finstrument-functions.  Each thread keeps its calling context,
 * encoded, in a struct kcc_valence_area (include/uapi/linux/kcc.h) that
 * kcc.ko reads at every sample; the encoding table comes from
 * kcc valence annotate:
 *
 *	cc -O2 -finstrument-functions -o prog prog.c kcc_valence_rt.o
 *	kcc valence annotate -o prog.valence ./prog
 *	KCC_VALENCE_TABLE=prog.valence ./prog
 *
 * The hooks look the call's return address up in the table (a binary
 * search), then set two bit fields of the acyclic id or push a cyclic
 * code or an escape record (user/util/valence_area.h): no shadow stack,
 * no allocation except when recursion overflows the area, no system call.
 * Each thread registers its area on /dev/kcc (KCC_IOC_VALENCE_REGISTER)
 * when the device is there, as rseq(2) registers its own.
 *
 * KCC_VALENCE_CHECK=file also keeps the true stack and, at every tick of
 * a CPU-time timer (KCC_VALENCE_HZ, default 1000), appends the area and
 * the true stack to file (struct valence_check_hdr of
 * user/util/valence_prog.h), as a sample would read them; kcc valence
 * check decodes them.  Ticks that land in a hook are counted, not
 * written: there the true stack and the area are not in step.
 *
 * Limits: longjmp() and exceptions skip exit hooks and leave the area
 * deeper than the stack until the thread returns past them; routines
 * outside the table (other objects) are not encoded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#include "valence_area.h"

#define NOTRACE		__attribute__((no_instrument_function))
#define CHECK_DEPTH	4096

struct check_frame {		/* struct valence_frame of valence.h */
	uint32_t node;
	uint32_t escaped;
	uint64_t site;
};

static struct {
	int on;
	uintptr_t base;
	uint32_t nr_nodes;
	uint64_t *node_addr;		/* sorted */
	uint32_t nr_ops;
	struct valence_op *ops;		/* sorted by site */
	uint32_t acyc_words;
	uint32_t rec_len;
	uint64_t table_id;
	int dev;			/* /dev/kcc or -1 */
	int check_fd;
	volatile uint64_t samples, in_hook, registered, unregistered;
} rt = { .dev = -1, .check_fd = -1 };

static __thread struct kcc_valence_area area;
static __thread struct valence_spill spill;
static __thread int thread_ready;
static __thread volatile int in_hook;
static __thread struct check_frame shadow[CHECK_DEPTH];
static __thread uint32_t depth;

NOTRACE static int64_t rt__node(uint64_t addr)
{
	uint32_t lo = 0, hi = rt.nr_nodes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rt.node_addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rt.nr_nodes && rt.node_addr[lo] == addr ? (int64_t)lo : -1;
}

NOTRACE static const struct valence_op *rt__op(uint64_t site)
{
	uint32_t lo = 0, hi = rt.nr_ops;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rt.ops[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rt.nr_ops && rt.ops[lo].site == site ? &rt.ops[lo] : NULL;
}

NOTRACE static void rt__thread_init(void)
{
	struct kcc_valence_reg reg = {
		.size = sizeof(reg),
		.area_size = sizeof(area),
		.area = (uintptr_t)&area,
	};

	area.size = sizeof(area);
	area.cur = KCC_VALENCE_NO_NODE;
	area.root = KCC_VALENCE_NO_NODE;
	area.acyc_words = rt.acyc_words;
	area.table_id = rt.table_id;
	thread_ready = 1;
	if (rt.dev >= 0 && ioctl(rt.dev, KCC_IOC_VALENCE_REGISTER, &reg) == 0)
		__atomic_add_fetch(&rt.registered, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&rt.unregistered, 1, __ATOMIC_RELAXED);
}

NOTRACE void __cyg_profile_func_enter(void *fn, void *call_site);
NOTRACE void __cyg_profile_func_enter(void *fn, void *call_site)
{
	uint64_t site = (uintptr_t)call_site - rt.base;
	int64_t node;
	int esc;

	if (!rt.on || in_hook)
		return;
	in_hook = 1;
	if (!thread_ready)
		rt__thread_init();
	node = rt__node((uintptr_t)fn - rt.base);
	if (node >= 0) {
		esc = valence__enter(&area, &spill, rt__op(site),
				     (uint32_t)node, site, rt.rec_len);
		if (rt.check_fd >= 0 && depth < CHECK_DEPTH)
			shadow[depth] = (struct check_frame){ (uint32_t)node,
							      (uint32_t)esc,
							      site };
		depth++;
	}
	in_hook = 0;
}

NOTRACE void __cyg_profile_func_exit(void *fn, void *call_site);
NOTRACE void __cyg_profile_func_exit(void *fn, void *call_site)
{
	uint64_t site = (uintptr_t)call_site - rt.base;
	int64_t node;

	if (!rt.on || in_hook || !thread_ready)
		return;
	in_hook = 1;
	node = rt__node((uintptr_t)fn - rt.base);
	if (node >= 0 && depth) {
		valence__exit(&area, &spill, rt__op(site), (uint32_t)node,
			      rt.rec_len);
		depth--;
	}
	in_hook = 0;
}

/* The check mode's sample: what kcc.ko reads, and the truth. */
NOTRACE static void rt__sample(int sig)
{
	struct {
		uint32_t magic, depth;
		struct kcc_valence_area area;
	} h;
	int saved = errno;

	(void)sig;
	rt.samples++;
	if (in_hook || !thread_ready || depth > CHECK_DEPTH) {
		rt.in_hook++;
		errno = saved;
		return;
	}
	h.magic = 0x4b564c43u;
	h.depth = depth;
	h.area = area;
	if (write(rt.check_fd, &h, sizeof(h)) != sizeof(h) ||
	    write(rt.check_fd, shadow, depth * sizeof(*shadow)) < 0)
		rt.in_hook++;
	errno = saved;
}

NOTRACE static int rt__base(struct dl_phdr_info *info, size_t size, void *d)
{
	(void)size;
	*(uintptr_t *)d = info->dlpi_addr;
	return 1;	/* the first object is the executable */
}

NOTRACE static int rt__load(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	uint32_t nn, ne, in = 0, io = 0;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f) || strcmp(line, "kcc-valence 1\n") ||
	    !fgets(line, sizeof(line), f) ||
	    sscanf(line, "table %lx %u %u %u %u", &rt.table_id, &nn, &ne,
		   &rt.acyc_words, &rt.rec_len) != 5 ||
	    rt.acyc_words > KCC_VALENCE_ACYC_WORDS || !rt.rec_len ||
	    rt.rec_len > 32)
		goto bad;
	rt.node_addr = calloc(nn + 1, sizeof(*rt.node_addr));
	rt.ops = calloc(ne + 1, sizeof(*rt.ops));
	if (!rt.node_addr || !rt.ops)
		goto bad;
	while (fgets(line, sizeof(line), f)) {
		struct valence_op *op = &rt.ops[io];
		unsigned int k, p0, w0, p1, w1;
		uint32_t idx;

		if (!strncmp(line, "node ", 5) && in < nn &&
		    sscanf(line, "node %u %lx", &idx, &rt.node_addr[in]) == 2) {
			in++;
		} else if (!strncmp(line, "op ", 3) && io < ne &&
			   sscanf(line, "op %lx %u %u %u %u %u %u %u %u %u",
				  &op->site, &op->caller, &op->callee, &k, &p0,
				  &w0, &op->val[0], &p1, &w1,
				  &op->val[1]) == 10) {
			op->kind = k;
			op->pos[0] = p0;
			op->width[0] = w0;
			op->pos[1] = p1;
			op->width[1] = w1;
			io++;
		}
	}
	fclose(f);
	rt.nr_nodes = in;
	rt.nr_ops = io;
	return in == nn && io == ne ? 0 : -EINVAL;
bad:
	fclose(f);
	return -EINVAL;
}

NOTRACE __attribute__((constructor)) static void rt__init(void)
{
	const char *table = getenv("KCC_VALENCE_TABLE");
	const char *check = getenv("KCC_VALENCE_CHECK");
	int err;

	if (!table)
		return;
	err = rt__load(table);
	if (err) {
		fprintf(stderr, "kcc_valence_rt: %s: %s\n", table,
			strerror(-err));
		return;
	}
	dl_iterate_phdr(rt__base, &rt.base);
	rt.dev = open("/dev/kcc", O_RDONLY | O_CLOEXEC);
	if (check) {
		const char *hz = getenv("KCC_VALENCE_HZ");
		long us = 1000000 / (hz ? atol(hz) : 1000);
		struct itimerval it = { { 0, us > 0 ? us : 1000 },
					{ 0, us > 0 ? us : 1000 } };
		struct sigaction sa = { .sa_handler = rt__sample,
					.sa_flags = SA_RESTART };

		rt.check_fd = open(check, O_WRONLY | O_CREAT | O_TRUNC |
				   O_APPEND | O_CLOEXEC, 0644);
		if (rt.check_fd < 0) {
			fprintf(stderr, "kcc_valence_rt: %s: %s\n", check,
				strerror(errno));
			return;
		}
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
	}
	rt.on = 1;
}

NOTRACE __attribute__((destructor)) static void rt__fini(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	if (rt.check_fd < 0)
		return;
	setitimer(ITIMER_PROF, &off, NULL);
	fprintf(stderr, "kcc_valence_rt: %lu ticks, %lu in a hook (not written), %lu threads registered, %lu not\n",
		(unsigned long)rt.samples, (unsigned long)rt.in_hook,
		(unsigned long)rt.registered, (unsigned long)rt.unregistered);
}
