// SPDX-License-Identifier: GPL-2.0
/*
 * valence_prog.c - call graph of an executable, the Valence table file,
 * and the check of decoded samples against the program's own stack; see
 * valence_prog.h.  Disassembly is capstone's (Debian's libcapstone-dev)
 * and ELF reading libelf's: kcc only picks the call instructions out.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "valence_prog.h"

struct sym {
	uint64_t addr, size;
	char *name;
};

static int sym__cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

static int64_t prog__node_at(const struct valence_prog *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nr_nodes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nr_nodes && p->addr[lo] == addr ? (int64_t)lo : -1;
}

/* Routines: defined FUNC symbols with a size, one node per address. */
static int prog__read_syms(struct valence_prog *p, Elf *elf, struct sym **out,
			   size_t *nr)
{
	Elf_Scn *scn = NULL;
	struct sym *s = NULL;
	size_t n = 0, cap = 0, i, j;
	int dyn;

	for (dyn = 0; dyn < 2 && !n; dyn++) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t strndx;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type !=
			    (dyn ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			d = elf_getdata(scn, NULL);
			strndx = sh.sh_link;
			for (i = 0; d && sh.sh_entsize &&
			     i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *nm;

				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    !sym.st_size || sym.st_shndx == SHN_UNDEF)
					continue;
				nm = elf_strptr(elf, strndx, sym.st_name);
				if (n == cap) {
					struct sym *ns;

					cap = cap ? 2 * cap : 256;
					ns = realloc(s, cap * sizeof(*s));
					if (!ns)
						goto nomem;
					s = ns;
				}
				s[n].addr = sym.st_value;
				s[n].size = sym.st_size;
				s[n].name = strdup(nm ? nm : "?");
				if (!s[n].name)
					goto nomem;
				n++;
			}
		}
	}
	if (!n) {
		*out = NULL;
		*nr = 0;
		return 0;
	}
	qsort(s, n, sizeof(*s), sym__cmp);
	for (i = j = 0; i < n; i++) {	/* aliases: keep the first name */
		if (j && s[j - 1].addr == s[i].addr) {
			free(s[i].name);
			continue;
		}
		s[j++] = s[i];
	}
	*out = s;
	*nr = j;
	return 0;
nomem:
	for (i = 0; i < n; i++)
		free(s[i].name);
	free(s);
	return -ENOMEM;
}

/* The bytes of [addr, addr + size) from the section holding them. */
static const uint8_t *prog__code(Elf *elf, uint64_t addr, uint64_t size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr + size > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < addr - sh.sh_addr + size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

int valence_prog__from_elf(struct valence_prog *p, const char *path,
			   char *err, size_t errlen)
{
	struct valence_edge *e = NULL;
	size_t ne = 0, cap = 0, nsym = 0, i;
	struct sym *syms = NULL;
	Elf *elf = NULL;
	csh cs = 0;
	int fd, ret;

	memset(p, 0, sizeof(*p));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	ret = -EINVAL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		goto cleanup;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: no x86-64 disassembler");
		goto cleanup;
	}
	ret = prog__read_syms(p, elf, &syms, &nsym);
	if (ret || !nsym) {
		snprintf(err, errlen, "%s: no function symbols", path);
		ret = ret ? ret : -ENOENT;
		goto cleanup;
	}
	ret = -ENOMEM;
	p->nr_nodes = nsym;
	p->addr = calloc(nsym, sizeof(*p->addr));
	p->size = calloc(nsym, sizeof(*p->size));
	p->name = calloc(nsym, sizeof(*p->name));
	if (!p->addr || !p->size || !p->name)
		goto cleanup;
	for (i = 0; i < nsym; i++) {
		p->addr[i] = syms[i].addr;
		p->size[i] = syms[i].size;
		p->name[i] = syms[i].name;
		syms[i].name = NULL;
	}
	for (i = 0; i < nsym; i++) {
		const uint8_t *code = prog__code(elf, p->addr[i], p->size[i]);
		cs_insn *insn;
		size_t n, k;

		if (!code)
			continue;
		n = cs_disasm(cs, code, p->size[i], p->addr[i], 0, &insn);
		for (k = 0; k < n; k++) {
			uint64_t t;
			int64_t callee;
			char *end;

			if (insn[k].id != X86_INS_CALL)
				continue;
			t = strtoull(insn[k].op_str, &end, 0);
			callee = insn[k].op_str[0] == '0' && !*end ?
				prog__node_at(p, t) : -1;
			if (callee < 0) {	/* indirect, or a PLT stub */
				p->indirect++;
				continue;
			}
			if (ne == cap) {
				struct valence_edge *x;

				cap = cap ? 2 * cap : 1024;
				x = realloc(e, cap * sizeof(*e));
				if (!x) {
					cs_free(insn, n);
					goto cleanup;
				}
				e = x;
			}
			e[ne].caller = i;
			e[ne].callee = (uint32_t)callee;
			e[ne].site = insn[k].address + insn[k].size;
			ne++;
		}
		cs_free(insn, n);
	}
	ret = valence__annotate(&p->v, p->nr_nodes, e, ne);
	if (ret)
		snprintf(err, errlen, "%s: annotation: %s", path,
			 ret == -E2BIG ? "acyclic id longer than the area" :
			 strerror(-ret));
	else
		p->table_id = valence__table_id(&p->v);
cleanup:
	if (syms) {
		for (i = 0; i < nsym; i++)
			free(syms[i].name);
		free(syms);
	}
	free(e);
	if (cs)
		cs_close(&cs);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

uint64_t valence__table_id(const struct valence *v)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;

	for (i = 0; i < v->nr_edges; i++) {
		const struct valence_op *op = &v->by_site[i];
		uint64_t f[] = { op->site, op->caller, op->callee, op->kind,
				 op->pos[0], op->width[0], op->val[0],
				 op->pos[1], op->width[1], op->val[1] };
		size_t j;

		for (j = 0; j < sizeof(f) / sizeof(f[0]); j++) {
			h ^= f[j];
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

int valence_prog__write(const struct valence_prog *p, FILE *f)
{
	const struct valence *v = &p->v;
	uint32_t i;

	fprintf(f, "kcc-valence 1\ntable %" PRIx64 " %u %u %u %u\n",
		p->table_id, p->nr_nodes, v->nr_edges, v->acyc_words,
		v->rec_len);
	for (i = 0; i < p->nr_nodes; i++)
		fprintf(f, "node %u %" PRIx64 " %" PRIx64 " %s\n", i,
			p->addr[i], p->size[i], p->name[i]);
	for (i = 0; i < v->nr_edges; i++)
		fprintf(f, "edge %u %u %" PRIx64 "\n", v->edges[i].caller,
			v->edges[i].callee, v->edges[i].site);
	for (i = 0; i < v->nr_edges; i++) {
		const struct valence_op *op = &v->by_site[i];

		fprintf(f, "op %" PRIx64 " %u %u %u %u %u %u %u %u %u\n",
			op->site, op->caller, op->callee, op->kind, op->pos[0],
			op->width[0], op->val[0], op->pos[1], op->width[1],
			op->val[1]);
	}
	return ferror(f) ? -EIO : 0;
}

int valence_prog__read(struct valence_prog *p, FILE *f, char *err,
		       size_t errlen)
{
	uint32_t nn = 0, ne = 0, aw, rl, ie = 0, in = 0;
	struct valence_edge *e = NULL;
	char line[4096];
	int ret = -EINVAL;

	memset(p, 0, sizeof(*p));
	if (!fgets(line, sizeof(line), f) || strcmp(line, "kcc-valence 1\n") ||
	    !fgets(line, sizeof(line), f) ||
	    sscanf(line, "table %" SCNx64 " %u %u %u %u", &p->table_id, &nn,
		   &ne, &aw, &rl) != 5 || !nn || nn > (1u << 24) ||
	    ne > (1u << 26)) {
		snprintf(err, errlen, "not a kcc valence table");
		return -EINVAL;
	}
	p->nr_nodes = nn;
	p->addr = calloc(nn, sizeof(*p->addr));
	p->size = calloc(nn, sizeof(*p->size));
	p->name = calloc(nn, sizeof(*p->name));
	e = calloc(ne + 1, sizeof(*e));
	if (!p->addr || !p->size || !p->name || !e) {
		ret = -ENOMEM;
		goto fail;
	}
	while (fgets(line, sizeof(line), f)) {
		uint32_t i, a, b;
		uint64_t x, y;
		int off = 0;

		if (!strncmp(line, "node ", 5)) {
			if (sscanf(line, "node %u %" SCNx64 " %" SCNx64 " %n",
				   &i, &x, &y, &off) < 3 || !off || i != in ||
			    in >= nn)
				goto bad;
			line[strcspn(line, "\n")] = 0;
			p->addr[in] = x;
			p->size[in] = y;
			p->name[in] = strdup(line + off);
			if (!p->name[in++]) {
				ret = -ENOMEM;
				goto fail;
			}
		} else if (!strncmp(line, "edge ", 5)) {
			if (sscanf(line, "edge %u %u %" SCNx64, &a, &b, &x) != 3 ||
			    ie >= ne)
				goto bad;
			e[ie].caller = a;
			e[ie].callee = b;
			e[ie++].site = x;
		} else if (strncmp(line, "op ", 3)) {
			goto bad;
		}
	}
	if (in != nn || ie != ne)
		goto bad;
	ret = valence__annotate(&p->v, nn, e, ne);
	if (ret || valence__table_id(&p->v) != p->table_id ||
	    p->v.acyc_words != aw || p->v.rec_len != rl) {
		snprintf(err, errlen, "table does not annotate to its own ops");
		ret = -EINVAL;
		goto fail;
	}
	free(e);
	return 0;
bad:
	snprintf(err, errlen, "malformed table line: %.60s", line);
	ret = -EINVAL;
fail:
	free(e);
	valence_prog__exit(p);
	return ret;
}

void valence_prog__exit(struct valence_prog *p)
{
	uint32_t i;

	valence__exit_graph(&p->v);
	for (i = 0; p->name && i < p->nr_nodes; i++)
		free(p->name[i]);
	free(p->name);
	free(p->addr);
	free(p->size);
	memset(p, 0, sizeof(*p));
}

/* PCCE's words for the same context: its id, 2 per recursive or dynamic push. */
static uint32_t prog__pcce_words(const struct valence *v,
				 const struct valence_frame *f, uint32_t n)
{
	uint32_t w = 0, i;
	double bits = n ? v->pcce_bits[f[n - 1].node] : 0;

	for (i = 1; i < n; i++) {
		const struct valence_op *op = valence__lookup(v, f[i].site);

		if (f[i].escaped || !op)
			w += 2;
		else if (v->back[v->site_edge[op - v->by_site]])
			w += 2;
	}
	return w + (bits > 64 ? (uint32_t)((bits + 63) / 64) : 1);
}

int valence_prog__check(const struct valence_prog *p, FILE *f,
			struct valence_check_stats *st, FILE *diag)
{
	static struct valence_frame truth[4096], got[4096];
	struct valence_check_hdr h;

	memset(st, 0, sizeof(*st));
	while (fread(&h, sizeof(h), 1, f) == 1) {
		uint32_t i, w;
		int n;

		if (h.magic != VALENCE_CHECK_MAGIC || h.depth > 4096 ||
		    fread(truth, sizeof(*truth), h.depth, f) != h.depth)
			return -EINVAL;
		st->samples++;
		n = valence__decode(&p->v, &h.area, got, 4096);
		if (n == -EAGAIN) {
			st->torn++;
			continue;
		}
		if (n == -EOVERFLOW) {
			st->overflow++;
			continue;
		}
		if (n < 0) {
			if (!st->undecodable++ && diag)
				fprintf(diag, "first undecodable sample: %s (%u true frames, %u rec bits)\n",
					strerror(-n), h.depth, h.area.rec_bits);
			continue;
		}
		for (i = 0; i < h.depth; i++)
			st->escaped_frames += truth[i].escaped;
		if ((uint32_t)n != h.depth ||
		    memcmp(got, truth, h.depth * sizeof(*got))) {
			if (!st->wrong++ && diag)
				fprintf(diag, "first wrong sample: %d frames decoded, %u true\n",
					n, h.depth);
			continue;
		}
		st->exact++;
		w = valence__words(&p->v, &h.area);
		st->words += w;
		if (w > st->max_words)
			st->max_words = w;
		st->pcce_words += prog__pcce_words(&p->v, truth, h.depth);
	}
	return 0;
}
