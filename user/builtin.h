/* SPDX-License-Identifier: GPL-2.0 */
/*
 * builtin.h - the kcc subcommands and what they share.
 *
 * Exit codes: 0 success, 1 a runtime error (a file that cannot be read, a
 * malformed trace), 2 a usage error (unknown subcommand or option, a bad
 * option value), so that scripts can tell a wrong command line from a
 * bad input.
 */
#ifndef KCC_BUILTIN_H
#define KCC_BUILTIN_H

#include <stdbool.h>
#include <stdint.h>

#ifndef KCC_VERSION
#define KCC_VERSION	"0.1"
#endif

#define KCC_EXIT_OK	0
#define KCC_EXIT_ERROR	1
#define KCC_EXIT_USAGE	2
/* kcc record -- CMD when CMD cannot run, as a shell says it. */
#define KCC_EXIT_NOEXEC		126
#define KCC_EXIT_NOTFOUND	127

int cmd_ccf(int argc, char **argv);
int cmd_hcct(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_import(int argc, char **argv);

struct profile;
/*
 * Write @p to @output ("-": stdout), an existing file of that name kept
 * as OUTPUT.old first; errors are printed.  0 or -errno.
 */
int record__write_profile(struct profile *p, const char *output);
int cmd_valence(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/*
 * The session set-up kcc record and kcc serve share (builtin-record.c):
 * -e EVENT into @c (errors printed; 0 or -EINVAL), and the
 * configuration of @cfg on the device @fd of ABI @v (refusals explained
 * on stderr; 0 or -errno).
 */
struct kcc_config;
struct kcc_version;
int record__parse_event(const char *s, struct kcc_config *c);
/* -F FREQ into @c (usage error printed; 0 or -EINVAL). */
int record__parse_freq(const char *cmd, const char *s, struct kcc_config *c);
/*
 * kcc record's default with the lbr source (auto or lbr) and no calls
 * event given: a calls counter beside the event (KCC_CALLS_COUNTER),
 * the sampled PMU's calls event or BR_INST_RETIRED:NEAR_CALL.  true
 * when @c now names one; for kcc.ko of ABI 1.3 and later.
 */
bool record__default_calls(struct kcc_config *c, unsigned int minor,
			   bool pools);
/*
 * -G @name for @cfg on @device (ABI @v): open the cgroup v2 directory,
 * its path as the cgroup2 root names it into @path, and set
 * KCC_CFG_CGROUP with its fd.  Returns the fd (the caller closes it
 * after the session) or -errno, the reason printed.  kcc record and
 * kcc serve -G.
 */
int record__cgroup(const char *device, const struct kcc_version *v,
		   const char *name, struct kcc_config *cfg, char *path,
		   size_t len);
int record__configure(int fd, const char *device, const struct kcc_version *v,
		      struct kcc_config *cfg);

/*
 * Report a usage error of @cmd ("kcc ccf") with a pointer to its help;
 * returns KCC_EXIT_USAGE.
 */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The one operand left after the options, in *@arg; otherwise the usage
 * error "no WHAT given" or "unexpected argument".  0 or KCC_EXIT_USAGE.
 */
int usage_one_operand(const char *cmd, int argc, char **argv,
		      const char *what, const char **arg);
/* The getopt_long result '?' or ':' as a usage error. */
int usage_bad_option(const char *cmd, int c, char **argv);

/* Whole-string conversions; 0 or -EINVAL. */
int parse_u32(const char *s, uint32_t *v);
/* A context length: a number below KCC_K_INF, or "inf" for KCC_K_INF. */
int parse_k(const char *s, uint32_t *k);
int parse_double(const char *s, double *v);

#endif /* KCC_BUILTIN_H */
