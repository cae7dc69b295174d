#!/usr/bin/env bash
# Build the libFuzzer targets and run each for a bounded time.
#   fuzz/run.sh [SECONDS_PER_TARGET] [BUILD_DIR]      (default 60, build-fuzz)
# Seeds: PngSuite and the JPEG fixtures in tests/data, the sample images,
# the sample chains, and the kept regressions; new corpus entries go to
# BUILD_DIR/corpus-*. A crash leaves its input as BUILD_DIR/crash-* and
# fails the run: fix it and keep the input in tests/data/fuzz-regressions/.
# Extra libFuzzer flags can be given in FUZZ_FLAGS (e.g. -runs=N, -jobs=N);
# FUZZ_LIBS=sanitized fuzzes libpng and libjpeg-turbo instrumented too.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-fuzz}

# FUZZ_LIBS=sanitized: libpng and libjpeg-turbo from Debian's sources, built
# instrumented (fuzz/sanitized_libs.sh), so that the decoders' own code is
# covered and checked too; where the sources cannot be fetched, the
# system's libraries are used and the run says so.
libs=()
if [ "${FUZZ_LIBS:-system}" = sanitized ]; then
    if prefix=$(bash fuzz/sanitized_libs.sh "$build/libs"); then
        libs=(-DPNG_LIBRARY="$prefix/lib/libpng16.a" -DPNG_PNG_INCLUDE_DIR="$prefix/include"
              -DJPEG_LIBRARY="$prefix/lib/libjpeg.a" -DJPEG_LIBRARY_RELEASE="$prefix/lib/libjpeg.a"
              -DJPEG_INCLUDE_DIR="$prefix/include")
        echo "fuzz: libpng and libjpeg-turbo built with the sanitizers ($prefix)"
    else
        echo "fuzz: NOTE: the system's libpng and libjpeg-turbo (not instrumented): no Debian sources here"
    fi
fi
CC=${CC:-clang} cmake -S . -B "$build" -DTS_FUZZ=ON -DTS_CUDA=OFF -DBUILD_TESTING=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${libs[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_png fuzz_jpeg fuzz_chain

regress=tests/data/fuzz-regressions
mkdir -p "$regress/png" "$regress/jpeg" "$regress/chain"
mkdir -p "$build/seed-chain" "$build/corpus-png" "$build/corpus-jpeg" "$build/corpus-chain"
i=0
for f in samples/chains/*.chain; do
    grep -v '^#' "$f" | while IFS= read -r line; do
        [ -n "$line" ] && printf '%s' "$line" > "$build/seed-chain/$(basename "$f" .chain)-$((i++))"
    done
done
printf '%s' 'matrix=sepia,gauss=sigma=1.5,sharpen=amount=0.6,transpose,resize=w=1920:h=-1' \
    > "$build/seed-chain/readme-example"

# Seeds bigger than max_len are cut; 64 KB keeps executions fast and still
# covers every header, chunk and marker path.
flags=(-max_total_time="$seconds" -max_len=65536 -rss_limit_mb=1024 -malloc_limit_mb=512
       -timeout=10 -print_final_stats=1 -artifact_prefix="$build/")
# shellcheck disable=SC2086
"$build/fuzz/fuzz_png" "${flags[@]}" ${FUZZ_FLAGS:-} "$build/corpus-png" tests/data/pngsuite \
    samples/patterns samples/photos "$regress/png"
# shellcheck disable=SC2086
"$build/fuzz/fuzz_jpeg" "${flags[@]}" ${FUZZ_FLAGS:-} "$build/corpus-jpeg" tests/data/jpeg \
    tests/data/bad samples/photos "$regress/jpeg"
# shellcheck disable=SC2086
"$build/fuzz/fuzz_chain" "${flags[@]}" ${FUZZ_FLAGS:-} "$build/corpus-chain" "$build/seed-chain" \
    "$regress/chain"
echo "fuzz: no crash in ${seconds}s per target"
