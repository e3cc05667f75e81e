// SPDX-License-Identifier: GPL-2.0
/*
 * valence_prog.c - the program of selftests/kcc/valence.sh: direct
 * recursion (fib), mutual recursion (odd/even), an indirect call through
 * a function pointer and callbacks from libc's qsort(), which the Valence
 * table cannot hold and the runtime escapes.
 */
#include <stdlib.h>
#include <stdio.h>
volatile long sink;
__attribute__((noinline)) static long leaf(long x) { for (int i = 0; i < 50; i++) sink += x * i; return sink; }
__attribute__((noinline)) static long fib(long n) { if (n < 2) return leaf(n); return fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) static long even(long n);
__attribute__((noinline)) static long odd(long n) { return n ? even(n - 1) : leaf(3); }
__attribute__((noinline)) static long even(long n) { return n ? odd(n - 1) : fib(5); }
static int cmp(const void *a, const void *b) { leaf(1); return *(const int *)a - *(const int *)b; }
__attribute__((noinline)) static void sorter(void) { int v[64]; for (int i = 0; i < 64; i++) v[i] = (i * 37) % 64; qsort(v, 64, sizeof(int), cmp); }
static long (*volatile fp)(long) = fib;
#ifdef OTHER
__attribute__((noinline)) static long extra(long n) { return leaf(n) + odd(n); }
#define fib(n) (fib(n) + extra(n))
#endif
__attribute__((noinline)) static long work(int i) { if (i % 3 == 0) return fp(12); if (i % 3 == 1) return even(9); sorter(); return 0; }
int main(int argc, char **argv) { long s = 0; int n = argc > 1 ? atoi(argv[1]) : 3000; for (int i = 0; i < n; i++) s += work(i); printf("%ld\n", s & 1); return 0; }
