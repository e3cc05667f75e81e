/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svg.h - kcc report --format svg: a self-contained, interactive flame
 * graph of the k-calling-context forest.
 *
 * A k-CCF tree has the routine at its root and the callers above it, so
 * the graph grows upwards from each routine through at most k callers:
 * the bottom row splits the chosen metric by routine, each frame above a
 * routine splits it by calling path.  Hovering a frame shows its whole
 * k-context and every counter in the status line (and as a tooltip);
 * clicking zooms into it, clicking the bottom bar resets.  No external
 * file, font or script is referenced.
 */
#ifndef KCC_SVG_H
#define KCC_SVG_H

#include "report.h"

/* XML text with &, <, >, " and ' escaped. */
void xml_str(const char *s, FILE *out);

/* kcc report --format svg. */
int report__svg(struct report *r, FILE *out);

#endif /* KCC_SVG_H */
