#!/usr/bin/env python3
"""Write two small, valid ICC v2 display profiles made here from the
specification (so the test data carries no third-party profile):

  test-rgb.icc   matrix/TRC RGB profile (sRGB primaries, gamma 2.2)
  test-grey.icc  grey TRC profile (gamma 2.2)
  test-hp-srgb-lookalike.icc
                 test-rgb.icc grown to 3144 bytes with unreferenced trailing
                 bytes chosen so that its length, rendering intent (0), empty
                 profile ID, Adler-32 and CRC-32 equal those of the 1998
                 HP-Microsoft sRGB v2 profile, which libpng's png.c lists
                 (png_sRGB_checks) as a "known incorrect sRGB profile" and
                 refuses to write unless told to skip that check. It carries
                 none of HP's data: only the checksums coincide.

Usage: make_icc.py OUTDIR
"""
import struct
import sys


def s15(v):
    return struct.pack(">i", int(round(v * 65536)))


def xyz(x, y, z):
    return b"XYZ \0\0\0\0" + s15(x) + s15(y) + s15(z)


def desc(text):
    a = text.encode("ascii") + b"\0"
    return (b"desc\0\0\0\0" + struct.pack(">I", len(a)) + a
            + struct.pack(">II", 0, 0) + struct.pack(">HB", 0, 0) + b"\0" * 67)


def text(t):
    return b"text\0\0\0\0" + t.encode("ascii") + b"\0"


def curve(gamma):
    return b"curv\0\0\0\0" + struct.pack(">IH", 1, int(round(gamma * 256))) + b"\0\0"


def profile(space, tags):
    count = len(tags)
    offset = 128 + 4 + 12 * count
    table, body, seen = b"", b"", {}
    for sig, data in tags:
        if id(data) in seen:  # tags may share one element (the TRCs)
            off, size = seen[id(data)]
        else:
            while (offset + len(body)) % 4:
                body += b"\0"
            off, size = offset + len(body), len(data)
            body += data
            seen[id(data)] = (off, size)
        table += sig + struct.pack(">II", off, size)
    while len(body) % 4:
        body += b"\0"
    size = offset + len(body)
    header = (struct.pack(">I", size) + b"\0\0\0\0" + struct.pack(">I", 0x02100000)
              + b"mntr" + space + b"XYZ " + struct.pack(">6H", 2026, 1, 1, 0, 0, 0)
              + b"acsp" + b"\0" * 24 + struct.pack(">I", 0)
              + s15(0.9642) + s15(1.0) + s15(0.8249) + b"\0" * 4 + b"\0" * 16)
    header += b"\0" * (128 - len(header))
    return header + struct.pack(">I", count) + table + body


ADLER_MOD = 65521


def adler32(data):
    a, b = 1, 0
    for v in data:
        a = (a + v) % ADLER_MOD
        b = (b + a) % ADLER_MOD
    return b << 16 | a


def lookalike(base, length, adler, crc):
    """base padded to length; the padding is set to reach adler, then crc.

    Adler-32 is A = 1 + sum(b) and B = n + sum((n - i) b_i), both mod 65521.
    A byte run moves A; pairs (128 + y, 128 - y) move B by y without moving
    A. CRC-32 is affine over GF(2): triples (128 + d, 128 - 2d, 128 + d),
    d in {0, 1}, leave both Adler sums unchanged and flip a fixed pattern of
    CRC bits each, so a set of them solved over GF(2) reaches the CRC.
    """
    import zlib
    n = length
    data = bytearray(base) + bytearray(n - len(base))
    data[0:4] = struct.pack(">I", n)
    a_region = len(base)               # 300 bytes to move A
    b_region = a_region + 300          # 1100 bytes of pairs to move B
    c_region = b_region + 1100         # 64 triples to move the CRC
    assert c_region + 3 * 64 <= n
    for i in range(b_region, c_region + 3 * 64):
        data[i] = 128
    # A: add the missing sum with bytes of up to 255.
    a_now = adler32(data) & 0xFFFF
    need = (adler & 0xFFFF) - a_now
    need %= ADLER_MOD
    i = a_region
    while need:
        step = min(need, 255)
        data[i] = step
        need -= step
        i += 1
    # B: pairs at (p, p + 1) set to (128 + y, 128 - y) move B by y.
    b_now = adler32(data) >> 16
    need = ((adler >> 16) - b_now) % ADLER_MOD
    if need > ADLER_MOD // 2:
        need -= ADLER_MOD
    p = b_region
    while need:
        y = max(-127, min(127, need))
        data[p], data[p + 1] = 128 + y, 128 - y
        need -= y
        p += 2
    assert p <= c_region
    assert adler32(data) == adler
    # CRC: solve for the triples to toggle.
    zero = zlib.crc32(bytes(n))
    def flip(t):
        d = bytearray(n)
        q = c_region + 3 * t
        d[q], d[q + 1], d[q + 2] = 128 ^ 129, 128 ^ 126, 128 ^ 129
        return zlib.crc32(bytes(d)) ^ zero
    rows = [(flip(t), 1 << t) for t in range(64)]
    target = zlib.crc32(bytes(data)) ^ crc
    basis = []                         # Gaussian elimination over GF(2)
    for vec, mask in rows:
        for bv, bm in basis:
            if vec ^ bv < vec:
                vec, mask = vec ^ bv, mask ^ bm
        if vec:
            basis.append((vec, mask))
            basis.sort(reverse=True)
    chosen = 0
    for bv, bm in basis:
        if target ^ bv < target:
            target, chosen = target ^ bv, chosen ^ bm
    assert target == 0, "CRC not reachable"
    for t in range(64):
        if chosen >> t & 1:
            q = c_region + 3 * t
            data[q], data[q + 1], data[q + 2] = 129, 126, 129
    assert zlib.crc32(bytes(data)) == crc and adler32(data) == adler
    return bytes(data)


def main():
    out = sys.argv[1]
    trc = curve(2.2)
    rgb = profile(b"RGB ", [
        (b"desc", desc("tilestream test RGB")),
        (b"cprt", text("No copyright, use freely")),
        (b"wtpt", xyz(0.9642, 1.0, 0.8249)),
        (b"rXYZ", xyz(0.4361, 0.2225, 0.0139)),
        (b"gXYZ", xyz(0.3851, 0.7169, 0.0971)),
        (b"bXYZ", xyz(0.1431, 0.0606, 0.7141)),
        (b"rTRC", trc), (b"gTRC", trc), (b"bTRC", trc)])
    grey = profile(b"GRAY", [
        (b"desc", desc("tilestream test grey")),
        (b"cprt", text("No copyright, use freely")),
        (b"wtpt", xyz(0.9642, 1.0, 0.8249)),
        (b"kTRC", trc)])
    with open(out + "/test-rgb.icc", "wb") as f:
        f.write(rgb)
    with open(out + "/test-grey.icc", "wb") as f:
        f.write(grey)
    # png.c: PNG_ICC_CHECKSUM(0xf784f3fb, 0x182ea552, PNG_MD5(0, 0, 0, 0),
    # 0 (intent), 1 (broken), ..., 3144, "HP-Microsoft sRGB v2 perceptual")
    with open(out + "/test-hp-srgb-lookalike.icc", "wb") as f:
        f.write(lookalike(rgb, 3144, 0xf784f3fb, 0x182ea552))


if __name__ == "__main__":
    main()
