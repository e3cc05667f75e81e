// SPDX-License-Identifier: GPL-2.0
/*
 * symbols_test.c - symbolization of a real program, as kcc report does
 * it: a small C program is compiled here as PIE and as a fixed-address
 * executable, stripped, with its symbols and DWARF moved into a separate
 * file found through .gnu_debuglink.  A stream is made whose labels are
 * addresses inside its functions at a plausible load address, with the
 * executable mappings a kernel would record (from readelf's program
 * headers); the expected function of each label comes from nm on the
 * unstripped binary and the expected line from the generated source.
 * The profile must name every function, give its line with --srcline,
 * and still name them after the binary is deleted (the profile carries
 * the symbol table).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktap.h"
#include "report.h"

#define NFUNC	3

static const char *const fn[NFUNC] = { "main", "alpha", "beta" };
static const int fn_line[NFUNC] = { 7, 5, 4 };	/* lines in src below */

static const char src[] =
"/* kcc symbols_test program */\n"
"#include <stdlib.h>\n"
"volatile int sink;\n"
"__attribute__((noinline)) int beta(int x) { sink += x; return x * 7 + sink; }\n"
"__attribute__((noinline)) int alpha(int x) { return beta(x + 1) + beta(x + 2) * 3; }\n"
"\n"
"int main(int argc, char **argv) { return alpha(argc) > 1000000 ? 1 : 0; }\n";

static char dir[] = "/tmp/kcc-symtest.XXXXXX";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* nm's address of each function of @bin. */
static int nm_addrs(const char *bin, uint64_t *addr)
{
	char cmd[512], line[512];
	FILE *p;
	int found = 0, i;

	snprintf(cmd, sizeof(cmd), "nm %s", bin);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		for (i = 0; i < NFUNC; i++)
			if ((type == 'T' || type == 't') && !strcmp(name, fn[i])) {
				addr[i] = a;
				found++;
			}
	}
	pclose(p);
	return found == NFUNC ? 0 : -1;
}

/* Executable PT_LOADs from readelf: the maps a kernel would record. */
static int exec_maps(const char *bin, uint64_t base, uint32_t tgid,
		     struct sbuf *b, const char *path, uint64_t ino)
{
	char cmd[512], line[512];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "readelf -lW %s", bin);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, va, pa, fsz, msz;
		char flags[8] = "";
		struct stream_map m;

		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %7[RWE ]",
			   &off, &va, &pa, &fsz, &msz, flags) < 6 ||
		    !strchr(flags, 'E'))
			continue;
		m.tgid = tgid;
		m.start = base + (va & ~0xfffull);
		m.end = base + ((va + msz + 0xfff) & ~0xfffull);
		m.pgoff = off & ~0xfffull;
		m.ino = ino;
		m.path = (char *)path;
		stream__write_map(b, &m);
		n++;
	}
	pclose(p);
	return n ? 0 : -1;
}

static void variant(const char *name, const char *cflags, uint64_t base)
{
	char bin[256], full[256], dbg[256], msg[256];
	uint64_t addr[NFUNC];
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct stream_task t;
	struct sbuf b = { 0 };
	struct profile p, q;
	struct report r;
	struct report_opts o = { .name = name, .sort = KCC_CTR_CALLS, .pid = -1,
				 .tid = -1, .srcline = true, .group = GROUP_ALL };
	struct symobj so;
	struct stat st;
	char *mem = NULL;
	size_t len = 0;
	FILE *f;
	int i, ok, lines_ok, id;
	uint32_t n0, n1, n2;

	snprintf(bin, sizeof(bin), "%s/%s", dir, name);
	snprintf(full, sizeof(full), "%s/%s.full", dir, name);
	snprintf(dbg, sizeof(dbg), "%s.debug", name);
	if (sh("cd %s && gcc -g -O1 %s -o %s.full prog.c && cp %s.full %s && objcopy --only-keep-debug %s %s && strip --strip-all %s && objcopy --add-gnu-debuglink=%s %s",
	       dir, cflags, name, name, name, name, dbg, name, dbg, name) ||
	    nm_addrs(full, addr) || stat(bin, &st)) {
		ksft_test_result_fail("%s: build the test program\n", name);
		ksft_test_result_fail("%s: functions\n", name);
		ksft_test_result_fail("%s: lines\n", name);
		ksft_test_result_fail("%s: self-contained\n", name);
		return;
	}
	ksft_test_result_pass("%s: built, stripped, debuginfo in %s\n", name, dbg);

	/* The stripped object alone names nothing but what .dynsym has. */
	symobj__load(&so, bin);
	ksft_print_msg("%s: %u symbols from %s\n", name, so.nr_syms,
		       so.debug_path ? so.debug_path : "the object");
	symobj__exit(&so);

	/* main -> alpha -> beta, labels a few bytes inside each function. */
	stream__default_header(&h, d, 2, KCC_SOURCE_INJECT, KCC_HDR_CALLS_VALID);
	stream__write_header(&b, &h, d);
	memset(&t, 0, sizeof(t));
	t.pid = t.tgid = 77;
	strcpy(t.comm, name);
	pool__alloc(&t.ksf, 8, 2);
	n0 = kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP, base + addr[0] + 4);
	n1 = kcc_forest_get(&t.ksf.f, n0, base + addr[1] + 9);
	n2 = kcc_forest_get(&t.ksf.f, n1, base + addr[2] + 1);
	kcc_forest_ctr(&t.ksf.f, n0)[0] = 1;
	kcc_forest_ctr(&t.ksf.f, n1)[0] = 10;
	kcc_forest_ctr(&t.ksf.f, n2)[0] = 100;
	stream__write_task(&b, &t, KCC_NR_CTRS);
	pool__exit(&t.ksf);
	exec_maps(full, base, 77, &b, bin, st.st_ino);
	stream__write_end(&b);

	/* What kccread does: the stream plus the objects' symbols. */
	profile__init(&p);
	ok = !profile__add_stream(&p, b.p, b.len, name);
	b.p = NULL;
	ok = ok && profile__add_objects(&p, 0) == 0;
	f = open_memstream(&mem, &len);
	profile__write(&p, f);
	fclose(f);
	profile__exit(&p);
	ok = ok && !profile__parse(&q, mem, len, name);
	ok = ok && !report__build(&r, &q, &o);
	if (!ok) {
		ksft_test_result_fail("%s: functions (profile failed)\n", name);
		ksft_test_result_fail("%s: lines\n", name);
		ksft_test_result_fail("%s: self-contained\n", name);
		profile__exit(&q);
		free(mem);
		return;
	}
	/* One k-CCF root per function, with the activations given above. */
	msg[0] = 0;
	lines_ok = 1;
	for (i = 0; i < NFUNC; i++) {
		const struct kcc_forest *kf = &r.groups[0].kccf.f;
		uint32_t sid;
		uint32_t v;
		const char *sl;
		char want[64];
		static const uint64_t calls[NFUNC] = { 1, 10, 100 };

		if (symtab__find(&r.names, fn[i], strlen(fn[i]), &sid) ||
		    (v = kcc_forest_find(kf, KCC_ROOT_TOP, sid)) == KCC_NIL ||
		    kcc_forest_ctr(kf, v)[0] != calls[i]) {
			ok = 0;
			snprintf(msg, sizeof(msg), "%s not found or miscounted", fn[i]);
			continue;
		}
		sl = report__srcline(&r, sid);
		snprintf(want, sizeof(want), "prog.c:%d", fn_line[i]);
		if (!sl || strcmp(sl, want)) {
			lines_ok = 0;
			ksft_print_msg("%s: %s at %s, expected %s\n", name, fn[i],
				       sl ? sl : "(none)", want);
		}
	}
	ksft_test_result(ok && !r.unsymbolized, "%s: labels inside main, alpha, beta name them %s\n",
			 name, msg);
	ksft_test_result(lines_ok, "%s: --srcline gives each function's line\n", name);
	report__exit(&r);
	profile__exit(&q);

	/* Binary and debuginfo gone: the profile still names everything. */
	sh("rm -f %s %s/%s %s", bin, dir, dbg, full);
	ok = !profile__parse(&q, mem, len, name);
	o.srcline = false;
	ok = ok && !report__build(&r, &q, &o);
	if (ok) {
		id = 0;
		for (i = 0; i < NFUNC; i++) {
			uint32_t sid;

			if (!symtab__find(&r.names, fn[i], strlen(fn[i]), &sid))
				id++;
		}
		ok = id == NFUNC && !r.unsymbolized;
		report__exit(&r);
	}
	ksft_test_result(ok, "%s: names resolve from the profile alone\n", name);
	profile__exit(&q);
	free(mem);
}

static const char plt_src[] =
"#include <stdlib.h>\n"
"#include <string.h>\n"
"static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }\n"
"int main(int argc, char **argv)\n"
"{\n"
"\tint v[4] = { 3, 1, 2, argc };\n"
"\tqsort(v, 4, sizeof(v[0]), cmp);\n"
"\treturn (int)strtol(argv[0], NULL, 10) + v[0] + (int)strlen(argv[0]);\n"
"}\n";

/*
 * A call into libc goes through a PLT stub: the stub must be named
 * after the routine it reaches.  The stubs and their targets are
 * objdump's (<qsort@plt>); the file offsets come from objdump -h.
 */
static void test_plt(const char *name, const char *cflags)
{
	char bin[256], cmd[1024], line[512], sec[64] = "";
	unsigned long long vma = 0, foff = 0;
	struct symobj so;
	int stubs = 0, named = 0;
	FILE *p;

	snprintf(bin, sizeof(bin), "%s/%s", dir, name);
	if (sh("cd %s && gcc -O1 %s -o %s plt.c", dir, cflags, name)) {
		ksft_test_result_fail("%s: build the PLT program\n", name);
		return;
	}
	if (symobj__load(&so, bin)) {
		ksft_test_result_fail("%s: load\n", name);
		return;
	}
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec %s", bin);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char n[256];
		int end = 0;

		if (sscanf(line, "Disassembly of section %63[^:]:", sec) == 1) {
			FILE *q;

			snprintf(cmd, sizeof(cmd),
				 "objdump -h %s | awk '$2 == \"%s\" { print $4, $6 }'",
				 bin, sec);
			q = popen(cmd, "r");
			if (!q || fscanf(q, "%llx %llx", &vma, &foff) != 2)
				vma = foff = 0;
			if (q)
				pclose(q);
		} else if (sscanf(line, "%llx <%255[^@>]@plt>:%n", &a, n, &end) == 2 &&
			   end && vma) {
			const struct sym *sy = symobj__find(&so, a - vma + foff);

			stubs++;
			if (sy && !strcmp(sym__name(&so, sy), n))
				named++;
			else
				ksft_print_msg("%s: stub of %s named %s\n", name, n,
					       sy ? sym__name(&so, sy) : "(none)");
		}
	}
	if (p)
		pclose(p);
	symobj__exit(&so);
	ksft_test_result(stubs >= 3 && named == stubs,
			 "%s: %d of %d PLT stubs named after the routine they reach\n",
			 name, named, stubs);
}

/* @text into @name in the test directory. */
static void write_src(const char *name, const char *text)
{
	char path[256];
	FILE *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = fopen(path, "w");
	if (!s || fputs(text, s) < 0 || fclose(s))
		ksft_exit_fail_msg("cannot write %s\n", path);
}

int main(void)
{
	ksft_print_header();
	if (sh("command -v gcc >/dev/null && command -v objcopy >/dev/null && command -v nm >/dev/null && command -v readelf >/dev/null && command -v strip >/dev/null") ||
	    !mkdtemp(dir))
		ksft_exit_skip("needs gcc and binutils\n");
	ksft_set_plan(10);
	write_src("prog.c", src);
	write_src("plt.c", plt_src);
	variant("pie", "-fPIE -pie", 0x555555554000ull);
	variant("nopie", "-fno-pie -no-pie", 0);
	test_plt("plt", "-fcf-protection=none");
	test_plt("plt-ibt", "-fcf-protection=full -Wl,-z,ibtplt");
	sh("rm -rf %s", dir);
	ksft_finished();
}
