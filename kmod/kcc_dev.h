/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_dev.h - /dev/kcc (kcc_dev.c).
 */
#ifndef KCC_DEV_H
#define KCC_DEV_H

#include <linux/types.h>

int kcc_dev_init(void);
void kcc_dev_exit(void);

#endif /* KCC_DEV_H */
