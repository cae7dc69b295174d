#!/usr/bin/env python3
"""Write two small, valid ICC v2 display profiles made here from the
specification (so the test data carries no third-party profile):

  test-rgb.icc   matrix/TRC RGB profile (sRGB primaries, gamma 2.2)
  test-grey.icc  grey TRC profile (gamma 2.2)

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


if __name__ == "__main__":
    main()
