// SPDX-License-Identifier: GPL-2.0
/*
 * wordfreq.c - the well-behaved program of the guest's end-to-end LBR
 * test (selftests/guest/lbr_e2e/): a word-frequency counter over text it
 * generates, with a hash table, a recursive merge sort, and a recursive
 * descent evaluator of the arithmetic expressions it generates too.
 * Built with frame pointers everywhere, no sibling calls and no inlining,
 * traced by kcc's runtime: every routine is a real call whose context the
 * trace and the LBR both see.
 *
 * With THREADS > 1 (make bench-guest), that many threads each run ROUNDS
 * rounds on state of their own (thread-local), the same work as many
 * processes but in one; the checksum is their sum.
 *
 * Usage: wordfreq [ROUNDS [THREADS]]	(default 4 and 1); prints one
 * checksum line.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWORDS		6000
#define HT_SIZE		4096
#define NEXPR		400

struct entry {
	char word[16];
	unsigned int count;
	struct entry *next;
};

static __thread unsigned int seed = 12345;
static __thread struct entry pool[HT_SIZE];
static __thread unsigned int npool;
static __thread struct entry *table[HT_SIZE];

static unsigned int rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) & 0x7fff;
}

static const char *const syl[] = {
	"ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "el", "an",
};

/* Zipf-like: short words are far more frequent. */
static size_t gen_word(char *p)
{
	unsigned int n = 1 + (rnd() % 8 == 0) + (rnd() % 3 == 0), i;
	size_t len = 0;

	for (i = 0; i < n; i++) {
		const char *s = syl[rnd() % (i ? 10 : 4)];

		memcpy(p + len, s, strlen(s));
		len += strlen(s);
	}
	return len;
}

static size_t gen_text(char *buf, unsigned int words)
{
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < words; i++) {
		len += gen_word(buf + len);
		buf[len++] = rnd() % 11 ? ' ' : '\n';
	}
	buf[len] = '\0';
	return len;
}

static int is_word_char(char c)
{
	return c >= 'a' && c <= 'z';
}

/* The next word of *@pp into @w; 0 at the end. */
static size_t next_token(const char **pp, char *w, size_t max)
{
	const char *p = *pp;
	size_t n = 0;

	while (*p && !is_word_char(*p))
		p++;
	while (is_word_char(*p)) {
		if (n + 1 < max)
			w[n++] = *p;
		p++;
	}
	w[n] = '\0';
	*pp = p;
	return n;
}

static unsigned int ht_hash(const char *w)
{
	unsigned int h = 2166136261u;

	while (*w)
		h = (h ^ (unsigned char)*w++) * 16777619u;
	return h & (HT_SIZE - 1);
}

static struct entry *ht_find(unsigned int h, const char *w)
{
	struct entry *e;

	for (e = table[h]; e; e = e->next)
		if (!strcmp(e->word, w))
			return e;
	return NULL;
}

static void ht_add(const char *w)
{
	unsigned int h = ht_hash(w);
	struct entry *e = ht_find(h, w);

	if (e) {
		e->count++;
		return;
	}
	if (npool == HT_SIZE)
		return;
	e = &pool[npool++];
	snprintf(e->word, sizeof(e->word), "%s", w);
	e->count = 1;
	e->next = table[h];
	table[h] = e;
}

static void count_words(const char *text)
{
	char w[16];

	while (next_token(&text, w, sizeof(w)))
		ht_add(w);
}

static int entry_before(const struct entry *a, const struct entry *b)
{
	return a->count != b->count ? a->count > b->count :
				      strcmp(a->word, b->word) < 0;
}

static void merge(struct entry **v, struct entry **tmp, size_t mid, size_t n)
{
	size_t i = 0, j = mid, k = 0;

	while (i < mid && j < n)
		tmp[k++] = entry_before(v[j], v[i]) ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static void msort(struct entry **v, struct entry **tmp, size_t n)
{
	if (n < 2)
		return;
	msort(v, tmp, n / 2);
	msort(v + n / 2, tmp, n - n / 2);
	merge(v, tmp, n / 2, n);
}

/* ---- expressions: expr = term {+|- term}, term = factor {*|/ factor} */

static int gen_expr(char *p, int depth);

static int gen_factor(char *p, int depth)
{
	if (depth > 0 && rnd() % 3 == 0) {
		int n = 0;

		p[n++] = '(';
		n += gen_expr(p + n, depth - 1);
		p[n++] = ')';
		return n;
	}
	return sprintf(p, "%u", 1 + rnd() % 9);
}

static int gen_expr(char *p, int depth)
{
	int n = gen_factor(p, depth), terms = rnd() % 3, i;

	for (i = 0; i < terms; i++) {
		p[n++] = "+-*/"[rnd() % 4];
		n += gen_factor(p + n, depth);
	}
	return n;
}

static long parse_expr(const char **pp);

static long parse_factor(const char **pp)
{
	long v;

	if (**pp == '(') {
		(*pp)++;
		v = parse_expr(pp);
		(*pp)++;
		return v;
	}
	return strtol(*pp, (char **)pp, 10);
}

static long parse_term(const char **pp)
{
	long v = parse_factor(pp), r;

	while (**pp == '*' || **pp == '/') {
		char op = *(*pp)++;

		r = parse_factor(pp);
		v = op == '*' ? v * r : (r ? v / r : v);
	}
	return v;
}

static long parse_expr(const char **pp)
{
	long v = parse_term(pp);

	while (**pp == '+' || **pp == '-') {
		char op = *(*pp)++;
		long r = parse_term(pp);

		v = op == '+' ? v + r : v - r;
	}
	return v;
}

static long eval_all(void)
{
	char buf[4096];
	long sum = 0;
	int i;

	for (i = 0; i < NEXPR; i++) {
		const char *p = buf;

		buf[gen_expr(buf, 4)] = '\0';
		sum += parse_expr(&p);
	}
	return sum;
}

static unsigned long round_once(char *text, struct entry **v,
				struct entry **tmp)
{
	unsigned long sum = 0;
	unsigned int i;

	memset(table, 0, sizeof(table));
	npool = 0;
	gen_text(text, NWORDS);
	count_words(text);
	for (i = 0; i < npool; i++)
		v[i] = &pool[i];
	msort(v, tmp, npool);
	for (i = 0; i < npool && i < 5; i++)
		sum = sum * 31 + v[i]->count;
	return sum + (unsigned long)eval_all();
}

static unsigned long run_rounds(int rounds)
{
	char *text = malloc(NWORDS * 24 + 1);
	struct entry **v = malloc(HT_SIZE * sizeof(*v));
	struct entry **tmp = malloc(HT_SIZE * sizeof(*tmp));
	unsigned long sum = 0;
	int r;

	if (!text || !v || !tmp)
		exit(1);
	for (r = 0; r < rounds; r++)
		sum += round_once(text, v, tmp);
	free(text);
	free(v);
	free(tmp);
	return sum;
}

static int nrounds;

static void *thread_main(void *arg)
{
	*(unsigned long *)arg = run_rounds(nrounds);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1, t;
	unsigned long sum = 0, part[64];
	pthread_t tid[64];

	nrounds = argc > 1 ? atoi(argv[1]) : 4;
	if (threads < 1 || threads > 64)
		return 1;
	if (threads == 1) {
		sum = run_rounds(nrounds);
	} else {
		for (t = 0; t < threads; t++)
			if (pthread_create(&tid[t], NULL, thread_main, &part[t]))
				return 1;
		for (t = 0; t < threads; t++) {
			pthread_join(tid[t], NULL);
			sum += part[t];
		}
	}
	printf("wordfreq: %d rounds, checksum %lu\n", nrounds, sum);
	return 0;
}
