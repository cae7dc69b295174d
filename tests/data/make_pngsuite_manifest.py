#!/usr/bin/env python3
"""Write tests/data/pngsuite.manifest: the expected pixels of every valid
PngSuite file, for tests/test_pngsuite.c.

The pixels come from a small PNG decoder written here from the PNG
specification (zlib + unfiltering + Adam7 + palette/tRNS expansion), so the
expectations do not come from libpng, which tilestream itself uses. Where
Pillow is installed its decoder is compared too, on everything it can
represent exactly; the script stops on any disagreement.

Expansion rules (the same as ts_image_load):
  - grey of 1, 2 or 4 bits scales to 8 bits by bit replication (v * 255 / max);
  - palettes expand to RGB, or RGBA when there is a tRNS chunk;
  - grey or RGB with a tRNS chunk gains an alpha channel (0 where the pixel
    equals the tRNS colour, max elsewhere);
  - 16-bit samples stay 16-bit; gamma, sBIT and bKGD are not applied.

Manifest line:  name w h c depth fnv64 x,y=v/v/.. (five sample pixels)
  fnv64 is the 64-bit FNV-1a hash of the pixels: rows top to bottom, pixels
  left to right, channels in order (grey[,alpha] or R,G,B[,A]), each sample
  one byte (depth 8) or two bytes big-endian (depth 16), no row padding.

Usage: make_pngsuite_manifest.py tests/data/pngsuite > tests/data/pngsuite.manifest
"""
import os
import struct
import sys
import zlib

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("bad signature")
    pos = 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if zlib.crc32(kind + body) != crc:
            raise ValueError("CRC error in " + kind.decode("latin1"))
        yield kind, body
        pos += 12 + n


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, pos, rows, rowbytes, bpp):
    out, prev = [], bytearray(rowbytes)
    for _ in range(rows):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + rowbytes])
        pos += 1 + rowbytes
        for i in range(rowbytes):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][ftype]
            line[i] = (line[i] + pred) & 255
        out.append(line)
        prev = line
    return out, pos


def samples(line, width, channels, depth):
    """Unpack one row into a flat list of integer samples."""
    n = width * channels
    if depth == 8:
        return list(line[:n])
    if depth == 16:
        return [line[2 * i] << 8 | line[2 * i + 1] for i in range(n)]
    per = 8 // depth
    mask = (1 << depth) - 1
    return [(line[i // per] >> (8 - depth * (i % per + 1))) & mask for i in range(n)]


def decode(data):
    hdr, idat, plte, trns = None, b"", None, None
    for kind, body in chunks(data):
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = body
        elif kind == b"tRNS":
            trns = body
        elif kind == b"IDAT":
            idat += body
    w, h, depth, ctype, _, _, interlace = hdr
    nch = CHANNELS[ctype]
    bpp = max(1, nch * depth // 8)
    raw = zlib.decompress(idat)
    grid = [[None] * w for _ in range(h)]
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    pos = 0
    for x0, y0, dx, dy in passes:
        pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
        if pw <= 0 or ph <= 0:
            continue
        rows, pos = unfilter(raw, pos, ph, (pw * nch * depth + 7) // 8, bpp)
        for j, line in enumerate(rows):
            s = samples(line, pw, nch, depth)
            for i in range(pw):
                grid[y0 + j * dy][x0 + i * dx] = s[i * nch:(i + 1) * nch]
    return expand(w, h, depth, ctype, grid, plte, trns)


def expand(w, h, depth, ctype, grid, plte, trns):
    if ctype == 3:
        alpha = list(trns) if trns else None
        px = []
        for row in grid:
            for (idx,) in row:
                rgb = list(plte[3 * idx:3 * idx + 3])
                if alpha is not None:
                    rgb.append(alpha[idx] if idx < len(alpha) else 255)
                px.append(rgb)
        return w, h, 4 if trns else 3, 8, px
    out_depth = 16 if depth == 16 else 8
    scale = 255 // ((1 << depth) - 1) if depth < 8 else 1
    key = None
    if trns and ctype in (0, 2):
        key = list(struct.unpack(">%dH" % (len(trns) // 2), trns))
    maxv = (1 << out_depth) - 1
    px = []
    for row in grid:
        for s in row:
            v = list(s)
            if key is not None:
                v.append(0 if v == key else maxv)
            if scale != 1:
                v = [x * scale for x in v[:1]] + v[1:]
            px.append(v)
    c = CHANNELS[ctype] + (1 if key is not None else 0)
    return w, h, c, out_depth, px


def fnv1a64(px, depth):
    hval = 0xcbf29ce484222325
    for p in px:
        for v in p:
            for byte in ((v >> 8, v & 255) if depth == 16 else (v,)):
                hval = ((hval ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return hval


def check_with_pillow(path, w, h, c, depth, px):
    """Compare with Pillow where it represents the pixels exactly. Pillow
    keeps the top 8 bits of 16-bit colour images, and keeps grey/RGB tRNS
    as a key colour instead of an alpha channel: both are allowed for."""
    try:
        from PIL import Image
    except ImportError:
        return "not installed"
    im = Image.open(path)
    key = im.info.get("transparency") if im.mode != "P" else None
    if im.mode == "P":
        im = im.convert("RGBA" if c == 4 else "RGB")
    if im.mode == "1":
        im = im.convert("L")
    shift = 8 if depth == 16 and im.mode not in ("I;16", "I;16B", "I") else 0
    theirs = list(im.getdata())
    for i, p in enumerate(px):
        t = list(theirs[i]) if isinstance(theirs[i], tuple) else [theirs[i]]
        if c == 2 and len(t) == 4:  # Pillow reads 16-bit grey+alpha as RGBA
            t = [t[0], t[3]]
        mine = [v >> shift for v in p]
        if key is not None:
            keyv = list(key) if isinstance(key, tuple) else [key]
            stored_depth = open(path, "rb").read()[24]
            if stored_depth < 8:  # Pillow scales grey pixels, not the key
                keyv = [keyv[0] * (255 // ((1 << stored_depth) - 1))]
            maxv = (1 << depth) - 1
            t.append(0 if t == keyv else maxv)
            mine[-1] = p[-1]
            if shift:  # the key is in 16-bit units; Pillow's pixels are not
                t[-1] = p[-1]
        if t != mine:
            raise SystemExit("%s: Pillow disagrees at pixel %d: %s vs %s"
                             % (path, i, t, mine))
    return "agrees" + (" on the top 8 bits" if shift else "")


def main():
    folder = sys.argv[1]
    names = sorted(n for n in os.listdir(folder)
                   if n.endswith(".png") and not n.startswith("x"))
    print("# expected pixels of PngSuite, written by make_pngsuite_manifest.py")
    print("# name w h c depth fnv1a64 x,y=samples...")
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            w, h, c, depth, px = decode(f.read())
        pillow = check_with_pillow(path, w, h, c, depth, px)
        print("%s: Pillow %s" % (name, pillow), file=sys.stderr)
        spots = [(0, 0), (w - 1, 0), (w // 2, h // 2), (0, h - 1), (w - 1, h - 1)]
        text = " ".join("%d,%d=%s" % (x, y, "/".join(str(v) for v in px[y * w + x]))
                        for x, y in spots)
        print("%s %d %d %d %d %016x %s" % (name, w, h, c, depth, fnv1a64(px, depth), text))


if __name__ == "__main__":
    main()
