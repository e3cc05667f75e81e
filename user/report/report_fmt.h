/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report_fmt.h - the outputs of kcc report over the model of report.h:
 * folded stacks and JSON (report_fmt.c), pprof (pprof.h), SVG (svg.h),
 * and report__print(), which renders the format the options chose.
 *
 * The formats depend on the model, not the reverse: report.c calls none
 * of them (scripts/static-checks.sh layers checks it).
 */
#ifndef KCC_REPORT_FMT_H
#define KCC_REPORT_FMT_H

#include <stdio.h>

#include "report.h"

/* Render @r in r->o.format (text by default). */
int report__print(struct report *r, FILE *out);

int report__folded(struct report *r, FILE *out);
int report__json(struct report *r, FILE *out);

#endif /* KCC_REPORT_FMT_H */
