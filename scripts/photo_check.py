#!/usr/bin/env python3
"""Real photos through the chains the GPU fuses, on each device and in
OpenCV: how far the outputs lie apart.

For every RGB photo given (default: those in samples/photos) and every
chain below, tilestream writes PNG (lossless) with --device gpu and
--device cpu, and OpenCV does the same maths its own way (GaussianBlur
with the same taps and border, the colour matrix through cv2.transform,
cv2.transpose / cv2.rotate, filter2D in floats for the 2-D convolutions).
Each pair is reported as the largest channel difference, the mean one and
the share of channel values that differ at all.

The GPU's fused convolution is within 1 of the reference before the colour
matrix and within floor(largest absolute row sum) + 1 after it, and its
5x5 2-D convolution on 8-bit tensor cores within 1 (docs/NUMERICS.md); the
script exits 1 when gpu against cpu goes past that,
or when either device lies more than 3 from OpenCV (its 8-bit blur rounds
in fixed point).

A peer script, not a project dependency: python3 with numpy and OpenCV.
From the repository root:
    python3 scripts/photo_check.py [--tilestream build-gpu/tilestream] [--devices gpu,cpu] [PHOTO...]"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import cv2
import numpy as np

PHOTOS = ["samples/photos/astronaut.jpg", "samples/photos/chelsea.png", "samples/photos/coffee-orient6.jpg"]
SEPIA = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]], np.float32)
GREY = np.array([[0.299, 0.587, 0.114]] * 3, np.float32)  # the grey preset: every channel the same luma

# (tilestream chain, radius, sigma, matrix or None, orientation, gpu tolerance against cpu)
CHAINS = [
    ("gauss=sigma=0.8:radius=1,matrix=sepia,transpose", 1, 0.8, SEPIA, "transpose", 2),
    ("gauss=sigma=1:radius=2,matrix=sepia,transpose", 2, 1.0, SEPIA, "transpose", 2),
    ("gauss=sigma=1:radius=2,rot90", 2, 1.0, None, "rot90", 1),
    ("gauss=sigma=2,matrix=sepia,transpose", 6, 2.0, SEPIA, "transpose", 2),
    ("gauss=sigma=2,matrix=grey", 6, 2.0, GREY, "none", 2),
]

# 2-D convolutions on the GPU's 8-bit tensor-core path (5x5, sum of |taps| <= 2):
# (tilestream chain, taps already divided, bias in byte units, gpu tolerance against cpu)
BINOMIAL5 = np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]).astype(np.float32)
LAPLACE5 = np.array([[0, 0, -1, 0, 0], [0, -1, -2, -1, 0], [-1, -2, 16, -2, -1], [0, -1, -2, -1,0],
                     [0, 0, -1, 0, 0]], np.float32)
CONV_CHAINS = [
    ("conv=k=" + " ".join(str(int(v)) for v in BINOMIAL5.flat), BINOMIAL5 / 256, 0.0, 1),
    ("conv=k=" + " ".join(str(int(v)) for v in LAPLACE5.flat) + ":divisor=16:bias=0.5", LAPLACE5 / 16, 127.5, 1),
]


def opencv(rgb, radius, sigma, matrix, orient):
    n = 2 * radius + 1
    out = cv2.GaussianBlur(rgb, (n, n), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REFLECT_101)
    if matrix is not None:
        out = np.clip(np.floor(cv2.transform(out.astype(np.float32), matrix) + 0.5), 0, 255).astype(np.uint8)
    if orient == "transpose":
        out = cv2.transpose(out)
    elif orient == "rot90":
        out = cv2.rotate(out, cv2.ROTATE_90_CLOCKWISE)
    return out


def opencv_conv(rgb, taps, bias):
    # filter2D correlates; both kernels are symmetric, so it is the convolution too
    out = cv2.filter2D(rgb.astype(np.float32), -1, taps, borderType=cv2.BORDER_REFLECT_101) + bias
    return np.clip(np.floor(out + 0.5), 0, 255).astype(np.uint8)


def read_rgb(path):
    img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if img is None:
        sys.exit(f"photo_check: cannot read {path}")
    if img.ndim == 2:
        return img
    return cv2.cvtColor(img, cv2.COLOR_BGRA2RGBA if img.shape[2] == 4 else cv2.COLOR_BGR2RGB)


def diff(a, b):
    if a.shape != b.shape:
        return None
    d = np.abs(a.astype(np.int32) - b.astype(np.int32))
    return int(d.max()), float(d.mean()), 100.0 * float(np.count_nonzero(d)) / d.size


def fmt(r):
    return "shape differs" if r is None else f"max {r[0]}, mean {r[1]:.4f}, {r[2]:.2f}% differ"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilestream", default="build-gpu/tilestream")
    ap.add_argument("--devices", default="gpu,cpu")
    ap.add_argument("photos", nargs="*", default=PHOTOS, help="RGB photos (default: those of samples/photos)")
    args = ap.parse_args()
    devices = args.devices.split(",")
    work = tempfile.mkdtemp(prefix="photo_check.")
    bad = 0
    try:
        for photo in args.photos:
            name = os.path.splitext(os.path.basename(photo))[0]
            # the photo as tilestream decodes and orients it: the identity chain, PNG out
            src_dir = os.path.join(work, "src")
            subprocess.run([args.tilestream, "run", photo, "-o", src_dir, "--format", "png", "--device", "cpu",
                            "-q", "-y"], check=True)
            rgb = read_rgb(os.path.join(src_dir, name + ".png"))
            if rgb.ndim != 3 or rgb.shape[2] != 3:
                continue  # the fused chains are RGB's
            jobs = [(c[0], c[5], lambda c=c: opencv(rgb, *c[1:5])) for c in CHAINS]
            jobs += [(chain, tol, lambda t=taps, b=bias: opencv_conv(rgb, t, b)) for chain, taps, bias, tol in CONV_CHAINS]
            for chain, tol, peer in jobs:
                outs = {}
                for dev in devices:
                    od = os.path.join(work, dev)
                    shutil.rmtree(od, ignore_errors=True)
                    # the CPU's decoder on both devices (nvJPEG decodes other pixels): the ops alone differ
                    subprocess.run([args.tilestream, "run", photo, "-o", od, "--ops", chain, "--format", "png",
                                    "--device", dev, "--codec", "cpu", "-q", "-y"], check=True)
                    outs[dev] = read_rgb(os.path.join(od, name + ".png"))
                ref = peer()
                print(f"{name} {rgb.shape[1]}x{rgb.shape[0]}  {chain}")
                if "gpu" in outs and "cpu" in outs:
                    r = diff(outs["gpu"], outs["cpu"])
                    ok = r is not None and r[0] <= tol
                    bad += not ok
                    print(f"    gpu vs cpu     {fmt(r)}  (allowed {tol}){'' if ok else '  FAIL'}")
                for dev, out in outs.items():
                    r = diff(out, ref)
                    ok = r is not None and r[0] <= 3
                    bad += not ok
                    print(f"    {dev} vs OpenCV  {fmt(r)}{'' if ok else '  FAIL'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("photo_check:", "all within bounds" if not bad else f"{bad} comparisons out of bounds")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
