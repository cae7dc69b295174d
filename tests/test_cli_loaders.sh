#!/usr/bin/env bash
# test_cli_loaders.sh TILESTREAM SRCDIR - the loaders' refusals from the
# command line: damaged JPEGs refused unless --accept-damaged, hostile
# headers refused by `run` and described or refused by `info`, each named.
set -u
ts=$1
src=$2
reg=$src/tests/data/fuzz-regressions
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
expect_rc() { # expect_rc RC "what" command...
    local want=$1 what=$2; shift 2
    "$@" >"$work/out.txt" 2>"$work/err.txt"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $what: exit $rc, wanted $want"; cat "$work/err.txt"; fails=$((fails + 1))
    fi
}
contains() { grep -q -- "$2" "$1" || { echo "FAIL: $1 lacks '$2'"; cat "$1"; fails=$((fails + 1)); }; }

# A JPEG whose entropy data stops early: refused by default, decoded on request.
expect_rc 1 "damaged JPEG" "$ts" run "$reg/jpeg/cut-then-eoi.jpg" -o "$work/o1" --device cpu
contains "$work/err.txt" "cut-then-eoi.jpg"
contains "$work/err.txt" "premature end of data segment"
contains "$work/err.txt" "--accept-damaged"
[ -z "$(ls -A "$work/o1" 2>/dev/null)" ] || { echo "FAIL: output written for a refused input"; fails=$((fails + 1)); }
expect_rc 0 "damaged JPEG, accepted" "$ts" run "$reg/jpeg/cut-then-eoi.jpg" -o "$work/o2" --device cpu --accept-damaged
[ -n "$(find "$work/o2" -name 'cut-then-eoi.jpg')" ] || { echo "FAIL: no output with --accept-damaged"; fails=$((fails + 1)); }

# 12-bit: unsupported, in run and in info.
expect_rc 1 "12-bit JPEG" "$ts" run "$reg/jpeg/12bit.jpg" -o "$work/o3" --device cpu
contains "$work/err.txt" "12-bit JPEG"
expect_rc 1 "info 12-bit JPEG" "$ts" info "$reg/jpeg/12bit.jpg"
contains "$work/err.txt" "not supported"

# Headers claiming huge sizes: info describes them, run refuses them.
expect_rc 0 "info on a 2^31-pixel row" "$ts" info "$reg/png/wide-row.png"
contains "$work/out.txt" "2147483647x1"
expect_rc 1 "run on a 2^31-pixel row" "$ts" run "$reg/png/wide-row.png" -o "$work/o4" --device cpu
contains "$work/err.txt" "over the limit"
expect_rc 1 "run on a 30000x30000 JPEG of 1 KB" "$ts" run "$reg/jpeg/30000x30000.jpg" -o "$work/o5" --device cpu
contains "$work/err.txt" "decompression bomb"
expect_rc 1 "info on a 2 GB tEXt length" "$ts" info "$reg/png/long-tEXt.png"
contains "$work/err.txt" "truncated PNG"

# A folder of all of them with a good image: the good one is done, exit 1.
cp "$reg"/png/*.png "$reg"/jpeg/*.jpg "$work/" 2>/dev/null
mkdir -p "$work/mixed" && mv "$work"/*.png "$work"/*.jpg "$work/mixed/"
cp "$src/samples/patterns/checker-512.png" "$work/mixed/"
expect_rc 1 "a folder of hostile files and one good one" "$ts" run "$work/mixed" -o "$work/o6" --device cpu
[ -n "$(find "$work/o6" -name 'checker-512.png')" ] || { echo "FAIL: the good image was not done"; fails=$((fails + 1)); }

# EXIF kept through run: the orientation applied and its tag set to 1, the
# other tags (Make=tilestream) still there; with --keep-orientation the tag stays.
for fmt in jpg png; do
    expect_rc 0 "run keeps EXIF ($fmt)" "$ts" run "$src/tests/data/jpeg/orient6.jpg" -o "$work/e-$fmt" --device cpu --format "$fmt"
    out=$(find "$work/e-$fmt" -name "orient6.$fmt")
    expect_rc 0 "info on the output" "$ts" info "$out"
    contains "$work/out.txt" "32x48"
    contains "$work/out.txt" "orientation 1"
    grep -q tilestream "$out" || { echo "FAIL: $out lost its EXIF"; fails=$((fails + 1)); }
done
expect_rc 0 "run --keep-orientation" "$ts" run "$src/tests/data/jpeg/orient6.jpg" -o "$work/k" --device cpu --keep-orientation
expect_rc 0 "info on the output" "$ts" info "$(find "$work/k" -name orient6.jpg)"
contains "$work/out.txt" "orientation 6"

if [ "$fails" -ne 0 ]; then echo "cli loaders: $fails failures"; exit 1; fi
echo "cli loaders: all passed"
