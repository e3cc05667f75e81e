#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# abi13.py IN OUT - the bare stream IN (kcc record --stream, /dev/kcc of
# ABI 1.4) as kcc.ko of ABI 1.3 wrote it: three counters a node (calls,
# events, samples), without calls_var's descriptor and counters
# (include/uapi/linux/kcc.h; Documentation/kcc-abi.rst).  The tests of
# readers that meet old profiles use it.
import struct
import sys

DESC = 40		# struct kcc_metric_desc
TASK = 88		# struct kcc_rec_task
NODE = 16		# struct kcc_rec_node, before its counters

b = open(sys.argv[1], 'rb').read()
hsize, = struct.unpack_from('<I', b, 8)
nctrs, = struct.unpack_from('<I', b, 24)
if nctrs != 4:
    sys.exit('abi13.py: %s has %d counters, not 4' % (sys.argv[1], nctrs))
hdr = bytearray(b[:hsize - DESC])
struct.pack_into('<I', hdr, 8, hsize - DESC)
struct.pack_into('<I', hdr, 24, 3)
out = [bytes(hdr)]
off = hsize
while off < len(b):
    kind, size = struct.unpack_from('<II', b, off)
    rec = b[off:off + size]
    if kind == 1:		# KCC_REC_TASK: nodes lose their fourth counter
        nodes, = struct.unpack_from('<I', rec, 44)
        head = bytearray(rec[:TASK])
        p, kept = TASK, []
        for _ in range(nodes):
            kept.append(rec[p:p + NODE + 24])
            p += NODE + 32
        struct.pack_into('<I', head, 4, TASK + (NODE + 24) * nodes + len(rec) - p)
        rec = bytes(head) + b''.join(kept) + rec[p:]
    out.append(rec)
    off += size
open(sys.argv[2], 'wb').write(b''.join(out))
