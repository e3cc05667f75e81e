/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_sysfs.h - a number read from a sysfs file (a module parameter),
 * for the guest programs of kcc.ko and of the software LBR PMU.
 */
#ifndef KCC_SYSFS_H
#define KCC_SYSFS_H

#include <stdio.h>

/* The number in @path, or -1 when it cannot be read. */
static inline long long kcc_sysfs_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

#endif /* KCC_SYSFS_H */
