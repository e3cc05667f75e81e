// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_fp - frame-pointer sampling of known workloads, checked in the
 * guest.
 *
 * The workload (built with frame pointers, no inlining, no tail calls):
 *
 *	wl_main: loop { 9 x wl_a(); 1 x wl_c(); }
 *	wl_a -> wl_b (a hot loop)	wl_c -> wl_b (the same loop)
 *
 * so by construction 90% of the time is spent in the context
 * wl_main -> wl_a -> wl_b and 10% in wl_main -> wl_c -> wl_b.  The
 * stream's labels are user addresses: the test maps them back to the
 * routines through their addresses in this very binary (the workload
 * runs in a forked child, same image).
 *
 * Tests: the hot context and its share (target pid and system-wide);
 * threads and forks of the target all get forests; tasks exiting while
 * sampled; the task and memory caps turn into counted drops; the
 * accounting identity after every run; exited tasks are flagged and
 * their mappings are in the stream.
 *
 * Usage: kcc_fp [-t MS]	(MS: workload time per run, default 1500)
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kcc_guest.h"

#define WL __attribute__((noinline, used, section("kcc_wl")))

static volatile unsigned long sink;
static int run_ms = 1500;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/*
 * GCC 12 sets up no frame in a leaf function that needs no stack, even
 * with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer; a sample
 * there would skip wl_b's caller.  One call makes wl_b a non-leaf.
 */
WL void wl_nop(void)
{
	__asm__ volatile("" ::: "memory");
}

WL void wl_b(unsigned long n)
{
	unsigned long i;

	wl_nop();
	for (i = 0; i < n; i++)
		sink += i * i;
}

WL void wl_a(unsigned long n)
{
	wl_b(n);
	sink++;
}

WL void wl_c(unsigned long n)
{
	wl_b(n);
	sink++;
}

WL void wl_main(int ms)
{
	uint64_t end = now_ms() + ms;
	int i;

	while (now_ms() < end) {
		for (i = 0; i < 9; i++)
			wl_a(20000);
		wl_c(20000);
	}
}

extern char __start_kcc_wl[], __stop_kcc_wl[];

/* ---- labels to routines ------------------------------------------------ */

enum { R_NONE, R_MAIN, R_A, R_B, R_C, R_NOP, R_NR };
static const char *const rname[R_NR] = { "-", "wl_main", "wl_a", "wl_b", "wl_c", "wl_nop" };
static uintptr_t rstart[R_NR];

static int routine(uint64_t label)
{
	int r, best = R_NONE;

	if (label < (uintptr_t)__start_kcc_wl || label >= (uintptr_t)__stop_kcc_wl)
		return R_NONE;
	for (r = 1; r < R_NR; r++)
		if (rstart[r] <= label && (best == R_NONE || rstart[r] > rstart[best]))
			best = r;
	return best;
}

/* What one run's stream says about the workload. */
struct tally {
	pid_t tgid;		/* process of interest, 0: any */
	uint32_t k;		/* of the stream */
	uint64_t hot;		/* samples in wl_main -> wl_a -> wl_b */
	uint64_t cold;		/* samples in wl_main -> wl_c -> wl_b */
	uint64_t other_b;	/* samples in wl_b under something else */
	uint64_t samples;	/* all samples of the process */
	uint32_t tasks;		/* task records of the process */
	uint32_t exited;	/* of which flagged exited */
	uint32_t maps;		/* map records naming this program */
	uint32_t bad_parent;
};

/*
 * With a finite k, the top region of a slab tree (levels below k under a
 * KCC_NODE_ROOT_SLAB root) repeats counters of the bottom region of the
 * tree above; a node at level >= k, or in a tree starting at depth 0,
 * has its whole k-context above it in its own tree.  Count those only.
 */
static void tally_task(const struct gtask *t, void *arg)
{
	uint32_t nr = t->rec->nr_nodes, i;
	struct tally *ty = arg;
	uint32_t *level, *slab;

	if (ty->tgid && t->rec->tgid != (uint32_t)ty->tgid)
		return;
	ty->tasks++;
	if (t->rec->flags & KCC_TASK_EXITED)
		ty->exited++;
	level = calloc(nr + 1, sizeof(*level));
	slab = calloc(nr + 1, sizeof(*slab));
	for (i = 0; i < nr; i++) {
		const struct kcc_rec_node *n = gtask_node(t, i);
		uint64_t s = gtask_ctr(t, i)[KCC_CTR_SAMPLES];
		int r1, r2 = R_NONE, r3 = R_NONE;

		if (n->parent < nr) {
			if (n->parent >= i) {
				ty->bad_parent++;
				continue;
			}
			level[i] = level[n->parent] + 1;
			slab[i] = slab[n->parent];
		} else {
			slab[i] = n->parent == KCC_NODE_ROOT_SLAB;
		}
		if (!s || (slab[i] && level[i] < ty->k))
			continue;
		ty->samples += s;
		r1 = routine(n->label);
		if (n->parent < nr) {
			const struct kcc_rec_node *p = gtask_node(t, n->parent);

			r2 = routine(p->label);
			if (p->parent < nr)
				r3 = routine(gtask_node(t, p->parent)->label);
		}
		if (r1 != R_B)
			continue;
		if (r2 == R_A && r3 == R_MAIN)
			ty->hot += s;
		else if (r2 == R_C && r3 == R_MAIN)
			ty->cold += s;
		else
			ty->other_b += s;
	}
	free(level);
	free(slab);
}

static void tally_map(const struct kcc_rec_map *m, void *arg)
{
	struct tally *ty = arg;

	if ((!ty->tgid || m->tgid == (uint32_t)ty->tgid) &&
	    strstr(m->path, "kcc_fp"))
		ty->maps++;
}

/* ---- workload processes ------------------------------------------------ */

struct spec {
	int threads;		/* extra threads running wl_main */
	int forks;		/* children running wl_main */
	int short_lived;	/* children that exit at once, one by one */
};

static void *thread_fn(void *arg)
{
	wl_main(run_ms);
	return NULL;
}

/* The workload process: waits for a byte on @go, then runs @sp. */
static void workload(int go, const struct spec *sp)
{
	pthread_t th[64];
	char c;
	int i;

	if (read(go, &c, 1) != 1)
		_exit(2);
	for (i = 0; i < sp->threads && i < 64; i++)
		pthread_create(&th[i], NULL, thread_fn, NULL);
	for (i = 0; i < sp->forks; i++)
		if (fork() == 0) {
			wl_main(run_ms);
			_exit(0);
		}
	for (i = 0; i < sp->short_lived; i++) {
		pid_t p = fork();

		if (p == 0) {
			/*
			 * At least 2 ms of the child's own CPU time, whatever
			 * the host's load does to TCG: some 20 samples at the
			 * test's 10 kHz, so that exiting children have forests.
			 */
			struct timespec t0, t;

			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
			do {
				wl_b(20000);
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000000000l +
				 (t.tv_nsec - t0.tv_nsec) < 2000000l);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	}
	wl_main(run_ms);
	for (i = 0; i < sp->threads && i < 64; i++)
		pthread_join(th[i], NULL);
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/*
 * One profiled run: a fresh session with @cfg (pid filled in for a
 * target pid), the workload @sp, stop, and the stream's tally.  Returns
 * 0, or -1 when something failed (reported as a TAP failure by the
 * caller through *why).
 */
static int profile(int fd, struct kcc_config *cfg, const struct spec *sp,
		   struct tally *ty, struct kcc_status *st, const char **why)
{
	int pfd[2];
	uint64_t ntasks, nnodes;
	char *buf = NULL;
	long len;
	pid_t p;
	int ret = -1;

	*why = "setup";
	if (pipe(pfd))
		return -1;
	p = fork();
	if (p == 0) {
		close(pfd[1]);
		workload(pfd[0], sp);
	}
	close(pfd[0]);
	if (cfg->target == KCC_TARGET_PID)
		cfg->pid = p;
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, cfg)) {
		*why = "CONFIGURE failed";
		goto out_kill;
	}
	if (kcc_ioc(fd, KCC_IOC_START, NULL)) {
		*why = "START failed";
		goto out_kill;
	}
	if (write(pfd[1], "g", 1) != 1)
		goto out_kill;
	waitpid(p, NULL, 0);
	p = 0;
	if (kcc_ioc(fd, KCC_IOC_STOP, NULL)) {
		*why = "STOP failed";
		goto out;
	}
	kcc_status_get(fd, st);
	len = kcc_read_stream(fd, &buf, 0);
	if (len <= 0) {
		*why = "read() failed";
		goto out;
	}
	*why = kcc_stream_check(buf, len, &ntasks, &nnodes);
	if (!*why) {
		memset(ty, 0, sizeof(*ty));
		ty->tgid = cfg->target == KCC_TARGET_PID ? cfg->pid : 0;
		ty->k = ((const struct kcc_stream_header *)buf)->k;
		kcc_stream_walk(buf, len, tally_task, tally_map, ty);
		ret = 0;
	}
	free(buf);
	goto out;
out_kill:
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
out:
	close(pfd[1]);
	return ret;
}

static void tally_diag(const char *what, const struct tally *ty,
		       const struct kcc_status *st)
{
	tap_diag("%s: samples %llu (status %llu processed %llu), hot %llu cold %llu other-b %llu, tasks %u exited %u maps %u",
		 what, (unsigned long long)ty->samples,
		 (unsigned long long)st->samples,
		 (unsigned long long)st->processed,
		 (unsigned long long)ty->hot, (unsigned long long)ty->cold,
		 (unsigned long long)ty->other_b, ty->tasks, ty->exited,
		 ty->maps);
}

/* The hot context dominates: at least 60% of wl_b's samples (90% by construction). */
static void check_hot(const char *what, const struct tally *ty)
{
	uint64_t b = ty->hot + ty->cold + ty->other_b;

	tap_result(ty->hot >= 20 && ty->hot * 10 >= b * 6 && ty->hot > 3 * ty->cold,
		   "%s: hot context wl_main->wl_a->wl_b has %llu of %llu wl_b samples (>= 60%%), cold wl_main->wl_c->wl_b %llu",
		   what, (unsigned long long)ty->hot, (unsigned long long)b,
		   (unsigned long long)ty->cold);
}

static void test_pid(int fd)
{
	struct spec sp = { 0 };
	struct kcc_status st;
	struct kcc_config c;
	struct tally ty;
	const char *why;
	int r;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, 0, KCC_K_INF);
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "fp, one process, k=inf: run and well-formed stream%s%s",
		   r ? ": " : "", r ? why : "");
	if (r)
		return;
	tally_diag("pid", &ty, &st);
	check_hot("pid", &ty);
	tap_result(ty.bad_parent == 0, "pid: every node's parent comes before it");
	tap_result(ty.tasks == 1 && ty.exited == 1,
		   "pid: one task record, flagged exited");
	tap_result(ty.maps >= 1, "pid: the stream maps the program's text (%u map records)",
		   ty.maps);
	tap_result(ty.samples == st.processed,
		   "pid: node samples add up to the processed samples (%llu)",
		   (unsigned long long)st.processed);
	kcc_check_accounting(fd, "pid");
}

static void test_all(int fd)
{
	struct spec sp = { 0 };
	struct kcc_status st;
	struct kcc_config c;
	struct tally ty;
	const char *why;
	int r;

	kcc_cfg_init(&c, KCC_SOURCE_AUTO, KCC_TARGET_ALL, 0, 2);
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "auto, all tasks, k=2: run and well-formed stream%s%s",
		   r ? ": " : "", r ? why : "");
	if (r)
		return;
	tally_diag("all", &ty, &st);
	check_hot("all", &ty);
	kcc_check_accounting(fd, "all");
}

static void test_threads(int fd)
{
	struct spec sp = { .threads = 6, .forks = 3, .short_lived = 0 };
	struct kcc_status st;
	struct kcc_config c;
	struct tally ty;
	const char *why;
	int r;

	/* Children are other processes: count every task record. */
	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, 0, 3);
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "threads and forks: run%s%s", r ? ": " : "", r ? why : "");
	if (r)
		return;
	ty.tgid = 0;
	tally_diag("threads", &ty, &st);
	tap_result(st.tasks >= 1 + 6 + 3 - 2 && st.tasks == st.tasks_exited,
		   "threads and forks: %u of 10 tasks have forests, all exited (%u)",
		   st.tasks, st.tasks_exited);
	kcc_check_accounting(fd, "threads and forks");
}

static void test_exits(int fd)
{
	struct spec sp = { .short_lived = 40 };
	struct kcc_status st;
	struct kcc_config c;
	struct tally ty;
	const char *why;
	int r;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, 0, 3);
	c.sample_period = 100000;	/* 10 kHz of cpu-clock */
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "tasks exiting while sampled: run%s%s", r ? ": " : "",
		   r ? why : "");
	if (r)
		return;
	tally_diag("exits", &ty, &st);
	tap_result(st.tasks == st.tasks_exited && st.tasks >= 2,
		   "exits: %u tasks, all flagged exited", st.tasks);
	kcc_check_accounting(fd, "tasks exiting while sampled");
}

static void test_caps(int fd)
{
	struct spec sp = { .threads = 5 };
	struct kcc_status st;
	struct kcc_config c;
	struct tally ty;
	const char *why;
	int r;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, 0, 3);
	c.max_tasks = 2;
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "task cap: run%s%s", r ? ": " : "", r ? why : "");
	if (!r) {
		kcc_status_diag(&st);
		tap_result(st.tasks <= 2 && st.dropped[KCC_DROP_TASK_CAP] > 0,
			   "max_tasks=2 with 6 threads: %u forests, %llu samples dropped for KCC_DROP_TASK_CAP",
			   st.tasks, (unsigned long long)st.dropped[KCC_DROP_TASK_CAP]);
		kcc_check_accounting(fd, "task cap");
	}

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, 0, 3);
	c.max_bytes = 4096;
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "memory cap: run%s%s", r ? ": " : "", r ? why : "");
	if (!r) {
		kcc_status_diag(&st);
		tap_result(st.tasks == 0 && st.bytes <= 4096 &&
			   st.dropped[KCC_DROP_MEM_CAP] > 0 && st.processed == 0,
			   "max_bytes=4096: no forest fits, %llu samples dropped for KCC_DROP_MEM_CAP",
			   (unsigned long long)st.dropped[KCC_DROP_MEM_CAP]);
		kcc_check_accounting(fd, "memory cap");
	}

	/* Nodes: a 16-node forest fills up and refuses the rest. */
	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, 0, KCC_K_INF);
	c.task_nodes = 16;
	sp.threads = 0;
	r = profile(fd, &c, &sp, &ty, &st, &why);
	tap_result(!r, "node cap: run%s%s", r ? ": " : "", r ? why : "");
	if (!r) {
		kcc_status_diag(&st);
		tap_result(st.nodes <= 16 && st.processed > 0,
			   "task_nodes=16: %llu nodes kept, %llu creations refused",
			   (unsigned long long)st.nodes,
			   (unsigned long long)st.node_drops);
	}
}

int main(int argc, char **argv)
{
	int fd, opt;

	while ((opt = getopt(argc, argv, "t:")) != -1)
		if (opt == 't')
			run_ms = atoi(optarg);
	rstart[R_MAIN] = (uintptr_t)wl_main;
	rstart[R_A] = (uintptr_t)wl_a;
	rstart[R_B] = (uintptr_t)wl_b;
	rstart[R_C] = (uintptr_t)wl_c;
	rstart[R_NOP] = (uintptr_t)wl_nop;

	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no " KCC_DEVICE);
	printf("TAP version 13\n");
	test_pid(fd);
	test_all(fd);
	test_threads(fd);
	test_exits(fd);
	test_caps(fd);
	close(fd);
	printf("1..%d\n", tap_nr);
	(void)rname;
	return tap_exit();
}
