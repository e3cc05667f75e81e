// SPDX-License-Identifier: GPL-2.0
/*
 * builtin.c - what the builtin-*.c share: usage errors and the parsing of
 * option values (builtin.h).  kcc.c only dispatches to the commands, so
 * that no command depends on it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "kcc_forest.h"

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", cmd);
	return KCC_EXIT_USAGE;
}

int usage_one_operand(const char *cmd, int argc, char **argv,
		      const char *what, const char **arg)
{
	if (optind >= argc)
		return usage_error(cmd, "no %s given", what);
	if (optind + 1 < argc)
		return usage_error(cmd, "unexpected argument '%s'",
				   argv[optind + 1]);
	*arg = argv[optind];
	return 0;
}

int usage_bad_option(const char *cmd, int c, char **argv)
{
	/* getopt_long was given a leading ':' and opterr = 0. */
	const char *opt = argv[optind - 1];

	if (c == ':')
		return usage_error(cmd, "option '%s' needs a value", opt);
	if (optopt && strncmp(opt, "--", 2))
		return usage_error(cmd, "unknown option '-%c'", optopt);
	return usage_error(cmd, "unknown option '%s'", opt);
}

int parse_k(const char *s, uint32_t *k)
{
	if (!strcmp(s, "inf")) {
		*k = KCC_K_INF;
		return 0;
	}
	/* KCC_K_INF itself is spelled "inf". */
	if (parse_u32(s, k) || *k == KCC_K_INF)
		return -EINVAL;
	return 0;
}

int parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

int parse_double(const char *s, double *v)
{
	char *end;
	double x;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	x = strtod(s, &end);
	if (errno || *end || !isfinite(x))
		return -EINVAL;
	*v = x;
	return 0;
}
