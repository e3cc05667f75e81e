// SPDX-License-Identifier: GPL-2.0
/*
 * demangle.c - routine names as their programmers wrote them, through
 * libiberty's cplus_demangle() (Debian's libiberty-dev), the demangler
 * of binutils and of perf.  A file of its own: libiberty.h declares a
 * basename() that conflicts with <libgen.h>.
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols.h"

char *sym__demangle(const char *name)
{
	char *d = NULL;

	/* DMGL_AUTO: Itanium C++ and both Rust manglings. */
	if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	return d ? d : strdup(name);
}
