#!/usr/bin/env bash
# test_gpu_backends.sh - on a machine with a GPU: a --device auto job long
# enough for the GPU to join writes, for every image, exactly the bytes of
# the backend its report names (--device cpu's or --device gpu's; the JPEG
# codecs on the CPU for all three, so that only the ops' backend differs:
# nvJPEG decodes and encodes some of the GPU's images otherwise); and a
# one-photo job, which ends before the GPU has started, exits with its
# output written; --device gpu decoding while the GPU starts changes no
# byte. Exit 77 (skipped) without a GPU.
#   test_gpu_backends.sh TILESTREAM SRCDIR JSON_CHECK
. "$(dirname "$0")/cli_common.sh"
json_check=$3
"$ts" --version | grep -q '^auto *gpu:' || { echo "no GPU: skipped"; exit 77; }

mkdir -p "$work/in" "$work/one"
for i in $(seq -w 1 200); do
    if [ $((10#$i % 2)) = 0 ]; then ln -s "$src/samples/photos/astronaut.jpg" "$work/in/a$i.jpg"
    else ln -s "$src/samples/photos/coffee-orient6.jpg" "$work/in/c$i.jpg"; fi
done
ops="resize=w=2400:h=2400,gauss=sigma=3,matrix=sepia"
expect_rc 0 "cpu" "$ts" run "$work/in" -o "$work/cpu" --ops "$ops" --device cpu -q
expect_rc 0 "gpu" "$ts" run "$work/in" -o "$work/gpu" --ops "$ops" --device gpu --codec cpu -q
expect_rc 0 "auto" timeout 300 "$ts" run "$work/in" -o "$work/auto" --ops "$ops" --device auto --codec cpu -q --report "$work/r.json"
check "report is valid JSON" "$json_check" "$work/r.json"
n=0
while read -r name backend; do
    n=$((n + 1))
    cmp -s "$work/auto/in/$name" "$work/$backend/in/$name" || fail "$name: not the $backend backend's bytes"
done < <(grep -o '"output": "[^"]*", "status": "ok", "backend": "[a-z]*"' "$work/r.json" |
         sed 's#.*/\([^/"]*\)", "status": "ok", "backend": "\([a-z]*\)"#\1 \2#')
[ "$n" = 200 ] || fail "the report names the backend of $n images of 200"
echo "auto: $(grep -o '"images_on_gpu": [0-9]*, "images_on_cpu": [0-9]*' "$work/r.json"); $(grep -o '"gpu_note": "[^"]*"' "$work/r.json")"
# seconds of CPU work: the GPU is worth starting, and joins
grep -q '"images_on_gpu": 0,' "$work/r.json" && fail "auto: the GPU took no image of 200"
# --device gpu with the CPU codecs decodes the first images while the GPU
# starts (here held back 1.5 s, so that they all wait in ordinary memory and
# move into pinned memory when it comes): the same bytes as a start that
# did not wait
expect_rc 0 "gpu, late start" env TS_TEST_GPU_START_DELAY_MS=1500 "$ts" run "$work/in" -o "$work/gpu-late" --ops "$ops" \
    --device gpu --codec cpu -q --trace "$work/late.json" --report "$work/late-r.json"
for f in "$work"/gpu/in/*.jpg; do
    cmp -s "$f" "$work/gpu-late/in/$(basename "$f")" || fail "$(basename "$f"): a late GPU start changed its bytes"
done
grep -qE '"name":"(pinned in place|to pinned)"' "$work/late.json" || fail "late start: no image was decoded before the GPU was there"
grep -q '"images_on_gpu": 200, "images_on_cpu": 0' "$work/late-r.json" || fail "late start: not every image on the GPU"
# with nvJPEG taking part: every image written, each backend named
expect_rc 0 "auto, codec auto" timeout 300 "$ts" run "$work/in" -o "$work/auto2" --ops "$ops" --device auto -q --report "$work/r2.json"
[ "$(grep -c '"backend": "[cg]pu"' "$work/r2.json")" = 200 ] || fail "codec auto: not every image named its backend"
[ "$(find "$work/auto2" -name '*.jpg' | wc -l)" = 200 ] || fail "codec auto: not every image written"

# every image admitted to the CPU before the GPU is ready, some not yet
# decoded when it is (they may still go to it): the run ends, every image written
mkdir -p "$work/few"
for i in $(seq 1 24); do ln -s "$src/samples/photos/astronaut.jpg" "$work/few/a$i.jpg"; done
expect_rc 0 "24 photos, 16 workers, auto" timeout 120 "$ts" run "$work/few" -o "$work/few-out" --ops "$ops" --device auto -j 16 -q
[ "$(find "$work/few-out" -name '*.jpg' | wc -l)" = 24 ] || fail "24 photos: not every image written"

# two photos on one worker: the CPU finishes them before the GPU has started; the process must not wait or hang
ln -s "$src/samples/photos/astronaut.jpg" "$work/one/a.jpg"
ln -s "$src/samples/photos/coffee-orient6.jpg" "$work/one/c.jpg"
expect_rc 0 "two photos, auto" timeout 60 "$ts" run "$work/one" -o "$work/one-out" --ops "$ops" --device auto -v -j 1 \
    --report "$work/one.json"
[ -s "$work/one-out/one/a.jpg" ] && [ -s "$work/one-out/one/c.jpg" ] || fail "two photos: not written"
cat "$work/out.txt"
finish test_gpu_backends
