// SPDX-License-Identifier: GPL-2.0
/*
 * bench_deep.c - the program of make bench-guest's handler-cost group:
 * a call stack DEPTH frames deep (a frame-pointer walk from its bottom
 * goes as deep as any cap: 32, 127 or 512 frames), at whose bottom a
 * loop calls small routines ROUNDS times 4,096 times, so that
 * every sample's stack is that deep and its branch records (on the
 * software LBR PMU, built with kcc's tracing runtime) are calls and
 * returns.  Built with frame pointers, no sibling calls, no inlining.
 *
 * Usage: bench_deep [DEPTH [ROUNDS]]	(default 600 and 200); prints a
 * checksum line.
 */
#include <stdio.h>
#include <stdlib.h>

#define noinline	__attribute__((noinline))

static volatile unsigned long sink;

static noinline unsigned long leaf(unsigned long x)
{
	return x * 2654435761u + (x >> 7);
}

static noinline unsigned long mid(unsigned long x)
{
	return leaf(x) ^ leaf(x + 1);
}

/* The work at the bottom: ROUNDS of calls, a few thousand each. */
static noinline unsigned long bottom(unsigned long rounds)
{
	unsigned long r, i, acc = 0;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < 4096; i++)
			acc += mid(acc + i);
	return acc;
}

/* A frame each: not a tail call (the add after it). */
static noinline unsigned long descend(unsigned long n, unsigned long rounds)
{
	volatile unsigned long pad = n;

	if (!n)
		return bottom(rounds);
	return descend(n - 1, rounds) + pad;
}

int main(int argc, char **argv)
{
	unsigned long depth = argc > 1 ? strtoul(argv[1], NULL, 10) : 600;
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 200;

	if (!depth || depth > 100000 || !rounds) {
		fprintf(stderr, "usage: bench_deep [DEPTH [ROUNDS]]\n");
		return 2;
	}
	sink = descend(depth, rounds);
	printf("bench_deep %lu %lu %lu\n", depth, rounds, sink);
	return 0;
}
