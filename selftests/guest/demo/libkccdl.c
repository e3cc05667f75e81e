// SPDX-License-Identifier: GPL-2.0
/*
 * libkccdl.c - a shared library with no dependencies (not even libc),
 * which kcc_mapping and dl_workload load with dlopen() from their static
 * binaries: its routines are in a mapping made long after the program
 * started, and gone before it ends.
 */
volatile unsigned long dl_sink;

__attribute__((noinline)) void dl_nop(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Not a leaf: a frameless leaf would hide its caller from the walk. */
__attribute__((noinline)) void dl_leaf(unsigned long n)
{
	unsigned long i;

	dl_nop();
	for (i = 0; i < n; i++)
		dl_sink += i * i;
}

__attribute__((noinline)) void dl_work(unsigned long n)
{
	dl_leaf(n);
	dl_sink++;
}
