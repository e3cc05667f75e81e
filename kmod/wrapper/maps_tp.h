/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/maps_tp.h - the tracepoints kcc.ko watches mappings with, and
 * their prototypes, which must match TP_PROTO of the running kernel.
 *
 * sys_exit (include/trace/events/syscalls.h) exists with
 * CONFIG_HAVE_SYSCALL_TRACEPOINTS, which every x86 kernel has (Debian's
 * 6.1 and 6.12, and the debug kernel, whose tinyconfig lacks only the
 * ftrace interface FTRACE_SYSCALLS and kprobes): the return of mmap,
 * mprotect and execve tells exactly when executable code appears.
 * Where it is missing (other architectures), mmap_lock_released
 * (include/trace/events/mmap_lock.h, CONFIG_TRACING and CONFIG_MMU) is
 * the fallback: every release of a process's mmap lock taken for
 * writing, which covers mmap, mprotect and exec, and more (munmap, brk).
 * Its memcg_path argument is there from 5.13 to 6.13; 6.14 dropped it
 * (TP_PROTO(mm, write)).  A probe with the wrong prototype still
 * compiles and registers, and reads @write from the wrong register: the
 * prototype follows the header (KCC_HAVE_MMAP_LOCK_MEMCG_PATH, Kbuild).
 */
#ifndef KCC_WRAPPER_MAPS_TP_H
#define KCC_WRAPPER_MAPS_TP_H

#include <linux/types.h>

struct pt_regs;
struct mm_struct;

#define KCC_TP_SYS_EXIT_PROTO	void *data, struct pt_regs *regs, long ret
#ifdef KCC_HAVE_MMAP_LOCK_MEMCG_PATH
#define KCC_TP_MMAP_LOCK_PROTO	void *data, struct mm_struct *mm, \
				const char *memcg_path, bool write
#else
#define KCC_TP_MMAP_LOCK_PROTO	void *data, struct mm_struct *mm, bool write
#endif

#endif /* KCC_WRAPPER_MAPS_TP_H */
