/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_budget.h - the budget (kcc_budget.c): memory charged to a session
 * and to the budget all sessions share, and the handlers' counts of
 * each session summed over the CPUs.
 */
#ifndef KCC_BUDGET_H
#define KCC_BUDGET_H

#include <linux/types.h>

struct kcc_session;
struct kcc_hcount;

bool kcc_mem_room(const struct kcc_session *s, size_t n);
void kcc_mem_add(struct kcc_session *s, ssize_t n);
bool kcc_budget_ok(const struct kcc_session *s, s64 add, bool reserve);
bool kcc_pending_charge(size_t n);
void kcc_pending_uncharge(size_t n);
void kcc_hcount_sum(const struct kcc_session *s, struct kcc_hcount *sum);
void kcc_handler_drops(const struct kcc_session *s, u64 *out);
u64 kcc_handler_throttles(const struct kcc_session *s);

#endif /* KCC_BUDGET_H */
