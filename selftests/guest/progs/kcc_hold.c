// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_hold - keep /dev/kcc open with a running session until killed, for
 * the module-unload tests of the guest: while it runs, rmmod kcc must
 * fail cleanly; once it is gone, rmmod must succeed.
 *
 * Usage: kcc_hold [-n]	(-n: open the device only, no session)
 * Prints "kcc_hold: ready" once the session runs.  Exit 1 on error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kcc_guest.h"

int main(int argc, char **argv)
{
	int only_open = argc > 1 && !strcmp(argv[1], "-n");
	struct kcc_config c;
	volatile unsigned long spin = 0;
	int fd;

	fd = kcc_open(O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "kcc_hold: %s: %s\n", KCC_DEVICE, strerror(errno));
		return 1;
	}
	if (!only_open) {
		kcc_cfg_init(&c, KCC_SOURCE_AUTO, KCC_TARGET_ALL, 0, 3);
		if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
		    kcc_ioc(fd, KCC_IOC_START, NULL)) {
			fprintf(stderr, "kcc_hold: cannot start: %s\n",
				strerror(errno));
			return 1;
		}
	}
	printf("kcc_hold: ready\n");
	fflush(stdout);
	/* Stay busy so that samples keep arriving until the kill. */
	for (;;)
		spin++;
}
