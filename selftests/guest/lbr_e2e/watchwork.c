// SPDX-License-Identifier: GPL-2.0
/*
 * watchwork.c - the program of the guest's watched-context test
 * (selftests/guest/lbr_e2e/lbr_e2e.sh, lbr_watch): a few hundred calls
 * of a fixed pseudo-random walk over six routines, recursion included,
 * each call and each return followed by a spin of pure arithmetic.
 *
 * The spin is what makes every call seen.  The software LBR PMU keeps
 * the last 32 branches of the thread and kcc_lbr/clock/ samples it
 * every period of time; as long as fewer than 32 branches happen in a
 * period, every branch is in some sample's records, and kcc record
 * --join longest replays each once.  The walk never calls one routine
 * again and again with nothing between (a window of repeated records is
 * the one case a join can misread, Documentation/stitching.rst).
 * Built like wordfreq: frame pointers, no inlining, no sibling calls,
 * traced by kcc's runtime.
 *
 * Usage: watchwork [SPIN]	(iterations per spin, default 100000)
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long spin_n = 100000;
static volatile unsigned long sink;
static unsigned long state = 12345;
static int budget = 300;

static void spin(void)
{
	unsigned long i;

	for (i = 0; i < spin_n; i++)
		sink += i;
}

static unsigned int next(void)
{
	state = state * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned int)(state >> 33);
}

void r0(int d);
void r1(int d);
void r2(int d);
void r3(int d);
void r4(int d);

/* Calls one routine of the walk (never the one it called last). */
static void step(int d, int self)
{
	static int last = -1;
	int r;

	if (budget <= 0 || d > 12)
		return;
	do {
		r = next() % 5;
	} while (r == last && r == self);
	last = r;
	budget--;
	switch (r) {
	case 0:
		r0(d + 1);
		break;
	case 1:
		r1(d + 1);
		break;
	case 2:
		r2(d + 1);
		break;
	case 3:
		r3(d + 1);
		break;
	default:
		r4(d + 1);
		break;
	}
	spin();
}

void r0(int d)
{
	spin();
	step(d, 0);
}

void r1(int d)
{
	spin();
	if (next() % 3)
		step(d, 1);
	step(d, 1);
}

void r2(int d)
{
	spin();
	if (next() % 2)
		step(d, 2);
}

void r3(int d)
{
	spin();
	step(d, 3);
	if (next() % 4 == 0)
		step(d, 3);
}

void r4(int d __attribute__((unused)))
{
	spin();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		spin_n = strtoul(argv[1], NULL, 0);
	spin();
	while (budget > 0)
		step(0, -1);
	/* Samples after the last return: its records are taken too. */
	spin();
	spin();
	printf("watchwork: %lu\n", sink);
	return 0;
}
