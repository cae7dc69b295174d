#!/usr/bin/env bash
# The sampling checks that need the GPU machine: the GPU sample suite (every
# interpolation, both paths, the mipmap versions on a zone plate), its timing
# mode (the shrinking filters at 0.5x and 0.25x next to bilinear, every
# version and path), `tilestream compare` on samples/ with the page, heat
# maps and JSON, and the OpenCV quality figures (python3 with numpy and cv2).
# Logs and outputs go to $OUT (default ./out/sampling). Run after a build in
# ./build (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}/sampling
mkdir -p "$out"
build=${BUILD:-build}
rc=0
echo "== GPU sample suite" | tee "$out/summary.txt"
"$build/tests/test_gpu_sample" > "$out/gpu_sample.log" 2>&1 || rc=1
grep -E "zone plate|texture bilinear vs reference|checks" "$out/gpu_sample.log" | tee -a "$out/summary.txt"
echo "== timing (7680x4320 RGBA8)" | tee -a "$out/summary.txt"
TS_SAMPLE_TIMING=1 "$build/tests/test_gpu_sample" > "$out/gpu_sample_timing.log" 2>&1 || rc=1
grep -E "^sample|^device" "$out/gpu_sample_timing.log" | tee -a "$out/summary.txt"
echo "== compare" | tee -a "$out/summary.txt"
"$build/tilestream" compare samples/ --ops "scale=0.3,rotate=deg=13,resize=w=800:h=-1" \
    --html "$out/compare.html" --diff-out "$out/diff" --report "$out/compare.json" > "$out/compare.log" 2>&1 || rc=1
tail -n 12 "$out/compare.log" | tee -a "$out/summary.txt"
echo "== quality against OpenCV" | tee -a "$out/summary.txt"
python3 scripts/quality_opencv.py --tilestream "$build/tilestream" 2>&1 | tee "$out/quality_opencv.txt" || rc=1
exit $rc
