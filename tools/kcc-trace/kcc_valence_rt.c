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
 * The hooks look the call's return address up in the table (a hash
 * table, one probe for most calls), then set two bit fields of the
 * acyclic id or push a cyclic code or an escape record
 * (user/lib/valence_area.h); they allocate only when recursion
 * overflows the area and make no system call.
 * Each thread registers its area on /dev/kcc (KCC_IOC_VALENCE_REGISTER)
 * when the device is there, as rseq(2) registers its own.
 *
 * KCC_VALENCE_CHECK=file makes the runtime, at every tick of
 * a CPU-time timer (KCC_VALENCE_HZ, default 1000), append the area and
 * the true stack (the nodes and sites of the frames it keeps) to file
 * (struct valence_check_hdr of
 * user/lib/valence_prog.h), as a sample would read them; kcc valence
 * check decodes them.  Ticks that land in a hook are counted, not
 * written: there the true stack and the area are not in step.
 *
 * The runtime also keeps, per thread, the stack pointer, op and node of
 * each frame it encoded (not read by kcc.ko): a call or return that
 * shows frames were skipped by longjmp() undoes their updates first.
 *
 * Limits: frames deeper than 4096 are not kept (a longjmp() out of them
 * is not mended); routines outside the table (other objects) are not
 * encoded.
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
#define MAX_FRAMES	4096

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
	uint32_t *hash;			/* site -> op index + 1, 0: empty */
	uint32_t hmask;
	uint32_t acyc_words;
	uint32_t rec_len;
	uint64_t table_id;
	int dev;			/* /dev/kcc or -1 */
	int check_fd;
	volatile uint64_t samples, in_hook, registered, unregistered, unwound;
	uint64_t inlined;
} rt = { .dev = -1, .check_fd = -1 };

/* initial-exec: the hooks reach these without a __tls_get_addr() call. */
#define TLS	__thread __attribute__((tls_model("initial-exec")))

static TLS struct kcc_valence_area area;
static TLS struct valence_spill spill;
static TLS int thread_ready;
static TLS volatile int in_hook;
/* The thread's frames, to undo what longjmp() skipped, and its truth. */
struct rt_frame {
	uintptr_t sp;			/* hook frame at the entry */
	uint64_t fn;			/* routine, image offset */
	const struct valence_op *op;	/* the table's entry for site */
	uint64_t site;
	uint32_t node;
	uint16_t esc;			/* encoded as an escape */
	uint16_t inl;			/* inlined: not encoded */
};

static TLS struct rt_frame frames[MAX_FRAMES];
static TLS struct check_frame truth[MAX_FRAMES];
static TLS uint32_t depth;		/* frames[] in use */
static TLS uint32_t tdepth;		/* truth[]: the encoded ones */

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

/* Open addressing on the return address: one probe for most calls. */
NOTRACE static uint32_t rt__hash(uint64_t site)
{
	return (uint32_t)((site * 0x9e3779b97f4a7c15ull) >> 32) & rt.hmask;
}

NOTRACE static const struct valence_op *rt__op(uint64_t site)
{
	uint32_t h = rt__hash(site);

	while (rt.hash[h]) {
		const struct valence_op *op = &rt.ops[rt.hash[h] - 1];

		if (op->site == site)
			return op;
		h = (h + 1) & rt.hmask;
	}
	return NULL;
}

NOTRACE static int rt__hash_build(void)
{
	uint32_t size = 16, i;

	while (size < 2 * rt.nr_ops)
		size *= 2;
	rt.hash = calloc(size, sizeof(*rt.hash));
	if (!rt.hash)
		return -ENOMEM;
	rt.hmask = size - 1;
	for (i = 0; i < rt.nr_ops; i++) {
		uint32_t h = rt__hash(rt.ops[i].site);

		while (rt.hash[h])
			h = (h + 1) & rt.hmask;
		rt.hash[h] = i + 1;
	}
	return 0;
}

/* The node of fn: the op's callee for most calls, else a search. */
NOTRACE static int64_t rt__callee(const struct valence_op *op, uint64_t fn)
{
	if (op && rt.node_addr[op->callee] == fn)
		return op->callee;
	return rt__node(fn);
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

/* The frame on top is gone (longjmp()) or returns: undo its update. */
NOTRACE static void rt__unwind_one(void)
{
	struct rt_frame *f = &frames[--depth];

	if (f->inl)
		return;
	tdepth--;
	valence__exit(&area, &spill, f->esc ? NULL : f->op, f->node,
		      rt.rec_len);
}

/*
 * The hooks keep a frame of their own (noinline), so frame_address(0)
 * follows the instrumented routine's stack pointer, as in
 * kcc_trace_rt.c.  A routine entered above the entry of a frame we hold
 * means that frame is gone without its exit hook (longjmp(), a Lua error
 * or coroutine switch): its update is undone first.  A routine entered
 * at the very same stack pointer as the frame on top was inlined into
 * it (GCC calls the hooks of inlined routines from their host, with the
 * host's return address): the machine has no frame for it, the table no
 * edge, and it is not encoded.
 */
NOTRACE __attribute__((noinline))
void __cyg_profile_func_enter(void *fn, void *call_site);
NOTRACE __attribute__((noinline))
void __cyg_profile_func_enter(void *fn, void *call_site)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uint64_t site = (uintptr_t)call_site - rt.base;
	uint64_t fnoff = (uintptr_t)fn - rt.base;
	const struct valence_op *op;
	struct rt_frame *f;
	int64_t node;

	if (!rt.on || in_hook)
		return;
	in_hook = 1;
	if (!thread_ready)
		rt__thread_init();
	while (depth && depth <= MAX_FRAMES && frames[depth - 1].sp < sp) {
		rt.unwound++;
		rt__unwind_one();
	}
	if (depth && depth < MAX_FRAMES && frames[depth - 1].sp == sp) {
		/* Inlined: nothing to look up, nothing to encode. */
		frames[depth] = (struct rt_frame){ .sp = sp, .fn = fnoff,
						   .site = site, .inl = 1 };
		rt.inlined++;
		depth++;
		in_hook = 0;
		return;
	}
	op = rt__op(site);
	node = rt__callee(op, fnoff);
	if (node < 0) {
		in_hook = 0;
		return;
	}
	if (depth >= MAX_FRAMES) {	/* beyond what we hold: encode all */
		valence__enter(&area, &spill, op, (uint32_t)node, site,
			       rt.rec_len);
		depth++;
		in_hook = 0;
		return;
	}
	f = &frames[depth];
	*f = (struct rt_frame){ .sp = sp, .fn = fnoff, .op = op, .site = site,
				.node = (uint32_t)node };
	f->esc = valence__enter(&area, &spill, op, (uint32_t)node, site,
				rt.rec_len);
	if (rt.check_fd >= 0)
		truth[tdepth] = (struct check_frame){ (uint32_t)node, f->esc,
						      site };
	tdepth++;
	depth++;
	in_hook = 0;
}

NOTRACE __attribute__((noinline))
void __cyg_profile_func_exit(void *fn, void *call_site);
NOTRACE __attribute__((noinline))
void __cyg_profile_func_exit(void *fn, void *call_site)
{
	uint64_t site = (uintptr_t)call_site - rt.base;
	uint64_t fnoff = (uintptr_t)fn - rt.base;
	const struct valence_op *op;
	int64_t node;
	uint32_t i;

	if (!rt.on || in_hook || !thread_ready || !depth)
		return;
	in_hook = 1;
	if (depth > MAX_FRAMES) {	/* beyond what we hold: trust it */
		op = rt__op(site);
		node = rt__callee(op, fnoff);
		if (node >= 0) {
			depth--;
			valence__exit(&area, &spill, op, (uint32_t)node,
				      rt.rec_len);
		}
		in_hook = 0;
		return;
	}
	/* Normally the top frame; deeper ones were skipped by longjmp(). */
	for (i = depth; i && (frames[i - 1].fn != fnoff ||
			      frames[i - 1].site != site); i--)
		;
	if (i) {
		while (depth > i) {
			rt.unwound++;
			rt__unwind_one();
		}
		rt__unwind_one();
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
	if (in_hook || !thread_ready || depth > MAX_FRAMES) {
		rt.in_hook++;
		errno = saved;
		return;
	}
	h.magic = 0x4b564c43u;
	h.depth = tdepth;
	h.area = area;
	if (write(rt.check_fd, &h, sizeof(h)) != sizeof(h) ||
	    write(rt.check_fd, truth, tdepth * sizeof(*truth)) < 0)
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
	if (in != nn || io != ne)
		return -EINVAL;
	return rt__hash_build();
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
	fprintf(stderr, "kcc_valence_rt: %lu ticks, %lu in a hook (not written), %lu frames undone after longjmp, %lu inlined calls, %lu threads registered, %lu not\n",
		(unsigned long)rt.samples, (unsigned long)rt.in_hook,
		(unsigned long)rt.unwound, (unsigned long)rt.inlined,
		(unsigned long)rt.registered, (unsigned long)rt.unregistered);
}
