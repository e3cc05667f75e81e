/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wrapper/fs.h - open a file by its path below a mount's root, across
 * kernels.  5.12 changed file_open_root() to take a struct path and
 * added file_open_root_mnt(); before that it took the dentry and the
 * mount apart.  Kbuild tests for file_open_root_mnt in <linux/fs.h>:
 * KCC_HAVE_FILE_OPEN_ROOT_MNT.
 */
#ifndef KCC_WRAPPER_FS_H
#define KCC_WRAPPER_FS_H

#include <linux/fs.h>
#include <linux/mount.h>

static inline struct file *kcc_file_open_root_mnt(struct vfsmount *mnt,
						  const char *name, int flags)
{
#ifdef KCC_HAVE_FILE_OPEN_ROOT_MNT
	return file_open_root_mnt(mnt, name, flags, 0);
#else
	return file_open_root(mnt->mnt_root, mnt, name, flags, 0);
#endif
}

#endif /* KCC_WRAPPER_FS_H */
