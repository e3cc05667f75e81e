/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbols.h - function symbols of ELF objects, kept in file-offset space.
 *
 * The kernel labels a routine by a user address inside it, and a
 * KCC_REC_MAP record says which file, at which offset, was mapped
 * there: file offset = addr - map.start + map.pgoff.  Keeping symbols in
 * file offsets (st_value translated through the object's PT_LOAD
 * headers) makes one lookup serve PIE and non-PIE executables and shared
 * libraries alike, whatever address they were loaded at, and lets a
 * profile carry a copy of a table that means the same on any machine.
 *
 * Symbols come from .symtab, else .dynsym; when the object is stripped
 * they come from its separate debuginfo, found by build-id under
 * /usr/lib/debug/.build-id/ or through .gnu_debuglink (next to the
 * object, in its .debug/ directory, or under /usr/lib/debug).  Source
 * lines come from DWARF through libdwfl, which follows the same links.
 */
#ifndef KCC_SYMBOLS_H
#define KCC_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_BUILD_ID_MAX	64

struct sym {
	uint64_t off;		/* file offset of the first byte */
	uint64_t size;		/* bytes; 0: up to the next symbol */
	uint32_t name;		/* offset in strtab */
	uint32_t __pad;
};

struct symobj {
	char *path;		/* the object as mapped */
	char *debug_path;	/* where the symbols came from, if not path */
	uint8_t build_id[SYM_BUILD_ID_MAX];
	uint32_t build_id_len;
	struct sym *syms;	/* sorted by off */
	uint32_t nr_syms;
	char *strtab;
	size_t strtab_len;
	size_t strtab_cap;
	/* PT_LOAD headers of the object: file offset <-> st_value */
	uint32_t nr_loads;
	struct {
		uint64_t off, vaddr, filesz;
	} loads[16];
	bool elf_ok;		/* the file was found and is ELF */
	void *dwfl;		/* libdwfl session for source lines */
	void *mod;
	bool dwfl_tried;
};

/*
 * Read @path: build-id, load headers and function symbols (from the
 * separate debuginfo when needed).  Returns 0, or -errno when the file
 * cannot be used; @o is then still valid (empty) and freed by
 * symobj__exit().
 */
int symobj__load(struct symobj *o, const char *path);
/* This process's vDSO, named @name (KCC_MAP_VDSO), as symobj__load(). */
int symobj__load_vdso(struct symobj *o, const char *name);
void symobj__exit(struct symobj *o);
/* Read the build-id of @path alone; returns its length or -errno. */
int elf__build_id(const char *path, uint8_t *id, size_t cap);

/* Add a symbol (used to rebuild a table copied into a profile). */
int symobj__add(struct symobj *o, uint64_t off, uint64_t size,
		const char *name);
/* Sort and deduplicate after symobj__add() calls. */
void symobj__finish(struct symobj *o);

/* The function containing file offset @off, or NULL. */
const struct sym *symobj__find(const struct symobj *o, uint64_t off);

static inline const char *sym__name(const struct symobj *o,
				    const struct sym *s)
{
	/* callers pass the object a symbol came from: NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
	return o->strtab + s->name;
}

/*
 * Source file and line of file offset @off through DWARF (libdwfl):
 * 0, or -ENOENT when there is no line information.  @file receives a
 * pointer valid until symobj__exit().
 */
int symobj__srcline(struct symobj *o, uint64_t off, const char **file,
		    int *line);

/* Hex text of a build-id, @out of 2 * SYM_BUILD_ID_MAX + 1 bytes. */
/*
 * @name demangled (C++, Rust legacy and v0, through libiberty's
 * cplus_demangle(), as perf and binutils do), or a copy of @name when
 * it is not mangled; malloc()ed, NULL only when out of memory.
 */
char *sym__demangle(const char *name);

void build_id__hex(const uint8_t *id, uint32_t len, char *out);

#endif /* KCC_SYMBOLS_H */
