#!/usr/bin/env python3
"""OpenCV's figures for tests/test_sample_quality.c: the same images and
factors through cv2.resize (INTER_AREA, and INTER_LINEAR, INTER_CUBIC,
INTER_LANCZOS4 for context), PSNR in dB against the same reference: a
downscale in double precision with Lanczos-3 stretched by the shrink factor,
output pixel centre x + 0.5 mapping to (x + 0.5) * w_in / w_out, replicate
at the edges, weights normalised, rows then columns.

A peer script, not a project dependency: it needs python3 with numpy and
OpenCV (cv2; on Debian the packages python3-numpy and python3-opencv). Run
from the repository root:
    python3 scripts/quality_opencv.py [--tilestream build/tilestream]
With --tilestream it also runs `tilestream run --device cpu` on the same
cases (PNG output, lossless) and scores those outputs the same way, so the
two tools' figures come from one script (each scored against the reference
made from the pixels it decoded itself)."""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

CASES = [
    ("samples/patterns/zoneplate-512.png", 0.25),
    ("samples/patterns/zoneplate-512.png", 0.3),
    ("samples/photos/chelsea.png", 0.3),
    ("samples/photos/camera-grey.png", 0.25),
    ("samples/photos/astronaut.jpg", 0.3),
]
OPENCV = [("INTER_AREA", cv2.INTER_AREA), ("INTER_LINEAR", cv2.INTER_LINEAR),
          ("INTER_CUBIC", cv2.INTER_CUBIC), ("INTER_LANCZOS4", cv2.INTER_LANCZOS4)]
TILESTREAM = ["bilinear", "area", "bicubic"]


def lanczos3(t):
    t = np.abs(t)
    out = np.where(t < 1e-12, 1.0, 3.0 * np.sin(np.pi * t) * np.sin(np.pi * t / 3.0) /
                   np.maximum(np.pi * np.pi * t * t, 1e-300))
    return np.where(t >= 3.0, 0.0, out)


def axis_matrix(n_in, n_out):
    """The n_out x n_in matrix of tests/test_sample_quality.c's resample_axis."""
    scale = n_in / n_out
    k = max(scale, 1.0)
    m = np.zeros((n_out, n_in))
    for x in range(n_out):
        centre = (x + 0.5) * scale
        lo = math.floor(centre - 3 * k) - 1
        hi = math.ceil(centre + 3 * k) + 1
        for i in range(lo, hi + 1):
            w = float(lanczos3((i + 0.5 - centre) / k))
            if w == 0.0:
                continue
            m[x, min(max(i, 0), n_in - 1)] += w
        m[x] /= m[x].sum()
    return m


def reference(img, ow, oh):
    src = img.astype(np.float64)
    if src.ndim == 2:
        src = src[:, :, None]
    mx = axis_matrix(src.shape[1], ow)
    my = axis_matrix(src.shape[0], oh)
    mid = np.einsum("xi,yic->yxc", mx, src)
    return np.einsum("yj,jxc->yxc", my, mid)


def psnr(got, ref, maxv):
    if got.ndim == 2:
        got = got[:, :, None]
    mse = np.mean((got.astype(np.float64) - ref) ** 2)
    return 10 * math.log10(maxv * maxv / mse)


def out_size(w, h, f):
    # tilestream rounds w * f half away from zero (C's lround)
    return max(1, int(math.floor(w * f + 0.5))), max(1, int(math.floor(h * f + 0.5)))


def tilestream_output(exe, path, f, interp, tmp):
    out = os.path.join(tmp, interp)
    os.makedirs(out, exist_ok=True)
    subprocess.run([exe, "run", path, "-o", out, "--device", "cpu", "--format", "png", "--overwrite", "-q",
                    "--ops", "scale=%g:interp=%s" % (f, interp)], check=True)
    for root, _, files in os.walk(out):
        for name in files:
            return cv2.imread(os.path.join(root, name), cv2.IMREAD_UNCHANGED)
    raise RuntimeError("no output from tilestream for " + path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tilestream", help="path of the tilestream binary, to score it too")
    args = ap.parse_args()
    names = [n for n, _ in OPENCV] + (TILESTREAM if args.tilestream else [])
    print("PSNR dB vs double Lanczos-3 (OpenCV %s)" % cv2.__version__)
    print("| image | scale | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for path, f in CASES:
        img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if img is None:
            sys.exit("cannot read " + path)
        h, w = img.shape[:2]
        ow, oh = out_size(w, h, f)
        maxv = 65535.0 if img.dtype == np.uint16 else 255.0
        ref = reference(img, ow, oh)
        row = [psnr(cv2.resize(img, (ow, oh), interpolation=mode), ref, maxv) for _, mode in OPENCV]
        if args.tilestream:
            with tempfile.TemporaryDirectory() as tmp:
                for interp in TILESTREAM:
                    row.append(psnr(tilestream_output(args.tilestream, path, f, interp, tmp), ref, maxv))
        print("| %s | %g | " % (os.path.basename(path), f) + " | ".join("%.2f" % v for v in row) + " |")


if __name__ == "__main__":
    main()
