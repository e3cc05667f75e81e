// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_workload.c - the traced workload of the test LBR PMU: the shapes of
 * real code that LBR bursts must survive.  Built with
 * -finstrument-functions and kcc's tracing runtime, -O2 with frame
 * pointers except in leaves (selftests/lbrpmu/build.sh); run with
 * KCC_TRACE_LBR=1 so every thread keeps an LBR ring.
 *
 *   frameless leaves  leaf_* (-momit-leaf-frame-pointer)
 *   PLT calls         lib_hash(), lib_fold() in liblbr.so (no frames)
 *   tail calls        via_tail() jumps to tail_target() (not traced
 *                     itself, as a routine built without the hooks)
 *   signal handler    on_signal() for raise(SIGUSR1)
 *   longjmp           deep() unwinds to jump_round() by longjmp()
 *   recursion         rec()
 *   threads, fork     THREADS threads, then a forked child; each
 *                     thread exits with a file table of its own
 *
 * Usage: lbr_workload [ROUNDS [1]]   (default 200; 1: one thread, no
 *        threads or child: lbr_check -P)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lbr_lib.h"

#define THREADS	2
#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static volatile sig_atomic_t signals;

NOINLINE static unsigned long leaf_add(unsigned long a, unsigned long b)
{
	return a + b * 3;
}

NOINLINE static unsigned long leaf_xor(unsigned long a)
{
	return a ^ (a >> 7);
}

NOINLINE static unsigned long tail_target(unsigned long x)
{
	return leaf_xor(x) + 1;
}

/* Not traced: its call of tail_target() is a jump (sibling call). */
__attribute__((no_instrument_function, noinline, optimize("O2",
	"optimize-sibling-calls")))
static unsigned long via_tail(unsigned long x)
{
	return tail_target(x * 5);
}

NOINLINE static unsigned long rec(unsigned long x, int depth)
{
	if (depth == 0)
		return leaf_add(x, 1);
	return rec(leaf_xor(x), depth - 1) + 1;
}

static void on_signal(int sig)
{
	signals++;
	sink += leaf_add((unsigned long)sig, signals);
}

static __thread jmp_buf jump_env;	/* one per thread */

NOINLINE static void deep(int depth)
{
	if (depth == 0)
		longjmp(jump_env, 1);
	sink += leaf_xor((unsigned long)depth);
	if (sink != 1)	/* always: keeps the compiler from seeing a loop */
		deep(depth - 1);
}

NOINLINE static void jump_round(void)
{
	if (!setjmp(jump_env))
		deep(6);
}

NOINLINE static void round_of(unsigned long i)
{
	unsigned char buf[16];
	unsigned long k;

	for (k = 0; k < sizeof(buf); k++)
		buf[k] = (unsigned char)(i + k);
	sink += leaf_add(i, lib_hash(buf, sizeof(buf)));
	sink += lib_fold(i, 4);
	sink += via_tail(i);
	sink += rec(i, 8);
	if (i % 8 == 0)
		raise(SIGUSR1);
	if (i % 4 == 0)
		jump_round();
}

NOINLINE static void work(int rounds)
{
	int i;

	for (i = 0; i < rounds; i++)
		round_of((unsigned long)i);
}

static int rounds = 200;

/*
 * Give the thread a file table of its own with /dev/kcc_lbr open in it:
 * do_exit() closes it after exit_mm(), and with kcc_lbrpmu's release_ms
 * the release sleeps there, so the exiting thread is switched out and
 * in again without memory, as a debug kernel's slow exit path does by
 * chance (Documentation/lbrpmu.rst).  Harmless without the PMU.
 */
NOINLINE static void file_of_own_at_exit(void)
{
	if (!unshare(CLONE_FILES))
		open("/dev/kcc_lbr", O_RDONLY | O_CLOEXEC);
}

static void *thread_main(void *arg)
{
	work(rounds);
	file_of_own_at_exit();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	int i, status, one = 0;
	pid_t pid;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		one = !strcmp(argv[2], "1");
	if (rounds <= 0 || argc > 3 || (argc > 2 && !one)) {
		fprintf(stderr, "usage: lbr_workload [ROUNDS > 0 [1]]\n");
		return 2;
	}
	signal(SIGUSR1, on_signal);
	if (one) {
		work(rounds);
		return 0;
	}
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, thread_main, NULL)) {
			perror("pthread_create");
			return 1;
		}
	work(rounds);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		work(rounds / 2 + 1);
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "lbr_workload: the child failed\n");
		return 1;
	}
	return 0;
}
