/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_param.h - the module parameters more than one room of kcc.ko
 * reads (kcc_param.c), the lowest room: it depends on no other.
 */
#ifndef KCC_PARAM_H
#define KCC_PARAM_H

#include <linux/types.h>

extern bool kcc_param_inject;
extern unsigned int kcc_param_k;
extern unsigned long kcc_param_period;
extern unsigned long kcc_param_period_min;
extern unsigned long kcc_param_max_bytes;
extern unsigned int kcc_param_max_tasks;
extern unsigned int kcc_param_task_nodes;
extern unsigned int kcc_param_stack_depth;
extern unsigned int kcc_param_ring_kb;
extern unsigned int kcc_param_burst_table;
extern unsigned int kcc_param_burst_sig_depth;
extern bool kcc_param_lbr_info;
extern unsigned int kcc_param_task_budget_us;
extern unsigned int kcc_param_max_sessions;
extern bool kcc_param_tracepoints;
extern bool kcc_param_fixed_seed;
extern unsigned int kcc_param_flush_ms;
extern bool kcc_param_batch;

#endif /* KCC_PARAM_H */
