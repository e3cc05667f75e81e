// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_lib.c - the shared library of lbr_workload: built with
 * -fomit-frame-pointer (as Debian builds its libraries) and traced, so
 * its routines are reached through the PLT and walk without frames.
 */
#include "lbr_lib.h"

static unsigned long lib_mix(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15ul;
	return x ^ (x >> 29);
}

unsigned long lib_hash(const unsigned char *p, unsigned long n)
{
	unsigned long h = 1469598103934665603ul, i;

	for (i = 0; i < n; i++)
		h = lib_mix(h ^ p[i]);
	return h;
}

unsigned long lib_fold(unsigned long x, int depth)
{
	if (depth <= 0)
		return lib_mix(x);
	return lib_fold(lib_mix(x) + (unsigned long)depth, depth - 1);
}
