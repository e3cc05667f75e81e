/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcc_shim.h - the only place where the lbr/ core learns whether it is
 * built into kcc.ko or into a userspace tool.
 *
 * The core never allocates: every structure works in memory its caller
 * hands over, so the kernel can size it once, up front, and a full pool
 * turns into a counted drop instead of an allocation in NMI context.
 * What the core needs from its environment is therefore small: fixed-width
 * integer types, memset/memcpy, 64-bit division, an in-place sort (the
 * kernel's sort(), libc's qsort()) and a warning macro.
 */
#ifndef KCC_SHIM_H
#define KCC_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/math64.h>
#include <linux/sort.h>

#define KCC_WARN_ON(cond)	WARN_ON_ONCE(cond)

static inline void kcc_sort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	sort(base, n, size, cmp, NULL);
}

static inline u64 kcc_div_u64(u64 n, u64 d)
{
	return div64_u64(n, d);
}

#else /* userspace */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

/* __always_inline comes from glibc's <sys/cdefs.h>, via <string.h>. */
#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

/*
 * A broken internal invariant is a bug in kcc, never a user mistake.  The
 * tools and tests are built with sanitizers; trapping gives them a report
 * with a backtrace, which is what a WARN gives in the kernel.
 */
#define KCC_WARN_ON(cond) ({					\
	int __kcc_c = !!(cond);					\
	if (unlikely(__kcc_c))					\
		__builtin_trap();				\
	__kcc_c;						\
})

static inline u64 kcc_div_u64(u64 n, u64 d)
{
	return n / d;
}

static inline void kcc_sort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	qsort(base, n, size, cmp);
}
#endif /* __KERNEL__ */

/* u64 a + b, saturating: ~0 reads as "no bound". */
static inline u64 kcc_add_sat(u64 a, u64 b)
{
	return a + b < a ? ~0ull : a + b;
}

#endif /* KCC_SHIM_H */
