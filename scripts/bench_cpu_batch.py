#!/usr/bin/env python3
"""bench_cpu_batch.py - tilestream's CPU backend beside OpenCV, on the same cores.

OpenCV (cv2 + numpy) is a peer here only: tilestream never depends on it.
Three comparisons, each measured in this one run:

  1. per op on one core: `tilestream bench cpu -j 1` against cv2.GaussianBlur
     (sigma 1 and 2, 7 and 13 taps), cv2.transform (sepia) and cv2.transpose
     on the same size of RGB8 image, and memcpy (numpy copy) as the bound;
  2. one 24 MP image: the chain gauss=sigma=2,matrix=sepia,transpose on 1
     thread and on all (`tilestream bench cpu`, chain lines);
  3. the folder job: photos through gauss=sigma=2,matrix=sepia,transpose to
     JPEG q90, `tilestream run --device cpu -j N` against OpenCV with N
     processes (decode, blur, sepia, transpose, encode each).

Usage (from the repository root, after a build):
  python3 scripts/bench_cpu_batch.py [--photos DIR] [--cores N] [--tilestream PATH]

--photos: a folder of JPEGs (default: 48 made here from samples/photos,
2-24 MP). --cores N: run everything on the first N cores (as a machine of N
cores would), default all. Prints a table; --json FILE keeps the figures.
"""
import argparse
import glob
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

CHAIN = "gauss=sigma=2,matrix=sepia,transpose"
# tilestream's matrix=sepia (pipeline/plan/ops_lower.c), rows R G B of the output over
# columns R G B of the input. OpenCV holds BGR: reverse both axes.
SEPIA_RGB = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]], np.float32)
SEPIA_BGR = SEPIA_RGB[::-1, ::-1].copy()


def median_ms(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def opencv_ops(w, h, reps):
    """Per-op figures of OpenCV on one thread, bytes counted as tilestream's
    bench counts them (each input pixel read once, each output written once)."""
    cv2.setNumThreads(1)
    img = np.random.default_rng(1).integers(0, 256, (h, w, 3), np.uint8)
    out = np.empty_like(img)
    px, nbytes = w * h, w * h * 3
    rows = {}

    def line(name, fn):
        ms = median_ms(fn, reps)
        rows[name] = {"ms": ms, "mpps": px / (ms * 1e3), "gbps": 2 * nbytes / (ms * 1e6)}

    line("copy", lambda: np.copyto(out, img))
    line("gauss7", lambda: cv2.GaussianBlur(img, (0, 0), 1.0, dst=out))  # 7 taps, as tilestream's radius 3
    line("gauss13", lambda: cv2.GaussianBlur(img, (0, 0), 2.0, dst=out))  # 13 taps
    line("matrix", lambda: cv2.transform(img, SEPIA_BGR, dst=out))
    line("transpose", lambda: cv2.transpose(img))
    return rows


def tilestream_bench(ts, w, h, threads, reps):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        subprocess.run([ts, "bench", "cpu", "--size", f"{w}x{h}", "--reps", str(reps), "-j", str(threads),
                        "--json", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)["cpu"]
    finally:
        os.unlink(path)


def ts_line(bench, op, threads):
    for line in bench["lines"]:
        if line.get("op") == op and line.get("threads") == threads:
            return line
    return None


# ------------------------------------------------------------- the folder job

def cv_one(job):
    src, dst = job
    img = cv2.imread(src, cv2.IMREAD_COLOR)
    if img is None:
        return 0
    img = cv2.GaussianBlur(img, (0, 0), 2.0)
    img = cv2.transform(img, SEPIA_BGR)
    img = cv2.transpose(img)
    cv2.imwrite(dst, img, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return img.shape[0] * img.shape[1]


def cv_worker_init():
    cv2.setNumThreads(1)


def ready(_):
    return 1


def worker_pool(procs):
    """procs fresh processes, started before the clock: spawned, not forked,
    because a fork of a parent whose OpenCV thread pool is running (it made
    the photos) can deadlock in the child's first parallel call."""
    pool = mp.get_context("spawn").Pool(procs, initializer=cv_worker_init)
    pool.map(ready, range(procs * 4), chunksize=1)
    return pool


def opencv_batch(photos, outdir, procs):
    jobs = [(p, os.path.join(outdir, os.path.basename(p))) for p in photos]
    os.makedirs(outdir, exist_ok=True)
    with worker_pool(procs) as pool:
        t0 = time.perf_counter()
        done = sum(1 for px in pool.imap_unordered(cv_one, jobs, chunksize=1) if px)
        dt = time.perf_counter() - t0
    return done, dt


def tilestream_batch(ts, photos, outdir, jobs):
    """The same files OpenCV gets, named one by one."""
    t0 = time.perf_counter()
    subprocess.run([ts, "run", *photos, "-o", outdir, "--device", "cpu", "-j", str(jobs), "--ops", CHAIN,
                    "--format", "jpg", "--quality", "90", "--overwrite", "-q"], check=True)
    return time.perf_counter() - t0


def make_photos(ts, folder, count):
    """JPEGs of 2 to 24 MP made from the bundled photos with tilestream's own
    resize (smooth content, as photos are)."""
    sizes = [(1920, 1200), (2560, 1920), (3264, 2448), (4032, 3024), (4896, 3264), (6000, 4000)]
    srcs = sorted(glob.glob("samples/photos/*.jpg")) + ["samples/photos/chelsea.png"]
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        w, h = sizes[i % len(sizes)]
        tmp = os.path.join(folder, f"tmp{i}")
        subprocess.run([ts, "run", srcs[i % len(srcs)], "-o", tmp, "--ops", f"resize=w={w}:h={h}:fit=stretch", "--format", "jpg",
                        "--quality", "92", "-q", "--overwrite"], check=True)
        made = glob.glob(os.path.join(tmp, "**", "*.jpg"), recursive=True)[0]
        shutil.move(made, os.path.join(folder, f"photo{i:03d}.jpg"))
        shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilestream", default=None, help="the binary (default build-gpu/, build/ or build-cpu/)")
    ap.add_argument("--photos", default=None, help="a folder of JPEG photos (default: made from samples/)")
    ap.add_argument("--count", type=int, default=48, help="photos to make when --photos is not given")
    ap.add_argument("--cores", type=int, default=0, help="use only the first N cores (default all)")
    ap.add_argument("--size", default="6000x4000", help="image size of the per-op lines")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args()

    ts = a.tilestream or next((p for p in ("build-gpu/tilestream", "build/tilestream", "build-cpu/tilestream")
                               if os.path.exists(p)), None)
    if not ts:
        sys.exit("no tilestream binary: build first or pass --tilestream")
    cores = sorted(os.sched_getaffinity(0))
    if a.cores:
        cores = cores[:a.cores]
        os.sched_setaffinity(0, cores)  # children (tilestream, OpenCV workers) inherit it
    n = len(cores)
    w, h = (int(v) for v in a.size.split("x"))
    work = tempfile.mkdtemp(prefix="ts-cpu-bench-")
    res = {"cores": n, "cv2": cv2.__version__, "size": [w, h]}
    try:
        photos_dir = a.photos
        if not photos_dir:
            photos_dir = os.path.join(work, "photos")
            make_photos(ts, photos_dir, a.count)
        photos = sorted(glob.glob(os.path.join(photos_dir, "**", "*.jp*g"), recursive=True))
        mp_px = sum((lambda i: i.shape[0] * i.shape[1])(cv2.imread(p, cv2.IMREAD_REDUCED_COLOR_8)) * 64
                    for p in photos) / 1e6

        print(f"tilestream CPU backend vs OpenCV {cv2.__version__}, {n} cores, {w}x{h} RGB8 for the per-op lines")
        cv = opencv_ops(w, h, a.reps)
        one = tilestream_bench(ts, w, h, 1, a.reps)
        full = tilestream_bench(ts, w, h, n, a.reps)
        res["opencv_ops"], res["tilestream_1"], res["tilestream_n"] = cv, one, full

        print("\n1. per op, one core (MP/s; ratio = tilestream / OpenCV, and GB/s / memcpy GB/s)")
        print(f"{'op':<10} {'tilestream':>11} {'OpenCV':>9} {'ratio':>7} {'ts/memcpy':>10} {'cv/memcpy':>10}")
        ts_copy = ts_line(one, "copy", 1)["gbps"]
        for op in ("gauss7", "gauss13", "matrix", "transpose"):
            t = ts_line(one, op, 1)
            c = cv[op]
            print(f"{op:<10} {t['mpps']:11.1f} {c['mpps']:9.1f} {t['mpps'] / c['mpps']:7.2f} "
                  f"{t['gbps'] / ts_copy:10.2f} {c['gbps'] / cv['copy']['gbps']:10.2f}")

        c1, cn = ts_line(one, "chain", 1), ts_line(full, "chain", n)
        if c1 and cn:
            print(f"\n2. one {w}x{h} image through {CHAIN}: 1 thread {c1['ms']:.1f} ms, {n} threads "
                  f"{cn['ms']:.1f} ms: {c1['ms'] / cn['ms']:.1f}x")
            res["one_image_speedup"] = c1["ms"] / cn["ms"]

        out_ts, out_cv = os.path.join(work, "out-ts"), os.path.join(work, "out-cv")
        os.makedirs(out_cv, exist_ok=True)
        t_ts = tilestream_batch(ts, photos, out_ts, n)
        done, t_cv = opencv_batch(photos, out_cv, n)
        print(f"\n3. {len(photos)} photos (about {mp_px:.0f} MP) through {CHAIN} to JPEG q90, {n} cores")
        print(f"   tilestream --device cpu -j {n}: {len(photos) / t_ts:7.2f} images/s ({t_ts:.2f} s)")
        print(f"   OpenCV, {n} processes:          {done / t_cv:7.2f} images/s ({t_cv:.2f} s)")
        print(f"   ratio tilestream / OpenCV: {(len(photos) / t_ts) / (done / t_cv):.2f}")
        res["batch"] = {"photos": len(photos), "mp": mp_px, "tilestream_s": t_ts, "opencv_s": t_cv,
                        "opencv_done": done}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
