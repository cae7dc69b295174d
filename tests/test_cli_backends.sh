#!/usr/bin/env bash
# test_cli_backends.sh - --device auto uses both backends: the CPU starts on
# the first image at once while the GPU starts on a thread of its own. A job
# that ends before the GPU has started neither waits for it nor loses
# anything, and the report and -v name each image's backend. The GPU's start
# is made slower than any job here (TS_TEST_GPU_START_DELAY_MS), so this
# holds on machines with a GPU too. A job too short for a start to pay
# never begins it.
#   test_cli_backends.sh TILESTREAM SRCDIR JSON_CHECK
. "$(dirname "$0")/cli_common.sh"
json_check=$3
cuda=1
"$ts" --version | grep -q '^cuda *not built' && cuda=0

mkdir -p "$work/in"
cp "$pats/checker-512.png" "$pats/odd-1001x667.png" "$src/samples/photos/astronaut.jpg" "$work/in/"
ops="gauss=sigma=2,matrix=sepia,transpose"
expect_rc 0 "the CPU backend" "$ts" run "$work/in" -o "$work/cpu" --ops "$ops" --device cpu -q

# a GPU start of a minute: the job must end long before, with every output
# (-j 1: more images than workers, or the GPU would not be started at all)
t0=$(date +%s%N)
TS_TEST_GPU_START_DELAY_MS=60000 "$ts" run "$work/in" -o "$work/auto" --ops "$ops" --device auto -v -j 1 \
    --report "$work/r.json" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" = 0 ] || { fail "auto with a slow GPU start: exit $rc"; cat "$work/err.txt"; }
[ "$ms" -lt 30000 ] || fail "auto waited for the GPU's start: $ms ms"
for f in checker-512.png odd-1001x667.png astronaut.jpg; do
    # the CPU's images are the CPU backend's bytes
    cmp -s "$work/cpu/in/$f" "$work/auto/in/$f" || fail "$f: auto's output differs from --device cpu's"
done
check "report is valid JSON" "$json_check" "$work/r.json"
contains "$work/r.json" '"images_on_gpu": 0, "images_on_cpu": 3'
[ "$(grep -c '"backend": "cpu"' "$work/r.json")" = 3 ] || { fail "the report names no backend"; cat "$work/r.json"; }
contains "$work/r.json" '"phases_s": {"program": \['
contains "$work/r.json" '"memory": {"budget_mb": '
contains "$work/out.txt" "phases (s from the start):"
[ "$(grep -c 'on the CPU, decode' "$work/err.txt")" = 3 ] || { fail "-v names no backend"; cat "$work/err.txt"; }
if [ "$cuda" = 1 ]; then
    contains "$work/r.json" 'before the GPU had started'
    contains "$work/out.txt" "images on the GPU 0, on the CPU 3"
fi

# without the delay: the GPU joins, or is found missing, or comes too late; nothing is lost either way
expect_rc 0 "auto" "$ts" run "$work/in" -o "$work/auto2" --ops "$ops" --device auto -q --report "$work/r2.json"
check "report is valid JSON" "$json_check" "$work/r2.json"
n_cpu=$(grep -o '"images_on_cpu": [0-9]*' "$work/r2.json" | grep -o '[0-9]*$')
n_gpu=$(grep -o '"images_on_gpu": [0-9]*' "$work/r2.json" | grep -o '[0-9]*$')
[ "$((n_cpu + n_gpu))" = 3 ] || fail "auto: $n_cpu on the CPU and $n_gpu on the GPU, of 3"
for f in checker-512.png odd-1001x667.png astronaut.jpg; do
    [ -s "$work/auto2/in/$f" ] || fail "auto: $f not written"
done
# three small images on one worker: more images than workers, but the CPU's pace projects far less
# than a second of work, so the GPU start is never begun (it would cost more than it could give)
expect_rc 0 "auto, a short job" "$ts" run "$work/in" -o "$work/short" --ops "$ops" --device auto -q -j 1 \
    --report "$work/r4.json"
[ "$cuda" = 0 ] || contains "$work/r4.json" '"gpu_note": "not started: the CPU'"'"'s work left was never projected past 1 s'
[ "$cuda" = 0 ] || contains "$work/r4.json" '"images_on_gpu": 0, "images_on_cpu": 3'
# no more images than workers: the job ends within an image's time, so the GPU is not even started
expect_rc 0 "auto, one image" "$ts" run "$pats/checker-512.png" -o "$work/one" --device auto -q -j 2 --report "$work/r3.json"
[ "$cuda" = 0 ] || contains "$work/r3.json" '"gpu_note": "not started: 1 image, one a CPU worker"'
# --device gpu with the CPU codecs decodes while the GPU starts, finding the
# device only then: with one, every image is written (on the GPU); without
# one (or without CUDA), exit 2 with the cause and no output at all
"$ts" run "$work/in" -o "$work/pure" --ops "$ops" --device gpu --codec cpu -q >"$work/pure.txt" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
    for f in checker-512.png odd-1001x667.png astronaut.jpg; do
        [ -s "$work/pure/in/$f" ] || fail "--device gpu --codec cpu: $f not written"
    done
else
    [ "$rc" = 2 ] || fail "--device gpu --codec cpu without a GPU: exit $rc (want 2)"
    grep -qi "gpu\|cuda" "$work/pure.txt" || { fail "--device gpu without a GPU: no cause given"; cat "$work/pure.txt"; }
    [ -z "$(find "$work/pure" -type f 2>/dev/null)" ] || fail "--device gpu without a GPU wrote files"
    # the images it never began are counted, not listed one by one as failures
    ! grep -q "FAILED" "$work/pure.txt" || { fail "--device gpu without a GPU listed images never begun"; cat "$work/pure.txt"; }
fi
finish test_cli_backends
