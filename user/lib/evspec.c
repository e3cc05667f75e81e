// SPDX-License-Identifier: GPL-2.0
/*
 * evspec.c - perf event names to encodings (evspec.h).  The PMU/terms/
 * syntax follows perf's tools/perf/util/pmu.c: the type file, events/
 * aliases made of terms, and format/ files that scatter a term's value
 * over the bits they list ("config:0-7,21", "config1:0-63").
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

#include "evspec.h"

#define PERF_TYPE_HARDWARE	0
#define PERF_TYPE_SOFTWARE	1
#define PERF_TYPE_RAW		4

#define EVSPEC_FILE_MAX		4096
#define EVSPEC_MAX_TERMS	32

struct legacy_event {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* perf list's "Hardware event" and "Software event" names. */
static const struct legacy_event legacy[] = {
	{ "cycles", PERF_TYPE_HARDWARE, 0 },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, 0 },
	{ "instructions", PERF_TYPE_HARDWARE, 1 },
	{ "cache-references", PERF_TYPE_HARDWARE, 2 },
	{ "cache-misses", PERF_TYPE_HARDWARE, 3 },
	{ "branches", PERF_TYPE_HARDWARE, 4 },
	{ "branch-instructions", PERF_TYPE_HARDWARE, 4 },
	{ "branch-misses", PERF_TYPE_HARDWARE, 5 },
	{ "bus-cycles", PERF_TYPE_HARDWARE, 6 },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, 7 },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, 8 },
	{ "ref-cycles", PERF_TYPE_HARDWARE, 9 },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, 0 },
	{ "task-clock", PERF_TYPE_SOFTWARE, 1 },
	{ "page-faults", PERF_TYPE_SOFTWARE, 2 },
	{ "faults", PERF_TYPE_SOFTWARE, 2 },
	{ "context-switches", PERF_TYPE_SOFTWARE, 3 },
	{ "cs", PERF_TYPE_SOFTWARE, 3 },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, 4 },
	{ "migrations", PERF_TYPE_SOFTWARE, 4 },
	{ "minor-faults", PERF_TYPE_SOFTWARE, 5 },
	{ "major-faults", PERF_TYPE_SOFTWARE, 6 },
};

struct pmu_ctx {
	const char *spec;
	const char *dir;	/* <sysfs>/<pmu> */
	char *err;
	struct evspec *ev;
};

static int fail(char *err, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, EVSPEC_ERR_LEN, fmt, ap);
	va_end(ap);
	return ret;
}

/* A PMU, event or term name: what sysfs can hold as a file name. */
static bool name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || s[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.", s[i]))
			return false;
	return true;
}

/*
 * Read the small text file @dir/@sub/@name into @buf without its trailing
 * white space.  Returns 0, -ENOENT or -EIO.
 */
static int read_small(const char *dir, const char *sub, const char *name,
		      char *buf, size_t len)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s%s%s/%s", dir, sub ? "/" : "",
		 sub ? sub : "", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EIO;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/*
 * A format file: "config:0-7,21" names the field (config, config1 or
 * config2: 0, 1, 2 in *@field) and its bits, lowest first, in *@mask.
 */
static int format_parse(const char *s, uint32_t *field, uint64_t *mask)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : 0;

	if (n == 6 && !strncmp(s, "config", 6))
		*field = 0;
	else if (n == 7 && !strncmp(s, "config1", 7))
		*field = 1;
	else if (n == 7 && !strncmp(s, "config2", 7))
		*field = 2;
	else
		return -EINVAL;
	*mask = 0;
	s = colon + 1;
	for (;;) {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo > hi || hi > 63)
			return -EINVAL;
		*mask |= (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) &
			 ~((1ull << lo) - 1);
		if (!*end)
			return 0;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
}

static uint64_t *field_of(struct evspec *ev, uint32_t field)
{
	return field == 0 ? &ev->config : field == 1 ? &ev->config1 :
			    &ev->config2;
}

/*
 * Scatter @value over the bits of @mask, its lowest bit into the mask's
 * lowest, as perf's pmu_format_value() does.  -ERANGE when @value has
 * more bits than the mask.
 */
static int format_apply(uint64_t mask, uint64_t value, uint64_t *dst)
{
	int bit;

	for (bit = 0; bit < 64; bit++) {
		if (!(mask & (1ull << bit)))
			continue;
		if (value & 1)
			*dst |= 1ull << bit;
		value >>= 1;
	}
	return value ? -ERANGE : 0;
}

static int pmu_terms(struct pmu_ctx *c, const char *terms, size_t len,
		     const char *alias);

/* One term NAME[=VALUE] of @alias (NULL: the user's). */
static int pmu_term(struct pmu_ctx *c, const char *t, size_t n,
		    const char *alias)
{
	const char *eq = memchr(t, '=', n);
	size_t nlen = eq ? (size_t)(eq - t) : n;
	char name[128], val[128], buf[EVSPEC_FILE_MAX];
	uint64_t v = 1, mask;
	uint32_t field;
	int ret;

	if (!name_ok(t, nlen) || nlen >= sizeof(name))
		return fail(c->err, -EINVAL, "%s: bad term '%.*s'%s%s", c->spec,
			    (int)n, t, alias ? " in alias " : "",
			    alias ? alias : "");
	memcpy(name, t, nlen);
	name[nlen] = '\0';
	if (eq) {
		size_t vlen = n - nlen - 1;

		if (vlen >= sizeof(val))
			vlen = sizeof(val) - 1;
		memcpy(val, eq + 1, vlen);
		val[vlen] = '\0';
		if (parse_u64(val, &v))
			return fail(c->err, -EINVAL, "%s: term %s: bad value '%s'%s",
				    c->spec, name, val, !strcmp(val, "?") ?
				    " (the alias needs a parameter: give NAME=VALUE)" : "");
	} else if (!alias) {
		/* A bare word: an event alias of this PMU, else a flag. */
		ret = read_small(c->dir, "events", name, buf, sizeof(buf));
		if (ret == -EIO)
			return fail(c->err, ret, "%s: %s/events/%s: cannot read",
				    c->spec, c->dir, name);
		if (!ret)
			return pmu_terms(c, buf, strlen(buf), name);
	}
	if (!strcmp(name, "config") || !strcmp(name, "config1") ||
	    !strcmp(name, "config2")) {
		*field_of(c->ev, name[6] ? name[6] - '0' : 0) |= v;
		return 0;
	}
	ret = read_small(c->dir, "format", name, buf, sizeof(buf));
	if (ret == -ENOENT)
		return fail(c->err, -ENOENT,
			    "%s: unknown term '%s': not in %s/format/ or %s/events/",
			    c->spec, name, c->dir, c->dir);
	if (ret)
		return fail(c->err, ret, "%s: %s/format/%s: cannot read",
			    c->spec, c->dir, name);
	if (format_parse(buf, &field, &mask))
		return fail(c->err, -EINVAL, "%s: %s/format/%s: bad format '%s'",
			    c->spec, c->dir, name, buf);
	if (format_apply(mask, v, field_of(c->ev, field)))
		return fail(c->err, -ERANGE,
			    "%s: value %#llx of '%s' is too wide for its format '%s'",
			    c->spec, (unsigned long long)v, name, buf);
	return 0;
}

static int pmu_terms(struct pmu_ctx *c, const char *terms, size_t len,
		     const char *alias)
{
	const char *p = terms, *end = terms + len;
	int n = 0, ret;

	while (p < end) {
		const char *comma = memchr(p, ',', end - p);
		size_t tl = comma ? (size_t)(comma - p) : (size_t)(end - p);

		if (++n > EVSPEC_MAX_TERMS)
			return fail(c->err, -EINVAL, "%s: more than %d terms",
				    c->spec, EVSPEC_MAX_TERMS);
		ret = pmu_term(c, p, tl, alias);
		if (ret)
			return ret;
		p += tl + 1;
	}
	if (!n || (len && terms[len - 1] == ','))
		return fail(c->err, -EINVAL, "%s: empty term", c->spec);
	return 0;
}

/* PMU/TERMS/ and an optional 'u' modifier: user space is all kcc samples. */
static int parse_pmu(struct evspec *ev, const char *spec, const char *sysfs,
		     char *err)
{
	const char *slash = strchr(spec, '/');
	const char *last = strrchr(spec, '/');
	char dir[4096], buf[64];
	struct pmu_ctx c = { .spec = spec, .dir = dir, .err = err, .ev = ev };
	size_t plen = slash - spec;
	uint64_t type;
	int ret;

	if (last == slash)
		return fail(err, -EINVAL, "%s: expected PMU/TERMS/", spec);
	if (!name_ok(spec, plen))
		return fail(err, -EINVAL, "%s: bad PMU name '%.*s'", spec,
			    (int)plen, spec);
	if (last[1] && strcmp(last + 1, "u"))
		return fail(err, -EINVAL,
			    "%s: modifier '%s' not supported (kcc samples user space only: 'u' or none)",
			    spec, last + 1);
	snprintf(dir, sizeof(dir), "%s/%.*s", sysfs, (int)plen, spec);
	ret = read_small(dir, NULL, "type", buf, sizeof(buf));
	if (ret == -ENOENT)
		return fail(err, -ENOENT, "%s: no PMU '%.*s' (%s/type does not exist)",
			    spec, (int)plen, spec, dir);
	if (ret)
		return fail(err, ret, "%s: %s/type: cannot read", spec, dir);
	if (parse_u64(buf, &type) || type > UINT32_MAX)
		return fail(err, -EINVAL, "%s: %s/type: bad type '%s'", spec,
			    dir, buf);
	ev->type = type;
	ev->how = EVSPEC_PMU;
	return pmu_terms(&c, slash + 1, last - slash - 1, NULL);
}

static int parse_pfm(struct evspec *ev, const char *spec, char *err)
{
	static int init = -1;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	if (init < 0)
		init = pfm_initialize();
	if (init != PFM_SUCCESS)
		return fail(err, -ENOENT,
			    "unknown event '%s' (libpfm4 cannot start: %s)", spec,
			    pfm_strerror(init));
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = &attr;
	ret = pfm_get_os_event_encoding(spec, PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
					&arg);
	if (ret != PFM_SUCCESS)
		return fail(err, ret == PFM_ERR_NOTFOUND ? -ENOENT : -EINVAL,
			    "unknown event '%s': not a generic event, rNNNN, PMU/TERMS/ or an event libpfm4 knows on this CPU (libpfm4: %s)",
			    spec, pfm_strerror(ret));
	ev->type = attr.type;
	ev->config = attr.config;
	ev->config1 = attr.config1;
	ev->config2 = attr.config2;
	ev->how = EVSPEC_PFM;
	return 0;
}

int evspec__parse(struct evspec *ev, const char *spec, const char *sysfs,
		  char *err)
{
	size_t i, n = strlen(spec);
	char base[EVSPEC_NAME_LEN];
	uint64_t v;

	memset(ev, 0, sizeof(*ev));
	err[0] = '\0';
	snprintf(ev->name, sizeof(ev->name), "%s", spec);
	if (!sysfs)
		sysfs = EVSPEC_SYSFS;
	if (!n)
		return fail(err, -EINVAL, "empty event name");
	if (strchr(spec, '/'))
		return parse_pmu(ev, spec, sysfs, err);

	/* NAME and NAME:u, as perf takes them. */
	snprintf(base, sizeof(base), "%s", spec);
	if (n > 2 && n < sizeof(base) && !strcmp(spec + n - 2, ":u"))
		base[n - 2] = '\0';
	for (i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++) {
		if (!strcmp(base, legacy[i].name)) {
			ev->type = legacy[i].type;
			ev->config = legacy[i].config;
			ev->how = EVSPEC_LEGACY;
			return 0;
		}
	}
	if (base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") ==
	    strlen(base + 1)) {
		char hex[EVSPEC_NAME_LEN + 2];

		snprintf(hex, sizeof(hex), "0x%s", base + 1);
		if (strlen(base + 1) > 16 || parse_u64(hex, &v))
			return fail(err, -ERANGE, "%s: raw config wider than 64 bits",
				    spec);
		ev->type = PERF_TYPE_RAW;
		ev->config = v;
		ev->how = EVSPEC_RAW;
		return 0;
	}
	return parse_pfm(ev, spec, err);
}

void evspec__encoding(uint32_t type, uint64_t config, uint64_t config1,
		      uint64_t config2, char *buf, size_t len)
{
	int n = snprintf(buf, len, "type %u, config %#llx", type,
			 (unsigned long long)config);

	if ((config1 || config2) && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, ", config1 %#llx, config2 %#llx",
			 (unsigned long long)config1,
			 (unsigned long long)config2);
}

/* The sysfs PMU whose type file reads @type, its name into @name. */
static int pmu_of_type(uint32_t type, const char *sysfs, char *name,
		       size_t len)
{
	char dir[4096], buf[64];
	struct dirent *d;
	uint64_t t;
	int ret = -ENOENT;
	DIR *dp;

	dp = opendir(sysfs);
	if (!dp)
		return -ENOENT;
	while ((d = readdir(dp))) {
		size_t n = strlen(d->d_name);

		if (d->d_name[0] == '.' || n >= len || !name_ok(d->d_name, n))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", sysfs, d->d_name);
		if (read_small(dir, NULL, "type", buf, sizeof(buf)) ||
		    parse_u64(buf, &t) || t != type)
			continue;
		memcpy(name, d->d_name, n + 1);
		ret = 0;
		break;
	}
	closedir(dp);
	return ret;
}

int evspec__calls_counter(uint32_t type, const char *sysfs, char *buf,
			  size_t len)
{
	char pmu[EVSPEC_NAME_LEN], err[EVSPEC_ERR_LEN];
	struct evspec ev;

	if (!sysfs)
		sysfs = EVSPEC_SYSFS;
	/* Dynamic PMU types follow PERF_TYPE_BREAKPOINT (5). */
	if (type > 5 && !pmu_of_type(type, sysfs, pmu, sizeof(pmu))) {
		snprintf(buf, len, "%s/calls/", pmu);
		if (!evspec__parse(&ev, buf, sysfs, err))
			return 0;
	}
	snprintf(buf, len, "BR_INST_RETIRED:NEAR_CALL");
	return evspec__parse(&ev, buf, sysfs, err) ? -ENOENT : 0;
}
