// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_handoff - the batched hand-off of kcc.ko's samples to its worker
 * (kmod/kcc_sample.c), checked in the guest with frame-pointer sampling
 * of a forked child on cpu-clock.  Run with kcc.ko loaded ring_kb=16 (a
 * ring of about 128 samples), so that a short burst fills one.
 *
 * The handler wakes the worker when a ring is half full, or arms the
 * flush timer (module parameter flush_ms), never per sample.  What is
 * checked, without timing anything:
 *
 *  1. timer: a low-rate event whose few samples never reach the
 *     watermark; with flush_ms=5 they are applied while the session runs
 *     and nothing else drains the rings (the sysfs counters are read,
 *     not STATUS, which drains).  Without the timer they would wait for
 *     STOP: the wait below is bounded only so that the test ends.
 *  2. stop: flush_ms at its maximum (10 s), a few samples, STOP: every
 *     sample was applied by STOP's drain before it returned.
 *  3. burst: flush_ms at 10 s, a burst of many rings' worth of samples:
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
 * A child that waits for a byte on @go, burns @ms of its own CPU time,
 * writes a byte on @done and sleeps until killed.
 */
static pid_t child_start(unsigned int ms, int *go, int *done)
{
	int a[2], b[2];
	pid_t pid;
	char c;

	if (pipe(a) || pipe(b))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(a[1]);
		close(b[0]);
		if (read(a[0], &c, 1) != 1)
			_exit(1);
		spin_cpu(ms);
		if (write(b[1], "d", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(a[0]);
	close(b[1]);
	*go = a[1];
	*done = b[0];
	return pid;
}

static void child_end(pid_t pid, int go, int done)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(go);
	close(done);
}

/*
 * Configure and start a session on a new child burning @ms of CPU at
 * @period ns of cpu-clock; returns once the child is done.  -1: setup
 * failed (*why says what).
 */
static int burn(int fd, uint64_t period, unsigned int ms, pid_t *pid,
		int *go, int *done, const char **why)
{
	struct kcc_config c;
	char ch;

	*pid = child_start(ms, go, done);
	if (*pid < 0) {
		*why = "fork";
		return -1;
	}
	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, *pid, 3);
	c.sample_period = period;
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
	    kcc_ioc(fd, KCC_IOC_START, NULL)) {
		*why = "configure/start";
		return -1;
	}
	if (write(*go, "g", 1) != 1 || read(*done, &ch, 1) != 1) {
		*why = "child";
		return -1;
	}
	return 0;
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

static void test_timer(int fd)
{
	const char *why = NULL;
	uint64_t t0, p = 0, w0 = 0, w1 = 0;
	int go, done;
	pid_t pid;

	write_param("flush_ms", "5");
	read_u64(SYS_KCC "wakeups", &w0);
	/* About 10 samples at 20 ms: far below the half of 128. */
	if (burn(fd, 20000000, 200, &pid, &go, &done, &why)) {
		tap_result(0, "timer: %s", why);
		return;
	}
	t0 = wall_ms();
	while (!(p = sys_counter("processed")) && wall_ms() - t0 < 60000)
		usleep(20000);
	read_u64(SYS_KCC "wakeups", &w1);
	tap_result(p > 0 && w1 > w0,
		   "timer: a low-rate event's samples are applied while the session runs (processed %llu, %llu wakeups, no STATUS, no STOP)",
		   (unsigned long long)p, (unsigned long long)(w1 - w0));
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	child_end(pid, go, done);
	kcc_check_accounting(fd, "timer");
}

static void test_stop(int fd)
{
	const char *why = NULL;
	uint64_t p0, p, s, d;
	int go, done;
	pid_t pid;

	write_param("flush_ms", "10000");
	if (burn(fd, 20000000, 200, &pid, &go, &done, &why)) {
		tap_result(0, "stop: %s", why);
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
	if (p0)
		tap_skip("stop: STOP applied what the rings held # the flush timer ran first (%llu processed)",
			 (unsigned long long)p0);
	else
		tap_result(p > 0,
			   "stop: STOP applied what the rings held (none before it, %llu after)",
			   (unsigned long long)p);
	kcc_check_accounting(fd, "stop");
}

static void test_burst(int fd)
{
	const char *why = NULL;
	struct kcc_status st;
	uint64_t ring_kb = 0, cap;
	int go, done;
	pid_t pid;

	read_u64(SYS_PARAM "ring_kb", &ring_kb);
	/* A record has at least its 80-byte header. */
	cap = ring_kb * 1024 / 80;
	write_param("flush_ms", "10000");
	/* 20 us: up to 50,000 samples a CPU second, throttled or not. */
	if (burn(fd, 20000, 1000, &pid, &go, &done, &why)) {
		tap_result(0, "burst: %s", why);
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
	test_timer(fd);
	test_stop(fd);
	test_burst(fd);
	write_param("flush_ms", old);
	close(fd);
	return tap_exit();
}
