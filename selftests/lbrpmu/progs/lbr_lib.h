/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_LIB_H
#define LBR_LIB_H

unsigned long lib_hash(const unsigned char *p, unsigned long n);
unsigned long lib_fold(unsigned long x, int depth);

#endif
