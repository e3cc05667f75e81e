// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_ring.c - the reader of the test LBR PMU (kcc_lbrpmu.ko) on rings
 * whose every record is known: this thread registers a ring it fills by
 * hand, samples itself with kcc_lbr/clock/ while it spins, and checks
 * each branch stack record by record (record i of the ring has from =
 * FROM(i), to = TO(i); even records are calls, odd ones returns):
 *
 *   - 40 records written: the 32 newest, newest first;
 *   - 5 records written: those 5;
 *   - a write in progress (seq odd): the slot being written (the oldest)
 *     is left out, 31 records;
 *   - any_call / any_ret: only the calls / returns, newest first;
 *   - a record from a kernel address: dropped under u, kept under u,k;
 *   - save_type: PERF_BR_CALL and PERF_BR_RET;
 *   - skid=3 (module parameter): the 3 newest are left out;
 *   - task_save=0: none after a context switch, then only those written
 *     since; task_save=1: all of them again;
 *   - a counting calls event loses no call when the thread's ring cannot
 *     be read at its switch-out (the page PROT_NONE while it sleeps,
 *     readable again before it runs; kcc_lbrpmu's unread count tells
 *     when the switch-out has happened);
 *
 * and the errors: a bad ring address, a bad magic, an unknown ioctl, an
 * unregistered thread, an unknown event, an unsupported branch filter.
 * Needs root (module parameters) and kcc_lbrpmu.ko loaded.
 * Exit status: 0 pass, 1 fail, 4 skip (no kcc_lbr).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../kcc_lbrpmu.h"
#include "lbr_prog.h"

#define FROM(i)		(0x400000ull + (i) * 0x100)
#define TO(i)		(0x500000ull + (i) * 0x100)
#define KERNEL_FROM	0xffffffff81000000ull
#define DATA_PAGES	64
#define MAX_NR		40

static struct kcc_lbr_ring ring __attribute__((aligned(64)));

/* Fill the ring with records 0 .. n-1 as the runtime would. */
static void ring_fill(uint64_t n, int torn, int64_t kernel_rec)
{
	uint64_t i;

	memset(&ring, 0, sizeof(ring));
	ring.magic = KCC_LBR_MAGIC;
	ring.version = KCC_LBR_VERSION;
	for (i = 0; i < n; i++) {
		struct kcc_lbr_rec *r = &ring.rec[i % KCC_LBR_RECS];

		r->from = (int64_t)i == kernel_rec ? KERNEL_FROM : FROM(i);
		r->to = TO(i);
		r->flags = (i & 1) ? KCC_LBR_F_RET : 0;
	}
	ring.pos = n;
	ring.seq = 2 * n + (torn ? 1 : 0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static int param_set(const char *name, const char *val)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/module/kcc_lbrpmu/parameters/%s",
		 name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static int event_open(int type, uint64_t config, uint64_t bst)
{
	struct perf_event_attr attr = { 0 };

	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.sample_period = 200000;	/* ns */
	attr.sample_type = PERF_SAMPLE_BRANCH_STACK;
	attr.branch_sample_type = bst;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

struct stack {
	uint64_t nr;
	struct perf_branch_entry e[MAX_NR];
};

struct stacks {
	struct stack *first;	/* the first stack with records */
	int n, empty, differ;
	/*
	 * When @hi is set, a stack with records must be records hi, hi - 1,
	 * ..., down to some record no older than @lo (those written since
	 * the last switch-in, up to the sample): others count in @differ;
	 * @full counts those that are all of hi .. lo.
	 */
	int hi, lo, full;
};

/* Is @s records c->hi, c->hi - 1, ... (newest first), none below c->lo? */
static int stack_since(const struct stacks *c, const struct stack *s)
{
	int top = c->hi;
	uint64_t j;

	while (top >= c->lo && s->nr &&
	       (s->e[0].from != FROM(top) || s->e[0].to != TO(top)))
		top--;
	if (top < c->lo || (int64_t)s->nr > top - c->lo + 1)
		return 0;
	for (j = 0; j < s->nr; j++)
		if (s->e[j].from != FROM(top - j) || s->e[j].to != TO(top - j))
			return 0;
	return 1;
}

/* Keep the first stack with records; count those that differ from it. */
static void take_stack(const uint8_t *body, size_t len, void *arg)
{
	struct stacks *c = arg;
	struct stack s;

	memset(&s, 0, sizeof(s));
	memcpy(&s, body, len < sizeof(s) ? len : sizeof(s));
	if (s.nr > MAX_NR)
		s.nr = MAX_NR;
	c->n++;
	if (!s.nr) {
		c->empty++;
	} else if (c->hi) {
		if (!stack_since(c, &s))
			c->differ++;
		else if ((int64_t)s.nr == c->hi - c->lo + 1 &&
			 s.e[0].from == FROM(c->hi))
			c->full++;
		if (c->n - c->empty == 1)
			*c->first = s;
	} else if (c->n - c->empty == 1) {
		*c->first = s;
	} else if (s.nr != c->first->nr ||
		   memcmp(s.e, c->first->e, s.nr * sizeof(s.e[0]))) {
		c->differ++;
	}
}

/*
 * Sample this thread for a while.  The first stack with records is
 * returned in @st, the number of empty stacks in @empty and of the
 * others that differ from @st in @differ; the number of stacks, or -1.
 */
/*
 * Sample the ring for 100 ms on the clock event; @fill, if not NULL,
 * writes records once the event runs, so that no system call (which may
 * sleep, and on PREEMPT_RT often does) lies between them and the first
 * sample.
 */
static int sample_fill(int type, uint64_t bst, struct stack *st,
		       int *empty, int *differ, void (*fill)(void),
		       struct stacks *win)
{
	size_t page = sysconf(_SC_PAGESIZE), size = DATA_PAGES * page;
	struct perf_event_mmap_page *pg;
	struct timespec t0, t;
	struct stacks ctx;
	int fd;

	*differ = 0;
	*empty = 0;
	memset(st, 0, sizeof(*st));
	fd = event_open(type, KCC_LBR_EV_CLOCK, bst);
	if (fd < 0) {
		printf("# perf_event_open: %s\n", strerror(errno));
		return -1;
	}
	pg = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		return -1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (fill)
		fill();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {	/* spin in user space: the clock samples us here */
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
		 (t.tv_nsec - t0.tv_nsec) < 100000000L);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.first = st;
	if (win) {
		ctx.hi = win->hi;
		ctx.lo = win->lo;
	}
	lbr_drain(pg, size, take_stack, &ctx);
	if (win)
		win->full = ctx.full;
	*differ = ctx.differ;
	*empty = ctx.empty;
	munmap(pg, size + page);
	close(fd);
	return ctx.n;
}

static int sample(int type, uint64_t bst, struct stack *st, int *empty,
		  int *differ)
{
	return sample_fill(type, bst, st, empty, differ, NULL, NULL);
}

/*
 * Does @st hold records @idx[0..n-1], in this order?  A record index of
 * -1 stands for a stray (from a kernel address).
 */
static int stack_is(const struct stack *st, const int *idx, int n,
		    int types)
{
	int j;

	if ((int)st->nr != n) {
		printf("# %" PRIu64 " records, want %d\n", st->nr, n);
		return 0;
	}
	for (j = 0; j < n; j++) {
		uint64_t from = idx[j] < 0 ? 0 : FROM(idx[j]);
		uint64_t to = idx[j] < 0 ? 0 : TO(idx[j]);

		if (idx[j] == -2)
			from = KERNEL_FROM;
		if (idx[j] >= 0 && (st->e[j].from != from || st->e[j].to != to)) {
			printf("# record %d: %#llx -> %#llx, want record %d\n", j,
			       (unsigned long long)st->e[j].from,
			       (unsigned long long)st->e[j].to, idx[j]);
			return 0;
		}
		if (idx[j] == -2 && st->e[j].from != KERNEL_FROM)
			return 0;
		if (types && idx[j] >= 0 &&
		    st->e[j].type != ((idx[j] & 1) ? PERF_BR_RET : PERF_BR_CALL)) {
			printf("# record %d: type %u\n", j, st->e[j].type);
			return 0;
		}
	}
	return 1;
}

/* Every stack must be records @idx[0..n-1] (none when @n is 0). */
static void check(int type, const char *what, uint64_t bst, const int *idx,
		  int n, int types)
{
	struct stack st;
	int empty, differ, got = sample(type, bst, &st, &empty, &differ);

	tap(got > 0 && !differ && (n ? !empty : empty == got) &&
	    stack_is(&st, idx, n, types),
	    "%s (%d stacks, %d empty, %d different)", what, got, empty,
	    differ);
}

/*
 * After a context switch the LBR is wiped: every stack must be empty or
 * hold records written since the last switch-in, newest first (@hi down
 * to no older than @lo; a sample may land while @fill writes them, a
 * switch may come at any time), and one must hold all of @hi .. @lo.
 * The guest may switch this thread out before any sample saw them all
 * (a busy host slows the vCPU, not the guest's clock): then every stack
 * after the switch is empty, and the round is run again, up to 50 times.
 */
static void check_wiped(int type, const char *what, int hi, int lo,
			void (*prepare)(void), void (*fill)(void))
{
	struct stacks win = { .hi = hi, .lo = lo };
	int empty, differ, got, rounds = 0, stacks = 0, bad = 0, full = 0;
	int empties = 0;
	struct stack st;

	do {
		prepare();
		got = sample_fill(type, PERF_SAMPLE_BRANCH_ANY |
				  PERF_SAMPLE_BRANCH_USER, &st, &empty, &differ,
				  fill, &win);
		rounds++;
		if (got < 0)
			break;
		stacks += got;
		empties += empty;
		bad += differ;
		full += win.full;
	} while (!full && !bad && rounds < 50);
	tap(got >= 0 && full > 0 && !bad,
	    "%s (%d rounds, %d stacks, %d empty, %d all of %d..%d, %d others)",
	    what, rounds, stacks, empties, full, lo, hi, bad);
}

static void ring_add(uint64_t from, uint64_t to);

/* 40 records, then a context switch (usleep() blocks). */
static void ring_fill_40_switch(void)
{
	ring_fill(40, 0, -1);
	usleep(2000);
}

/* Records 40..42 after the 40 written before the switch. */
static void ring_add_40_43(void)
{
	ring_add(40, 43);
}

/* Write records @from .. @to - 1 more, as the runtime would. */
static void ring_add(uint64_t from, uint64_t to)
{
	uint64_t i;

	for (i = from; i < to; i++) {
		struct kcc_lbr_rec *r = &ring.rec[i % KCC_LBR_RECS];

		ring.seq++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		r->from = FROM(i);
		r->to = TO(i);
		r->flags = (i & 1) ? KCC_LBR_F_RET : 0;
		ring.pos = i + 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ring.seq++;
	}
}

/* idx[] = from, from - step, ... (n of them) */
static int down(int *idx, int from, int step, int n)
{
	int j;

	for (j = 0; j < n; j++)
		idx[j] = from - j * step;
	return n;
}

/*
 * The unreadable switch-out: @ring is alone on its page, which the
 * main thread makes PROT_NONE before it blocks on @wake; this thread
 * waits until kcc_lbrpmu counts a switch-out it could not read (unread
 * grows past @unread0), makes the page readable again and wakes it.
 */
struct unreadable {
	struct kcc_lbr_ring *ring;
	int go[2], wake[2];
	long long unread0;
	int seen;		/* unread grew */
};

static void *unreadable_helper(void *arg)
{
	struct unreadable *u = arg;
	char c;
	int i;

	if (read(u->go[0], &c, 1) != 1)
		return NULL;
	/* A bound only a hang reaches: 20 s. */
	for (i = 0; i < 20000 && !u->seen; i++) {
		if (lbr_param_get("unread") > u->unread0)
			u->seen = 1;
		else
			usleep(1000);
	}
	mprotect(u->ring, 4096, PROT_READ | PROT_WRITE);
	if (write(u->wake[1], "w", 1) != 1)
		return NULL;
	return NULL;
}

static void check_unreadable(int type, int fd)
{
	struct perf_event_attr attr = { 0 };
	struct unreadable u = { 0 };
	uint64_t count = 0;
	pthread_t th;
	int ev = -1, ok = 0;
	char c;

	u.ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u.ring == MAP_FAILED || pipe(u.go) || pipe(u.wake)) {
		tap(0, "an unreadable switch-out: setup: %s", strerror(errno));
		return;
	}
	u.ring->magic = KCC_LBR_MAGIC;
	u.ring->version = KCC_LBR_VERSION;
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = KCC_LBR_EV_CALLS;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	if (!ioctl(fd, KCC_LBR_IOC_REGISTER, u.ring))
		ev = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	u.unread0 = lbr_param_get("unread");
	if (ev >= 0 && u.unread0 >= 0 &&
	    !pthread_create(&th, NULL, unreadable_helper, &u)) {
		ioctl(ev, PERF_EVENT_IOC_ENABLE, 0);
		u.ring->calls = 1000;	/* 1000 calls, no read since */
		mprotect(u.ring, 4096, PROT_NONE);
		/* Blocks until the helper made the page readable again. */
		ok = write(u.go[1], "g", 1) == 1 && read(u.wake[0], &c, 1) == 1;
		u.ring->calls += 500;
		ok = ok && read(ev, &count, sizeof(count)) == sizeof(count);
		pthread_join(th, NULL);
	}
	tap(ok && u.seen && count == 1500,
	    "a switch-out with the ring unreadable loses no call: %" PRIu64
	    " of 1500 counted (unread %s)", count,
	    u.seen ? "grew" : "did not grow in 20 s");
	if (ev >= 0)
		close(ev);
	ioctl(fd, KCC_LBR_IOC_UNREGISTER, 0);
	close(u.go[0]);
	close(u.go[1]);
	close(u.wake[0]);
	close(u.wake[1]);
	munmap(u.ring, 4096);
}

int main(void)
{
	const uint64_t U = PERF_SAMPLE_BRANCH_USER;
	const uint64_t ALL = PERF_SAMPLE_BRANCH_ANY | U;
	int type = lbr_pmu_type(), fd, n, ret;
	int idx[MAX_NR];

	if (type < 0) {
		printf("1..0 # SKIP no kcc_lbr PMU (insmod kcc_lbrpmu.ko)\n");
		return 4;
	}
	fd = open("/dev/kcc_lbr", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("1..0 # SKIP /dev/kcc_lbr: %s\n", strerror(errno));
		return 4;
	}
	printf("TAP version 13\n");

	/* Errors first. */
	ring_fill(0, 0, -1);
	ring.magic = 0;
	ret = ioctl(fd, KCC_LBR_IOC_REGISTER, &ring);
	tap(ret < 0 && errno == EPROTO, "a ring without the magic: EPROTO");
	ret = ioctl(fd, KCC_LBR_IOC_REGISTER, (char *)&ring + 4);
	tap(ret < 0 && errno == EINVAL, "a misaligned ring: EINVAL");
	ret = ioctl(fd, KCC_LBR_IOC_REGISTER, 0);
	tap(ret < 0 && errno == EINVAL, "no ring: EINVAL");
	ret = ioctl(fd, KCC_LBR_IOC_REGISTER, (void *)-4096L);
	tap(ret < 0 && errno == EINVAL, "a kernel address: EINVAL");
	ret = ioctl(fd, KCC_LBR_IOC_UNREGISTER, 0);
	tap(ret < 0 && errno == ENOENT, "unregister, not registered: ENOENT");
	ret = ioctl(fd, _IO('L', 99), 0);
	tap(ret < 0 && errno == ENOTTY, "an unknown ioctl: ENOTTY");
	ret = event_open(type, 3, ALL);
	tap(ret < 0 && errno == EINVAL, "event=3: EINVAL");
	if (ret >= 0)
		close(ret);
	ret = event_open(type, KCC_LBR_EV_CALLS, PERF_SAMPLE_BRANCH_COND | U);
	tap(ret < 0 && errno == EOPNOTSUPP, "branch filter cond: EOPNOTSUPP");
	if (ret >= 0)
		close(ret);

	ring_fill(40, 0, -1);
	ret = ioctl(fd, KCC_LBR_IOC_REGISTER, &ring);
	tap(!ret, "register a ring");

	n = down(idx, 39, 1, 32);
	check(type, "40 written: the 32 newest, newest first", ALL, idx, n, 0);
	ring_fill(5, 0, -1);
	n = down(idx, 4, 1, 5);
	check(type, "5 written: those 5", ALL, idx, n, 0);
	ring_fill(40, 1, -1);
	n = down(idx, 39, 1, 31);
	check(type, "a write in progress: the slot written left out", ALL,
	      idx, n, 0);
	ring_fill(40, 0, -1);
	n = down(idx, 38, 2, 16);
	check(type, "any_call: the calls", PERF_SAMPLE_BRANCH_ANY_CALL | U,
	      idx, n, 0);
	n = down(idx, 39, 2, 16);
	check(type, "any_ret,save_type: the returns, typed",
	      PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_TYPE_SAVE | U,
	      idx, n, 1);
	n = down(idx, 39, 1, 32);
	check(type, "any,save_type: calls and returns typed",
	      ALL | PERF_SAMPLE_BRANCH_TYPE_SAVE, idx, n, 1);
	ring_fill(40, 0, 37);
	n = down(idx, 39, 1, 31);
	idx[2] = 36;	/* 37 is from the kernel: dropped */
	for (ret = 3; ret < n; ret++)
		idx[ret] = 36 - (ret - 2);
	check(type, "a record from the kernel: dropped under u", ALL, idx, n,
	      0);
	n = down(idx, 39, 1, 32);
	idx[2] = -2;
	check(type, "a record from the kernel: kept under u,k",
	      ALL | PERF_SAMPLE_BRANCH_KERNEL, idx, n, 0);
	ring_fill(40, 0, -1);
	if (param_set("skid", "3")) {
		tap(0, "skid=3 (cannot set the parameter)");
	} else {
		n = down(idx, 36, 1, 29);
		check(type, "skid=3: the 3 newest left out", ALL, idx, n, 0);
		param_set("skid", "0");
	}

	/*
	 * task_save=0: a context switch wipes the records.  usleep() blocks,
	 * so this thread is switched out; afterwards only records written
	 * since its switch-in may show.  (A switch while it spins may wipe
	 * them again: such stacks are empty.)
	 */
	if (param_set("task_save", "0")) {
		tap(0, "task_save=0 (cannot set the parameter)");
	} else {
		ring_fill(40, 0, -1);
		usleep(2000);
		check(type, "task_save=0, switched out: no records", ALL, idx,
		      0, 0);
		check_wiped(type, "task_save=0: only the records since the switch",
			    42, 40, ring_fill_40_switch, ring_add_40_43);
		param_set("task_save", "1");
		n = down(idx, 42, 1, 32);
		check(type, "task_save=1: all the records", ALL, idx, n, 0);
	}

	ret = ioctl(fd, KCC_LBR_IOC_UNREGISTER, 0);
	tap(!ret, "unregister");
	memset(&idx, 0, sizeof(idx));
	check(type, "unregistered: no records", ALL, idx, 0, 0);
	check_unreadable(type, fd);
	close(fd);
	printf("1..%d\n", tap_n);
	return tap_failed;
}
