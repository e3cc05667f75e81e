// SPDX-License-Identifier: GPL-2.0
/*
 * symtab.c - name interning with open addressing.
 *
 * Names live in one growing arena rather than one allocation each: a
 * trace of a large program interns hundreds of thousands of names and is
 * looked up once per call event, so the table keeps only ids in its slots
 * and the per-id hash, which makes growing it a pass over integers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"

static uint32_t symtab__hash(const char *s, size_t len)
{
	/* FNV-1a, then a final mix so that the low bits are usable. */
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

int symtab__init(struct symtab *st)
{
	memset(st, 0, sizeof(*st));
	st->slot_mask = 1023;
	st->slots = calloc(st->slot_mask + 1, sizeof(*st->slots));
	return st->slots ? 0 : -ENOMEM;
}

void symtab__exit(struct symtab *st)
{
	free(st->arena);
	free(st->off);
	free(st->hash);
	free(st->slots);
	memset(st, 0, sizeof(*st));
}

static int symtab__grow_slots(struct symtab *st)
{
	uint32_t mask = st->slot_mask * 2 + 1;
	uint32_t *slots, id;

	if (mask < st->slot_mask)
		return -ENOMEM;
	slots = calloc((size_t)mask + 1, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (id = 0; id < st->nr; id++) {
		uint32_t i = st->hash[id] & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id + 1;
	}
	free(st->slots);
	st->slots = slots;
	st->slot_mask = mask;
	return 0;
}

static uint32_t *symtab__slot(const struct symtab *st, const char *name,
			      size_t len, uint32_t h)
{
	uint32_t i = h & st->slot_mask;

	for (;; i = (i + 1) & st->slot_mask) {
		uint32_t v = st->slots[i];
		const char *s;

		if (!v)
			return &st->slots[i];
		if (st->hash[v - 1] != h)
			continue;
		s = st->arena + st->off[v - 1];
		if (!memcmp(s, name, len) && s[len] == '\0')
			return &st->slots[i];
	}
}

int symtab__find(const struct symtab *st, const char *name, size_t len,
		 uint32_t *id)
{
	uint32_t *slot = symtab__slot(st, name, len, symtab__hash(name, len));

	if (!*slot)
		return -ENOENT;
	*id = *slot - 1;
	return 0;
}

int symtab__intern(struct symtab *st, const char *name, size_t len,
		   uint32_t *id)
{
	uint32_t h = symtab__hash(name, len);
	uint32_t *slot = symtab__slot(st, name, len, h);
	int ret;

	if (*slot) {
		*id = *slot - 1;
		return 0;
	}
	if (st->nr >= SYMTAB_MAX_IDS)
		return -E2BIG;

	if (st->nr == st->nr_cap) {
		uint32_t cap = st->nr_cap ? st->nr_cap * 2 : 256;
		size_t *off = realloc(st->off, cap * sizeof(*off));
		uint32_t *hash;

		if (!off)
			return -ENOMEM;
		st->off = off;
		hash = realloc(st->hash, cap * sizeof(*hash));
		if (!hash)
			return -ENOMEM;
		st->hash = hash;
		st->nr_cap = cap;
	}
	if (st->arena_cap - st->arena_len < len + 1) {
		size_t cap = st->arena_cap ? st->arena_cap : 4096;
		char *a;

		while (cap - st->arena_len < len + 1)
			cap *= 2;
		a = realloc(st->arena, cap);
		if (!a)
			return -ENOMEM;
		st->arena = a;
		st->arena_cap = cap;
	}

	memcpy(st->arena + st->arena_len, name, len);
	st->arena[st->arena_len + len] = '\0';
	st->off[st->nr] = st->arena_len;
	st->hash[st->nr] = h;
	st->arena_len += len + 1;
	*slot = st->nr + 1;
	*id = st->nr++;

	/* Keep the load factor under 1/2 so that probes stay short. */
	if ((uint64_t)st->nr * 2 > st->slot_mask) {
		ret = symtab__grow_slots(st);
		if (ret)
			return ret;
	}
	return 0;
}
