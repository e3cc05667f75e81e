# SPDX-License-Identifier: GPL-2.0
#
# png.py - the pixels of a PNG screenshot (8-bit RGB or RGBA, not
# interlaced: what headless chromium writes), for the selftests that
# check what a browser drew.  No imaging library needed.
import struct
import zlib


def read_png(path):
    """(width, height, bytes per pixel, rows of bytearray)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, t = struct.unpack(">I4s", data[pos:pos + 8])
        c = data[pos + 8:pos + 8 + n]
        if t == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", c)
        elif t == b"IDAT":
            idat += c
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6) and not inter
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for y in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, cc = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - cc
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else
                                      b if pb <= pc else cc)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows
