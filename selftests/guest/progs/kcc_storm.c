// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_storm - session start/stop storms, with /dev/kcc or with perf alone.
 *
 * Usage: kcc_storm [-n CYCLES] [-g MS] [-m kcc|perf] [-t pid|all] [-e clock|cs]
 *
 * Each cycle opens the events, lets them run for a short spin, and closes
 * them, while two threads ping-pong through a pipe so that both vCPUs are
 * in __schedule() all the time.  Opening and closing events flips the
 * jump labels perf keeps in the scheduler's hot path: perf_sched_events
 * for per-task events (enabled at the first, disabled HZ after the last:
 * use -g above 1000 to flip it at every cycle) and perf_swevent_enabled[]
 * for software events (-e cs: context switches, flipped at every open and
 * close).  The kernel rewrites those call sites with text_poke_bp() while
 * the other CPU runs them.
 *
 *   -m kcc    a kcc session (KCC_IOC_CONFIGURE, START, STOP, close) on
 *             this process (-t pid) or every CPU (-t all), cpu-clock
 *   -m perf   the same event with perf_event_open() alone, no /dev/kcc
 *             (per thread, inherited, or per CPU with -t all), its count
 *             read before the close (as perf stat does; kcc
 *             reads its events' counts at STOP): the control that tells
 *             kcc's part from perf's
 *   -e cs     (perf only) the context-switches software event instead
 *             of cpu-clock; kcc.ko refuses it as a sampled event
 *
 * Default: 20 cycles, no gap, -m kcc -t pid: seconds, for the guest suite.
 * The storms of Documentation/testing.rst ("multi-threaded TCG") use
 * -n 100 -g 1100 and -n 2000 -m perf -e cs; every 500 cycles a "#"
 * line tells how far a storm got.  Output is TAP; the host
 * judges the kernel log.  Exit 0 pass, 1 fail, 4 no device (skip).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "kcc_guest.h"

static volatile int stop_pingpong;
static int pipes[2][2];
static volatile pid_t tids[2];

/* Ping-pong one byte between two threads: a context switch per hop. */
static void *pingpong(void *arg)
{
	int side = (int)(long)arg;
	char c = 0;

	tids[side] = syscall(SYS_gettid);

	if (side)
		(void)!write(pipes[0][1], &c, 1);
	while (!stop_pingpong) {
		if (read(pipes[side][0], &c, 1) != 1)
			break;
		if (write(pipes[!side][1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void spin(void)
{
	volatile unsigned long i;

	for (i = 0; i < 200000; i++)
		;
}

static int perf_cycle(int all, int cs)
{
	struct perf_event_attr a;
	int fds[64], n = 0, cpu, ncpu, ok = 1;
	uint64_t count;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = cs ? PERF_COUNT_SW_CONTEXT_SWITCHES : PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = cs ? 1000 : 1000000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a.inherit = !all;
	a.exclude_kernel = 1;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 64)
		ncpu = 64;
	/* all: one event per CPU; else one per thread, as kcc opens them */
	for (cpu = 0; cpu < (all ? ncpu : 3); cpu++) {
		pid_t pid = all ? -1 : cpu ? tids[cpu - 1] : 0;
		int fd = syscall(SYS_perf_event_open, &a, pid,
				 all ? cpu : -1, -1, 0);

		if (fd < 0) {
			tap_diag("perf_event_open: %s", strerror(errno));
			ok = 0;
			break;
		}
		fds[n++] = fd;
	}
	spin();
	/* Read the counts before closing, as perf stat does. */
	for (cpu = 0; cpu < n; cpu++)
		(void)!read(fds[cpu], &count, sizeof(count));
	while (n)
		close(fds[--n]);
	return ok;
}

static int kcc_cycle(int fd, int all)
{
	struct kcc_config c;
	int ret;

	kcc_cfg_init(&c, KCC_SOURCE_FP, all ? KCC_TARGET_ALL : KCC_TARGET_PID,
		     all ? 0 : getpid(), 2);
	c.event_type = PERF_TYPE_SOFTWARE;
	c.event_config = PERF_COUNT_SW_CPU_CLOCK;
	c.flags = KCC_CFG_EVENT;
	ret = kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
	if (!ret)
		ret = kcc_ioc(fd, KCC_IOC_START, NULL);
	if (ret) {
		tap_diag("configure/start: %s", strerror(-ret));
		return 0;
	}
	spin();
	ret = kcc_ioc(fd, KCC_IOC_STOP, NULL);
	if (ret) {
		tap_diag("stop: %s", strerror(-ret));
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	int cycles = 20, gap_ms = 0, use_perf = 0, all = 0, cs = 0;
	int opt, i, done = 0, fd = -1;
	pthread_t th[2];

	while ((opt = getopt(argc, argv, "n:g:m:t:e:")) != -1) {
		switch (opt) {
		case 'n': cycles = atoi(optarg); break;
		case 'g': gap_ms = atoi(optarg); break;
		case 'm': use_perf = !strcmp(optarg, "perf"); break;
		case 't': all = !strcmp(optarg, "all"); break;
		case 'e': cs = !strcmp(optarg, "cs"); break;
		default:
			fprintf(stderr, "usage: kcc_storm [-n CYCLES] [-g MS] [-m kcc|perf] [-t pid|all] [-e clock|cs]\n");
			return 2;
		}
	}
	if (cs && !use_perf) {
		fprintf(stderr, "kcc_storm: -e cs needs -m perf\n");
		return 2;
	}
	tap_plan(1);
	if (!use_perf) {
		fd = kcc_open(O_RDWR);
		if (fd < 0) {
			printf("ok 1 # SKIP %s: %s\n", KCC_DEVICE, strerror(errno));
			return 4;
		}
	}
	if (pipe(pipes[0]) || pipe(pipes[1]))
		return 1;
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, pingpong, (void *)(long)i);
	while (!tids[0] || !tids[1])
		sched_yield();
	for (i = 0; i < cycles; i++) {
		if (!(use_perf ? perf_cycle(all, cs) : kcc_cycle(fd, all)))
			break;
		done++;
		/* How far a storm got when the kernel dies under it. */
		if (!(done % 500))
			tap_diag("%d cycles", done);
		if (gap_ms)
			usleep(gap_ms * 1000);
	}
	stop_pingpong = 1;
	for (i = 0; i < 2; i++) {
		close(pipes[i][1]);
		pthread_join(th[i], NULL);
	}
	if (fd >= 0)
		close(fd);
	tap_result(done == cycles, "%d of %d %s start/stop cycles (%s, %s)",
		   done, cycles, use_perf ? "perf" : "kcc",
		   all ? "all CPUs" : "this process",
		   cs ? "context-switches" : "cpu-clock");
	return done == cycles ? 0 : 1;
}
