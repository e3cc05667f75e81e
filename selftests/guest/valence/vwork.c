// SPDX-License-Identifier: GPL-2.0
/*
 * vwork.c - the workload of the Valence end-to-end test (valence_e2e.sh):
 * built with -fomit-frame-pointer -finstrument-functions and kcc's Valence
 * runtime, so that frame pointers say nothing and the area says all.
 *
 *	vwork work N	main and 3 threads, N rounds each: calls through a
 *			function pointer table, two recursions (fib, and
 *			even/odd into each other) ending in frameless leaf
 *			loops, qsort() calling back into the program
 *	vwork torn N	one thread calling two tiny routines in a tight
 *			loop: most samples land inside the runtime's hooks,
 *			in the middle of an update of the area
 *
 * The work is a fixed amount of computation: the test does not depend
 * on how fast the guest runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

/* Frameless leaves: loops with no call, no frame of their own. */
NOINLINE static void leaf_mix(unsigned long n)
{
	unsigned long x = n, i;

	for (i = 0; i < 200; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink += x;
}

NOINLINE static void leaf_sum(unsigned long n)
{
	unsigned long s = 0, i;

	for (i = 0; i < 300; i++)
		s += i ^ n;
	sink += s;
}

NOINLINE static unsigned long fib(unsigned long n)
{
	if (n < 2) {
		leaf_mix(n);
		return n;
	}
	return fib(n - 1) + fib(n - 2);
}

NOINLINE static int is_odd(unsigned int n);

NOINLINE static int is_even(unsigned int n)
{
	if (!n) {
		leaf_sum(n);
		return 1;
	}
	return is_odd(n - 1);
}

NOINLINE static int is_odd(unsigned int n)
{
	if (!n)
		return 0;
	return is_even(n - 1);
}

NOINLINE static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	leaf_mix((unsigned long)x);
	return (x > y) - (x < y);
}

NOINLINE static void sortit(unsigned int seed)
{
	int v[24];
	unsigned int i;

	for (i = 0; i < 24; i++)
		v[i] = (int)((seed * 2654435761u + i * 40503u) % 1000);
	qsort(v, 24, sizeof(v[0]), cmp);
	sink += (unsigned long)v[0];
}

NOINLINE static void do_fib(unsigned int i)
{
	sink += fib(8 + i % 4);
}

NOINLINE static void do_parity(unsigned int i)
{
	sink += (unsigned long)is_even(20 + i % 16);
}

NOINLINE static void do_sort(unsigned int i)
{
	sortit(i);
}

static void (*const table[])(unsigned int) = { do_fib, do_parity, do_sort };

NOINLINE static void round_of(unsigned int i)
{
	/* An indirect call: escaped in the encoding, exact all the same. */
	table[i % 3](i);
	leaf_sum(i);
}

static unsigned int rounds;

NOINLINE static void *worker(void *arg)
{
	unsigned int i, base = (unsigned int)(unsigned long)arg;

	for (i = 0; i < rounds; i++)
		round_of(base + i);
	return NULL;
}

NOINLINE static void tick(void)
{
	sink++;
}

NOINLINE static void tock(void)
{
	sink += 2;
}

NOINLINE static void *spinner(void *arg)
{
	unsigned long i, n = (unsigned long)arg;

	for (i = 0; i < n; i++) {
		tick();
		tock();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[3];
	unsigned long n;
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: vwork work|torn N\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	if (!strcmp(argv[1], "torn")) {
		if (pthread_create(&th[0], NULL, spinner, (void *)n))
			return 1;
		pthread_join(th[0], NULL);
		return 0;
	}
	rounds = (unsigned int)n;
	for (i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, worker,
				   (void *)(unsigned long)(i * 1000)))
			return 1;
	worker((void *)7000ul);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("%lu\n", sink & 1);
	return 0;
}
