/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symtab.h - routine names interned to dense ids.
 *
 * The lbr/ core labels nodes with u64 values; in userspace a label is the
 * id a name was given here.  Ids are handed out 0, 1, 2, ... in order of
 * first interning, which is also the order the binary trace format uses,
 * so a trace read from either format gets the same ids.
 */
#ifndef KCC_SYMTAB_H
#define KCC_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#define SYMTAB_MAX_IDS	0xfffffff0u	/* ids stay below the trace's RET */

struct symtab {
	char *arena;		/* names, NUL-terminated, back to back */
	size_t arena_len;
	size_t arena_cap;
	size_t *off;		/* per id: offset of its name in arena */
	uint32_t *hash;		/* per id: hash of its name */
	uint32_t nr;		/* ids handed out */
	uint32_t nr_cap;
	uint32_t *slots;	/* open addressing: id + 1, 0 when empty */
	uint32_t slot_mask;
};

int symtab__init(struct symtab *st);
void symtab__exit(struct symtab *st);
/* Id of @name (@len bytes, no NUL inside), added when new: 0 or -errno. */
int symtab__intern(struct symtab *st, const char *name, size_t len,
		   uint32_t *id);
/* Id of @name, or -ENOENT. */
int symtab__find(const struct symtab *st, const char *name, size_t len,
		 uint32_t *id);

static inline const char *symtab__name(const struct symtab *st, uint64_t id)
{
	return id < st->nr ? st->arena + st->off[id] : "?";
}

static inline uint32_t symtab__nr(const struct symtab *st)
{
	return st->nr;
}

#endif /* KCC_SYMTAB_H */
