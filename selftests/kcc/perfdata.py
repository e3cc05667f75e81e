#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# perfdata.py - write the perf.data file perf record would have written
# for the samples of a kcc sample file (kcc synth -o), for the tests of
# kcc import (selftests/kcc/import.sh):
#
#	perfdata.py [--two | --group] [--no-type] [--pipe]
#		    [--map=START:END] [--garbage] SAMPLES OUT [SMP_OUT]
#
# One event (type 4, config 0x1c4, named "cpu/calls/"): each sample its
# user callchain (PERF_CONTEXT_USER, the stack), period (the delta) and
# branch stack with save_type.  --two: a second event "cpu/misses/"
# (config 0x2c4): every sample becomes a sample of the calls event (the
# stack and the records, period 1) followed by one of the misses event
# (the stack only, period = the delta).  --group: perf record -e
# '{cpu/misses/,cpu/calls/}:S' instead: the misses event (config 0x2c4)
# samples (stack, records, period = the delta) and reads its group
# (PERF_SAMPLE_READ, PERF_FORMAT_GROUP | PERF_FORMAT_ID), where the
# counting calls event (config 0x1c4, no period) has counted 1 + (37 i
# mod 60) more calls at the i-th sample; SMP_OUT then has those counts
# (KCC_SAMPLE_CALLS); with --no-read the misses event reads nothing
# (perf record -e misses -e calls/period=0/).  --no-type: no save_type.
# --pipe: the pipe magic instead of PERFILE2.  --map: an executable
# mapping of /synth at START..END (hex) in the process.  --garbage: every
# callchain goes on past its end with 0x7ff0000000001234, as perf's walk
# does through a frame a frameless routine left.  Samples with an empty
# stack (kcc synth's last one; perf never has them) are left out, and
# SMP_OUT gets the sample file without them.  Built from the format
# the kernel's tools/perf/Documentation/perf.data-file-format.txt gives.
import struct
import sys

PERF_CONTEXT_USER = (1 << 64) - 512
ST_TID, ST_PERIOD, ST_CALLCHAIN = 1 << 1, 1 << 8, 1 << 5
ST_BRANCH, ST_IDENT, ST_READ = 1 << 11, 1 << 16, 1 << 4
FMT_ID, FMT_GROUP = 1 << 2, 1 << 3
KCC_SAMPLE_CALLS = 1 << 1
BR_ANY_CALL, BR_ANY_RET, BR_USER, BR_SAVE = 1 << 4, 1 << 5, 1 << 0, 1 << 16
PERF_BR = {1: 4, 2: 6}          # KCC_BR_CALL -> CALL, KCC_BR_RET -> RET
ATTR_SIZE = 112                 # PERF_ATTR_SIZE_VER5
PID = 4242


def group_calls(i):
    return 1 + (37 * i) % 60


def read_samples(path, counted=False):
    b = open(path, "rb").read()
    hlen = struct.unpack_from("<I", b, 12)[0]
    off, out, raw = hlen, [], [b[:hlen]]
    while off < len(b):
        size, flags, ns, nb, _, delta = struct.unpack_from("<IIHHIQ", b, off)
        p = off + 24
        stack = list(struct.unpack_from("<%dQ" % ns, b, p))
        p += 8 * ns
        br = []
        for _ in range(nb):
            fr, to, kind, _ = struct.unpack_from("<QQII", b, p)
            br.append((fr, to, kind))
            p += 24
        if stack:
            rec = b[off:off + size]
            if counted:
                rec = rec[:4] + struct.pack("<I", flags | KCC_SAMPLE_CALLS) + \
                    rec[8:12] + struct.pack("<I", group_calls(len(out))) + \
                    rec[16:]
            out.append((flags, stack, br, delta))
            raw.append(rec)
        off += size
    return out, b"".join(raw)


def attr(config, save_type, period=1009, read=False):
    bst = BR_ANY_CALL | BR_ANY_RET | BR_USER | (BR_SAVE if save_type else 0)
    st = ST_IDENT | ST_TID | ST_PERIOD | ST_CALLCHAIN | ST_BRANCH
    a = struct.pack("<IIQQQQQIIQQQ", 4, ATTR_SIZE, config, period,
                    st | (ST_READ if read else 0),
                    FMT_GROUP | FMT_ID if read else 0, 0, 0, 0, 0, 0, bst)
    return a.ljust(ATTR_SIZE, b"\0")


GARBAGE = 0x7ff0000000001234


def sample(ev_id, stack, br, period, garbage=False, group=None):
    chain = [PERF_CONTEXT_USER] + stack + ([GARBAGE] if garbage else [])
    body = struct.pack("<QIIQ", ev_id, PID, PID, period)
    if group is not None:
        # { nr, { value, id } x nr }: the leader's count, the calls'.
        body += struct.pack("<QQQQQ", 2, group[0], 100, group[1], 101)
    body += struct.pack("<Q", len(chain))
    body += struct.pack("<%dQ" % len(chain), *chain)
    body += struct.pack("<Q", len(br))
    for fr, to, kind in br:
        body += struct.pack("<QQQ", fr, to, PERF_BR.get(kind, 0) << 20)
    return struct.pack("<IHH", 9, 2, 8 + len(body)) + body


def comm(name):
    body = struct.pack("<II", PID, PID) + name.encode().ljust(16, b"\0")
    return struct.pack("<IHH", 3, 0, 8 + len(body)) + body


def mmap2(start, end):
    body = struct.pack("<IIQQQIIQQII", PID, PID, start, end - start, 0,
                       8, 1, 77, 0, 5, 2) + b"/synth\0\0"
    return struct.pack("<IHH", 10, 0, 8 + len(body)) + body


def string(s):
    raw = s.encode() + b"\0"
    raw = raw.ljust((len(raw) + 63) // 64 * 64, b"\0")
    return struct.pack("<I", len(raw)) + raw


def main():
    args = sys.argv[1:]
    two, save_type, pipe = "--two" in args, "--no-type" not in args, \
        "--pipe" in args
    group = "--group" in args
    read = "--no-read" not in args
    garbage = "--garbage" in args
    maps = [a[6:].split(":") for a in args if a.startswith("--map=")]
    args = [a for a in args if not a.startswith("--")]
    smp, out = args[:2]
    names = [("cpu/calls/", 0x1c4)] + ([("cpu/misses/", 0x2c4)] if two else [])
    attrs = [attr(c, save_type) for n, c in names]
    if group:
        names = [("cpu/misses/", 0x2c4), ("cpu/calls/", 0x1c4)]
        attrs = [attr(0x2c4, save_type, read=read),
                 attr(0x1c4, save_type, period=0, read=read)]

    data = comm("synth")
    for lo, hi in maps:
        data += mmap2(int(lo, 16), int(hi, 16))
    samples, raw = read_samples(smp, group)
    events = calls = 0
    if len(args) > 2:
        open(args[2], "wb").write(raw)
    for i, (flags, stack, br, delta) in enumerate(samples):
        if group:
            events += delta
            calls += group_calls(i)
            data += sample(100, stack, br, delta,
                           group=(events, calls) if read else None)
        elif two:
            data += sample(100, stack, br, 1)
            data += sample(101, stack, [], delta)
        else:
            data += sample(100, stack, br, delta, garbage)

    nev = len(names)
    hdr_size = 104
    attrs_off = hdr_size
    fattr = ATTR_SIZE + 16
    ids_off = attrs_off + nev * fattr
    data_off = ids_off + 8 * nev
    feat_off = data_off + len(data)
    desc = struct.pack("<II", nev, ATTR_SIZE)
    for i, (n, c) in enumerate(names):
        desc += attrs[i] + struct.pack("<I", 1) + string(n) + \
            struct.pack("<Q", 100 + i)
    desc_off = feat_off + 16
    f = b"PERFILE2" if not pipe else b"PERFILE2"[::-1]
    f += struct.pack("<QQ", hdr_size, fattr)
    f += struct.pack("<QQQQQQ", attrs_off, nev * fattr, data_off, len(data),
                     0, 0)
    f += struct.pack("<4Q", 1 << 12, 0, 0, 0)
    for i, (n, c) in enumerate(names):
        f += attrs[i] + struct.pack("<QQ", ids_off + 8 * i, 8)
    f += struct.pack("<%dQ" % nev, *[100 + i for i in range(nev)])
    f += data
    f += struct.pack("<QQ", desc_off, len(desc)) + desc
    open(out, "wb").write(f)


main()
