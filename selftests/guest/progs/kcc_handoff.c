// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_handoff - the batched hand-off of kcc.ko's samples to its worker
 * (kmod/kcc_sample.c), checked in the guest with frame-pointer sampling
 * of a forked child on cpu-clock.  Run with kcc.ko loaded ring_kb=16 (a
 * ring of about 128 samples), so that a short burst fills one.
 *
 * The handler wakes the worker when a ring is half full or a process
 * new to the ring is sampled, or arms the flush timer (module parameter
 * flush_ms), never per sample.  What is checked, reading the sysfs
 * counters (STATUS would drain the rings), without timing anything:
 *
 *  1. new process: the first sample of a new process is applied while
 *     the session runs, with the flush timer at 10 s.
 *  2. timer: with flush_ms=5, the later samples of that process (the
 *     same ring, too few for the watermark) are applied while the
 *     session runs.  Without the timer they would wait for STOP: the
 *     wait below is bounded only so that the test ends.
 *  3. stop: flush_ms at its maximum (10 s), a few samples after the
 *     first, STOP: every sample was applied by STOP's drain.
 *  4. burst: flush_ms at 10 s, a burst of many rings' worth of samples:
 *     samples = processed + counted drops, more samples were applied
 *     than one ring holds (the watermark woke the worker during the
 *     burst), and at least 8 samples per wakeup.
 *
 * The child measures its own CPU time, so the sample counts depend on
 * the period, not on how fast the emulated CPU is.
 *
 * Usage: kcc_handoff		Output: TAP.  Exit 0 pass, 1 fail, 4 skip.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kcc_guest.h"

#define SYS_KCC		"/sys/class/misc/kcc/"
#define SYS_PARAM	"/sys/module/kcc/parameters/"

static volatile uint64_t sink;

static int read_u64(const char *path, uint64_t *v)
{
	unsigned long long x;
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = x;
	return ok ? 0 : -1;
}

static int write_param(const char *name, const char *val)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), SYS_PARAM "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fputs(val, f) >= 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* The sysfs counters of the session: no drain, unlike STATUS. */
static uint64_t sys_counter(const char *name)
{
	char path[128];
	uint64_t v = 0;

	snprintf(path, sizeof(path), SYS_KCC "%s", name);
	read_u64(path, &v);
	return v;
}

static uint64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* A few real frames for the walk. */
__attribute__((noinline)) static void spin_leaf(void)
{
	int i;

	for (i = 0; i < 10000; i++)
		sink += i;
}

__attribute__((noinline)) static void spin_cpu(unsigned int ms)
{
	uint64_t t0 = cpu_ms();

	while (cpu_ms() - t0 < ms)
		spin_leaf();
}

/*
 * A child on CPU 0 (so that all its samples go to one ring) that, for
 * each byte on @go, burns that many tens of ms of its own CPU time and
 * writes a byte on @done; it sleeps between the phases until killed.
 */
static pid_t child_start(int *go, int *done)
{
	int a[2], b[2];
	cpu_set_t cpus;
	unsigned char c;
	pid_t pid;

	if (pipe(a) || pipe(b))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(a[1]);
		close(b[0]);
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		sched_setaffinity(0, sizeof(cpus), &cpus);
		while (read(a[0], &c, 1) == 1) {
			spin_cpu(c * 10u);
			if (write(b[1], "d", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*go = a[1];
	*done = b[0];
	return pid;
}

static int child_burn(int go, int done, unsigned int tens_of_ms)
{
	unsigned char c = tens_of_ms;

	return write(go, &c, 1) == 1 && read(done, &c, 1) == 1 ? 0 : -1;
}

static void child_end(pid_t pid, int go, int done)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(go);
	close(done);
}

/*
 * Configure and start a session on a new child sampled every @period ns
 * of cpu-clock.  -1: setup failed.
 */
static int session(int fd, uint64_t period, pid_t *pid, int *go, int *done)
{
	struct kcc_config c;

	*pid = child_start(go, done);
	if (*pid < 0)
		return -1;
	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, *pid, 3);
	c.sample_period = period;
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
	    kcc_ioc(fd, KCC_IOC_START, NULL)) {
		child_end(*pid, *go, *done);
		return -1;
	}
	return 0;
}

/* Poll the sysfs count of processed samples until it passes @above. */
static uint64_t wait_processed(uint64_t above, uint64_t limit_ms)
{
	uint64_t t0 = wall_ms(), p;

	while ((p = sys_counter("processed")) <= above &&
	       wall_ms() - t0 < limit_ms)
		usleep(20000);
	return p;
}

static uint64_t sys_dropped(void)
{
	unsigned long long d[KCC_DROP_NR] = { 0 };
	uint64_t sum = 0;
	FILE *f = fopen(SYS_KCC "dropped", "r");
	int i;

	if (!f)
		return 0;
	for (i = 0; i < KCC_DROP_NR; i++)
		if (fscanf(f, "%llu", &d[i]) == 1)
			sum += d[i];
	fclose(f);
	return sum;
}

/*
 * The first sample of the new child wakes the worker at once: with the
 * flush timer at 10 s, it is applied before the timer could have run
 * (a run slower than that is skipped, not failed).  Then, with
 * flush_ms=5, samples of the same process on the same ring, too few for
 * the watermark, are applied while the session runs: nothing but the
 * timer wakes the worker for them.
 */
static void test_new_and_timer(int fd)
{
	uint64_t t0, p1, p2, w0 = 0, w1 = 0;
	int go, done;
	pid_t pid;

	write_param("flush_ms", "10000");
	if (session(fd, 20000000, &pid, &go, &done)) {
		tap_result(0, "new process: session");
		return;
	}
	t0 = wall_ms();
	/* About 5 samples at 20 ms. */
	if (child_burn(go, done, 10)) {
		tap_result(0, "new process: child");
		child_end(pid, go, done);
		return;
	}
	p1 = wait_processed(0, KCC_SETTLE_MS);
	if (wall_ms() - t0 >= 10000)
		tap_skip("new process: its first sample is applied at once # the run took %llu ms, the timer may have run",
			 (unsigned long long)(wall_ms() - t0));
	else
		tap_result(p1 > 0,
			   "new process: its first sample is applied at once, the flush timer at 10 s (processed %llu)",
			   (unsigned long long)p1);
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	child_end(pid, go, done);

	write_param("flush_ms", "5");
	if (session(fd, 20000000, &pid, &go, &done)) {
		tap_result(0, "timer: session");
		return;
	}
	if (child_burn(go, done, 10)) {
		tap_result(0, "timer: child");
		child_end(pid, go, done);
		return;
	}
	p1 = wait_processed(0, KCC_SETTLE_MS);
	read_u64(SYS_KCC "wakeups", &w0);
	/* About 10 more samples, far below the half of 128. */
	if (child_burn(go, done, 20)) {
		tap_result(0, "timer: child");
		child_end(pid, go, done);
		return;
	}
	p2 = wait_processed(p1, KCC_SETTLE_MS);
	read_u64(SYS_KCC "wakeups", &w1);
	tap_result(p1 > 0 && p2 > p1 && w1 > w0,
		   "timer: a known process's few samples are applied while the session runs (processed %llu, then %llu; %llu wakeups; no STATUS, no STOP)",
		   (unsigned long long)p1, (unsigned long long)p2,
		   (unsigned long long)(w1 - w0));
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	child_end(pid, go, done);
	kcc_check_accounting(fd, "timer");
}

/*
 * With the flush timer at 10 s, the samples taken after the first one's
 * wakeup stay in the ring until STOP, which applies them all.
 */
static void test_stop(int fd)
{
	uint64_t t0, p0, p, s, d;
	int go, done;
	pid_t pid;

	write_param("flush_ms", "10000");
	if (session(fd, 20000000, &pid, &go, &done)) {
		tap_result(0, "stop: session");
		return;
	}
	if (child_burn(go, done, 10)) {
		tap_result(0, "stop: child");
		child_end(pid, go, done);
		return;
	}
	wait_processed(0, KCC_SETTLE_MS);
	t0 = wall_ms();
	if (child_burn(go, done, 20)) {
		tap_result(0, "stop: child");
		child_end(pid, go, done);
		return;
	}
	p0 = sys_counter("processed");
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	p = sys_counter("processed");
	s = sys_counter("samples");
	d = sys_dropped();
	child_end(pid, go, done);
	tap_result(s > 0 && p + d == s,
		   "stop: after STOP every sample is applied or a counted drop (samples %llu, processed %llu, dropped %llu)",
		   (unsigned long long)s, (unsigned long long)p,
		   (unsigned long long)d);
	if (wall_ms() - t0 >= 10000)
		tap_skip("stop: STOP applied what the rings held # the run took %llu ms, the timer may have run",
			 (unsigned long long)(wall_ms() - t0));
	else
		tap_result(p > p0,
			   "stop: STOP applied what the rings held (%llu processed before it, %llu after)",
			   (unsigned long long)p0, (unsigned long long)p);
	kcc_check_accounting(fd, "stop");
}

static void test_burst(int fd)
{
	struct kcc_status st;
	uint64_t ring_kb = 0, cap;
	int go, done;
	pid_t pid;

	read_u64(SYS_PARAM "ring_kb", &ring_kb);
	/* A record has at least its 80-byte header. */
	cap = ring_kb * 1024 / 80;
	write_param("flush_ms", "10000");
	/* 20 us: up to 50,000 samples a CPU second. */
	if (session(fd, 20000, &pid, &go, &done)) {
		tap_result(0, "burst: session");
		return;
	}
	if (child_burn(go, done, 100)) {
		tap_result(0, "burst: child");
		child_end(pid, go, done);
		return;
	}
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	child_end(pid, go, done);
	if (kcc_status_get(fd, &st)) {
		tap_result(0, "burst: status");
		return;
	}
	kcc_status_diag(&st);
	tap_diag("burst: %llu wakeups, %llu worker runs, ring of %llu KiB (at most %llu samples)",
		 (unsigned long long)st.wakeups,
		 (unsigned long long)st.work_batches,
		 (unsigned long long)ring_kb, (unsigned long long)cap);
	tap_result(st.samples && st.samples == st.processed + kcc_dropped_sum(&st),
		   "burst: samples = processed + counted drops (%llu = %llu + %llu, ring full %llu)",
		   (unsigned long long)st.samples,
		   (unsigned long long)st.processed,
		   (unsigned long long)kcc_dropped_sum(&st),
		   (unsigned long long)st.dropped[KCC_DROP_RING_FULL]);
	if (st.samples <= 2 * cap) {
		tap_skip("burst: the watermark woke the worker # only %llu samples, not two rings' worth",
			 (unsigned long long)st.samples);
		tap_skip("burst: batched # too few samples");
		return;
	}
	tap_result(st.processed > cap,
		   "burst: the watermark woke the worker during the burst (%llu applied, one ring holds at most %llu)",
		   (unsigned long long)st.processed, (unsigned long long)cap);
	tap_result(st.wakeups && st.samples >= 8 * st.wakeups,
		   "burst: batched: %llu samples for %llu wakeups (at least 8 each)",
		   (unsigned long long)st.samples,
		   (unsigned long long)st.wakeups);
}

int main(void)
{
	char old[32] = "4";
	FILE *f;
	int fd;

	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no " KCC_DEVICE);
	f = fopen(SYS_PARAM "flush_ms", "r");
	if (!f)
		tap_skip_all("kcc.ko has no flush_ms parameter");
	if (!fgets(old, sizeof(old), f))
		strcpy(old, "4");
	fclose(f);
	printf("TAP version 13\n");
	test_new_and_timer(fd);
	test_stop(fd);
	test_burst(fd);
	write_param("flush_ms", old);
	close(fd);
	return tap_exit();
}
