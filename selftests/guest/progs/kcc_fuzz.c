// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_fuzz - a bounded, seeded fuzzer of /dev/kcc for the guest.
 *
 * Usage: kcc_fuzz [-s SEED] [-n ITER] [-j THREADS] [-d DEVICE] [-u UID] [-v]
 *
 * Drives every entry point of the device: random ioctl commands (any
 * magic, number, direction, size), the commands of include/uapi/linux/kcc.h
 * with random struct sizes, flags and reserved bits, argument pointers
 * that are NULL, inaccessible, in the kernel half, non-canonical or straddle a
 * guard page; start/stop/reset storms; two-event configurations (the
 * calls_* block), started for real when the software LBR PMU kcc_lbr is
 * loaded (selftests/lbrpmu); watched sets (KCC_IOC_WATCH), valid ones
 * on real sessions and broken ones; read() of every size and from bad
 * buffers; poll().  It asserts what kcc.h promises (unknown magic ->
 * ENOTTY, nonzero reserved -> EINVAL, bad pointers -> EFAULT, the sample
 * accounting, a well-formed stream) and, above all, survives: the host
 * judges the guest's kernel log (KASAN, lockdep, UBSAN, kmemleak, ...).
 *
 * With -u it drops to user and group UID (no supplementary groups, no
 * capabilities) before it opens the device, as any local user may (the
 * device is 0666): the same promises hold, and what such a user may not
 * do (system-wide sessions, other users' processes, more sessions than
 * user_sessions) is refused, never done.
 *
 * Without -n it runs 200 iterations (seconds on the debug kernel under
 * TCG), so that a guest suite running every program without arguments
 * stays short; make fuzz-guest runs more (FUZZ_ITER).
 *
 * The first phase is single-threaded: SEED and ITER name one exact
 * sequence of calls, so a failure reproduces with the same arguments.
 * The second phase runs THREADS threads (seeds SEED+1..) on shared and
 * private descriptors concurrently; its interleaving is up to the
 * scheduler.  Output is TAP; exit 0 pass, 1 fail, 4 no device (skip).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kcc_prog.h"

#define PAGE		4096
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Pointer classes handed to the kernel. */
enum ptr_class {
	PTR_GOOD,		/* a valid buffer large enough */
	PTR_NULL,
	PTR_UNMAPPED,		/* a page without access (PROT_NONE) */
	PTR_GUARD_EDGE,		/* ends in a PROT_NONE page */
	PTR_READONLY,		/* mapped read-only: kernel writes fault */
	PTR_KERNEL,		/* kernel text / direct map */
	PTR_NONCANON,		/* non-canonical */
	PTR_RANDOM,
	PTR_NR,
};

/*
 * A PROT_NONE page, not an munmap()ed one: a hole would be reused by the
 * next mmap() (a thread stack, malloc) and stop being bad.
 */
static char *unmapped;
static const uint64_t kernel_ptrs[] = {
	0xffffffff81000000ull, 0xffff888000000000ull, 0xffffffffff600000ull,
	0xfffffffffffff000ull, 0xffffffffffffffffull,
};

/* Counters of one phase, summed for the report. */
struct stats {
	uint64_t calls;
	uint64_t ok;
	uint64_t errors;
	uint64_t violations;
	char first[160];	/* first violated promise */
};

/* What one thread owns: its PRNG, its buffers, its counters. */
struct ctx {
	struct rnd r;
	char *area;		/* [good: 4 pages][guard page][read-only page] */
	char *inj;		/* one page of packed samples for INJECT */
	struct stats st;
	const char *volatile op; /* the call under way, for the watchdog */
};

/* Calls completed by all threads; the watchdog reports when it stalls. */
static uint64_t progress;
static struct ctx *ctxs[257];
static unsigned int nr_ctxs;

static int verbose;

static void violation(struct stats *s, const char *fmt, ...)
{
	va_list ap;

	s->violations++;
	if (s->first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->first, sizeof(s->first), fmt, ap);
	va_end(ap);
}

static void *pick_ptr(struct rnd *r, char *area, enum ptr_class c, size_t len)
{
	if (len > 4 * PAGE)
		len = 4 * PAGE;
	switch (c) {
	case PTR_GOOD:
		return area + rnd_below(r, 4 * PAGE - len + 1) / 8 * 8;
	case PTR_NULL:
		return NULL;
	case PTR_UNMAPPED:
		return unmapped + rnd_below(r, PAGE);
	case PTR_GUARD_EDGE:
		/* the last byte(s) cross into the guard page */
		return area + 4 * PAGE - (len > 1 ? len / 2 : 1);
	case PTR_READONLY:
		return area + 5 * PAGE;
	case PTR_KERNEL:
		return (void *)(uintptr_t)kernel_ptrs[rnd_below(r,
				ARRAY_SIZE(kernel_ptrs))];
	case PTR_NONCANON:
		return (void *)(uintptr_t)(0x8000000000000000ull |
					    (rnd_next(r) & 0x7ffffffffff8ull));
	default:
		return (void *)(uintptr_t)rnd_next(r);
	}
}

static enum ptr_class pick_class(struct rnd *r)
{
	/* mostly valid pointers so that the commands get past copy_from_user */
	if (rnd_below(r, 3))
		return PTR_GOOD;
	return rnd_below(r, PTR_NR);
}

/*
 * A metric name: empty, a known one, printable bytes or any bytes, NUL
 * terminated except 1 in 8 (which CONFIGURE must refuse).
 */
static void fill_event_name(struct rnd *r, char name[KCC_METRIC_NAME_LEN])
{
	static const char *const known[] = { "cycles", "cache-misses",
					     "cpu-clock", "kcc_lbr/calls/" };
	uint32_t i, n = rnd_below(r, KCC_METRIC_NAME_LEN);

	memset(name, 0, KCC_METRIC_NAME_LEN);
	switch (rnd_below(r, 4)) {
	case 0:
		break;
	case 1:
		strcpy(name, known[rnd_below(r, ARRAY_SIZE(known))]);
		break;
	case 2:
		for (i = 0; i < n; i++)
			name[i] = 0x20 + rnd_below(r, 0x5f);
		break;
	default:
		for (i = 0; i < n; i++)
			name[i] = 1 + rnd_below(r, 255);
		break;
	}
	if (rnd_one_in(r, 8))
		memset(name + strlen(name), 'x',
		       KCC_METRIC_NAME_LEN - strlen(name));
}

/*
 * The perf type of the software LBR PMU (selftests/lbrpmu) when it is
 * loaded, else 0: with it, LBR-source and two-event sessions can start.
 */
static uint32_t lbr_type;

static void find_lbr_pmu(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kcc_lbr/type", "r");
	unsigned int t;

	if (!f)
		return;
	if (fscanf(f, "%u", &t) == 1)
		lbr_type = t;
	fclose(f);
}

/*
 * The two-event block (ABI 1.1, KCC_CALLS_EVENT): off, on with the
 * software LBR PMU's calls event (event=1) beside its misses or clock
 * event, sampled or (ABI 1.3, KCC_CALLS_COUNTER) counted, or on with any
 * type and config, including the software, tracepoint and breakpoint
 * types CONFIGURE refuses for it.
 */
static void fill_calls(struct rnd *r, struct kcc_config *c)
{
	static const uint32_t types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 100, ~0u };
	static const uint64_t periods[] = { 0, 1, 1000, 100000, ~0ull };

	switch (rnd_below(r, 4)) {
	case 0:
		return;
	case 1:
		if (lbr_type) {
			c->source = KCC_SOURCE_LBR;
			c->event_type = lbr_type;
			c->event_config = rnd_one_in(r, 2) ? 2 : 0;
			c->flags |= KCC_CFG_EVENT;
			c->calls_event_type = lbr_type;
			c->calls_event_config = 1;
			c->calls_flags = KCC_CALLS_EVENT;
			break;
		}
		/* fall through */
	default:
		c->calls_flags = rnd_one_in(r, 6) ? (uint32_t)rnd_next(r) :
						    KCC_CALLS_EVENT;
		c->calls_event_type = rnd_one_in(r, 3) && lbr_type ? lbr_type :
				      types[rnd_below(r, ARRAY_SIZE(types))];
		c->calls_event_config = rnd_one_in(r, 3) ? rnd_next(r) :
							   rnd_below(r, 4);
		c->calls_event_config1 = rnd_one_in(r, 4) ? rnd_next(r) : 0;
		break;
	}
	c->calls_sample_period = periods[rnd_below(r, ARRAY_SIZE(periods))];
	if (rnd_one_in(r, 8))
		c->calls_sample_period = rnd_next(r);
	/* A counter takes no period; now and then one anyway. */
	if (rnd_one_in(r, 2)) {
		c->calls_flags |= KCC_CALLS_COUNTER;
		if (!rnd_one_in(r, 8))
			c->calls_sample_period = 0;
	}
}

/* A random config that is sometimes valid. */
static void fill_config(struct rnd *r, struct kcc_config *c)
{
	static const uint32_t ks[] = { 0, 1, 2, 3, 8, KCC_K_MAX, KCC_K_MAX + 1,
				       KCC_K_INF, 1000 };
	static const uint64_t periods[] = { 0, 1, 100, 10000, 100000, 1000000,
					    ~0ull };

	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->k = ks[rnd_below(r, ARRAY_SIZE(ks))];
	c->source = rnd_one_in(r, 8) ? (uint32_t)rnd_next(r) : rnd_below(r, 5);
	c->target = rnd_one_in(r, 8) ? (uint32_t)rnd_next(r) : rnd_below(r, 3);
	switch (rnd_below(r, 4)) {
	case 0:
		c->pid = getpid();
		break;
	case 1:
		c->pid = 1;
		break;
	case 2:
		c->pid = 0;
		break;
	default:
		c->pid = (int32_t)rnd_next(r);
		break;
	}
	/* mostly PERF_TYPE_SOFTWARE, which exists in every guest */
	c->event_type = rnd_one_in(r, 4) ? (uint32_t)rnd_below(r, 8) : 1;
	c->event_config = rnd_one_in(r, 4) ? rnd_next(r) : rnd_below(r, 3);
	c->sample_period = periods[rnd_below(r, ARRAY_SIZE(periods))];
	c->max_bytes = rnd_one_in(r, 3) ? rnd_below(r, 1 << 20) : 0;
	c->max_tasks = rnd_one_in(r, 3) ? rnd_below(r, 5) : 0;
	c->task_nodes = rnd_one_in(r, 3) ? rnd_below(r, 100) : 0;
	c->stack_depth = rnd_one_in(r, 3) ? rnd_below(r, 1000) : 0;
	c->burst_rr_inv = rnd_one_in(r, 3) ? (uint32_t)rnd_next(r) : 0;
	c->burst_table = rnd_one_in(r, 3) ? 1u << rnd_below(r, 32) : 0;
	c->burst_sig_depth = rnd_one_in(r, 3) ? rnd_below(r, 100) : 0;
	if (rnd_one_in(r, 6))
		c->flags = 1u << rnd_below(r, 32);
	/* ABI 1.1 event specs: any PMU's config1/2 and a metric name */
	if (rnd_one_in(r, 3))
		c->flags |= KCC_CFG_EVENT;
	c->event_config1 = rnd_one_in(r, 3) ? rnd_next(r) : 0;
	c->event_config2 = rnd_one_in(r, 3) ? rnd_next(r) : 0;
	fill_event_name(r, c->event_name);
	fill_calls(r, c);
}

/* A page of packed kcc_samples, most valid, some malformed one way. */
static size_t fill_samples(struct rnd *r, char *buf, size_t cap,
			   uint32_t *count)
{
	size_t off = 0;
	uint32_t n = 0;

	while (off + sizeof(struct kcc_sample) <= cap && !rnd_one_in(r, 6)) {
		struct kcc_sample *s = (void *)(buf + off);
		uint32_t ns = rnd_below(r, 40), nb = rnd_below(r, 20), i;
		size_t sz = sizeof(*s) + ns * 8 + nb * sizeof(struct kcc_branch);
		uint64_t *stk = (void *)(s + 1);
		struct kcc_branch *br;

		if (off + sz > cap)
			break;
		memset(s, 0, sz);
		s->size = sz;
		s->nr_stack = ns;
		s->nr_branches = nb;
		s->delta = 1 + rnd_below(r, 1000);
		for (i = 0; i < ns; i++)
			stk[i] = 0x400000 + rnd_below(r, 64) * 16;
		br = (void *)(stk + ns);
		for (i = 0; i < nb; i++) {
			br[i].from = 0x400000 + rnd_below(r, 64) * 16;
			br[i].to = 0x400000 + rnd_below(r, 64) * 16;
			br[i].kind = rnd_below(r, 3);
		}
		switch (rnd_below(r, 12)) {
		case 0:
			s->size = rnd_next(r);
			break;
		case 1:
			s->size |= 4;
			break;
		case 2:
			s->nr_stack = 0xffff;
			break;
		case 3:
			s->nr_branches = 0xffff;
			break;
		case 4:
			s->calls = 1;
			s->flags &= ~KCC_SAMPLE_CALLS;
			break;
		case 5:
			s->flags = ~0u;
			break;
		case 6:
			if (nb)
				br[0].kind = 77;
			break;
		case 7:
			if (nb)
				br[0].__reserved = 1;
			break;
		case 8:
			s->size = 0;
			break;
		default:
			break;
		}
		off += sz;
		n++;
	}
	*count = rnd_one_in(r, 8) ? (uint32_t)rnd_next(r) : n;
	return off;
}

/* Sizes around sizeof(struct): where the growth rules of kcc.h live. */
static uint32_t pick_size(struct rnd *r, uint32_t real)
{
	switch (rnd_below(r, 10)) {
	case 0:
		return 0;
	case 1:
		return 4;
	case 2:
		return real - 4;
	case 3:
		return real + 8;
	case 4:
		return real + rnd_below(r, 2 * PAGE);
	case 5:
		return (uint32_t)rnd_next(r);
	default:
		return real;
	}
}

/* The same command whatever the size bits say. */
static int same_cmd(unsigned long a, unsigned long b)
{
	return _IOC_TYPE(a) == _IOC_TYPE(b) && _IOC_NR(a) == _IOC_NR(b) &&
	       _IOC_DIR(a) == _IOC_DIR(b);
}

union cmd_buf {
	struct kcc_version v;
	struct kcc_config c;
	struct kcc_status st;
	struct kcc_inject in;
	struct kcc_watch w;
	char raw[2 * PAGE + 64];
};

/*
 * A watched set for KCC_IOC_WATCH in @buf (a page): address ranges of
 * routines, context lengths and paths, mostly consistent, some one way
 * wrong (a length of 0 or past KCC_WATCH_K_MAX + 1, a routine id out of
 * range, the label count or k off, a range backwards).  Sets *planted
 * when a reserved field is nonzero.
 */
static void fill_watch(struct rnd *r, struct kcc_watch *w, char *buf,
		       int *planted)
{
	struct kcc_watch_range *rg = (void *)buf;
	uint32_t *lens = (void *)(buf + 1024), *paths = (void *)(buf + 2048);
	uint32_t i, j, nl = 0, kmax = 0;

	memset(w, 0, sizeof(*w));
	w->size = sizeof(*w);
	w->nr_routines = 1 + rnd_below(r, 8);
	w->nr_ranges = rnd_below(r, 9);
	for (i = 0; i < w->nr_ranges; i++) {
		rg[i].start = 0x400000 + i * 0x100;
		rg[i].end = rg[i].start + 0x100;
		rg[i].routine = rnd_below(r, w->nr_routines);
		rg[i].__reserved = 0;
		if (rnd_one_in(r, 16))
			rg[i].end = rg[i].start - 1;
		if (rnd_one_in(r, 16))
			rg[i].routine = w->nr_routines + rnd_below(r, 3);
		if (rnd_one_in(r, 32))
			rg[i].start = rg[i].end = 0;
	}
	w->nr_contexts = rnd_below(r, 12);
	for (i = 0; i < w->nr_contexts && nl < 200; i++) {
		lens[i] = 1 + rnd_below(r, 4);
		if (rnd_one_in(r, 20))
			lens[i] = rnd_one_in(r, 2) ? 0 : KCC_WATCH_K_MAX + 2;
		for (j = 0; j < lens[i] && nl < 200; j++)
			paths[nl++] = rnd_below(r, w->nr_routines);
		if (lens[i] > kmax)
			kmax = lens[i];
	}
	w->nr_contexts = i;
	w->nr_labels = nl;
	w->k = kmax ? kmax - 1 : 0;
	w->range = w->nr_contexts * (1 + rnd_below(r, 4));
	if (nl && rnd_one_in(r, 20))
		paths[rnd_below(r, nl)] = w->nr_routines + rnd_below(r, 5);
	switch (rnd_below(r, 12)) {
	case 0:
		w->nr_labels = rnd_next(r);
		break;
	case 1:
		w->k = rnd_below(r, 20);
		break;
	case 2:
		w->range = rnd_next(r);
		break;
	case 3:
		w->nr_contexts = rnd_one_in(r, 2) ? KCC_WATCH_MAX_CONTEXTS + 1 :
						    (uint32_t)rnd_next(r);
		break;
	case 4:
		w->nr_ranges = rnd_one_in(r, 2) ? KCC_WATCH_MAX_RANGES + 1 :
						  (uint32_t)rnd_next(r);
		break;
	case 5:
		w->flags = 1u << rnd_below(r, 32);
		*planted = 1;
		break;
	case 6:
		w->__reserved[rnd_below(r, 2)] = 1ull << rnd_below(r, 64);
		*planted = 1;
		break;
	default:
		break;
	}
	w->ranges = (uintptr_t)rg;
	w->lens = (uintptr_t)lens;
	w->paths = (uintptr_t)paths;
}

/*
 * One command of kcc.h with a random struct.  Asserts only what kcc.h
 * states as a rule (a nonzero reserved field is refused, VERSION and
 * STATUS answers are sane); everything else just has to come back.
 */
static void op_struct(struct ctx *x, int fd)
{
	static const unsigned long ctl[] = { KCC_IOC_START, KCC_IOC_STOP,
					     KCC_IOC_RESET };
	union cmd_buf *u = (void *)x->area;
	struct rnd *r = &x->r;
	unsigned long cmd;
	void *arg = u;
	int ret, err, planted = 0;
	uint32_t cnt;

	memset(x->area, 0, 3 * PAGE);
	switch (rnd_below(r, 6)) {
	case 0:
		cmd = KCC_IOC_VERSION;
		u->v.size = pick_size(r, sizeof(u->v));
		if (u->v.size == sizeof(u->v) && rnd_one_in(r, 4)) {
			u->v.__reserved = 1;
			planted = 1;
		}
		break;
	case 1:
		cmd = KCC_IOC_CONFIGURE;
		fill_config(r, &u->c);
		if (rnd_one_in(r, 5)) {
			u->c.__reserved[rnd_below(r, 4)] = 1ull << rnd_below(r, 64);
			planted = 1;
		} else if (rnd_one_in(r, 5)) {
			u->c.__reserved0 = 1;
			planted = 1;
		} else {
			u->c.size = pick_size(r, sizeof(u->c));
			if (u->c.size > sizeof(u->c) && u->c.size <= sizeof(*u) &&
			    rnd_one_in(r, 2)) {
				/* a longer struct whose tail is not zero */
				u->raw[u->c.size - 1] = 1;
				planted = 1;
			}
		}
		break;
	case 2:
		cmd = KCC_IOC_STATUS;
		u->st.size = pick_size(r, sizeof(u->st));
		break;
	case 3:
		cmd = KCC_IOC_INJECT;
		u->in.size = pick_size(r, sizeof(u->in));
		u->in.len = fill_samples(r, x->inj, PAGE, &cnt);
		u->in.count = cnt;
		u->in.data = (uintptr_t)x->inj;
		if (rnd_one_in(r, 5))
			u->in.data = (uintptr_t)pick_ptr(r, x->area,
					rnd_below(r, PTR_NR), u->in.len);
		if (rnd_one_in(r, 6))
			u->in.len = rnd_next(r);
		if (u->in.size == sizeof(u->in) && rnd_one_in(r, 6)) {
			u->in.__reserved = 1;
			planted = 1;
		}
		break;
	case 4:
		cmd = KCC_IOC_WATCH;
		fill_watch(r, &u->w, x->inj, &planted);
		if (rnd_one_in(r, 6))
			u->w.paths = (uintptr_t)pick_ptr(r, x->area,
					rnd_below(r, PTR_NR), 4 * u->w.nr_labels);
		else if (rnd_one_in(r, 6))
			u->w.ranges = (uintptr_t)pick_ptr(r, x->area,
					rnd_below(r, PTR_NR),
					sizeof(struct kcc_watch_range) * u->w.nr_ranges);
		if (!planted)
			u->w.size = pick_size(r, sizeof(u->w));
		break;
	default:
		cmd = ctl[rnd_below(r, 3)];
		/* the argument of _IO commands is ignored: make it garbage */
		arg = pick_ptr(r, x->area, rnd_below(r, PTR_NR), 8);
		break;
	}

	/*
	 * Mostly the number a user whose struct has the size field's size
	 * would send; else the compiled one, whose size bits must then
	 * match the field or the command is refused.
	 */
	if (_IOC_SIZE(cmd) && !rnd_one_in(r, 4) && u->v.size < (1u << 14))
		cmd = _IOC(_IOC_DIR(cmd), KCC_IOC_MAGIC, _IOC_NR(cmd),
			   u->v.size);
	if (_IOC_SIZE(cmd) && _IOC_SIZE(cmd) != u->v.size)
		planted = 1;
	if (same_cmd(cmd, KCC_IOC_CONFIGURE) && u->c.size >= sizeof(u->c) &&
	    !memchr(u->c.event_name, 0, sizeof(u->c.event_name)))
		planted = 1;

	x->st.calls++;
	ret = ioctl(fd, cmd, arg);
	err = errno;
	if (ret == 0)
		x->st.ok++;
	else
		x->st.errors++;
	if (verbose > 1)
		tap_diag("cmd %#lx planted %d -> %d (%s)", cmd, planted, ret,
			 ret ? strerror(err) : "ok");
	if (planted && ret == 0)
		violation(&x->st, "ioctl %#lx with a nonzero reserved field or tail, an unterminated name or size bits not the size field succeeded",
			  cmd);
	if (planted && ret && same_cmd(cmd, KCC_IOC_VERSION) && err != EINVAL)
		violation(&x->st, "KCC_IOC_VERSION with nonzero __reserved: %s, want EINVAL",
			  strerror(err));
	if (same_cmd(cmd, KCC_IOC_VERSION) && ret == 0 &&
	    (u->v.major != KCC_ABI_MAJOR || u->v.__reserved))
		violation(&x->st, "KCC_IOC_VERSION returned major %u reserved %u",
			  u->v.major, u->v.__reserved);
	if (same_cmd(cmd, KCC_IOC_STATUS) && ret == 0 && u->st.size >= sizeof(u->st)) {
		if (u->st.state > KCC_STATE_STOPPED)
			violation(&x->st, "KCC_IOC_STATUS state %u", u->st.state);
		if (u->st.processed + kcc_dropped_sum(&u->st) > u->st.samples)
			violation(&x->st, "KCC_IOC_STATUS: processed + dropped > samples");
	}
}

/*
 * Commands the VFS answers itself for any file (fs/ioctl.c: FIOCLEX,
 * FIONBIO, FIGETBSZ, FS_IOC_*, ...): they never reach kcc.
 */
static int vfs_generic(unsigned long cmd)
{
	switch (_IOC_TYPE(cmd)) {
	case 0x00: case 'T': case 'f': case 'X': case 0x94:
		return 1;
	}
	return 0;
}

/* A command with random bits: unknown ones must come back as ENOTTY. */
static void op_random_cmd(struct ctx *x, int fd)
{
	struct rnd *r = &x->r;
	uint32_t size = rnd_below(r, 1 << 14);
	unsigned long cmd;
	int ret, unknown;

	switch (rnd_below(r, 3)) {
	case 0:		/* anything */
		cmd = (uint32_t)rnd_next(r);
		break;
	case 1:		/* our magic, any number, direction and size */
		cmd = _IOC(rnd_below(r, 4), KCC_IOC_MAGIC, rnd_below(r, 256), size);
		break;
	default:	/* a known number, maybe the wrong direction or size */
		cmd = _IOC(rnd_below(r, 4), KCC_IOC_MAGIC, rnd_below(r, 8),
			   rnd_below(r, 256));
		break;
	}
	unknown = _IOC_TYPE(cmd) == KCC_IOC_MAGIC ? _IOC_NR(cmd) >= 0x80 :
		  !vfs_generic(cmd);
	x->st.calls++;
	ret = ioctl(fd, cmd, pick_ptr(r, x->area, pick_class(r), size));
	if (ret == 0)
		x->st.ok++;
	else
		x->st.errors++;
	if (unknown && (ret == 0 || errno != ENOTTY))
		violation(&x->st, "unknown command %#lx: %s, want ENOTTY", cmd,
			  ret ? strerror(errno) : "success");
}

/*
 * Bad pointers: a command that must copy fails, with EFAULT when it has no
 * other reason to refuse (VERSION and STATUS have none).
 */
static void op_fault(struct ctx *x, int fd)
{
	static const enum ptr_class bad[] = { PTR_NULL, PTR_UNMAPPED,
					      PTR_KERNEL, PTR_NONCANON };
	static const unsigned long cmds[] = { KCC_IOC_VERSION, KCC_IOC_STATUS,
					      KCC_IOC_CONFIGURE, KCC_IOC_INJECT };
	struct rnd *r = &x->r;
	unsigned long cmd = cmds[rnd_below(r, ARRAY_SIZE(cmds))];
	void *p = pick_ptr(r, x->area, bad[rnd_below(r, ARRAY_SIZE(bad))], 64);
	int ret;

	x->st.calls++;
	ret = ioctl(fd, cmd, p);
	if (ret == 0) {
		x->st.ok++;
		violation(&x->st, "ioctl %#lx on bad pointer %p succeeded", cmd, p);
		return;
	}
	x->st.errors++;
	if ((cmd == KCC_IOC_VERSION || cmd == KCC_IOC_STATUS) && errno != EFAULT)
		violation(&x->st, "ioctl %#lx on bad pointer %p: %s, want EFAULT",
			  cmd, p, strerror(errno));
}

static void op_read(struct ctx *x, int fd)
{
	struct rnd *r = &x->r;
	enum ptr_class c = pick_class(r);
	size_t len;
	ssize_t n;
	void *p;

	switch (rnd_below(r, 4)) {
	case 0:
		len = rnd_below(r, 64);
		break;
	case 1:
		len = rnd_below(r, 4 * PAGE);
		break;
	case 2:
		len = (size_t)1 << rnd_below(r, 40);
		break;
	default:
		len = sizeof(struct kcc_stream_header) + rnd_below(r, 16) - 8;
		break;
	}
	p = pick_ptr(r, x->area, c, len);
	if (c == PTR_GOOD && len > 4 * PAGE)
		len = 4 * PAGE;
	if (rnd_one_in(r, 4))
		lseek(fd, rnd_one_in(r, 2) ? 0 : (off_t)rnd_below(r, 1 << 20),
		      SEEK_SET);
	x->st.calls++;
	n = read(fd, p, len);
	if (n >= 0)
		x->st.ok++;
	else
		x->st.errors++;
	if (n > 0 && (size_t)n > len)
		violation(&x->st, "read(%zu) returned %zd", len, n);
	if (n > 0 && c != PTR_GOOD && c != PTR_GUARD_EDGE && c != PTR_RANDOM)
		violation(&x->st, "read into an unwritable buffer (class %d) returned %zd",
			  c, n);
}

/*
 * Reads of every size up to 64, then of sizes 61 apart up to 8 KiB, each
 * from offset 0: never more than asked, always the start of a stream.
 */
static void op_read_sizes(struct ctx *x, int fd)
{
	size_t len;
	ssize_t n;

	for (len = 0; len <= 8192; len += len < 64 ? 1 : 61) {
		if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
			break;
		x->st.calls++;
		n = read(fd, x->area, len);
		if (n < 0) {
			x->st.errors++;
			continue;
		}
		x->st.ok++;
		if ((size_t)n > len)
			violation(&x->st, "read(%zu) returned %zd", len, n);
		if (n >= 4 && *(uint32_t *)x->area != KCC_STREAM_MAGIC)
			violation(&x->st, "read(%zu) at offset 0 does not start with the magic",
				  len);
	}
}

static void op_poll(struct ctx *x, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };

	x->st.calls++;
	if (poll(&pfd, 1, rnd_below(&x->r, 3)) >= 0)
		x->st.ok++;
	else
		x->st.errors++;
	if (pfd.revents & POLLNVAL)
		violation(&x->st, "poll: POLLNVAL on an open descriptor");
}

static void op_storm(struct ctx *x, int fd)
{
	static const unsigned long ctl[] = { KCC_IOC_START, KCC_IOC_STOP,
					     KCC_IOC_RESET };
	int i, n = 1 + rnd_below(&x->r, 16);

	for (i = 0; i < n; i++) {
		x->st.calls++;
		if (ioctl(fd, ctl[rnd_below(&x->r, 3)], 0) == 0)
			x->st.ok++;
		else
			x->st.errors++;
	}
}

/* A valid session on this process, started: real samples flow. */
/*
 * A valid watched set over this program's own code: routine 0 the page
 * of op_session(), routine 1 the next one; contexts 0, 1 and 0;1.
 */
static void op_session_watch(struct ctx *x, int fd)
{
	static const uint32_t lens[] = { 1, 1, 2 }, paths[] = { 0, 1, 0, 1 };
	struct kcc_watch_range rg[2];
	struct kcc_watch w;
	uint64_t page = (uintptr_t)op_session_watch & ~(uint64_t)(PAGE - 1);

	memset(rg, 0, sizeof(rg));
	rg[0].start = page;
	rg[0].end = page + PAGE;
	rg[1].start = page + PAGE;
	rg[1].end = page + 2 * PAGE;
	rg[1].routine = 1;
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.k = 1;
	/* kcc_ppp_build() numbers these three in 3; 6 must be refused */
	w.range = rnd_one_in(&x->r, 4) ? 6 : 3;
	w.nr_routines = 2;
	w.nr_ranges = 2;
	w.nr_contexts = 3;
	w.nr_labels = 4;
	w.ranges = (uintptr_t)rg;
	w.lens = (uintptr_t)lens;
	w.paths = (uintptr_t)paths;
	x->st.calls++;
	if (ioctl(fd, KCC_IOC_WATCH, &w) == 0)
		x->st.ok++;
	else
		x->st.errors++;
}

static void op_session(struct ctx *x, int fd)
{
	struct kcc_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.k = 1 + rnd_below(&x->r, 4);
	c.source = KCC_SOURCE_AUTO;
	c.target = KCC_TARGET_PID;
	c.pid = getpid();
	c.event_type = 1;	/* PERF_TYPE_SOFTWARE */
	c.event_config = 0;	/* PERF_COUNT_SW_CPU_CLOCK */
	c.sample_period = 100000;
	if (lbr_type && rnd_one_in(&x->r, 2)) {
		/* two events on the software LBR PMU: misses, and calls */
		c.source = KCC_SOURCE_LBR;
		c.flags = KCC_CFG_EVENT;
		c.event_type = lbr_type;
		c.event_config = 2;
		c.sample_period = 0;
		c.calls_flags = KCC_CALLS_EVENT;
		c.calls_event_type = lbr_type;
		c.calls_event_config = 1;
	}
	x->st.calls += 2;
	if (ioctl(fd, KCC_IOC_CONFIGURE, &c) == 0)
		x->st.ok++;
	else
		x->st.errors++;
	if (rnd_one_in(&x->r, 2))
		op_session_watch(x, fd);
	if (ioctl(fd, KCC_IOC_START, 0) == 0)
		x->st.ok++;
	else
		x->st.errors++;
}

static void op_reopen(struct ctx *x, int *fd)
{
	static const int modes[] = { O_RDWR, O_RDONLY, O_RDWR | O_NONBLOCK };
	int nfd = kcc_open(modes[rnd_below(&x->r, ARRAY_SIZE(modes))]);

	x->st.calls++;
	if (nfd < 0) {
		x->st.errors++;
		return;
	}
	close(*fd);
	*fd = nfd;
	x->st.ok++;
}

static void op_one(struct ctx *x, int *fd)
{
	switch (rnd_below(&x->r, 40)) {
	case 0 ... 11:
		x->op = "struct ioctl";
		op_struct(x, *fd);
		break;
	case 12 ... 17:
		x->op = "random ioctl";
		op_random_cmd(x, *fd);
		break;
	case 18 ... 19:
		x->op = "bad-pointer ioctl";
		op_fault(x, *fd);
		break;
	case 20 ... 27:
		x->op = "read";
		op_read(x, *fd);
		break;
	case 28:
		x->op = "reads of every size";
		op_read_sizes(x, *fd);
		break;
	case 29 ... 30:
		x->op = "poll";
		op_poll(x, *fd);
		break;
	case 31 ... 34:
		x->op = "start/stop/reset storm";
		op_storm(x, *fd);
		break;
	case 35:
		x->op = "reopen";
		op_reopen(x, fd);
		break;
	default:
		x->op = "session start";
		op_session(x, *fd);
		break;
	}
	x->op = "between calls";
	__atomic_add_fetch(&progress, 1, __ATOMIC_RELAXED);
}

/*
 * A call that never returns is a kernel bug too (a lost wakeup, a
 * deadlock): say which call every thread is in when nothing moved for
 * 30 s, so the serial log tells more than "timed out".
 */
static void *watchdog(void *arg)
{
	uint64_t last = (uint64_t)-1, now;
	unsigned int i;

	for (;;) {
		sleep(30);
		now = __atomic_load_n(&progress, __ATOMIC_RELAXED);
		if (now == last) {
			tap_diag("watchdog: no call finished for 30 s (%llu done)",
				 (unsigned long long)now);
			for (i = 0; i < nr_ctxs; i++)
				tap_diag("watchdog: thread %u in %s", i, ctxs[i]->op);
		}
		last = now;
	}
	return NULL;
}

static int ctx_init(struct ctx *x, uint64_t seed)
{
	memset(x, 0, sizeof(*x));
	x->r.s = seed;
	x->area = mmap(NULL, 6 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED)
		return -1;
	if (mprotect(x->area + 4 * PAGE, PAGE, PROT_NONE) ||
	    mprotect(x->area + 5 * PAGE, PAGE, PROT_READ))
		return -1;
	x->inj = malloc(PAGE);
	x->op = "not started";
	if (nr_ctxs < ARRAY_SIZE(ctxs))
		ctxs[nr_ctxs++] = x;
	return x->inj ? 0 : -1;
}

static void ctx_fini(struct ctx *x)
{
	munmap(x->area, 6 * PAGE);
	free(x->inj);
}

struct worker {
	pthread_t th;
	struct ctx x;
	uint64_t iters;
	int shared_fd;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int own = kcc_open(O_RDWR);
	uint64_t i;

	for (i = 0; i < w->iters; i++) {
		/* half the calls on a private descriptor, half on the shared */
		if (own >= 0 && rnd_one_in(&w->x.r, 2))
			op_one(&w->x, &own);
		else if (rnd_one_in(&w->x.r, 3))
			op_storm(&w->x, w->shared_fd);
		else if (rnd_one_in(&w->x.r, 2))
			op_read(&w->x, w->shared_fd);
		else
			op_struct(&w->x, w->shared_fd);
	}
	if (own >= 0)
		close(own);
	return NULL;
}

static void report(const char *what, const struct stats *s)
{
	tap_diag("%s: %llu calls, %llu succeeded, %llu refused",
		 what, (unsigned long long)s->calls, (unsigned long long)s->ok,
		 (unsigned long long)s->errors);
	tap_result(s->violations == 0, "%s: the promises of kcc.h hold%s%s", what,
		   s->violations ? ": " : "", s->first);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-s SEED] [-n ITER] [-j THREADS] [-d DEVICE] [-u UID] [-v]\n"
		"Fuzz DEVICE (default %s), as user UID with -u; TAP on stdout;\n"
		"exit 0 pass, 1 fail, 4 skip.\n",
		prog, KCC_DEVICE);
	exit(2);
}

static uint64_t parse_u64(const char *prog, const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		usage(prog);
	return v;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, iters = 200, i, tasks, nodes;
	unsigned int nthreads = 4, t;
	unsigned int uid = 0;
	struct kcc_status status;
	struct kcc_version v;
	struct worker *w;
	struct ctx main_ctx;
	struct stats st;
	pthread_t wd;
	char *buf = NULL;
	const char *why;
	int fd, opt, rc;
	long len;

	while ((opt = getopt(argc, argv, "s:n:j:d:u:vh")) != -1) {
		switch (opt) {
		case 's':
			seed = parse_u64(argv[0], optarg);
			break;
		case 'n':
			iters = parse_u64(argv[0], optarg);
			break;
		case 'j':
			nthreads = parse_u64(argv[0], optarg);
			if (nthreads < 1 || nthreads > 256)
				usage(argv[0]);
			break;
		case 'd':
			kcc_dev = optarg;
			break;
		case 'u':
			uid = parse_u64(argv[0], optarg);
			if (uid == 0 || uid > 0x7fffffff)
				usage(argv[0]);
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	find_lbr_pmu();
	/* Groups first: without CAP_SETGID, setgroups() fails. */
	if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid) ||
		    geteuid() != uid || getegid() != uid)) {
		perror("kcc_fuzz: dropping to -u");
		return 1;
	}

	signal(SIGPIPE, SIG_IGN);
	fd = kcc_open(O_RDWR);
	if (fd < 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%s: %s", kcc_dev, strerror(errno));
		tap_skip_all(msg);
	}
	unmapped = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED || ctx_init(&main_ctx, seed)) {
		perror("kcc_fuzz: mmap");
		return 1;
	}

	tap_plan(6);
	tap_diag("kcc_fuzz -s %llu -n %llu -j %u, uid %u",
		 (unsigned long long)seed, (unsigned long long)iters, nthreads,
		 (unsigned int)geteuid());

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	rc = ioctl(fd, KCC_IOC_VERSION, &v);
	tap_result(rc == 0 && v.major == KCC_ABI_MAJOR,
		   "KCC_IOC_VERSION: ABI %u.%u (want major %u)", v.major,
		   v.minor, KCC_ABI_MAJOR);

	if (pthread_create(&wd, NULL, watchdog, NULL) == 0)
		pthread_detach(wd);

	/* Phase 1: one thread, a sequence fixed by the seed. */
	for (i = 0; i < iters; i++) {
		op_one(&main_ctx, &fd);
		if (iters >= 10 && (i + 1) % (iters / 10) == 0)
			tap_diag("single-threaded phase: %llu/%llu",
				 (unsigned long long)i + 1, (unsigned long long)iters);
	}
	report("single-threaded phase", &main_ctx.st);

	/* Phase 2: threads on shared and private descriptors. */
	w = calloc(nthreads, sizeof(*w));
	if (!w) {
		perror("kcc_fuzz: calloc");
		return 1;
	}
	memset(&st, 0, sizeof(st));
	for (t = 0; t < nthreads; t++) {
		if (ctx_init(&w[t].x, seed + 1 + t)) {
			perror("kcc_fuzz: mmap");
			return 1;
		}
		w[t].iters = iters / nthreads;
		w[t].shared_fd = fd;
		if (pthread_create(&w[t].th, NULL, worker_main, &w[t])) {
			perror("kcc_fuzz: pthread_create");
			return 1;
		}
	}
	for (t = 0; t < nthreads; t++) {
		pthread_join(w[t].th, NULL);
		st.calls += w[t].x.st.calls;
		st.ok += w[t].x.st.ok;
		st.errors += w[t].x.st.errors;
		st.violations += w[t].x.st.violations;
		if (!st.first[0] && w[t].x.st.first[0])
			memcpy(st.first, w[t].x.st.first, sizeof(st.first));
	}
	/* w and the contexts stay: the watchdog may still look at them. */
	report("concurrent phase", &st);

	/* The device still answers and its accounting adds up. */
	ioctl(fd, KCC_IOC_STOP, 0);
	rc = kcc_accounting_settles(fd, &status, KCC_SETTLE_MS);
	kcc_status_diag(&status);
	tap_result(rc == 0, "after STOP: samples = processed + sum(dropped)%s",
		   rc < 0 ? " (violated)" : rc > 0 ? " (did not settle)" : "");

	len = kcc_read_stream(fd, &buf, 0);
	/* No session left by the last calls: -ENODEV (kcc-abi.rst). */
	if (len == 0 || len == -EINVAL || len == -ENODATA || len == -ENODEV) {
		tap_skip("stream: no session to snapshot (%s)",
			 len ? strerror(-len) : "empty");
	} else if (len < 0) {
		tap_result(0, "stream: read failed: %s", strerror(-len));
	} else {
		why = kcc_stream_check(buf, len, &tasks, &nodes);
		tap_result(!why, "stream of %ld bytes well-formed%s%s (%llu tasks, %llu nodes)",
			   len, why ? ": " : "", why ? why : "",
			   (unsigned long long)tasks, (unsigned long long)nodes);
	}
	free(buf);

	ioctl(fd, KCC_IOC_RESET, 0);
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	rc = ioctl(fd, KCC_IOC_VERSION, &v);
	tap_result(rc == 0 && close(fd) == 0, "device answers and closes after the run");
	ctx_fini(&main_ctx);
	return tap_exit();
}
