#!/usr/bin/env bash
# setup.sh - from a fresh checkout to processed samples in one command:
# install the build dependencies that are missing, configure, build, and run
# the main job on samples/ (outputs in out/samples/...).
#
#   scripts/setup.sh                  everything; CUDA kernels only where they can run here
#   scripts/setup.sh --cpu            CPU-only build, even with a GPU (same as TS_CUDA=OFF)
#   scripts/setup.sh --cuda           build the CUDA kernels, GPU or not (TS_CUDA=ON; needs nvcc)
#   scripts/setup.sh --no-stb         neither install nor use stb (no BMP/TGA/HDR output; -DTS_STB=OFF)
#   scripts/setup.sh --deps-only      install the dependencies and stop (CI uses this)
#   scripts/setup.sh --fuzz           also install clang and its libFuzzer runtime (fuzz/run.sh)
#   scripts/setup.sh --test-tools     also install ImageMagick, which the tests compare against
#   scripts/setup.sh --no-run         configure and build, do not run the samples
#   scripts/setup.sh -- -DCMAKE_CUDA_ARCHITECTURES=80   anything after -- goes to cmake
# Environment: BUILD (build dir, default build), OUT (default out), JOBS
# (default: every core), TS_CUDA (AUTO, ON or OFF; the flags above set it).
#
# Packages: apt (Debian, Ubuntu) is used directly, with sudo when not root,
# and only for what is missing; elsewhere the command to run is printed and
# the build is tried with what is installed.
#
# CUDA: with the default AUTO the kernels are built when nvcc is found AND a
# usable NVIDIA driver sees a GPU (nvidia-smi) whose driver supports nvcc's
# CUDA major version. nvcc without a usable GPU gives a CPU-only build: the
# kernels take minutes to compile and could not run here. --cuda builds
# them anyway (for example to ship the binary to a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
OUT=${OUT:-out}
cuda=${TS_CUDA:-AUTO}
stb=1 deps_only=0 fuzz=0 run=1 test_tools=0
cmake_extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --cpu) cuda=OFF ;;
        --cuda) cuda=ON ;;
        --no-stb) stb=0 ;;
        --deps-only) deps_only=1 ;;
        --fuzz) fuzz=1 ;;
        --test-tools) test_tools=1 ;;
        --no-run) run=0 ;;
        --) shift; cmake_extra=("$@"); break ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup: unknown option '$1' (see scripts/setup.sh --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$cuda" in AUTO|ON|OFF) ;; *) echo "setup: TS_CUDA must be AUTO, ON or OFF, not '$cuda'" >&2; exit 2 ;; esac
say() { echo "setup: $*"; }

# ---- dependencies -----------------------------------------------------------
# (no 'cmd | grep -q' under pipefail: grep stopping early fails the pipe)
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
candidate() { [[ "$(apt-cache policy "$1" 2>/dev/null)" == *"Candidate: "[!\(]* ]]; }
can_root() { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Each entry is one need; alternatives are separated by '|' (the first with
# an install candidate is taken: libjpeg62-turbo-dev on Debian,
# libjpeg-turbo8-dev on Ubuntu).
apt_needs() {
    command -v cmake >/dev/null || echo cmake
    command -v make >/dev/null || echo make
    command -v cc >/dev/null || echo gcc
    echo libc6-dev
    echo libpng-dev
    echo "libjpeg62-turbo-dev|libjpeg-turbo8-dev|libjpeg-dev"
    echo zlib1g-dev
    [ "$stb" = 1 ] && echo "libstb-dev?"     # '?': optional, skipped if the archive lacks it
    [ "$fuzz" = 1 ] && echo clang && echo dpkg-dev   # dpkg-source: fuzz/sanitized_libs.sh
    [ "$test_tools" = 1 ] && echo "imagemagick?"
    return 0
}

apt_install() {
    local need alt wanted=() missing=() optional=() pick
    for need in $(apt_needs); do
        local any=0
        for alt in ${need//|/ }; do installed "${alt%\?}" && any=1; done
        [ "$any" = 0 ] && wanted+=("$need")
    done
    if [ "${#wanted[@]}" = 0 ]; then
        say "build dependencies already installed"
    elif ! can_root; then
        say "missing: ${wanted[*]//|/ or } ('?': optional); not root and no sudo, so they are not installed"
        if [[ " ${wanted[*]} " == *[!?]\ * ]]; then   # something required is missing
            say "install them as root (apt-get install ...) and run this again"; exit 1
        fi
    else
        say "updating the package lists (apt-get update)"
        as_root apt-get update -q >/dev/null
        for need in "${wanted[@]}"; do
            pick=
            for alt in ${need//|/ }; do candidate "${alt%\?}" && { pick=${alt%\?}; break; }; done
            if [ -n "$pick" ]; then missing+=("$pick")
            elif [ "${need%\?}" != "$need" ]; then optional+=("${need%\?}")
            else say "no package in this machine's archive provides '$need'"; exit 1
            fi
        done
        [ "${#optional[@]}" -gt 0 ] && say "optional ${optional[*]} is not in this machine's archive: building without it"
        if [ "${#missing[@]}" -gt 0 ]; then
            say "installing ${missing[*]}"
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
        fi
    fi
    # libFuzzer's runtime comes with the clang of the same major version.
    if [ "$fuzz" = 1 ]; then
        local rt
        rt="libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
        if ! installed "$rt" && can_root && candidate "$rt"; then
            say "installing $rt"
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$rt"
        fi
    fi
}

other_os_hint() {
    say "this script installs packages with apt only; install these, then run it again:"
    if command -v dnf >/dev/null; then
        echo "  sudo dnf install cmake make gcc libpng-devel libjpeg-turbo-devel zlib-devel"
        echo "  optional, BMP/TGA/HDR output: sudo dnf install stb_image_write-devel  (RHEL: from EPEL)"
    elif [ "$(uname -s)" = Darwin ]; then
        echo "  xcode-select --install   # the C compiler, if 'cc' is missing"
        echo "  brew install cmake libpng jpeg-turbo"
        echo "  optional, BMP/TGA/HDR output: put stb_image_write.h in a folder D and add: -- -DSTB_INCLUDE_DIR=D"
    else
        echo "  CMake >= 3.20, a C11 compiler, make, and the development files of libpng, libjpeg(-turbo) and zlib"
        echo "  optional: stb_image_write.h (BMP/TGA/HDR output), the CUDA toolkit (GPU kernels)"
    fi
}

if command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
    apt_install
else
    other_os_hint
    command -v cmake >/dev/null || exit 1
    # Homebrew's jpeg-turbo is keg-only: show CMake where it is.
    if command -v brew >/dev/null && [ -d "$(brew --prefix jpeg-turbo 2>/dev/null)" ]; then
        cmake_extra=(-DCMAKE_PREFIX_PATH="$(brew --prefix jpeg-turbo)" ${cmake_extra[@]+"${cmake_extra[@]}"})
    fi
fi
[ "$deps_only" = 1 ] && exit 0

# ---- CUDA or not --------------------------------------------------------------
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ "$cuda" = AUTO ]; then
    if [ -z "$nvcc" ]; then
        cuda=OFF; say "no nvcc: CPU-only build"
    elif [[ "$(nvidia-smi -L 2>/dev/null)" != GPU\ * ]]; then
        cuda=OFF; say "nvcc found but no usable NVIDIA driver or GPU (nvidia-smi -L): CPU-only build, which is much quicker; --cuda builds the kernels anyway"
    else
        drv=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\).*/\1/p' | head -1)
        tk=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\).*/\1/p')
        if [ -n "$drv" ] && [ -n "$tk" ] && [ "$drv" -lt "$tk" ]; then
            cuda=OFF; say "the driver supports CUDA $drv but nvcc is CUDA $tk, whose kernels it could not run: CPU-only build; --cuda builds them anyway"
        else
            cuda=ON
            # Build for the GPUs in this machine unless told otherwise.
            if [[ " ${cmake_extra[*]} " != *CMAKE_CUDA_ARCHITECTURES* ]]; then
                arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d . | sort -u | paste -sd';' || true)
                [[ "$arch" =~ ^[0-9\;]+$ ]] && cmake_extra=(-DCMAKE_CUDA_ARCHITECTURES="$arch" ${cmake_extra[@]+"${cmake_extra[@]}"})
            fi
            say "nvcc and $(nvidia-smi -L | head -1 | cut -d'(' -f1)found: building the CUDA kernels"
        fi
    fi
fi

# ---- configure, build, run the samples ----------------------------------------
jobs=${JOBS:-$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)}
ts_stb=ON; [ "$stb" = 1 ] || ts_stb=OFF
configure=(cmake -S . -B "$BUILD" -DTS_CUDA="$cuda" -DTS_STB="$ts_stb" ${cmake_extra[@]+"${cmake_extra[@]}"})
say "${configure[*]}"
if ! "${configure[@]}"; then
    say "configuring failed; the missing package is named above"
    command -v apt-get >/dev/null || other_os_hint
    exit 1
fi
cmake --build "$BUILD" -j "$jobs"
[ "$run" = 1 ] || exit 0
chain="matrix=sepia,gauss=sigma=1.5,rot90"
say "$BUILD/tilestream run samples -o $OUT --ops \"$chain\""
"$BUILD/tilestream" run samples -o "$OUT" --ops "$chain"
say "done: outputs in $OUT/samples/; the tests: ctest --test-dir $BUILD -L cpu --output-on-failure"
