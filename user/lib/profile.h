/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profile.h - the kcc profile file: one or more /dev/kcc streams ("runs")
 * kept byte for byte, plus what symbolization needs for each mapped
 * object: its path, inode, build-id and a copy of its function symbol
 * table in file-offset space.  Documentation/profile-format.rst gives the
 * layout; every integer is little-endian, every section 8-byte aligned.
 *
 * A report made from a profile needs nothing else: the symbol copies
 * name every routine even when the binaries are gone or the profile
 * moved to another machine.  Source lines (--srcline) need DWARF, which
 * is not copied; they are read from the object at its recorded path when
 * its build-id still matches.
 *
 * profile__read() also accepts a bare stream, as one run without object
 * sections: its objects are then read from the live files.
 */
#ifndef KCC_PROFILE_H
#define KCC_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stream.h"
#include "symbols.h"
#include "symtab.h"

#define PROF_MAGIC		"KCCPROF"	/* 8 bytes with its NUL */
#define PROF_VERSION		1
#define PROF_MAX_BYTES		(1ull << 32)

/* File header, 32 bytes. */
struct prof_header {
	char magic[8];		/* PROF_MAGIC */
	uint32_t version;	/* PROF_VERSION */
	uint32_t header_size;	/* sizeof(struct prof_header) */
	uint32_t flags;		/* none defined: zero */
	uint32_t nr_runs;	/* RUN sections */
	uint64_t __reserved;	/* zero */
};

#define PROF_SEC_RUN		1	/* one stream, verbatim */
#define PROF_SEC_OBJECT		2	/* a mapped object of a run */
#define PROF_SEC_END		3	/* last section, no payload */
/*
 * Where and when the profile was taken; optional (profiles before it
 * have none, and readers that do not know it skip it).  Numbered apart
 * from the stream-related sections.
 */
#define PROF_SEC_INFO		16
/*
 * The path of a cgroup v2 a run's KCC_REC_CGROUP records name, as the
 * recording machine's cgroup2 root named it; optional, one per cgroup.
 */
#define PROF_SEC_CGROUP		17

/* Section header, 16 bytes; size covers header, payload and padding. */
struct prof_sec {
	uint32_t type;
	uint32_t __reserved;
	uint64_t size;
};

/* RUN payload: this, then stream_len bytes of stream, padded to 8. */
struct prof_run {
	uint32_t run;		/* 0, 1, ...: order of the RUN sections */
	uint32_t __reserved;
	uint64_t stream_len;
};

/* CGROUP payload: this, then path_len bytes (NUL included), padded. */
struct prof_cgroup {
	uint32_t run;
	uint32_t path_len;
	uint64_t id;		/* as in KCC_REC_CGROUP */
};

#define PROF_OBJ_SYMS		(1u << 0)	/* symbol table copied */
#define PROF_OBJ_MISSING	(1u << 1)	/* not readable at record time */
#define PROF_OBJ_STALE		(1u << 2)	/* inode differs from the map's */
#define PROF_OBJ_FLAGS_ALL	7u

/*
 * OBJECT payload: this, then build_id_len bytes, path_len bytes (NUL
 * included), each padded to 8, then nr_syms struct prof_sym, then
 * strtab_len bytes of NUL-terminated names, padded to 8.
 */
struct prof_obj {
	uint32_t run;		/* run whose maps name this object */
	uint32_t flags;		/* PROF_OBJ_* */
	uint64_t ino;		/* as in the KCC_REC_MAP records */
	uint32_t path_len;
	uint32_t build_id_len;	/* 0..SYM_BUILD_ID_MAX */
	uint32_t nr_syms;
	uint32_t strtab_len;
};

struct prof_sym {
	uint64_t off;		/* file offset of the function */
	uint64_t size;		/* bytes, 0 if unknown */
	uint32_t name;		/* offset in the string table */
	uint32_t __reserved;
};

/*
 * INFO payload: this, then strs_len bytes of "key=value" strings, each
 * NUL-terminated, padded to 8.  Keys: cmdline, hostname, release (the
 * kernel's), machine, cpu, version (kcc's).  Unknown keys are kept
 * and ignored; a newer info_version may append fields to this struct
 * (readers take the ones they know, info_size says how many bytes).
 */
#define PROF_INFO_VERSION	1

struct prof_info {
	uint32_t info_version;	/* PROF_INFO_VERSION */
	uint32_t info_size;	/* sizeof(struct prof_info) of the writer */
	uint64_t start_ns;	/* CLOCK_REALTIME when recording started */
	uint64_t start_mono_ns;	/* CLOCK_MONOTONIC at the same moment */
	uint64_t duration_ns;	/* recording time, 0 if unknown */
	uint32_t strs_len;
	uint32_t __reserved;
};

#define PROF_INFO_MAX_KEYS	16

/* The INFO section, parsed; all zero/NULL when the profile has none. */
struct profile_info {
	bool valid;
	uint64_t start_ns, start_mono_ns, duration_ns;
	uint32_t nr;
	char *key[PROF_INFO_MAX_KEYS];
	char *val[PROF_INFO_MAX_KEYS];
};

struct profile_run {
	struct stream s;
	void *raw;		/* the stream bytes */
	size_t raw_len;
};

struct profile_obj {
	uint32_t run;
	uint32_t flags;
	uint64_t ino;
	struct symobj so;	/* path, build-id, symbols */
	struct symobj *live;	/* the file read at report time, lazily */
	bool live_tried;
	uint8_t live_from;	/* PROF_LIVE_*: where live was found */
};

#define PROF_LIVE_NONE		0
#define PROF_LIVE_PATH		1	/* the file at its recorded path */
#define PROF_LIVE_CACHE		2	/* the build-id cache */
#define PROF_LIVE_DEBUGINFOD	3

struct profile_cgroup {
	uint32_t run;
	uint64_t id;
	char *path;
};

struct profile {
	struct profile_run *runs;
	uint32_t nr_runs;
	struct profile_cgroup *cgroups;
	uint32_t nr_cgroups;
	struct profile_obj *objs;
	uint32_t nr_objs;
	bool bare;		/* read from a bare stream */
	/*
	 * profile__add_objects() keeps only the path and build-id of an
	 * object that has one (kcc record --build-ids): kcc report reads
	 * its symbols from the object, a build-id cache or debuginfod.
	 */
	bool by_build_id;
	struct profile_info info;
};

void profile__init(struct profile *p);
void profile__exit(struct profile *p);
/*
 * Read @path (a profile or a bare stream, "-" for stdin).  Errors are
 * printed as "kcc: FILE: offset N: reason".  Returns 0 or -errno.
 */
int profile__read(struct profile *p, const char *path);
/* Parse a profile or stream in memory (the fuzz target's entry). */
int profile__parse(struct profile *p, const void *buf, size_t len,
		   const char *name);
/*
 * Add a stream as a new run; takes @raw (malloc()ed) whatever happens.
 * Errors name @name.
 */
int profile__add_stream(struct profile *p, void *raw, size_t len,
			const char *name);
/*
 * Record, for each distinct (path, inode) mapped in run @run, the
 * object's build-id and symbol table read from the file system now.
 * Returns how many objects could not be read (a warning,
 * not an error) or -ENOMEM.
 */
int profile__add_objects(struct profile *p, uint32_t run);
/*
 * Name the cgroups run @run's tasks were in (KCC_REC_CGROUP ids): their
 * directories under this machine's cgroup2 mount, found by inode
 * number.  Returns how many ids stayed unnamed (the cgroup was removed,
 * no cgroup2 here: a warning) or -ENOMEM.
 */
int profile__add_cgroups(struct profile *p, uint32_t run);
/* Name cgroup @id of run @run @path: 0 or -ENOMEM. */
int profile__add_cgroup(struct profile *p, uint32_t run, uint64_t id,
			const char *path);
/* The path of cgroup @id of run @run, or NULL. */
const char *profile__cgroup(const struct profile *p, uint32_t run,
			    uint64_t id);
/*
 * Run @run with the threads of each process image folded into one task
 * (stream__fold_processes(), kcc record --per-process), its stream
 * written anew.  0, -EINVAL (watch records) or -ENOMEM.
 */
int profile__fold_processes(struct profile *p, uint32_t run);
/* Why profile__fold_processes() returned @err, in words. */
const char *profile__fold_error(int err);
/*
 * Add an object with the given symbol table (kcc record --trace); with
 * by_build_id, the table is left out when the object has a build-id and
 * a path (not "[vdso]", "[trace]").
 */
int profile__add_object(struct profile *p, uint32_t run, uint64_t ino,
			uint32_t flags, struct symobj *so);
/* Append every run and object of @src to @dst (kcc merge). */
int profile__append(struct profile *dst, struct profile *src,
		    const char *name);
int profile__write(const struct profile *p, FILE *out);

/*
 * INFO: profile__info_begin() notes the wall and monotonic clocks and
 * the machine (hostname, kernel release, machine, CPU model, kcc
 * @version) and the command line, @prog (if not NULL) then @argv
 * (NULL-terminated); call it when
 * recording starts and profile__info_end() when it stops.
 */
int profile__info_begin(struct profile *p, const char *prog,
			char *const *argv, const char *version);
void profile__info_end(struct profile *p);
/*
 * For a snapshot read after the fact (kccread): the INFO of
 * profile__info_begin(), its clocks moved back to run 0's snapshot time.
 */
int profile__info_snapshot(struct profile *p, const char *prog,
			   char *const *argv, const char *version);
/* Set @key of the INFO section to @val: 0, -ENOMEM or -E2BIG (full). */
int profile__info_set(struct profile *p, const char *key, const char *val);
/* Value of @key in the INFO section, NULL when absent. */
const char *profile__info_get(const struct profile *p, const char *key);

/*
 * Do @a and @b count the same events (run 0's counters: names, perf
 * types and configs; calls_var, which ABI 1.3 profiles lack, aside)?
 * 0 if so, else -EINVAL with the difference in @why ("cache-misses vs
 * cycles").
 */
int profile__same_events(const struct profile *a, const struct profile *b,
			 char *why, size_t len);

/* The object mapped by @m of run @run, or NULL. */
struct profile_obj *profile__obj(struct profile *p, uint32_t run,
				 const struct stream_map *m);
/*
 * The object's file as it is now, when its build-id (if recorded) still
 * matches; else the file of that build-id in the build-id cache
 * (profile__set_buildid_dir()), else from debuginfod (when enabled);
 * NULL when none is found.  Used for objects recorded without symbols
 * (by build-id, bare streams) and for source lines.
 */
struct symobj *profile_obj__live(struct profile_obj *o);
/*
 * The build-id cache profile_obj__live() looks in, perf's layout:
 * DIR/.build-id/<2 hex>/<the rest>/elf (perf buildid-cache -a), or
 * a file at DIR/.build-id/<2 hex>/<the rest>.  NULL: $HOME/.debug, as
 * perf.  "": none.
 */
void profile__set_buildid_dir(const char *dir);

#endif /* KCC_PROFILE_H */
