// SPDX-License-Identifier: GPL-2.0
/*
 * tracee.c - the program selftests/kcc/tracer.sh traces: recursion, a
 * longjmp() out of a recursion (twice: the stack is mended once by the
 * next entry, once by the next exit), a callback through a function
 * pointer, an inlined routine, a second thread, and exit() called two
 * frames deep.  The
 * trace it must give is derived by hand in tracer.sh.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>

static jmp_buf env;
static volatile int sink;

static __attribute__((noinline)) int fact(int n)
{
	return n <= 1 ? 1 : n * fact(n - 1);
}

static __attribute__((noinline)) void thrower(int n)
{
	if (n == 0)
		longjmp(env, 1);
	thrower(n - 1);
	sink++;
}

static __attribute__((noinline)) void leaf(void)
{
	sink++;
}

/* The entry of leaf() shows the three thrower frames gone. */
static __attribute__((noinline)) void catcher(void)
{
	if (!setjmp(env))
		thrower(2);
	leaf();
}

/* Here the exit of catcher2() itself shows the two frames gone. */
static __attribute__((noinline)) void catcher2(void)
{
	if (!setjmp(env))
		thrower(1);
}

static __attribute__((noinline)) void cb(int v)
{
	sink += v;
}

/* Inlined: its hooks run in walk()'s frame, at walk()'s sp. */
static inline __attribute__((always_inline)) void start(void)
{
	sink = 0;
}

static __attribute__((noinline)) void walk(const int *v, int n,
					   void (*fn)(int))
{
	int i;

	start();
	for (i = 0; i < n; i++)
		fn(v[i]);
}

static void *worker(void *arg)
{
	leaf();
	return arg;
}

static __attribute__((noinline)) void finish(void)
{
	exit(0);
}

int main(void)
{
	static const int v[3] = { 3, 1, 2 };
	pthread_t th;

	sink = fact(3);
	catcher();
	catcher2();
	walk(v, 3, cb);
	if (pthread_create(&th, NULL, worker, NULL) ||
	    pthread_join(th, NULL))
		return 1;
	finish();
	return 0;
}
