// SPDX-License-Identifier: GPL-2.0
/*
 * adv_exit - tasks gone before their samples are processed, rings that
 * overflow, memory that runs out.  Three sessions:
 *
 *   1. threads that inject samples (KCC_IOC_INJECT, module parameter
 *      inject=1) and exit at once, so the worker meets a dead task;
 *      without inject=1 they sample-and-exit instead;
 *   2. the smallest sample period (10 us of CPU clock, kcc-abi.rst) over
 *      eight busy threads: the per-CPU rings may overflow, and
 *      KCC_DROP_RING_FULL must count what is lost;
 *   3. max_bytes = 1: no forest fits, every sample is dropped, no byte of
 *      forest memory is allocated.
 *
 * Usage: adv_exit [-d DEVICE]
 */
#include <pthread.h>

#include "kcc_prog.h"

#define NTHREADS	200

static int inject_fd = -1;

/* One valid sample: a three-frame user stack, no branches. */
static void *inject_and_exit(void *arg)
{
	uint64_t buf[(sizeof(struct kcc_sample) + 3 * 8) / 8];
	struct kcc_sample *s = (void *)buf;
	uint64_t *stk = (void *)(s + 1);
	struct kcc_inject in;

	memset(buf, 0, sizeof(buf));
	s->size = sizeof(buf);
	s->nr_stack = 3;
	s->delta = 1;
	stk[0] = 0x401000 + (uintptr_t)arg * 16;
	stk[1] = 0x402000;
	stk[2] = 0x403000;
	memset(&in, 0, sizeof(in));
	in.size = sizeof(in);
	in.count = 1;
	in.data = (uintptr_t)buf;
	in.len = sizeof(buf);
	if (inject_fd >= 0)
		ioctl(inject_fd, KCC_IOC_INJECT, &in);
	else
		kcc_spin_ms(1);
	return NULL;	/* exit at once: the sample is likely still queued */
}

static void *busy(void *arg)
{
	kcc_spin_ms(300);
	return NULL;
}

static void run_threads(void *(*fn)(void *), int n)
{
	pthread_t th[NTHREADS];
	int i, made;

	for (made = 0; made < n; made++)
		if (pthread_create(&th[made], NULL, fn, (void *)(uintptr_t)made))
			break;
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
}

/*
 * A configuration the module may refuse with EINVAL (a cap below what it
 * supports): that skips its checks; any other error fails them.
 */
static void refused(const char *what, int checks)
{
	int err = errno, i;

	for (i = 0; i < checks; i++) {
		if (err == EINVAL)
			tap_skip("%s refused with EINVAL", what);
		else
			tap_result(0, "%s: configure and start: %s", what, strerror(err));
	}
}

int main(int argc, char **argv)
{
	struct kcc_status st;
	struct kcc_config c;
	int fd;

	kcc_prog_args(argc, argv, "Exit before processing, ring overflow, memory cap.");

	/* 1: exit between sample and processing */
	kcc_config_default(&c);
	fd = kcc_session_start(&c);
	tap_plan(3 * KCC_SESSION_CHECKS + 1);
	inject_fd = fd;
	{
		struct kcc_inject probe;

		memset(&probe, 0, sizeof(probe));
		probe.size = sizeof(probe);
		if (ioctl(fd, KCC_IOC_INJECT, &probe) && errno != EINVAL) {
			tap_diag("KCC_IOC_INJECT unavailable (%s): sampling only",
				 strerror(errno));
			inject_fd = -1;
		}
	}
	run_threads(inject_and_exit, NTHREADS);
	kcc_spin_ms(50);
	kcc_session_check(fd, &c);
	close(fd);

	/* 2: ring overflow at the smallest period */
	kcc_config_default(&c);
	c.sample_period = 10000;
	fd = kcc_session_open(&c);
	if (fd >= 0) {
		run_threads(busy, 8);
		kcc_session_check(fd, &c);
		close(fd);
	} else {
		refused("sample_period 10000", KCC_SESSION_CHECKS);
	}

	/* 3: memory cap at a tiny value */
	kcc_config_default(&c);
	c.max_bytes = 1;
	fd = kcc_session_open(&c);
	if (fd < 0) {
		refused("max_bytes 1", KCC_SESSION_CHECKS + 1);
		return tap_exit();
	}
	run_threads(busy, 4);
	kcc_session_check(fd, &c);
	kcc_status_get(fd, &st);
	tap_result(st.processed == 0 && st.bytes == 0,
		   "max_bytes 1: nothing processed (%llu), no forest memory (%llu bytes)",
		   (unsigned long long)st.processed, (unsigned long long)st.bytes);
	close(fd);
	return tap_exit();
}
