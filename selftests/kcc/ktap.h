/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktap.h - the kselftest reporting API, small enough to read in one go.
 *
 * A test program prints a TAP 13 header and plan, one result line per
 * subtest and exits 0 (all passed), 1 (something failed) or 4 (skipped:
 * the thing under test is missing, not broken), which is what
 * selftests/run_tests.sh and the kernel's own runner expect.
 *
 *	ksft_print_header();
 *	ksft_set_plan(2);
 *	ksft_test_result(x == 1, "x is one\n");
 *	ksft_test_result_skip("no LBR on this CPU\n");
 *	ksft_finished();
 */
#ifndef KCC_KTAP_H
#define KCC_KTAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

struct ksft_count {
	unsigned int pass;
	unsigned int fail;
	unsigned int skip;
	unsigned int plan;
};

/* One test program, one counter set: the header is included once. */
static struct ksft_count ksft_cnt;

static inline unsigned int ksft_test_num(void)
{
	return ksft_cnt.pass + ksft_cnt.fail + ksft_cnt.skip + 1;
}

static inline void ksft_print_header(void)
{
	/* Results must not sit in a buffer when a sanitizer aborts us. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
}

static inline void ksft_set_plan(unsigned int plan)
{
	ksft_cnt.plan = plan;
	printf("1..%u\n", plan);
}

static inline void ksft_vprint(const char *prefix, const char *suffix,
			       const char *fmt, va_list ap)
{
	printf("%s", prefix);
	vprintf(fmt, ap);
	printf("%s", suffix);
}

/* Diagnostics: TAP comment lines, free text. */
static inline __attribute__((format(printf, 1, 2)))
void ksft_print_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ksft_vprint("# ", "", fmt, ap);
	va_end(ap);
}

static inline __attribute__((format(printf, 1, 2)))
void ksft_test_result_pass(const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "ok %u ", ksft_test_num());
	ksft_cnt.pass++;
	va_start(ap, fmt);
	ksft_vprint(prefix, "", fmt, ap);
	va_end(ap);
}

static inline __attribute__((format(printf, 1, 2)))
void ksft_test_result_fail(const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "not ok %u ", ksft_test_num());
	ksft_cnt.fail++;
	va_start(ap, fmt);
	ksft_vprint(prefix, "", fmt, ap);
	va_end(ap);
}

/* @fmt ends with "\n"; the reason goes after "# SKIP" on the same line. */
static inline __attribute__((format(printf, 1, 2)))
void ksft_test_result_skip(const char *fmt, ...)
{
	char prefix[48];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "ok %u # SKIP ", ksft_test_num());
	ksft_cnt.skip++;
	va_start(ap, fmt);
	ksft_vprint(prefix, "", fmt, ap);
	va_end(ap);
}

#define ksft_test_result(cond, fmt, ...) do {			\
	if (cond)						\
		ksft_test_result_pass(fmt, ##__VA_ARGS__);	\
	else							\
		ksft_test_result_fail(fmt, ##__VA_ARGS__);	\
} while (0)

static inline __attribute__((noreturn)) void ksft_exit_pass(void)
{
	exit(KSFT_PASS);
}

static inline __attribute__((noreturn)) void ksft_exit_fail(void)
{
	exit(KSFT_FAIL);
}

static inline __attribute__((noreturn, format(printf, 1, 2)))
void ksft_exit_fail_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ksft_vprint("Bail out! ", "", fmt, ap);
	va_end(ap);
	exit(KSFT_FAIL);
}

static inline __attribute__((noreturn, format(printf, 1, 2)))
void ksft_exit_skip(const char *fmt, ...)
{
	char prefix[48];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "ok %u # SKIP ", ksft_test_num());
	va_start(ap, fmt);
	ksft_vprint(prefix, "", fmt, ap);
	va_end(ap);
	exit(KSFT_SKIP);
}

/*
 * A property checked on many generated cases: every check is counted, the
 * first failure kept, and one TAP result stands for all of them.
 */
struct ksft_prop {
	uint64_t checks;
	uint64_t failed;
	char why[320];		/* the first failure */
};

static inline __attribute__((format(printf, 3, 4)))
void ksft_prop_check(struct ksft_prop *o, int ok, const char *fmt, ...)
{
	va_list ap;

	o->checks++;
	if (ok || o->failed++)
		return;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
}

/* Passes when checked at least once and never failed. */
static inline void ksft_prop_result(const struct ksft_prop *o,
				    const char *what)
{
	if (o->failed)
		ksft_print_msg("%" PRIu64 " of %" PRIu64 " checks failed; first: %s\n",
			       o->failed, o->checks, o->why);
	ksft_test_result(!o->failed && o->checks, "%s (%" PRIu64 " checks)\n",
			 what, o->checks);
}

/*
 * Exit with the status the results call for.  Running fewer subtests than
 * planned is a failure: the program lost track of what it meant to check.
 */
static inline __attribute__((noreturn)) void ksft_finished(void)
{
	unsigned int done = ksft_cnt.pass + ksft_cnt.fail + ksft_cnt.skip;

	printf("# Totals: pass:%u fail:%u skip:%u\n", ksft_cnt.pass,
	       ksft_cnt.fail, ksft_cnt.skip);
	if (ksft_cnt.plan && done != ksft_cnt.plan) {
		printf("# Planned %u tests but ran %u\n", ksft_cnt.plan, done);
		exit(KSFT_FAIL);
	}
	if (ksft_cnt.fail)
		exit(KSFT_FAIL);
	if (ksft_cnt.skip && !ksft_cnt.pass)
		exit(KSFT_SKIP);
	exit(KSFT_PASS);
}

#endif /* KCC_KTAP_H */
