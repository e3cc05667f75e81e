// SPDX-License-Identifier: GPL-2.0
/*
 * symbols.c - function symbols and source lines of ELF objects through
 * elfutils (libelf, libdwelf, libdwfl).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "debuginfod.h"
#include "symbols.h"

#define DEBUG_ROOT	"/usr/lib/debug"

void build_id__hex(const uint8_t *id, uint32_t len, char *out)
{
	uint32_t i;

	for (i = 0; i < len && i < SYM_BUILD_ID_MAX; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * i] = 0;
}

void symobj__exit(struct symobj *o)
{
	if (o->dwfl)
		dwfl_end(o->dwfl);
	free(o->path);
	free(o->debug_path);
	free(o->syms);
	free(o->strtab);
	memset(o, 0, sizeof(*o));
}

int symobj__add(struct symobj *o, uint64_t off, uint64_t size,
		const char *name)
{
	size_t len = strlen(name) + 1;
	struct sym *s;

	if (o->strtab_len + len > UINT32_MAX)
		return -E2BIG;
	if (!(o->nr_syms & (o->nr_syms - 1))) {
		size_t cap = o->nr_syms ? 2 * (size_t)o->nr_syms : 1;

		if (o->nr_syms >= 0x40000000u)
			return -ENOMEM;
		s = realloc(o->syms, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		o->syms = s;
	}
	if (o->strtab_len + len > o->strtab_cap) {
		size_t cap = o->strtab_cap ? o->strtab_cap : 256;
		char *p;

		while (cap < o->strtab_len + len)
			cap *= 2;
		p = realloc(o->strtab, cap);
		if (!p)
			return -ENOMEM;
		o->strtab = p;
		o->strtab_cap = cap;
	}
	s = &o->syms[o->nr_syms++];
	s->off = off;
	s->size = size;
	s->name = o->strtab_len;
	s->__pad = 0;
	memcpy(o->strtab + o->strtab_len, name, len);
	o->strtab_len += len;
	return 0;
}

static const struct symobj *sort_obj;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* Aliases: the longer symbol, then the name, deterministically. */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(sort_obj->strtab + x->name, sort_obj->strtab + y->name);
}

void symobj__finish(struct symobj *o)
{
	uint32_t i, n = 0;

	if (!o->nr_syms)
		return;
	sort_obj = o;
	qsort(o->syms, o->nr_syms, sizeof(*o->syms), sym_cmp);
	for (i = 0; i < o->nr_syms; i++)
		if (!n || o->syms[i].off != o->syms[n - 1].off)
			o->syms[n++] = o->syms[i];
	o->nr_syms = n;
}

const struct sym *symobj__find(const struct symobj *o, uint64_t off)
{
	uint32_t lo = 0, hi = o->nr_syms;
	const struct sym *s;

	/* Last symbol starting at or before off. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &o->syms[lo - 1];
	if (s->size)
		return off - s->off < s->size ? s : NULL;
	/* Size unknown (hand-written assembly): up to the next symbol. */
	return lo < o->nr_syms || off - s->off < 4096 ? s : NULL;
}

static Elf *elf_open(const char *path, int *fdp)
{
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	*fdp = fd;
	return e;
}

static void elf_close(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

int elf__build_id(const char *path, uint8_t *id, size_t cap)
{
	const void *p;
	ssize_t n;
	Elf *e;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_open(path, &fd);
	if (!e)
		return -errno;
	n = dwelf_elf_gnu_build_id(e, &p);
	if (n > 0 && (size_t)n <= cap)
		memcpy(id, p, n);
	else
		n = -ENODATA;
	elf_close(e, fd);
	return (int)n;
}

/* st_value (a virtual address) to a file offset through PT_LOAD. */
static bool vaddr_to_off(const struct symobj *o, uint64_t va, uint64_t *off)
{
	uint32_t i;

	for (i = 0; i < o->nr_loads; i++)
		if (va >= o->loads[i].vaddr &&
		    va - o->loads[i].vaddr < o->loads[i].filesz) {
			*off = va - o->loads[i].vaddr + o->loads[i].off;
			return true;
		}
	return false;
}

static bool off_to_vaddr(const struct symobj *o, uint64_t off, uint64_t *va)
{
	uint32_t i;

	for (i = 0; i < o->nr_loads; i++)
		if (off >= o->loads[i].off &&
		    off - o->loads[i].off < o->loads[i].filesz) {
			*va = off - o->loads[i].off + o->loads[i].vaddr;
			return true;
		}
	return false;
}

static void read_loads(struct symobj *o, Elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n && o->nr_loads < 16; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->loads[o->nr_loads].off = ph.p_offset;
		o->loads[o->nr_loads].vaddr = ph.p_vaddr;
		o->loads[o->nr_loads].filesz = ph.p_filesz;
		o->nr_loads++;
	}
}

/* Function symbols of the section of type @type; returns how many. */
static int read_syms(struct symobj *o, Elf *e, uint32_t type)
{
	Elf_Scn *scn = NULL;
	int found = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, nsym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		nsym = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < nsym; i++) {
			GElf_Sym sy;
			const char *name;
			uint64_t off;
			int t;

			if (!gelf_getsym(d, i, &sy))
				break;
			t = GELF_ST_TYPE(sy.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
			    sy.st_shndx == SHN_UNDEF || !sy.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sy.st_name);
			if (!name || !*name)
				continue;
			if (!vaddr_to_off(o, sy.st_value, &off))
				continue;
			if (symobj__add(o, off, sy.st_size, name))
				return -ENOMEM;
			found++;
		}
	}
	return found;
}

/* The section called @name, or NULL. */
static Elf_Scn *find_section(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * PLT stubs, each named after the routine it jumps to (not foo@plt): a
 * call through a stub is then labelled with the routine it reaches, as
 * Documentation/stitching.rst decides.  elfutils does not synthesize
 * them (perf and objdump compute them the same way).  x86-64 layouts:
 * with IBT, stub i of .rela.plt is at .plt.sec + 16 i; without, at
 * .plt + 16 (i + 1), after the resolver stub.  IRELATIVE slots name no
 * symbol and are left out.  Returns how many stubs were named.
 */
static int read_plt(struct symobj *o, Elf *e)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel, *plt, *dyn;
	Elf_Data *rd, *dd;
	uint64_t base;
	size_t i, nrel;
	int found = 0;

	rel = find_section(e, ".rela.plt", &rsh);
	if (!rel || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	plt = find_section(e, ".plt.sec", &psh);
	if (plt) {
		base = psh.sh_addr;
	} else {
		plt = find_section(e, ".plt", &psh);
		if (!plt)
			return 0;
		base = psh.sh_addr + 16;
	}
	dyn = elf_getscn(e, rsh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh))
		return 0;
	rd = elf_getdata(rel, NULL);
	dd = elf_getdata(dyn, NULL);
	if (!rd || !dd)
		return 0;
	nrel = rsh.sh_size / rsh.sh_entsize;
	for (i = 0; i < nrel; i++) {
		uint64_t va = base + 16 * i, off;
		const char *name;
		GElf_Rela r;
		GElf_Sym sy;

		if (!gelf_getrela(rd, i, &r))
			break;
		if (va + 16 > psh.sh_addr + psh.sh_size)
			break;
		if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
		    !gelf_getsym(dd, GELF_R_SYM(r.r_info), &sy))
			continue;
		name = elf_strptr(e, dsh.sh_link, sy.st_name);
		if (!name || !*name || !vaddr_to_off(o, va, &off))
			continue;
		if (symobj__add(o, off, 16, name))
			return -ENOMEM;
		found++;
	}
	return found;
}

static bool has_section(Elf *e, uint32_t type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return true;
	return false;
}

/* A debug file is only used when its build-id matches the object's. */
static int try_debug_file(struct symobj *o, const char *dpath)
{
	uint8_t id[SYM_BUILD_ID_MAX];
	Elf *e;
	int fd, n;

	if (access(dpath, R_OK))
		return 0;
	if (o->build_id_len) {
		n = elf__build_id(dpath, id, sizeof(id));
		if (n != (int)o->build_id_len ||
		    memcmp(id, o->build_id, n))
			return 0;
	}
	e = elf_open(dpath, &fd);
	if (!e)
		return 0;
	n = has_section(e, SHT_SYMTAB) ? read_syms(o, e, SHT_SYMTAB) : 0;
	elf_close(e, fd);
	if (n > 0) {
		o->debug_path = strdup(dpath);
		return n;
	}
	return n < 0 ? n : 0;
}

static int find_debug_syms(struct symobj *o, Elf *e)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1], buf[4096], *dcopy, *dir;
	const char *link;
	GElf_Word crc;
	int n;

	if (o->build_id_len > 1) {
		build_id__hex(o->build_id, o->build_id_len, hex);
		snprintf(buf, sizeof(buf), DEBUG_ROOT "/.build-id/%.2s/%s.debug",
			 hex, hex + 2);
		n = try_debug_file(o, buf);
		if (n)
			return n;
	}
	link = dwelf_elf_gnu_debuglink(e, &crc);
	if (!link || strchr(link, '/'))
		return 0;
	dcopy = strdup(o->path);
	if (!dcopy)
		return -ENOMEM;
	dir = dirname(dcopy);
	snprintf(buf, sizeof(buf), "%s/%s", dir, link);
	n = strcmp(buf, o->path) ? try_debug_file(o, buf) : 0;
	if (!n) {
		snprintf(buf, sizeof(buf), "%s/.debug/%s", dir, link);
		n = try_debug_file(o, buf);
	}
	if (!n) {
		snprintf(buf, sizeof(buf), DEBUG_ROOT "%s/%s", dir, link);
		n = try_debug_file(o, buf);
	}
	free(dcopy);
	if (!n && o->build_id_len && debuginfod__enabled()) {
		char *dpath;

		if (!debuginfod__find_debuginfo(o->build_id, o->build_id_len, &dpath)) {
			n = try_debug_file(o, dpath);
			free(dpath);
		}
	}
	return n;
}

/* The build-id, loads and symbols of @o from its open ELF @e. */
static int symobj__read(struct symobj *o, Elf *e)
{
	const void *id;
	ssize_t idlen;
	int n, ret = 0;

	o->elf_ok = true;
	idlen = dwelf_elf_gnu_build_id(e, &id);
	if (idlen > 0 && idlen <= SYM_BUILD_ID_MAX) {
		memcpy(o->build_id, id, idlen);
		o->build_id_len = idlen;
	}
	read_loads(o, e);

	n = 0;
	if (has_section(e, SHT_SYMTAB))
		n = read_syms(o, e, SHT_SYMTAB);
	if (n == 0)
		n = find_debug_syms(o, e);
	if (n == 0)
		n = read_syms(o, e, SHT_DYNSYM);
	if (n >= 0 && read_plt(o, e) < 0)
		n = -ENOMEM;
	if (n < 0)
		ret = n;
	symobj__finish(o);
	return ret;
}

int symobj__load(struct symobj *o, const char *path)
{
	Elf *e;
	int fd, ret;

	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_open(path, &fd);
	if (!e)
		return -errno;
	ret = symobj__read(o, e);
	elf_close(e, fd);
	return ret;
}

/*
 * The kernel maps one vDSO image into every 64-bit process, so this
 * process's is the one a sampled process of the same machine ran.  It is
 * an ELF object in memory (AT_SYSINFO_EHDR), whole up to its section
 * headers; libelf reads a copy of it.
 */
int symobj__load_vdso(struct symobj *o, const char *name)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)img;
	size_t len;
	char *copy;
	Elf *e;
	int ret;

	memset(o, 0, sizeof(*o));
	o->path = strdup(name);
	if (!o->path)
		return -ENOMEM;
	if (!img)
		return -ENOENT;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || !eh->e_shnum ||
	    eh->e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (len > (1u << 20) || elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, img, len);
	e = elf_memory(copy, len);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		free(copy);
		return -ENOEXEC;
	}
	ret = symobj__read(o, e);
	elf_end(e);
	free(copy);
	return ret;
}

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

int symobj__srcline(struct symobj *o, uint64_t off, const char **file,
		    int *line)
{
	Dwfl_Line *l;
	GElf_Addr bias = 0;
	uint64_t va;
	const char *f;

	if (!o->dwfl_tried) {
		o->dwfl_tried = true;
		if (!o->elf_ok || !o->path)
			return -ENOENT;
		o->dwfl = dwfl_begin(&offline_cb);
		if (!o->dwfl)
			return -ENOENT;
		o->mod = dwfl_report_offline(o->dwfl, "", o->path, -1);
		dwfl_report_end(o->dwfl, NULL, NULL);
		if (o->mod && !dwfl_module_getelf(o->mod, &bias))
			o->mod = NULL;
	}
	if (!o->mod || !off_to_vaddr(o, off, &va))
		return -ENOENT;
	dwfl_module_getelf(o->mod, &bias);
	l = dwfl_module_getsrc(o->mod, va + bias);
	if (!l)
		return -ENOENT;
	f = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
	if (!f)
		return -ENOENT;
	*file = f;
	return 0;
}
