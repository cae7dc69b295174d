#!/usr/bin/env python3
"""bench_sizes.py - every job size, from one photo to a thousand, for a machine with a GPU.

The folder job (photos through gauss=sigma=2,matrix=sepia,transpose to JPEG
q90) at 1, 8, 32, 256 and 1024 photos, each timed as a whole process, exec to
exit, median of 3 runs:

  tilestream run --device auto   (the CPU at once, the GPU once it has started)
  tilestream run --device gpu    (every image on the GPU)
  tilestream run --device cpu    (every image on the CPU)
  OpenCV, a process per core     (its pool started before the clock: its best case)

then the ratios the design asks for: auto against the faster of gpu and cpu,
tilestream against OpenCV, and `--device gpu --codec cpu` against OpenCV's
decode + encode alone. Photos: crops and rescales of samples/photos (2-24 MP,
JPEG q90, every other one progressive), 256 different files; the 1024 are
those four times over (hard links). The timed runs write no report (as a
user's run without --report, they skip the rates' measurement); one more run
of auto at each size, and of gpu with the CPU codecs, writes a --report that
is not timed, and says where its time went.

Usage (repository root, after a Release build with CUDA):
  python3 scripts/bench_sizes.py [--tilestream PATH] [--sizes 1,8,32,256,1024]
      [--reps 3] [--work DIR] [--json FILE]
OpenCV and numpy are used here only; tilestream never depends on them.
"""
import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time

import cv2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_batch as batch  # noqa: E402  (folders of photos, child processes)
import bench_cpu_batch as cpu_bench  # noqa: E402  (the OpenCV job)

CHAIN = cpu_bench.CHAIN


def make_one(args):
    """Photo i: source i (round and round), cropped and rescaled as bench_batch.py does."""
    folder, i = args
    imgs = batch.sources(None)
    part = os.path.join(folder, f"part{i:04d}")
    batch.make_folder([imgs[i % len(imgs)]], part, 1, "jpg", batch.SIZES, 1000 + i)
    if i % 2:   # make_folder's one file is baseline: every other photo progressive
        for name in os.listdir(part):
            im = cv2.imread(os.path.join(part, name))
            cv2.imwrite(os.path.join(part, name), im, [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    return part


def make_photos(folder, count):
    """count different photos, made on every core, every other one progressive."""
    os.makedirs(folder, exist_ok=True)
    with mp.get_context("spawn").Pool(len(os.sched_getaffinity(0))) as pool:
        parts = pool.map(make_one, [(folder, i) for i in range(count)], chunksize=4)
    files = []
    for i, part in enumerate(parts):
        for name in os.listdir(part):
            dst = os.path.join(folder, f"{i:04d}-{name}")
            os.rename(os.path.join(part, name), dst)
            files.append(dst)
        os.rmdir(part)
    return sorted(files)


def size_folder(files, folder, n):
    """n photos: links to files, round and round."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for i in range(n):
        os.link(files[i % len(files)], os.path.join(folder, f"{i:05d}.jpg"))
    return sorted(os.path.join(folder, f) for f in os.listdir(folder))


def ts_wall(ts, folder, out, device, codec="auto", report=None, cpu=None):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [ts, "run", folder, "-o", out, "--ops", CHAIN, "--format", "jpg", "--quality", "90", "-q",
           "--device", device, "--codec", codec]
    if report:
        cmd += ["--report", report]
    dt, _, rc = batch.run_child(cmd, cpu)
    return dt if rc == 0 else None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def phase_line(report):
    try:
        with open(report) as f:
            r = json.load(f)
    except (OSError, ValueError):
        return None
    p = r.get("phases_s", {})

    def span(k):
        v = p.get(k)
        return f"{k} {v[0]:.3f}-{v[1]:.3f}" if v else f"{k} -"
    keys = ["program", "inputs", "gpu_probe", "gpu_engines", "gpu_warmup", "gpu_rates", "nvjpeg", "work", "teardown"]
    m = r.get("memory", {})
    return (", ".join(span(k) for k in keys) + f"; gpu ready {p.get('gpu_ready')}, images on gpu "
            f"{r.get('images_on_gpu')}, on cpu {r.get('images_on_cpu')}; {r.get('gpu_note')}; "
            f"memory peak {m.get('peak_mb')} MB, pinned {m.get('pinned_mb')} MB")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilestream", default=None, help="the binary (default build-gpu/, build/ or build-cpu/)")
    ap.add_argument("--sizes", default="1,8,32,256,1024")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="auto,gpu,cpu,opencv", help="which of auto,gpu,cpu,opencv to time")
    ap.add_argument("--no-codec-row", action="store_true", help="skip --device gpu --codec cpu against OpenCV's codecs")
    ap.add_argument("--distinct", type=int, default=256, help="different photos to make (default 256)")
    ap.add_argument("--work", default=None, help="where the folders go (default a temporary folder, removed)")
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args()
    ts = a.tilestream or next((p for p in ("build-gpu/tilestream", "build/tilestream", "build-cpu/tilestream")
                               if os.path.exists(p)), None)
    if not ts:
        sys.exit("no tilestream binary: build first or pass --tilestream")
    ts = os.path.abspath(ts)
    sizes = [int(s) for s in a.sizes.split(",")]
    modes = set(a.modes.split(","))
    cores = len(os.sched_getaffinity(0))
    work = a.work or tempfile.mkdtemp(prefix="ts-sizes-")
    res = {"cores": cores, "chain": CHAIN, "reps": a.reps, "rows": []}
    try:
        t0 = time.perf_counter()
        files = make_photos(os.path.join(work, "photos"), a.distinct)
        mp_all = sum(os.path.getsize(f) for f in files) / 1e6
        print(f"made {len(files)} photos ({mp_all:.0f} MB of JPEG) in {time.perf_counter() - t0:.0f} s; {cores} cores")
        out = os.path.join(work, "out")
        pool = cpu_bench.worker_pool(cores)
        print(f"\n{'photos':>7} {'auto s':>8} {'gpu s':>8} {'cpu s':>8} {'OpenCV s':>9} {'auto/best':>10} "
              f"{'cv/auto':>8}")
        for n in sizes:
            folder = os.path.join(work, f"n{n}")
            batch_files = size_folder(files, folder, n)
            t = {"auto": [], "gpu": [], "cpu": [], "opencv": []}
            report = os.path.join(work, f"auto-{n}.json")
            for _ in range(a.reps):   # interleaved, so that drift hits each alike
                for dev in ("auto", "gpu", "cpu"):
                    if dev in modes:
                        t[dev].append(ts_wall(ts, folder, out, dev))
                if "opencv" in modes:
                    shutil.rmtree(out + "-cv", ignore_errors=True)
                    os.makedirs(out + "-cv")
                    jobs = [(p, os.path.join(out + "-cv", os.path.basename(p))) for p in batch_files]
                    c0 = time.perf_counter()
                    list(pool.imap_unordered(cpu_bench.cv_one, jobs, chunksize=1))
                    t["opencv"].append(time.perf_counter() - c0)
            if "auto" in modes:   # one more run, not timed, for the phases (a report adds the rates' measurement)
                ts_wall(ts, folder, out, "auto", report=report)
            m = {k: median(v) for k, v in t.items()}
            best = min((x for x in (m["gpu"], m["cpu"]) if x is not None), default=None)
            row = {"photos": n, **{k + "_s": v for k, v in m.items()}, "runs": t,
                   "auto_over_best": m["auto"] / best if m["auto"] and best else None,
                   "opencv_over_auto": m["opencv"] / m["auto"] if m["auto"] and m["opencv"] else None,
                   "auto_phases": phase_line(report)}
            res["rows"].append(row)

            def f(x):
                return f"{x:8.2f}" if x is not None else "    fail"
            print(f"{n:7d} {f(m['auto'])} {f(m['gpu'])} {f(m['cpu'])} {f(m['opencv']):>9} "
                  f"{row['auto_over_best'] or 0:10.2f} {row['opencv_over_auto'] or 0:8.2f}", flush=True)
        # --device gpu --codec cpu against OpenCV's decode + encode alone, on the 256
        n = 256 if 256 in sizes else sizes[-1]
        if a.no_codec_row:
            n = 0
        folder = os.path.join(work, f"n{n}")
        batch_files = size_folder(files, folder, n)
        g, c, g_cpu, c_cpu = [], [], [], []
        codec_report = os.path.join(work, "gpu-codec-cpu.json")
        for _ in range(a.reps if n else 0):
            g.append(ts_wall(ts, folder, out, "gpu", codec="cpu", cpu=g_cpu))
            shutil.rmtree(out + "-cvc", ignore_errors=True)
            os.makedirs(out + "-cvc")
            jobs = [(p, os.path.join(out + "-cvc", os.path.basename(p)), ".jpg") for p in batch_files]
            c0 = time.perf_counter()
            c_cpu.append(sum(pool.imap_unordered(batch.codec_one_cpu, jobs, chunksize=1)))
            c.append(time.perf_counter() - c0)
        pool.close()
        if n:
            ts_wall(ts, folder, out, "gpu", codec="cpu", report=codec_report)   # not timed: the phases
            res["gpu_codec_cpu"] = {"photos": n, "tilestream_s": median(g), "opencv_codec_s": median(c),
                                    "ratio": median(c) / median(g) if median(g) else None,
                                    "tilestream_cpu_s": median(g_cpu), "opencv_codec_cpu_s": median(c_cpu),
                                    "phases": phase_line(codec_report)}
            print(f"\n--device gpu --codec cpu, {n} photos: {median(g):.2f} s; OpenCV decode + encode alone "
                  f"{median(c):.2f} s; ratio {res['gpu_codec_cpu']['ratio']:.2f} (target >= 0.9)")
            print(f"  CPU seconds (user + system): tilestream {median(g_cpu):.2f}, OpenCV's workers "
                  f"{median(c_cpu):.2f} ({cores} cores: {cores * median(g):.1f} and {cores * median(c):.1f} "
                  f"core-seconds of wall)")
            print(f"  where its time went (s from exec, last run): {res['gpu_codec_cpu']['phases']}")
        print("\nwhere auto's time went (s from exec; last run of each size):")
        for row in res["rows"]:
            print(f"  {row['photos']:5d}: {row['auto_phases']}")
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
