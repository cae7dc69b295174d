#!/usr/bin/env python3
"""bench_batch.py - the folder job at GPU speed, for a machine with a GPU.

Builds a folder of real-photo JPEGs of 2-24 MP outside the repository (crops
and rescales of samples/photos/*.jpg and of any photos given with --photos,
JPEG q90, every other file progressive), then, each measured in this one run
on the same cores:

  tilestream run --ops gauss=sigma=2,matrix=sepia,transpose to JPEG q90
      with --codec auto, --codec gpu and --codec cpu (on the GPU engine);
  the same job in OpenCV with a process per core (scripts/bench_cpu_batch.py's);
  decode + encode alone (the codec bound): OpenCV, a process per core, and
      tilestream with an empty chain (--codec cpu and gpu);
  a PNG folder: tilestream against OpenCV's PNG decode + encode alone;
  a run over --memory-images links to the JPEGs (default 1000) with
      --memory 2G: its peak RSS against the budget.

Prints images/s, the ratios the issue asks for and each run's peak RSS
(os.wait4's rusage of that child; /usr/bin/time is not needed). OpenCV and
numpy are used here only; tilestream never depends on them.

Usage (repository root, after a Release build with CUDA and nvJPEG):
  python3 scripts/bench_batch.py [--tilestream PATH] [--photos DIR ...]
      [--count 300] [--png-count 48] [--work DIR] [--json FILE]
"""
import argparse
import glob
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu_batch as cpu_bench  # noqa: E402  (the OpenCV job, the chain)

CHAIN = cpu_bench.CHAIN
# 2 to 24 MP, camera-like shapes (both sides multiples of 8, as cameras make them)
SIZES = [(1920, 1080), (2048, 1536), (2592, 1944), (3264, 2448), (4032, 3024), (4000, 3000),
         (4608, 3456), (5472, 3648), (6000, 4000)]


def run_child(cmd, cpu=None):
    """Run cmd; returns (seconds, peak RSS in MB, return code). cpu, a list,
    gets the child's CPU seconds (user + system) appended."""
    with tempfile.TemporaryFile() as errf:  # a file, not a pipe: a full pipe would stall the child
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if cpu is not None:
            cpu.append(usage.ru_utime + usage.ru_stime)
        if p.returncode not in (0, 1):
            errf.seek(0)
            err = errf.read().decode(errors="replace")
            print(f"   {' '.join(cmd[:3])}...: exit {p.returncode}\n{err[-2000:]}", file=sys.stderr)
    return dt, usage.ru_maxrss / 1024.0, p.returncode


def sources(extra_dirs):
    srcs = sorted(glob.glob("samples/photos/*.jpg")) + sorted(glob.glob("samples/photos/chelsea.png"))
    for d in extra_dirs or []:
        for ext in ("jpg", "jpeg", "JPG", "png"):
            srcs += sorted(glob.glob(os.path.join(d, "**", "*." + ext), recursive=True))
    imgs = []
    for s in srcs:
        im = cv2.imread(s, cv2.IMREAD_COLOR)
        if im is not None:
            imgs.append((os.path.basename(s), im))
    if not imgs:
        sys.exit("no source photos found")
    return imgs


def make_folder(imgs, folder, count, fmt, sizes, seed):
    """count files: a random crop (60-100% of each side) of a source photo,
    resized to one of sizes (area when shrinking, bicubic when enlarging)."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    mp_total = 0.0
    for i in range(count):
        name, im = imgs[i % len(imgs)]
        h, w = im.shape[:2]
        cw, ch = int(w * rng.uniform(0.6, 1.0)), int(h * rng.uniform(0.6, 1.0))
        x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
        tw, th = sizes[rng.randrange(len(sizes))]
        if rng.random() < 0.3:
            tw, th = th, tw  # portrait
        crop = im[y:y + ch, x:x + cw]
        interp = cv2.INTER_AREA if tw < cw else cv2.INTER_CUBIC
        out = cv2.resize(crop, (tw, th), interpolation=interp)
        mp_total += tw * th / 1e6
        path = os.path.join(folder, f"{i:04d}-{os.path.splitext(name)[0]}.{fmt}")
        if fmt == "jpg":
            cv2.imwrite(path, out, [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, i % 2])
        else:
            cv2.imwrite(path, out, [cv2.IMWRITE_PNG_COMPRESSION, 3])
    return mp_total


def codec_one(job):
    src, dst, ext = job
    img = cv2.imread(src, cv2.IMREAD_UNCHANGED)
    if img is None:
        return 0
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if ext == ".jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 3]
    cv2.imwrite(dst, img, params)
    return 1


def codec_one_cpu(job):
    """codec_one, returning the CPU seconds (user + system) this worker spent on it."""
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    codec_one(job)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def opencv_codec_bound(files, outdir, procs, ext):
    os.makedirs(outdir, exist_ok=True)
    jobs = [(p, os.path.join(outdir, os.path.splitext(os.path.basename(p))[0] + ext), ext) for p in files]
    with cpu_bench.worker_pool(procs) as pool:
        t0 = time.perf_counter()
        done = sum(pool.imap_unordered(codec_one, jobs, chunksize=1))
        dt = time.perf_counter() - t0
    return done, dt


def ts_run(ts, folder, outdir, extra, fmt="jpg"):
    """Returns (seconds, peak RSS in MB, return code, the run's set-up, work
    and finishing seconds from its --report, or None)."""
    shutil.rmtree(outdir, ignore_errors=True)
    report = outdir.rstrip("/") + "-report.json"
    cmd = [ts, "run", folder, "-o", outdir, "--format", fmt, "--quality", "90", "-q", "--report", report] + extra
    dt, rss, rc = run_child(cmd)
    parts = None
    try:
        with open(report) as f:
            r = json.load(f)
        parts = (r["setup_s"], r["work_s"], r["finish_s"])
    except (OSError, ValueError, KeyError):
        pass
    return dt, rss, rc, parts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilestream", default=None, help="the binary (default build-gpu/, build/ or build-cpu/)")
    ap.add_argument("--photos", action="append", help="more source photos (a folder; may repeat)")
    ap.add_argument("--count", type=int, default=300, help="JPEGs to make (default 300)")
    ap.add_argument("--png-count", type=int, default=48, help="PNGs to make (default 48)")
    ap.add_argument("--memory-images", type=int, default=1000, help="images in the memory run (0: skip)")
    ap.add_argument("--work", default=None, help="where the folders go (default a temporary folder, removed)")
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args()

    ts = a.tilestream or next((p for p in ("build-gpu/tilestream", "build/tilestream", "build-cpu/tilestream")
                               if os.path.exists(p)), None)
    if not ts:
        sys.exit("no tilestream binary: build first or pass --tilestream")
    ts = os.path.abspath(ts)
    n = len(os.sched_getaffinity(0))
    work = a.work or tempfile.mkdtemp(prefix="ts-batch-bench-")
    os.makedirs(work, exist_ok=True)
    res = {"cores": n, "cv2": cv2.__version__, "chain": CHAIN}
    try:
        imgs = sources(a.photos)
        jpg_dir, png_dir = os.path.join(work, "jpg"), os.path.join(work, "png")
        shutil.rmtree(jpg_dir, ignore_errors=True)
        shutil.rmtree(png_dir, ignore_errors=True)
        t0 = time.perf_counter()
        mp_jpg = make_folder(imgs, jpg_dir, a.count, "jpg", SIZES, 1)
        mp_png = make_folder(imgs, png_dir, a.png_count, "png", SIZES[:5], 2)
        jpgs, pngs = sorted(glob.glob(jpg_dir + "/*.jpg")), sorted(glob.glob(png_dir + "/*.png"))
        print(f"made {len(jpgs)} JPEGs ({mp_jpg:.0f} MP, from {len(imgs)} source photos, half progressive) and "
              f"{len(pngs)} PNGs ({mp_png:.0f} MP) in {time.perf_counter() - t0:.0f} s; {n} cores, OpenCV {cv2.__version__}")
        res.update({"jpegs": len(jpgs), "jpeg_mp": mp_jpg, "pngs": len(pngs), "png_mp": mp_png,
                    "sources": [s for s, _ in imgs]})

        rows = {}

        def line(key, label, count, seconds, rss=None, parts=None):
            rows[key] = {"images_per_s": count / seconds, "seconds": seconds, "peak_rss_mb": rss}
            extra = f"  peak RSS {rss:7.0f} MB" if rss is not None else ""
            if parts:
                # the process's time split as the run's report has it: the
                # work alone is what a longer folder tends to
                rows[key].update({"setup_s": parts[0], "work_s": parts[1], "finish_s": parts[2],
                                  "work_images_per_s": count / parts[1] if parts[1] > 0 else None})
                extra += f"  (set-up {parts[0]:.2f} s, work {parts[1]:.2f} s, finishing {parts[2]:.2f} s)"
            print(f"   {label:<46} {count / seconds:8.1f} images/s ({seconds:6.2f} s){extra}")

        print(f"\n1. {len(jpgs)} JPEGs through {CHAIN} to JPEG q90")
        out = os.path.join(work, "out")
        for codec in ("auto", "gpu", "cpu"):
            dt, rss, rc, parts = ts_run(ts, jpg_dir, out, ["--device", "gpu", "--codec", codec, "--ops", CHAIN])
            if rc in (0, 1):
                line(f"ts_{codec}", f"tilestream --device gpu --codec {codec}", len(jpgs), dt, rss, parts)
        done, dt = cpu_bench.opencv_batch(jpgs, os.path.join(work, "out-cv"), n)
        line("opencv", f"OpenCV, {n} processes", done, dt)
        done, dt = opencv_codec_bound(jpgs, os.path.join(work, "out-cvc"), n, ".jpg")
        line("opencv_codec", f"decode + encode alone, OpenCV {n} processes", done, dt)
        for codec in ("cpu", "gpu"):
            dt, rss, rc, parts = ts_run(ts, jpg_dir, out, ["--device", "gpu", "--codec", codec, "--ops", ""])
            if rc in (0, 1):
                line(f"ts_codec_{codec}", f"decode + encode alone, tilestream --codec {codec}", len(jpgs), dt, rss,
                     parts)

        if pngs:
            print(f"\n2. {len(pngs)} PNGs through {CHAIN} to PNG (level 3)")
            dt, rss, rc, parts = ts_run(ts, png_dir, out, ["--device", "gpu", "--ops", CHAIN], fmt="png")
            if rc in (0, 1):
                line("ts_png", "tilestream --device gpu", len(pngs), dt, rss, parts)
            done, dt = opencv_codec_bound(pngs, os.path.join(work, "out-cvp"), n, ".png")
            line("opencv_png_codec", f"decode + encode alone, OpenCV {n} processes", done, dt)

        def ratio(a_key, b_key, label, target):
            if a_key in rows and b_key in rows:
                r = rows[a_key]["images_per_s"] / rows[b_key]["images_per_s"]
                res.setdefault("ratios", {})[label] = r
                print(f"   {label:<58} {r:6.2f}" + (f"   (target {target})" if target else ""))

        print("\n3. ratios")
        ratio("ts_auto", "opencv", "tilestream GPU codecs (auto) / OpenCV full job", ">= 3")
        ratio("ts_gpu", "opencv", "tilestream --codec gpu / OpenCV full job", ">= 3")
        for codec in ("auto", "gpu"):
            w = rows.get(f"ts_{codec}", {}).get("work_images_per_s")
            if w and "opencv" in rows:
                r = w / rows["opencv"]["images_per_s"]
                res.setdefault("ratios", {})[f"work alone, --codec {codec} / OpenCV full job"] = r
                print(f"   {'  the same, its work alone (no set-up, no finishing), --codec ' + codec:<58} {r:6.2f}")
        ratio("ts_cpu", "opencv_codec", "tilestream --codec cpu / codec-only bound (OpenCV)", ">= 0.9")
        ratio("ts_cpu", "ts_codec_cpu", "tilestream --codec cpu / its own decode + encode", "")
        ratio("ts_png", "opencv_png_codec", "tilestream PNG / PNG codec-only bound (OpenCV)", ">= 0.9")

        if a.memory_images > 0:
            many = os.path.join(work, "many")
            shutil.rmtree(many, ignore_errors=True)
            os.makedirs(many)
            for i in range(a.memory_images):
                os.link(jpgs[i % len(jpgs)], os.path.join(many, f"{i:05d}.jpg"))
            dt, rss, rc, _ = ts_run(ts, many, out, ["--device", "gpu", "--ops", CHAIN, "--memory", "2G"])
            print(f"\n4. {a.memory_images} JPEGs (links to the above), --memory 2G: {a.memory_images / dt:.1f} images/s, "
                  f"peak RSS {rss:.0f} MB (budget 2048 MB of images in flight; RSS adds code, pinned "
                  f"bounce buffers and libraries)")
            res["memory_run"] = {"images": a.memory_images, "seconds": dt, "peak_rss_mb": rss, "budget_mb": 2048}
        res["rows"] = rows
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
