#!/usr/bin/env bash
# Rebuild the JPEG and bad-input fixtures in tests/data/jpeg and
# tests/data/bad. The tests do not run this: its outputs are committed.
#
# Needs (Debian): python3, libjpeg-turbo-progs (cjpeg, djpeg),
# imagemagick (convert, for the CMYK file), libimage-exiftool-perl.
#
# jpeg/
#   src.ppm              48x32 test picture (gradients, edges, a disc)
#   baseline.jpg         cjpeg -quality 90
#   progressive.jpg      cjpeg -quality 90 -progressive
#   grey.jpg             cjpeg -quality 90 -grayscale
#   cmyk.jpg             ImageMagick -colorspace CMYK (stored as Adobe YCCK)
#   icc.jpg              baseline.jpg with test-rgb.icc embedded by exiftool
#   orient1..8.jpg       baseline.jpg with EXIF Orientation = N; odd N in
#                        big-endian (MM) EXIF, even N little-endian (II)
#   *.ppm / grey.pgm     djpeg's decoding of each, the expected pixels
#   test-rgb.icc, test-grey.icc, test-hp-srgb-lookalike.icc   profiles from make_icc.py
# bad/
#   huge.png             IHDR claims 100000x100000 (valid CRCs)
#   huge.jpg             baseline.jpg with SOF0 patched to 65000x65000
#   manyscans.jpg        progressive grey 8x8 with 1200 scans
#   text.png             a text file named .png
#   empty.png            zero bytes
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
j=$here/jpeg
b=$here/bad
mkdir -p "$j" "$b"

python3 "$here/make_icc.py" "$j"

python3 - "$j/src.ppm" <<'EOF'
import math, sys
w, h = 48, 32
px = bytearray()
for y in range(h):
    for x in range(w):
        r = int(255 * x / (w - 1))
        g = int(255 * y / (h - 1))
        b = 128 + int(100 * math.sin(x * 0.5) * math.cos(y * 0.3))
        if (x - 30) ** 2 + (y - 14) ** 2 < 64:
            r, g, b = 250, 240, 20
        if x < 6 and y < 6:
            r, g, b = 0, 0, 0
        px += bytes((r, g, b))
open(sys.argv[1], "wb").write(b"P6\n%d %d\n255\n" % (w, h) + px)
EOF

cjpeg -quality 90 -outfile "$j/baseline.jpg" "$j/src.ppm"
cjpeg -quality 90 -progressive -outfile "$j/progressive.jpg" "$j/src.ppm"
cjpeg -quality 90 -grayscale -outfile "$j/grey.jpg" "$j/src.ppm"
convert "$j/src.ppm" -colorspace CMYK -quality 90 "$j/cmyk.jpg"
cp "$j/baseline.jpg" "$j/icc.jpg"
exiftool -q -overwrite_original "-ICC_Profile<=$j/test-rgb.icc" "$j/icc.jpg"
for n in 1 2 3 4 5 6 7 8; do
    order=MM; [ $((n % 2)) -eq 0 ] && order=II
    cp "$j/baseline.jpg" "$j/orient$n.jpg"
    exiftool -q -overwrite_original -n "-ExifByteOrder=$order" "-Orientation=$n" \
        -Make=tilestream -Software=make_fixtures "$j/orient$n.jpg"
done

for f in baseline progressive cmyk icc; do
    djpeg -pnm -outfile "$j/$f.ppm" "$j/$f.jpg"
done
djpeg -pnm -outfile "$j/grey.pgm" "$j/grey.jpg"

python3 - "$b" "$j/baseline.jpg" <<'EOF'
import struct, sys, zlib
out, base = sys.argv[1], sys.argv[2]

def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
idat = zlib.compress(b"\0" * 1000)
open(out + "/huge.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                                    + chunk(b"IDAT", idat) + chunk(b"IEND", b""))

jpg = bytearray(open(base, "rb").read())
i = jpg.index(b"\xff\xc0")              # SOF0: length, precision, height, width
jpg[i + 5:i + 9] = struct.pack(">HH", 65000, 65000)
open(out + "/huge.jpg", "wb").write(jpg)

open(out + "/text.png", "w").write("This is a text file, not a PNG image.\n")
open(out + "/empty.png", "wb").close()
EOF

# Many scans: a progressive 8x8 grey JPEG whose last scan (a refinement
# scan) is repeated until there are 1200. libjpeg only warns about the
# repeats, so without a scan limit it would decode every one of them.
python3 - "$b/manyscans.pgm" <<'EOF'
import sys
open(sys.argv[1], "wb").write(b"P5\n8 8\n255\n" + bytes((x * 31 + y * 7) & 255 for y in range(8) for x in range(8)))
EOF
cjpeg -progressive -outfile "$b/manyscans-src.jpg" "$b/manyscans.pgm"
python3 - "$b/manyscans-src.jpg" "$b/manyscans.jpg" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
last = data.rindex(b"\xff\xda")        # the final SOS segment and its data
eoi = data.rindex(b"\xff\xd9")
scans = data.count(b"\xff\xda")
scan = data[last:eoi]
out = data[:eoi] + scan * (1200 - scans) + data[eoi:]
open(sys.argv[2], "wb").write(out)
EOF
rm -f "$b/manyscans.pgm" "$b/manyscans-src.jpg"
echo "fixtures written"
