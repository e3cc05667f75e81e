// SPDX-License-Identifier: GPL-2.0
/*
 * profile_fuzz.c - libFuzzer target: the profile parser and, for
 * profiles it accepts, a full text and folded report.
 */
#include <stdio.h>
#include <stdlib.h>

#include "report_fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *nul;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts o = { .name = "fuzz", .sort = -1 };
	struct profile p;
	struct report r;

	if (!nul) {
		nul = fopen("/dev/null", "w");
		/* Parse errors are expected by the thousand. */
		stderr = nul;
	}
	if (!profile__parse(&p, data, size, "fuzz") && !p.bare &&
	    !report__build(&r, &p, &o)) {
		report__text(&r, nul);
		report__folded(&r, nul);
		report__exit(&r);
	}
	profile__exit(&p);
	return 0;
}
