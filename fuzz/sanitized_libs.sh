#!/usr/bin/env bash
# Build libpng and libjpeg-turbo from Debian's sources (the versions the
# system uses, with Debian's patches) with clang, AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage, as static libraries
# under DIR/prefix, so that the fuzz targets run the real decoders
# instrumented, not only tilestream's code around them.
#   fuzz/sanitized_libs.sh DIR        (prints DIR/prefix on success)
# Needs the Debian source archive (deb-src; a private apt state under DIR,
# the system's apt configuration is not touched), dpkg-source, cmake and
# clang. Exits 3 when the sources cannot be fetched, so callers can say so.
set -euo pipefail
dir=$(mkdir -p "$1" && cd "$1" && pwd)
prefix=$dir/prefix
if [ -f "$prefix/.done" ]; then echo "$prefix"; exit 0; fi

# ---- sources: apt-get source with a private list of deb-src entries
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mkdir -p "$dir/apt/lists/partial" "$dir/src"
echo "deb-src http://deb.debian.org/debian $suite main" >"$dir/apt/sources.list"
apt_opts=(-o Dir::Etc::sourcelist="$dir/apt/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$dir/apt/lists"
          -o APT::Sandbox::User=root)
if ! (apt-get "${apt_opts[@]}" update && cd "$dir/src" && apt-get "${apt_opts[@]}" source --download-only libpng1.6 libjpeg-turbo) \
     >"$dir/fetch.log" 2>&1; then
    echo "sanitized_libs: cannot fetch the Debian sources (see $dir/fetch.log)" >&2
    exit 3
fi
cd "$dir/src"
rm -rf libpng libjpeg
dpkg-source -x --no-check libpng1.6_*.dsc libpng >/dev/null
dpkg-source -x --no-check libjpeg-turbo_*.dsc libjpeg >/dev/null

# ---- build: static, instrumented; zlib stays the system's
flags="-O1 -g -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer"
jobs=$(nproc)
cmake -S libjpeg -B build-jpeg -DCMAKE_C_COMPILER=clang -DCMAKE_C_FLAGS="$flags" -DCMAKE_BUILD_TYPE=None \
    -DENABLE_SHARED=OFF -DENABLE_STATIC=ON -DWITH_SIMD=OFF -DWITH_TURBOJPEG=OFF -DWITH_JPEG8=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR="$prefix/lib" >"$dir/build-jpeg.log" 2>&1
cmake --build build-jpeg -j "$jobs" --target install >>"$dir/build-jpeg.log" 2>&1
cmake -S libpng -B build-png -DCMAKE_C_COMPILER=clang -DCMAKE_C_FLAGS="$flags" -DCMAKE_BUILD_TYPE=None \
    -DPNG_SHARED=OFF -DPNG_STATIC=ON -DPNG_TESTS=OFF -DPNG_HARDWARE_OPTIMIZATIONS=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR="$prefix/lib" >"$dir/build-png.log" 2>&1
cmake --build build-png -j "$jobs" --target install >>"$dir/build-png.log" 2>&1
touch "$prefix/.done"
echo "$prefix"
