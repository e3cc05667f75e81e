// SPDX-License-Identifier: GPL-2.0
/*
 * adv_recursion - recursion far deeper than every cap of the session: the
 * frame-pointer walk stops at stack_depth, a task's forest at task_nodes,
 * and neither the walk nor the replay may overrun.  Runs on a thread with
 * a 256 MB stack so that 200,000 frames fit.
 *
 * Usage: adv_recursion [-d DEVICE]
 */
#include <pthread.h>

#include "kcc_prog.h"

#define noinline	__attribute__((noinline))

#define DEPTH		200000
#define ROUNDS		3

static volatile uint64_t sink;

/*
 * Not inlined, not a tail call (the add after the call), a frame each:
 * the user stack really is DEPTH frames deep at the bottom.
 */
static noinline uint64_t descend(uint64_t n)
{
	volatile uint64_t pad[4] = { n, n, n, n };

	if (n == 0) {
		kcc_spin_ms(300);
		return pad[0];
	}
	return descend(n - 1) + pad[1];
}

/* Three routines calling one another: contexts that differ at every k. */
static noinline uint64_t ping(uint64_t n);
static noinline uint64_t pong(uint64_t n)
{
	if (n % 1024 == 0)
		kcc_spin_ms(1);
	return n ? ping(n - 1) + 1 : 0;
}

static noinline uint64_t pang(uint64_t n)
{
	return n ? pong(n - 1) + 2 : 0;
}

static noinline uint64_t ping(uint64_t n)
{
	return n ? pang(n - 1) + 3 : 0;
}

static void *deep(void *arg)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		sink += descend(DEPTH);
		sink += ping(DEPTH / 4);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct kcc_config c;
	pthread_attr_t attr;
	pthread_t th;
	int fd;

	kcc_prog_args(argc, argv, "Sample a 200,000-frame recursion under small caps.");
	kcc_config_default(&c);
	c.stack_depth = 16;
	c.task_nodes = 64;
	fd = kcc_session_start(&c);
	tap_plan(1 + KCC_SESSION_CHECKS);

	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 256u << 20) ||
	    pthread_create(&th, &attr, deep, NULL)) {
		tap_result(0, "a thread with a 256 MB stack");
		return tap_exit();
	}
	pthread_join(th, NULL);
	tap_result(1, "recursed %d frames deep %d times", DEPTH, ROUNDS);
	kcc_session_check(fd, &c);
	close(fd);
	return tap_exit();
}
