#!/usr/bin/env python3
"""Counts the pixels of a PNG near given colours (a screenshot's check: are the charts drawn?).
Usage: pixels.py FILE [--box=X0,Y0,X1,Y1] RRGGBB [RRGGBB ...] -> one line per colour: `RRGGBB N`
(N pixels within 24 of it on every channel; only those with X0 <= x < X1 and Y0 <= y < Y1 with
--box). Reads 8-bit RGB/RGBA non-interlaced PNGs (what Chromium writes) with zlib
alone."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows, bpp


def main():
    rows, bpp = pixels(sys.argv[1])
    colours = sys.argv[2:]
    x0, y0, x1, y1 = 0, 0, 1 << 30, 1 << 30
    if colours and colours[0].startswith("--box="):
        x0, y0, x1, y1 = (int(v) for v in colours[0][len("--box="):].split(","))
        colours = colours[1:]
    want = [tuple(int(c[k:k + 2], 16) for k in (0, 2, 4)) for c in colours]
    counts = [0] * len(want)
    for y, line in enumerate(rows):
        if not y0 <= y < y1:
            continue
        for x in range(max(0, x0) * bpp, min(len(line), x1 * bpp), bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            for k, (wr, wg, wb) in enumerate(want):
                if abs(r - wr) <= 24 and abs(g - wg) <= 24 and abs(b - wb) <= 24:
                    counts[k] += 1
    for c, n in zip(colours, counts):
        print(c, n)


if __name__ == "__main__":
    main()
