// SPDX-License-Identifier: GPL-2.0
/*
 * demo_workload - the workload `make demo` profiles in the guest.
 *
 * One routine, touch(), walks an array with a stride of one cache line.
 * It is called from two places:
 *
 *	main -> scan_big -> touch	a 64 MiB array: every access misses
 *	main -> scan_small -> touch	a 16 KiB array: every access hits
 *
 * Both callers make the same number of accesses per round, so a flat
 * profile of touch() cannot tell them apart; its k = 1 contexts
 * scan_big;touch and scan_small;touch can.  On a PMU the sampled cache
 * misses land under scan_big; without one (a TCG guest) kcc samples
 * cpu-clock and the split shows time, not misses.
 *
 * Build: -O1 -fno-omit-frame-pointer -fno-inline -static (frame pointers
 * for kcc's fp source).  Usage: demo_workload [SECONDS [ROUNDS]]: at
 * least SECONDS (default 3) and at least ROUNDS rounds of both scans
 * (default 0).  A test that must see both contexts gives ROUNDS: on a
 * starved guest CPU the seconds can pass in the page faults of main.
 */
#include <stdlib.h>
#include <time.h>

#define BIG_BYTES	(64ul << 20)
#define SMALL_BYTES	(16ul << 10)
#define LINE		64
#define ACCESSES	(256ul << 10)	/* per call of a scan */

static volatile unsigned long sink;

/* Out of line, frame and all: the routine both callers share. */
__attribute__((noinline)) void touch(unsigned char *a, unsigned long bytes,
				     unsigned long n)
{
	unsigned long i, off = 0, sum = 0;

	for (i = 0; i < n; i++) {
		sum += a[off];
		a[off]++;
		off += LINE;
		if (off >= bytes)
			off = 0;
	}
	sink += sum;
}

__attribute__((noinline)) void scan_big(unsigned char *a)
{
	touch(a, BIG_BYTES, ACCESSES);
	sink++;
}

__attribute__((noinline)) void scan_small(unsigned char *a)
{
	touch(a, SMALL_BYTES, ACCESSES);
	sink++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 3.0);
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	unsigned char *big = calloc(1, BIG_BYTES);
	unsigned char *small = calloc(1, SMALL_BYTES);
	unsigned long i, r;

	if (!big || !small)
		return 1;
	for (i = 0; i < BIG_BYTES; i += 4096)	/* fault the pages in first */
		big[i] = 1;
	for (r = 0; r < rounds || now() < end; r++) {
		scan_big(big);
		scan_small(small);
	}
	free(big);
	free(small);
	return 0;
}
