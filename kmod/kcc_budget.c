// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_budget.c - what kcc.ko may spend and what it counts when it cannot:
 * the memory every session charges to its own max_bytes and to the
 * budget all sessions share (the max_bytes parameter), and the drops and
 * other counts the handlers keep per CPU for each session.
 *
 * Memory is charged and given back by the rooms that allocate (the
 * tasks' forests and states, the mappings, the Valence tables, the
 * watched sets) under kcc_g.lock, but for the mapping hook's captures
 * waiting for the worker (atomic, below); the handler counts are
 * written by the handlers alone (this_cpu_inc()) and summed here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/atomic.h>

#include "kcc_param.h"
#include "kcc_state.h"
#include "kcc_budget.h"

/* ---- memory ------------------------------------------------------------- */

/*
 * Whether @n more bytes fit both the session's own cap (its max_bytes)
 * and the budget every session shares (the max_bytes parameter).
 */
bool kcc_mem_room(const struct kcc_session *s, size_t n)
{
	return s->bytes + n <= s->cfg.max_bytes &&
	       kcc_g.bytes + n <= READ_ONCE(kcc_param_max_bytes);
}

/* Charge @n bytes (negative: give back) to @s and the shared budget. */
void kcc_mem_add(struct kcc_session *s, ssize_t n)
{
	s->bytes += n;
	kcc_g.bytes += n;
}

/*
 * Room for @add more bytes (negative: fewer) in the session's max_bytes
 * and in the budget all sessions share (kcc_mem_room()); without
 * @reserve, in seven eighths of each (the last eighth is for the
 * summaries of the forests that cannot grow, kcc_task.c).
 */
bool kcc_budget_ok(const struct kcc_session *s, s64 add, bool reserve)
{
	s64 limit = s->cfg.max_bytes, all = READ_ONCE(kcc_param_max_bytes);

	if (!reserve) {
		limit -= limit / 8;
		all -= all / 8;
	}
	return (s64)s->bytes + add <= limit && (s64)kcc_g.bytes + add <= all;
}

/* ---- captures waiting for the worker ------------------------------------ */

/*
 * The mapping hook's captures (kcc_maps.c) are made in the mapping
 * task, without kcc_g.lock, before any session can be charged: they
 * are charged here until the worker folds them into the sessions,
 * which then charge what they keep.  At most KCC_PENDING_MAX bytes and
 * an eighth of max_bytes wait at once.
 */
#define KCC_PENDING_MAX		(4ul << 20)

static atomic_long_t kcc_pending_bytes = ATOMIC_LONG_INIT(0);

/* Charge @n bytes of captures; false (nothing charged) beyond the cap. */
bool kcc_pending_charge(size_t n)
{
	unsigned long cap = min(KCC_PENDING_MAX,
				READ_ONCE(kcc_param_max_bytes) / 8);

	if ((unsigned long)atomic_long_add_return(n, &kcc_pending_bytes) > cap) {
		atomic_long_sub(n, &kcc_pending_bytes);
		return false;
	}
	return true;
}

void kcc_pending_uncharge(size_t n)
{
	atomic_long_sub(n, &kcc_pending_bytes);
}

/* ---- counts kept by the handlers ---------------------------------------- */

/*
 * The handler counters of session @s summed over every CPU.  Each field
 * is a u64 the handlers only add to, so the sum is one of u64 words.
 */
void kcc_hcount_sum(const struct kcc_session *s, struct kcc_hcount *sum)
{
	const size_t nw = sizeof(*sum) / sizeof(u64);
	u64 *out = (u64 *)sum;
	size_t i;
	int cpu;

	BUILD_BUG_ON(sizeof(*sum) % sizeof(u64));
	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const u64 *h = (const u64 *)per_cpu_ptr(s->hc, cpu);

		for (i = 0; i < nw; i++)
			out[i] += READ_ONCE(h[i]);
	}
}

/* Handler-side drops of session @s on every CPU, by reason. */
void kcc_handler_drops(const struct kcc_session *s, u64 *out)
{
	struct kcc_hcount sum;

	kcc_hcount_sum(s, &sum);
	memcpy(out, sum.drops, sizeof(sum.drops));
}

/* Overflows of @s's events that throttled them, every CPU. */
u64 kcc_handler_throttles(const struct kcc_session *s)
{
	struct kcc_hcount sum;

	kcc_hcount_sum(s, &sum);
	return sum.throttles;
}
