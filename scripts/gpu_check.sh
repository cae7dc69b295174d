#!/usr/bin/env bash
# gpu_check.sh - on a machine with an NVIDIA GPU: configure a Release build
# with CUDA, run every `gpu` test, then `tilestream bench` and, where python3
# has OpenCV, scripts/photo_check.py (real photos on both devices and in
# OpenCV), and print a short table last. Logs go to $OUT (default ./out).
#
#   scripts/gpu_check.sh                 everything
#   scripts/gpu_check.sh -R conv         only gpu tests whose name matches 'conv'
#   TS_BENCH=0 scripts/gpu_check.sh      tests only
#   TS_SANITIZER=0 scripts/gpu_check.sh  without the compute-sanitizer pass
#   TS_SANITIZER=only scripts/gpu_check.sh  build, then only the sanitizer pass
#                                        (it takes minutes: a second call)
#   TS_SANITIZER_TESTS="engine point"    the sanitizer pass on those tests only
#
# After the suite, every gpu test runs again in its small mode under
# compute-sanitizer: memcheck for all of them, racecheck and synccheck for
# the ones with shared memory and several streams.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)   # absolute: the tests run in other folders
BUILD=${BUILD:-build-gpu}
ARCH=${ARCH:-90}
export PATH=/usr/local/cuda/bin:$PATH
stb=()
[ -d .gpu/stb ] && stb=(-DSTB_INCLUDE_DIR="$PWD/.gpu/stb")
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)

t0=$(date +%s)
if ! cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTS_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCH" "${stb[@]}" >"$OUT/configure.log" 2>&1; then
    tail -40 "$OUT/configure.log"; exit 2
fi
if ! cmake --build "$BUILD" -j "$(nproc)" >"$OUT/build.log" 2>&1; then
    grep -E -B2 -A6 "error" "$OUT/build.log" | head -120; exit 2
fi
t1=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1

tests_rc=skipped
if [ "${TS_SANITIZER:-1}" != only ]; then
    TS_TEXTURE_TABLE="$OUT/texture.tsv" ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 300 \
        -j "${TS_TEST_JOBS:-3}" "$@" >"$OUT/gpu-tests.log" 2>&1
    tests_rc=$?
fi
t2=$(date +%s)

# compute-sanitizer over the small modes of the GPU tests.
san_rc=skipped
if [ "${TS_SANITIZER:-1}" != 0 ] && [ "$#" -eq 0 ] && command -v compute-sanitizer >/dev/null; then
    san_rc=0
    export TS_TEST_QUICK=1 TS_ENGINE_SMALL=1 TS_SAMPLE_SMALL=1 TS_CONV_SMALL=2
    : >"$OUT/sanitizer.log"
    for t in "$BUILD"/tests/test_gpu_*; do
        case "$t" in *test_gpu_oom) continue ;; esac   # exhausts device memory on purpose
        if [ -n "${TS_SANITIZER_TESTS:-}" ]; then
            want=0
            for w in $TS_SANITIZER_TESTS; do case "$t" in *"$w"*) want=1 ;; esac; done
            [ "$want" = 1 ] || continue
        fi
        case "$t" in *test_gpu_conv_sep|*test_gpu_conv2d) continue ;; esac  # left in build folders from before test_gpu_conv
        # test_gpu_conv without an argument runs both families (CTest runs it
        # once per family, as test_gpu_conv_sep and test_gpu_conv2d)
        tools="memcheck"
        case "$t" in *point|*orient|*conv|*fuse|*engine) tools="memcheck racecheck synccheck" ;; esac
        for tool in $tools; do
            s0=$(date +%s)
            if compute-sanitizer --tool "$tool" --error-exitcode 99 "$t" >>"$OUT/sanitizer.log" 2>&1; then
                echo "sanitizer $tool $(basename "$t"): clean ($(( $(date +%s) - s0 )) s)" >>"$OUT/sanitizer.txt"
            else
                echo "sanitizer $tool $(basename "$t"): FAILED (rc $?)" >>"$OUT/sanitizer.txt"; san_rc=1
            fi
        done
    done
    unset TS_TEST_QUICK TS_ENGINE_SMALL TS_SAMPLE_SMALL TS_CONV_SMALL
    # --device auto under memcheck: a job the GPU joins midway, and one photo that ends before it has started
    rm -rf "$BUILD/mixed" "$BUILD/mixed-out" && mkdir -p "$BUILD/mixed/one"
    for i in $(seq 1 48); do ln -s "$PWD/samples/photos/astronaut.jpg" "$BUILD/mixed/a$i.jpg"; done
    ln -s "$PWD/samples/photos/coffee-orient6.jpg" "$BUILD/mixed/one/c.jpg"
    ln -s "$PWD/samples/photos/astronaut.jpg" "$BUILD/mixed/one/a.jpg"
    for job in "$BUILD/mixed" "$BUILD/mixed/one"; do
        s0=$(date +%s)
        compute-sanitizer --tool memcheck --error-exitcode 99 "$BUILD/tilestream" run "$job" -o "$BUILD/mixed-out" \
              --device auto -j 1 --ops "resize=w=2400:h=2400,gauss=sigma=3" -y --report "$OUT/mixed.json" \
              >"$OUT/sanitizer-run.log" 2>&1
        rc=$?
        cat "$OUT/sanitizer-run.log" >>"$OUT/sanitizer.log"
        # a job too short for the GPU never calls CUDA, which the sanitizer reports as rc 255
        if [ "$rc" = 0 ] || { [ "$rc" = 255 ] && grep -q "terminated before first instrumented API call" "$OUT/sanitizer-run.log"; }; then
            echo "sanitizer memcheck run --device auto $(basename "$job"): clean ($(( $(date +%s) - s0 )) s;" \
                 "$(grep -o '"images_on_gpu": [0-9]*, "images_on_cpu": [0-9]*' "$OUT/mixed.json"); rc $rc)" >>"$OUT/sanitizer.txt"
        else
            echo "sanitizer memcheck run --device auto $(basename "$job"): FAILED (rc $rc)" >>"$OUT/sanitizer.txt"; san_rc=1
        fi
    done
fi
t2s=$(date +%s)

bench_rc=skipped
[ "${TS_SANITIZER:-1}" = only ] && TS_BENCH=0
if [ "${TS_BENCH:-1}" != 0 ] && [ "$#" -eq 0 ]; then
    "$BUILD/tilestream" bench all --json "$OUT/bench.json" >"$OUT/bench.txt" 2>&1
    bench_rc=$?
fi
t3=$(date +%s)

# End to end on the samples: the GPU engine with a trace and a timeline,
# and the global vs texture comparison on a photo.
if [ "${TS_BENCH:-1}" != 0 ] && [ "$#" -eq 0 ]; then
    rm -rf "$BUILD/run-out"
    "$BUILD/tilestream" run samples -o "$BUILD/run-out" --device gpu --ops "matrix=sepia,gauss=sigma=1.5,rot90" --stats \
        --report "$OUT/run-report.json" --trace "$OUT/run-trace.json" --timeline "$OUT/run-timeline.svg" \
        >"$OUT/run.txt" 2>&1
    "$BUILD/tilestream" compare samples/photos/astronaut.jpg samples/patterns/zoneplate-512.png \
        >"$OUT/compare.txt" 2>&1
fi

# Real photos through the fused chains and the 2-D convolutions on both
# devices and in OpenCV (scripts/photo_check.py), where python3 has OpenCV.
photo_rc=skipped
if [ "$#" -eq 0 ] && [ "${TS_SANITIZER:-1}" != only ] && python3 -c "import cv2, numpy" 2>/dev/null; then
    python3 scripts/photo_check.py --tilestream "$BUILD/tilestream" >"$OUT/photo.txt" 2>&1
    photo_rc=$?
fi
t4=$(date +%s)

echo "================ gpu tests ================"
grep -E "tests passed|Test +#|\*\*\*" "$OUT/gpu-tests.log" | tail -60
for f in sanitizer.txt run.txt compare.txt photo.txt bench.txt; do
    [ -f "$OUT/$f" ] && { echo "================ $f ================"; cat "$OUT/$f"; }
done
if [ -s "$OUT/texture.tsv" ]; then
    echo "================ end to end: engine (tiled and untiled) vs CPU backend, max abs over inputs ================"
    awk -F'\t' '{ k = $1 " (" $3 "-bit)"; if (!(k in n)) { n[k] = 0; order[++m] = k }
                   n[k]++; if ($4 > g[k]) g[k] = $4; if ($5 > t[k]) t[k] = $5; if ($6 > b[k]) b[k] = $6;
                   if ($5 > $6) over[k]++ }
         END { printf "%-76s %6s %7s %6s %s\n", "chain (inputs)", "global", "texture", "bound", "over";
               for (i = 1; i <= m; i++) { k = order[i];
                   printf "%-76s %6d %7d %6d %d of %d\n", k, g[k], t[k], b[k], over[k], n[k] } }' \
        "$OUT/texture.tsv"
fi
echo "================ summary ================"
printf '%-22s %s\n' "device" "$(sed -n 2p "$OUT/gpu.txt")"
printf '%-22s %s\n' "build (s)" "$((t1 - t0))"
printf '%-22s %s (rc %s)\n' "gpu tests (s)" "$((t2 - t1))" "$tests_rc"
printf '%-22s %s (rc %s)\n' "sanitizer (s)" "$((t2s - t2))" "$san_rc"
printf '%-22s %s (rc %s)\n' "bench (s)" "$((t3 - t2s))" "$bench_rc"
printf '%-22s %s (rc %s)\n' "photos (s)" "$((t4 - t3))" "$photo_rc"
[ "$tests_rc" != 0 ] && [ "$tests_rc" != skipped ] && exit 1
[ "$photo_rc" != 1 ] || exit 1
[ "$san_rc" != 1 ] || exit 1
