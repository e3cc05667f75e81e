// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_blob - hand a file of the guest back to the host as a blob (the
 * debug console when there is one, else the serial console:
 * kcc_blob_print() in kcc_guest.h), for the guest suite's shell steps.
 *
 * Usage: kcc_blob NAME FILE	(an empty or missing FILE: no blob)
 * Exit 0 when the blob was written or there was none, 1 on an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcc_guest.h"

int main(int argc, char **argv)
{
	size_t len = 0, cap = 1 << 16, n;
	char *buf;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: kcc_blob NAME FILE\n");
		return 1;
	}
	f = fopen(argv[2], "rb");
	if (!f)
		return errno == ENOENT ? 0 : 1;
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				free(buf);
			buf = b;
		}
	}
	if (!buf || ferror(f)) {
		fprintf(stderr, "kcc_blob: %s: %s\n", argv[2],
			buf ? "read error" : "out of memory");
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	if (len)
		kcc_blob_print(argv[1], buf, len);
	free(buf);
	return 0;
}
