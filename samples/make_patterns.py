#!/usr/bin/env python3
"""Regenerate the synthetic test patterns in samples/patterns/.

Python standard library only: the PNG files are written by hand with zlib
and struct, so anyone can rebuild them without an imaging package.

    python3 samples/make_patterns.py            # writes samples/patterns/*.png
    python3 samples/make_patterns.py -o DIR     # writes them elsewhere

Every pattern is a pure function of its pixel coordinates (no randomness),
so the pixels are the same on every run. The file bytes can differ between
zlib versions; the pixels cannot.
"""

import argparse
import colorsys
import math
import os
import struct
import zlib

# --------------------------------------------------------------------------
# PNG writer
# --------------------------------------------------------------------------

COLOUR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type


def png_chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def filter_row(ftype, row, prev, bpp):
    """Apply one PNG filter (0..4) to a row of bytes; prev is the row above."""
    if ftype == 0:
        return row
    left = bytes(bpp) + row[:-bpp]
    if ftype == 1:
        return bytes((x - a) & 0xFF for x, a in zip(row, left))
    if ftype == 2:
        return bytes((x - b) & 0xFF for x, b in zip(row, prev))
    if ftype == 3:
        return bytes((x - ((a + b) >> 1)) & 0xFF for x, a, b in zip(row, left, prev))
    upleft = bytes(bpp) + prev[:-bpp]
    out = bytearray(len(row))
    for i, (x, a, b, c) in enumerate(zip(row, left, prev, upleft)):
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        out[i] = (x - pred) & 0xFF
    return bytes(out)


def row_cost(filtered):
    # The usual libpng heuristic: the filter whose output is closest to zero
    # (as signed bytes) tends to deflate best.
    return sum(v if v < 128 else 256 - v for v in filtered)


def png_bytes(width, height, channels, depth, rows):
    """Encode rows (a list of bytes objects, big-endian samples) as PNG."""
    bpp = max(1, channels * depth // 8)
    stride = width * bpp
    raw = bytearray()
    prev = bytes(stride)
    for row in rows:
        if len(row) != stride:
            raise ValueError("row is %d bytes, expected %d" % (len(row), stride))
        candidates = [filter_row(f, row, prev, bpp) for f in range(5)]
        ftype = min(range(5), key=lambda f: row_cost(candidates[f]))
        raw.append(ftype)
        raw += candidates[ftype]
        prev = row
    ihdr = struct.pack(">IIBBBBB", width, height, depth, COLOUR_TYPE[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr)
            + png_chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + png_chunk(b"IEND", b""))


def write_png(path, width, height, channels, depth, rows):
    data = png_bytes(width, height, channels, depth, rows)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return len(data)


def clamp8(v):
    return 0 if v < 0 else 255 if v > 255 else int(round(v))


# --------------------------------------------------------------------------
# Patterns
# --------------------------------------------------------------------------

def colour_chart():
    """1024x576 RGB: saturated bars, a hue sweep, grey and R/G/B ramps.

    For colour-matrix ops (grey, sepia, brightness/contrast/saturation):
    the bars show clamping of saturated primaries, the ramps show
    contrast curves and rounding."""
    w, h = 1024, 576
    bars = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
            (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]
    bar_row = b"".join(bytes(bars[x * len(bars) // w]) for x in range(w))
    hue_row = b"".join(
        bytes(clamp8(c * 255) for c in colorsys.hsv_to_rgb(x / w, 1.0, 1.0))
        for x in range(w))
    ramp = [clamp8(x * 255 / (w - 1)) for x in range(w)]
    grey_row = b"".join(bytes((v, v, v)) for v in ramp)
    red_row = b"".join(bytes((v, 0, 0)) for v in ramp)
    green_row = b"".join(bytes((0, v, 0)) for v in ramp)
    blue_row = b"".join(bytes((0, 0, v)) for v in ramp)
    bands = [(256, bar_row), (64, hue_row), (64, grey_row),
             (64, red_row), (64, green_row), (64, blue_row)]
    rows = [row for height, row in bands for _ in range(height)]
    assert len(rows) == h
    return w, h, 3, 8, rows


def zone_plate():
    """512x512 grey circular zone plate: cos(pi r^2 / 512).

    The local frequency is r/512 cycles per pixel, so it reaches Nyquist
    (0.5) at the middle of each edge. Any downscale without a low-pass
    filter shows Moire rings; a good resampler shows flat grey there."""
    n = 512
    c = (n - 1) / 2
    rows = []
    for y in range(n):
        dy2 = (y - c) ** 2
        rows.append(bytes(
            clamp8(127.5 + 127.5 * math.cos(math.pi * ((x - c) ** 2 + dy2) / n))
            for x in range(n)))
    return n, n, 1, 8, rows


def checker():
    """512x512 grey: four quadrants of checkerboards, 1, 2, 4 and 8 px.

    The 1-px quadrant becomes flat grey under a 2x box or bilinear reduce
    and aliases under nearest; the larger cells show edge ringing from
    sharpen and the phase of odd scale factors."""
    n = 512
    half = n // 2
    rows = []
    for y in range(n):
        row = bytearray(n)
        for x in range(n):
            cell = (1, 2)[x >= half] * (1, 4)[y >= half]  # 1, 2, 4, 8
            row[x] = 255 if ((x // cell) + (y // cell)) % 2 == 0 else 0
        rows.append(bytes(row))
    return n, n, 1, 8, rows


# A blocky "F": no rotation or mirror maps it onto itself, so each of the
# eight orientations (transpose, rot90/180/270, flip=h|v) looks different.
F_GLYPH = ["#####",
           "#....",
           "####.",
           "#....",
           "#...."]


def fine_lines():
    """640x480 RGB for transposes and flips.

    - a one-pixel frame: top row red, right column green, bottom row blue,
      left column magenta, so every edge can be identified exactly;
    - 24x24 corner patches: red top-left, green top-right, blue
      bottom-left, yellow bottom-right;
    - top half: 1-px horizontal lines at gaps 1, 2, 3, ... on the left,
      1-px vertical lines at the same gaps on the right (a transpose swaps
      them; an off-by-one shows as a broken comb);
    - a 1-px diagonal from (32, 256) going down-right;
    - a large asymmetric "F" in the lower right quarter."""
    w, h = 640, 480
    px = [[(255, 255, 255)] * w for _ in range(h)]

    def fill(x0, y0, x1, y1, colour):
        for y in range(max(0, y0), min(h, y1)):
            for x in range(max(0, x0), min(w, x1)):
                px[y][x] = colour

    # Combs of 1-px lines whose spacing grows by one each time.
    pos, gap = 8, 1
    while pos < 224:
        fill(16, pos, 304, pos + 1, (0, 0, 0))          # horizontal lines
        fill(336 + pos - 8, 8, 336 + pos - 7, 224, (0, 0, 0))  # vertical lines
        pos += gap + 1
        gap += 1

    for i in range(200):                                 # diagonal
        fill(32 + i, 256 + i, 33 + i, 257 + i, (0, 0, 160))

    cell = 24
    ox, oy = 400, 280
    for gy, line in enumerate(F_GLYPH):
        for gx, ch in enumerate(line):
            if ch == "#":
                fill(ox + gx * cell, oy + gy * cell,
                     ox + (gx + 1) * cell, oy + (gy + 1) * cell, (0, 0, 0))

    fill(1, 1, 25, 25, (255, 0, 0))
    fill(w - 25, 1, w - 1, 25, (0, 192, 0))
    fill(1, h - 25, 25, h - 1, (0, 0, 255))
    fill(w - 25, h - 25, w - 1, h - 1, (255, 255, 0))

    fill(0, 0, w, 1, (255, 0, 0))          # top
    fill(w - 1, 0, w, h, (0, 192, 0))      # right
    fill(0, h - 1, w, h, (0, 0, 255))      # bottom
    fill(0, 0, 1, h, (255, 0, 255))        # left (wins the two left corners)

    rows = [b"".join(bytes(p) for p in line) for line in px]
    return w, h, 3, 8, rows


def odd_size():
    """1001x667 RGB (7*11*13 by 23*29): no power-of-two factor anywhere.

    A smooth colour field (red grows left to right, green top to bottom,
    blue along the anti-diagonal) under a white 1-px grid every 50 px and
    a black 1-px frame, so partial tiles at the right and bottom edges,
    and any seam between tiles, are easy to see."""
    w, h = 1001, 667
    rows = []
    for y in range(h):
        row = bytearray(w * 3)
        for x in range(w):
            if x in (0, w - 1) or y in (0, h - 1):
                r = g = b = 0
            elif x % 50 == 0 or y % 50 == 0:
                r = g = b = 255
            else:
                r = clamp8(x * 255 / (w - 1))
                g = clamp8(y * 255 / (h - 1))
                b = clamp8((w - 1 - x + y) * 255 / (w - 1 + h - 1))
            row[3 * x:3 * x + 3] = bytes((r, g, b))
        rows.append(bytes(row))
    return w, h, 3, 8, rows


def ramp16():
    """1024x128 grey, 16 bits per sample.

    Top half: 0..65535 left to right (steps of about 64).
    Bottom half: 32768..33023, one step per 4 columns: all of that ramp
    lives in the low byte, so an 8-bit path turns it into one flat band
    (128, whether it truncates or rounds) while a 16-bit path keeps 256
    distinct levels."""
    w, h = 1024, 128
    full = [int(round(x * 65535 / (w - 1))) for x in range(w)]
    narrow = [32768 + x // 4 for x in range(w)]
    top = b"".join(struct.pack(">H", v) for v in full)
    bottom = b"".join(struct.pack(">H", v) for v in narrow)
    rows = [top] * (h // 2) + [bottom] * (h // 2)
    return w, h, 1, 16, rows


PATTERNS = [
    ("colour-chart-1024x576.png", colour_chart),
    ("zoneplate-512.png", zone_plate),
    ("checker-512.png", checker),
    ("finelines-640x480.png", fine_lines),
    ("odd-1001x667.png", odd_size),
    ("ramp16-1024x128.png", ramp16),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--outdir", default=os.path.join(here, "patterns"),
                    help="output folder (default: samples/patterns next to this script)")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for name, make in PATTERNS:
        w, h, channels, depth, rows = make()
        size = write_png(os.path.join(args.outdir, name), w, h, channels, depth, rows)
        print("%-28s %4dx%-4d %dch %2d-bit %8d bytes" % (name, w, h, channels, depth, size))


if __name__ == "__main__":
    main()
