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
 * the symbol table).  A profile by build-id (kcc record --build-ids)
 * carries none and must find the object at its path or in a build-id
 * cache, and no other build.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuginfod.h"
#include "ktap.h"
#include "pprof.h"
#include "report_fmt.h"

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
		memset(&m, 0, sizeof(m));
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

/* beta's line of the profile in @mem, with --srcline; NULL if none. */
static char *beta_line(const char *name, const char *mem, size_t len)
{
	struct report_opts o = { .name = name, .sort = KCC_CTR_CALLS,
				 .srcline = true, .group = GROUP_ALL };
	struct profile q;
	struct report r;
	char *sl = NULL;
	uint32_t id;

	if (!profile__parse(&q, mem, len, name) && !report__build(&r, &q, &o)) {
		if (!report__find(&r, "beta", &id) && report__srcline(&r, id))
			sl = strdup(report__srcline(&r, id));
		report__exit(&r);
	}
	profile__exit(&q);
	debuginfod__exit();
	return sl;
}

/*
 * The binary and its debuginfo are gone: source lines come only from a
 * debuginfod server (a file:// one here, as DEBUGINFOD_URLS allows),
 * and only when DEBUGINFOD_URLS names it.
 */
static void debuginfod_lines(const char *name, const char *mem, size_t len)
{
	char url[300], cache[300], want[300];
	char *off, *on;

	snprintf(url, sizeof(url), "file://%s/srv", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(want, sizeof(want), "%s/prog.c:%d", dir, fn_line[2]);
	unsetenv("DEBUGINFOD_URLS");
	off = beta_line(name, mem, len);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	on = beta_line(name, mem, len);
	unsetenv("DEBUGINFOD_URLS");
	ksft_test_result(!off && on && !strcmp(on, want),
			 "%s: binary gone: beta's line %s from debuginfod (without it: %s)\n",
			 name, on ? on : "(none)", off ? off : "none");
	free(off);
	free(on);
}

/* Does file @path hold a line containing both @a and @b? */
static int file_has(const char *path, const char *a, const char *b)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && (!b || strstr(line, b));
	fclose(f);
	return found;
}

/*
 * Debian's go tool pprof reads the report's pprof: the object's Mapping
 * has its path and build-id (-raw), and -list finds the source of beta
 * by the full path of its Function.
 */
static void pprof_check(struct report *r, const char *name, const char *bin)
{
	char path[300], raw[300], list[300], hex[2 * SYM_BUILD_ID_MAX + 1];
	uint8_t id[SYM_BUILD_ID_MAX];
	int n, ok;
	FILE *f;

	if (sh("command -v go >/dev/null")) {
		ksft_test_result_skip("%s: no go tool pprof (golang-go)\n", name);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s.pb.gz", dir, name);
	snprintf(raw, sizeof(raw), "%s/%s.raw", dir, name);
	snprintf(list, sizeof(list), "%s/%s.list", dir, name);
	n = elf__build_id(bin, id, sizeof(id));
	build_id__hex(id, n > 0 ? n : 0, hex);
	f = fopen(path, "w");
	ok = f && !report__pprof(r, f);
	if (f)
		fclose(f);
	ok = ok && n > 0 &&
	     !sh("HOME=%s GOCACHE=%s/gocache go tool pprof -raw %s >%s 2>&1 && HOME=%s GOCACHE=%s/gocache go tool pprof -list '^beta$' %s >%s 2>&1",
		 dir, dir, path, raw, dir, dir, path, list);
	ok = ok && file_has(raw, bin, hex) && file_has(list, "sink += x", NULL);
	if (!ok)
		sh("sed 's/^/# /' %s %s", raw, list);
	ksft_test_result(ok, "%s: go tool pprof: Mapping with path and build-id %s, -list shows beta's source\n",
			 name, hex);
}

static int write_file(const char *name, const char *text)
{
	char path[256];
	FILE *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = fopen(path, "w");
	if (!s)
		return -1;
	if (fputs(text, s) < 0) {
		fclose(s);
		return -1;
	}
	return fclose(s);
}

/*
 * The stream of process 77 running @bin (as @name) at @base: main ->
 * alpha -> beta, labels a few bytes inside each function (@addr, from
 * nm), called 1, 10 and 100 times; the executable maps of @full's
 * program headers, as the kernel would record them (inode @ino).
 */
static void prog_stream(struct sbuf *b, const char *name, const char *full,
			const char *bin, uint64_t base, const uint64_t *addr,
			uint64_t ino)
{
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct stream_task t;
	uint32_t n0, n1, n2;

	stream__default_header(&h, d, 2, KCC_SOURCE_INJECT, KCC_HDR_CALLS_VALID);
	stream__write_header(b, &h, d);
	memset(&t, 0, sizeof(t));
	t.pid = t.tgid = 77;
	snprintf(t.comm, sizeof(t.comm), "%s", name);
	pool__alloc(&t.ksf, 8, 2);
	n0 = kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP, base + addr[0] + 4);
	n1 = kcc_forest_get(&t.ksf.f, n0, base + addr[1] + 9);
	n2 = kcc_forest_get(&t.ksf.f, n1, base + addr[2] + 1);
	kcc_forest_ctr(&t.ksf.f, n0)[0] = 1;
	kcc_forest_ctr(&t.ksf.f, n1)[0] = 10;
	kcc_forest_ctr(&t.ksf.f, n2)[0] = 100;
	stream__write_task(b, &t, KCC_NR_CTRS);
	pool__exit(&t.ksf);
	exec_maps(full, base, 77, b, bin, ino);
	stream__write_end(b);
}

static void variant(const char *name, const char *cflags, uint64_t base)
{
	char bin[256], full[256], dbg[256], msg[256];
	uint64_t addr[NFUNC];
	struct sbuf b = { 0 };
	struct profile p, q;
	struct report r;
	struct report_opts o = { .name = name, .sort = KCC_CTR_CALLS,
				 .srcline = true, .group = GROUP_ALL };
	struct symobj so;
	struct stat st;
	char *mem = NULL;
	size_t len = 0;
	FILE *f;
	int i, ok, lines_ok, id;

	snprintf(bin, sizeof(bin), "%s/%s", dir, name);
	snprintf(full, sizeof(full), "%s/%s.full", dir, name);
	snprintf(dbg, sizeof(dbg), "%s.debug", name);
	if (sh("cd %s && gcc -g -O1 %s -o %s.full prog.c && cp %s.full %s && objcopy --only-keep-debug %s %s && strip --strip-all %s && objcopy --add-gnu-debuglink=%s %s",
	       dir, cflags, name, name, name, name, dbg, name, dbg, name) ||
	    nm_addrs(full, addr) || stat(bin, &st)) {
		ksft_test_result_fail("%s: build the test program\n", name);
		ksft_test_result_fail("%s: functions\n", name);
		ksft_test_result_fail("%s: lines\n", name);
		ksft_test_result_fail("%s: pprof\n", name);
		ksft_test_result_fail("%s: self-contained\n", name);
		ksft_test_result_fail("%s: debuginfod\n", name);
		return;
	}
	ksft_test_result_pass("%s: built, stripped, debuginfo in %s\n", name, dbg);

	/* The stripped object alone names nothing but what .dynsym has. */
	symobj__load(&so, bin);
	ksft_print_msg("%s: %u symbols from %s\n", name, so.nr_syms,
		       so.debug_path ? so.debug_path : "the object");
	symobj__exit(&so);

	prog_stream(&b, name, full, bin, base, addr, st.st_ino);

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
		ksft_test_result_fail("%s: pprof\n", name);
		ksft_test_result_fail("%s: self-contained\n", name);
		ksft_test_result_fail("%s: debuginfod\n", name);
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
		char want[128];
		static const uint64_t calls[NFUNC] = { 1, 10, 100 };

		if (report__find(&r, fn[i], &sid) ||
		    (v = kcc_forest_find(kf, KCC_ROOT_TOP, sid)) == KCC_NIL ||
		    kcc_forest_ctr(kf, v)[0] != calls[i]) {
			ok = 0;
			snprintf(msg, sizeof(msg), "%s not found or miscounted", fn[i]);
			continue;
		}
		sl = report__srcline(&r, sid);
		/* The full path: pprof -list and editors open it. */
		snprintf(want, sizeof(want), "%s/prog.c:%d", dir, fn_line[i]);
		if (!sl || strcmp(sl, want)) {
			lines_ok = 0;
			ksft_print_msg("%s: %s at %s, expected %s\n", name, fn[i],
				       sl ? sl : "(none)", want);
		}
	}
	ksft_test_result(ok && !r.unsymbolized, "%s: labels inside main, alpha, beta name them %s\n",
			 name, msg);
	ksft_test_result(lines_ok, "%s: --srcline gives each function's line\n", name);
	pprof_check(&r, name, bin);
	report__exit(&r);
	profile__exit(&q);

	/* A debuginfod server (a file:// one) gets the object and debuginfo. */
	sh("id=$(readelf -n %s 2>/dev/null | sed -n 's/.*Build ID: //p') && mkdir -p %s/srv/buildid/$id && cp %s/%s %s/srv/buildid/$id/debuginfo && cp %s %s/srv/buildid/$id/executable",
	   bin, dir, dir, dbg, dir, bin, dir);
	/* Binary and debuginfo gone: the profile still names everything. */
	sh("rm -f %s %s/%s %s", bin, dir, dbg, full);
	ok = !profile__parse(&q, mem, len, name);
	o.srcline = false;
	ok = ok && !report__build(&r, &q, &o);
	if (ok) {
		id = 0;
		for (i = 0; i < NFUNC; i++) {
			uint32_t sid;

			if (!report__find(&r, fn[i], &sid))
				id++;
		}
		ok = id == NFUNC && !r.unsymbolized;
		report__exit(&r);
	}
	ksft_test_result(ok, "%s: names resolve from the profile alone\n", name);
	profile__exit(&q);
	debuginfod_lines(name, mem, len);
	free(mem);
}

/* nm's address of symbol @sym (as mangled) in @bin, 0 if absent. */
static uint64_t nm_addr(const char *bin, const char *sym)
{
	char cmd[512], line[512], name[256];
	unsigned long long a, found = 0;
	char type;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", bin);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, sym))
			found = a;
	pclose(p);
	return found;
}

static const char cxx_main[] =
"namespace kcc {\n"
"template <typename T> __attribute__((noinline)) T twice(T x) { return x * 2; }\n"
"}\n"
"static __attribute__((noinline)) int helper(int x) { return x + 1; }\n"
"int lib_entry(int x);\n"
"int main(int argc, char **) { return kcc::twice<int>(helper(argc)) + lib_entry(argc) > 100; }\n";

static const char cxx_lib[] =
"static __attribute__((noinline)) int helper(int x) { return x * 3; }\n"
"int lib_entry(int x) { return helper(x) + 1; }\n";

/* The k-CCF root of the routine shown as @name, or KCC_NIL. */
static uint32_t root_of(const struct report *r, const char *name)
{
	const struct kcc_forest *f = &r->groups[0].kccf.f;
	uint32_t id;

	if (report__find(r, name, &id))
		return KCC_NIL;
	return kcc_forest_find(f, KCC_ROOT_TOP, id);
}

/*
 * A C++ program and a shared library of its own, each with a static
 * helper(int): two routines of one name in two objects.  They must stay
 * apart, with their own counts and objects, and every name must read
 * as the programmer wrote it.
 */
static void cxx_objects(void)
{
	static const uint64_t base_p = 0x555555554000ull, base_l = 0x7f0000000000ull;
	char prog[256], lib[256];
	uint64_t hp, hl, tw, le, mn;
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct stream_task t;
	struct sbuf b = { 0 };
	struct profile p;
	struct report r;
	struct report_opts o = { .name = "cxx", .sort = KCC_CTR_CALLS,
				 .group = GROUP_ALL };
	struct stat sp, sl;
	uint32_t v, n1, id;
	int ok;
	const struct kcc_forest *f;

	snprintf(prog, sizeof(prog), "%s/cxxprog", dir);
	snprintf(lib, sizeof(lib), "%s/libkccb.so", dir);
	if (sh("command -v g++ >/dev/null")) {
		ksft_test_result_skip("C++: no g++\n");
		ksft_test_result_skip("C++: demangled names\n");
		ksft_test_result_skip("C++: dso column\n");
		ksft_test_result_skip("C++: --dso\n");
		return;
	}
	ok = !write_file("a.cc", cxx_main) && !write_file("b.cc", cxx_lib) &&
	     !sh("cd %s && g++ -g -O1 -fPIC -shared -o libkccb.so b.cc && g++ -g -O1 -o cxxprog a.cc -L. -lkccb",
		 dir) &&
	     !stat(prog, &sp) && !stat(lib, &sl);
	/* The mangled names: a static, a template instance, a function. */
	hp = ok ? nm_addr(prog, "_ZL6helperi") : 0;
	hl = ok ? nm_addr(lib, "_ZL6helperi") : 0;
	tw = ok ? nm_addr(prog, "_ZN3kcc5twiceIiEET_S1_") : 0;
	le = ok ? nm_addr(lib, "_Z9lib_entryi") : 0;
	mn = ok ? nm_addr(prog, "main") : 0;
	if (!hp || !hl || !tw || !le || !mn) {
		ksft_test_result_fail("C++: build the program and its library\n");
		ksft_test_result_fail("C++: demangled names\n");
		ksft_test_result_fail("C++: dso column\n");
		ksft_test_result_fail("C++: --dso\n");
		return;
	}
	stream__default_header(&h, d, 2, KCC_SOURCE_INJECT, KCC_HDR_CALLS_VALID);
	stream__write_header(&b, &h, d);
	memset(&t, 0, sizeof(t));
	t.pid = 88;
	t.tgid = 88;
	strcpy(t.comm, "cxxprog");
	pool__alloc(&t.ksf, 8, 2);
	/*
	 * Callers first, as a k-SF holds them: main calls the program's
	 * helper 5 times, lib_entry the library's 7 times.
	 */
	v = kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP, base_p + mn + 2);
	kcc_forest_ctr(&t.ksf.f, v)[0] = 1;
	kcc_forest_ctr(&t.ksf.f, kcc_forest_get(&t.ksf.f, v, base_p + hp + 1))[0] = 5;
	v = kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP, base_l + le + 2);
	kcc_forest_ctr(&t.ksf.f, v)[0] = 7;
	kcc_forest_ctr(&t.ksf.f, kcc_forest_get(&t.ksf.f, v, base_l + hl + 1))[0] = 7;
	v = kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP, base_p + tw + 1);
	kcc_forest_ctr(&t.ksf.f, v)[0] = 2;
	stream__write_task(&b, &t, KCC_NR_CTRS);
	pool__exit(&t.ksf);
	exec_maps(prog, base_p, 88, &b, prog, sp.st_ino);
	exec_maps(lib, base_l, 88, &b, lib, sl.st_ino);
	stream__write_end(&b);

	profile__init(&p);
	ok = !profile__add_stream(&p, b.p, b.len, "cxx");
	b.p = NULL;
	ok = ok && profile__add_objects(&p, 0) == 0;
	ok = ok && !report__build(&r, &p, &o);
	if (!ok) {
		ksft_test_result_fail("C++: profile and report\n");
		ksft_test_result_fail("C++: demangled names\n");
		ksft_test_result_fail("C++: dso column\n");
		ksft_test_result_fail("C++: --dso\n");
		profile__exit(&p);
		return;
	}
	f = &r.groups[0].kccf.f;
	v = root_of(&r, "helper(int) [cxxprog]");
	n1 = root_of(&r, "helper(int) [libkccb.so]");
	ok = v != KCC_NIL && n1 != KCC_NIL && v != n1 &&
	     kcc_forest_ctr(f, v)[0] == 5 && kcc_forest_ctr(f, n1)[0] == 7 &&
	     !strcmp(report__dso(&r, kcc_forest_node(f, v)->label), "cxxprog") &&
	     !strcmp(report__dso(&r, kcc_forest_node(f, n1)->label), "libkccb.so") &&
	     report__match(&r, kcc_forest_node(f, v)->label, "helper(int)") &&
	     report__match(&r, kcc_forest_node(f, n1)->label, "helper(int)");
	ksft_test_result(ok, "C++: the static helper(int) of the program (5 calls) and of its library (7) stay apart\n");
	/* A function template's name carries its return type. */
	v = root_of(&r, "int kcc::twice<int>(int)");
	ok = v != KCC_NIL && kcc_forest_ctr(f, v)[0] == 2 &&
	     !strcmp(report__dso(&r, kcc_forest_node(f, v)->label), "cxxprog") &&
	     !report__find(&r, "lib_entry(int)", &id) &&
	     !strcmp(report__dso(&r, id), "libkccb.so") && !r.unsymbolized;
	ksft_test_result(ok, "C++: names demangled (int kcc::twice<int>(int), 2 calls, in cxxprog; lib_entry(int))\n");
	{
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		/* The text report's dso column: the object of the routine. */
		ok = m && !report__text(&r, m);
		if (m)
			fclose(m);
		ok = ok && text &&
		     strstr(text, "  libkccb.so        lib_entry(int);helper(int) [libkccb.so]\n") &&
		     strstr(text, "  cxxprog           main;helper(int) [cxxprog]\n");
		if (!ok && text)
			ksft_print_msg("text report:\n%s", text);
		free(text);
		ksft_test_result(ok, "C++: the text report's dso column names each routine's object\n");
	}
	report__exit(&r);
	{
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		/* --dso: the library's routines only, in every format. */
		o.dso = "libkccb.so";
		ok = m && !report__build(&r, &p, &o) && !report__folded(&r, m);
		if (m)
			fclose(m);
		ok = ok && text &&
		     !strcmp(text, "lib_entry(int) 7\nlib_entry(int);helper(int) [libkccb.so] 7\n");
		if (!ok && text)
			ksft_print_msg("folded:\n%s", text);
		free(text);
		ksft_test_result(ok, "C++: --dso libkccb.so keeps the library's routines (and their callers) only\n");
	}
	report__exit(&r);
	profile__exit(&p);
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

/*
 * The vDSO (ABI 1.6: kcc.ko records its mapping as KCC_MAP_VDSO): its
 * image is copied out of this process into a file for nm, which gives
 * __vdso_clock_gettime's address; a stream whose label is inside it,
 * with a [vdso] map at the real address, must name it, and the profile
 * must keep the name once written.
 */
static void test_vdso(void)
{
	unsigned long long lo = 0, hi = 0, a, b;
	struct kcc_stream_header h;
	struct kcc_metric_desc d[KCC_NR_CTRS];
	struct report_opts o = { .name = "vdso", .sort = KCC_CTR_CALLS,
				 .group = GROUP_ALL };
	struct stream_task t;
	struct stream_map m;
	struct sbuf sb = { 0 };
	struct profile p, q;
	struct report r;
	char line[512], path[256], *mem = NULL;
	uint64_t fn_off;
	uint32_t sid;
	size_t len = 0;
	FILE *f;
	int ok;

	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &a, &b) == 2) {
			lo = a;
			hi = b;
		}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/vdso.so", dir);
	f = lo ? fopen(path, "w") : NULL;
	ok = f && fwrite((void *)(uintptr_t)lo, 1, hi - lo, f) == hi - lo;
	if (f)
		fclose(f);
	/* Its symbols are dynamic ones only: nm -D. */
	snprintf(line, sizeof(line), "-D --without-symbol-versions %s", path);
	fn_off = ok ? nm_addr(line, "__vdso_clock_gettime") : 0;
	if (!fn_off || fn_off >= hi - lo) {
		ksft_test_result_skip("vdso: no [vdso] with __vdso_clock_gettime here\n");
		return;
	}
	stream__default_header(&h, d, 1, KCC_SOURCE_INJECT, KCC_HDR_CALLS_VALID);
	stream__write_header(&sb, &h, d);
	memset(&t, 0, sizeof(t));
	t.pid = t.tgid = 78;
	strcpy(t.comm, "vdso");
	pool__alloc(&t.ksf, 8, 1);
	kcc_forest_ctr(&t.ksf.f, kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP,
						lo + fn_off + 3))[0] = 5;
	stream__write_task(&sb, &t, KCC_NR_CTRS);
	pool__exit(&t.ksf);
	memset(&m, 0, sizeof(m));
	m.tgid = 78;
	m.start = lo;
	m.end = hi;
	m.path = (char *)KCC_MAP_VDSO;
	stream__write_map(&sb, &m);
	stream__write_end(&sb);

	profile__init(&p);
	ok = !profile__add_stream(&p, sb.p, sb.len, "vdso");
	ok = ok && profile__add_objects(&p, 0) == 0;
	f = open_memstream(&mem, &len);
	profile__write(&p, f);
	fclose(f);
	profile__exit(&p);
	if (ok && !profile__parse(&q, mem, len, "vdso")) {
		ok = !report__build(&r, &q, &o);
		if (ok) {
			ok = !report__find(&r, "__vdso_clock_gettime", &sid) &&
			     !r.unsymbolized;
			report__exit(&r);
		}
		profile__exit(&q);
	} else {
		ok = 0;
	}
	ksft_test_result(ok, "vdso: a label %#llx into [vdso] names __vdso_clock_gettime (nm of the image)\n",
			 (unsigned long long)fn_off + 3);
	free(mem);
}

/*
 * How many of main, alpha and beta the profile @mem names, with its
 * unnamed labels in *@unnamed; -1 when it cannot be reported.
 */
static int names_of(const char *mem, size_t len, uint32_t *unnamed)
{
	struct report_opts o = { .name = "byid", .sort = KCC_CTR_CALLS,
				 .group = GROUP_ALL };
	struct profile q;
	struct report r;
	int i, n = 0;

	if (profile__parse(&q, mem, len, "byid"))
		return -1;
	if (report__build(&r, &q, &o)) {
		profile__exit(&q);
		return -1;
	}
	for (i = 0; i < NFUNC; i++) {
		uint32_t sid;

		if (!report__find(&r, fn[i], &sid))
			n++;
	}
	*unnamed = r.unsymbolized;
	report__exit(&r);
	profile__exit(&q);
	return n;
}

/* Profile @b's stream, objects by build-id (@by_id) or with tables. */
static int by_id_profile(const struct sbuf *b, bool by_id, char **mem,
			 size_t *len, uint32_t *nr_syms)
{
	struct profile p;
	void *raw = malloc(b->len);
	FILE *f;
	int ret;

	if (!raw)
		return -1;
	memcpy(raw, b->p, b->len);
	profile__init(&p);
	p.by_build_id = by_id;
	ret = profile__add_stream(&p, raw, b->len, "byid");
	ret = ret ? ret : profile__add_objects(&p, 0);
	*nr_syms = p.nr_objs ? p.objs[0].so.nr_syms : 0;
	if (!ret && (p.nr_objs != 1 || !p.objs[0].so.build_id_len))
		ret = -1;
	f = ret ? NULL : open_memstream(mem, len);
	ret = f ? profile__write(&p, f) : -1;
	if (f)
		fclose(f);
	profile__exit(&p);
	return ret;
}

/*
 * kcc record --build-ids: the object is recorded by path and build-id
 * without its symbol table, and kcc report finds it at its path (while
 * the build-id matches), in a build-id cache (perf's layout, and a
 * plain file), or not at all.
 */
static void test_by_build_id(void)
{
	char bin[256], moved[256], cache[256];
	struct sbuf b = { 0 };
	uint64_t addr[NFUNC];
	char *full = NULL, *lean = NULL;
	size_t full_len = 0, lean_len = 0;
	uint32_t syms_full, syms_lean, unnamed;
	struct stat st;
	int n, ok;

	snprintf(bin, sizeof(bin), "%s/byid", dir);
	snprintf(moved, sizeof(moved), "%s/byid.moved", dir);
	snprintf(cache, sizeof(cache), "%s/bidcache", dir);
	unsetenv("DEBUGINFOD_URLS");
	if (sh("cd %s && gcc -g -O1 -fPIE -pie prog.c -o byid", dir) ||
	    nm_addrs(bin, addr) || stat(bin, &st)) {
		ksft_test_result_fail("build-ids: build the test program\n");
		ksft_test_result_fail("build-ids: found by path, by cache\n");
		ksft_test_result_fail("build-ids: another build at the path\n");
		return;
	}
	prog_stream(&b, "byid", bin, bin, 0x555555554000ull, addr, st.st_ino);
	ok = !by_id_profile(&b, false, &full, &full_len, &syms_full) &&
	     !by_id_profile(&b, true, &lean, &lean_len, &syms_lean);
	ksft_print_msg("build-ids: profile %zu bytes with the symbol table (%u symbols), %zu without\n",
		       full_len, syms_full, lean_len);
	ok = ok && syms_full >= NFUNC && !syms_lean && lean_len < full_len;
	profile__set_buildid_dir("");
	n = ok ? names_of(lean, lean_len, &unnamed) : -1;
	ok = n == NFUNC && !unnamed;
	ksft_test_result(ok, "build-ids: no symbol table kept; the object at its path names main, alpha, beta\n");

	/*
	 * Moved away: nothing named; then in a cache as perf buildid-cache
	 * lays it out (DIR/.build-id/xx/rest/elf), and as a plain file.
	 */
	ok = !rename(bin, moved) && names_of(lean, lean_len, &unnamed) == 0 &&
	     unnamed == NFUNC;
	if (!ok)
		ksft_print_msg("build-ids: moved away, still named\n");
	profile__set_buildid_dir(cache);
	ok = ok && !sh("id=$(readelf -n %s | sed -n 's/.*Build ID: //p') && d=%s/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-) && mkdir -p $d && cp %s $d/elf",
		       moved, cache, moved) &&
	     names_of(lean, lean_len, &unnamed) == NFUNC && !unnamed;
	if (!ok)
		ksft_print_msg("build-ids: not found in perf's layout\n");
	ok = ok && !sh("rm -rf %s && id=$(readelf -n %s | sed -n 's/.*Build ID: //p') && mkdir -p %s/.build-id/$(echo $id | cut -c1-2) && cp %s %s/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)",
		       cache, moved, cache, moved, cache) &&
	     names_of(lean, lean_len, &unnamed) == NFUNC && !unnamed;
	ksft_test_result(ok, "build-ids: moved away, unnamed; named from a build-id cache (perf's DIR/.build-id/xx/rest/elf, and a file there)\n");

	/* Another build at the path (other build-id): not taken. */
	profile__set_buildid_dir("");
	ok = !sh("cd %s && gcc -O0 -Dsink=other_sink -fPIE -pie prog.c -o byid", dir) &&
	     names_of(lean, lean_len, &unnamed) == 0 && unnamed == NFUNC;
	ksft_test_result(ok, "build-ids: another build at the path (another build-id) names nothing\n");
	profile__set_buildid_dir(NULL);
	sbuf__exit(&b);
	free(full);
	free(lean);
}

int main(void)
{
	ksft_print_header();
	if (sh("command -v gcc >/dev/null && command -v objcopy >/dev/null && command -v nm >/dev/null && command -v readelf >/dev/null && command -v strip >/dev/null") ||
	    !mkdtemp(dir))
		ksft_exit_skip("needs gcc and binutils\n");
	ksft_set_plan(22);
	if (write_file("prog.c", src) || write_file("plt.c", plt_src))
		ksft_exit_fail_msg("cannot write the sources in %s\n", dir);
	variant("pie", "-fPIE -pie", 0x555555554000ull);
	variant("nopie", "-fno-pie -no-pie", 0);
	cxx_objects();
	test_plt("plt", "-fcf-protection=none");
	test_plt("plt-ibt", "-fcf-protection=full -Wl,-z,ibtplt");
	test_vdso();
	test_by_build_id();
	sh("rm -rf %s", dir);
	ksft_finished();
}
