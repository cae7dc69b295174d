#!/usr/bin/env bash
# test_cli.sh TILESTREAM SRCDIR - the command line end to end: the samples,
# bad inputs among good ones, bad chains, refusals, reports and exit codes.
set -u
ts=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
check() { # check "what" command...: the command must succeed
    local what=$1; shift
    if ! "$@"; then echo "FAIL: $what"; fails=$((fails + 1)); fi
}
expect_rc() { # expect_rc RC "what" command...
    local want=$1 what=$2; shift 2
    "$@" >"$work/out.txt" 2>"$work/err.txt"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $what: exit $rc, wanted $want"; cat "$work/err.txt"; fails=$((fails + 1))
    fi
}
contains() { grep -q -- "$2" "$1" || { echo "FAIL: $1 lacks '$2'"; cat "$1"; fails=$((fails + 1)); }; }

# --- help, version, ops, info
expect_rc 0 "--version" "$ts" --version;             contains "$work/out.txt" "tilestream "
for lib in libpng zlib libjpeg cuda stb auto; do contains "$work/out.txt" "$lib "; done
expect_rc 0 "--help" "$ts" --help;                   contains "$work/out.txt" "tilestream run"
expect_rc 0 "run --help" "$ts" run --help;           contains "$work/out.txt" "--ops CHAIN"
expect_rc 2 "no command" "$ts"
expect_rc 2 "unknown command" "$ts" frobnicate
expect_rc 0 "ops" "$ts" ops;                         contains "$work/out.txt" "gauss"
contains "$work/out.txt" "sigma"
expect_rc 0 "info" "$ts" info "$src/samples/photos/coffee-orient6.jpg" "$src/samples/photos/rocket-16bit.png"
contains "$work/out.txt" "orientation 6"
contains "$work/out.txt" "16-bit"
expect_rc 1 "info on a bad file" "$ts" info "$src/tests/data/bad/text.png"
contains "$work/err.txt" "text.png"

# --- the samples through a chain on the CPU: every image out, a report
expect_rc 0 "run samples" "$ts" run "$src/samples" -o "$work/o1" --device cpu --ops "matrix=sepia,gauss=sigma=1,rot90" \
    --report "$work/r1.json" --trace "$work/t1.json" --timeline "$work/t1.svg" --stats
n_in=$(find "$src/samples" -name '*.png' -o -name '*.jpg' | wc -l)
n_out=$(find "$work/o1" -type f | wc -l)
[ "$n_in" = "$n_out" ] || { echo "FAIL: $n_in inputs but $n_out outputs"; fails=$((fails + 1)); }
check "mirrored tree" test -f "$work/o1/samples/photos/astronaut.jpg"
check "16-bit stays png" test -f "$work/o1/samples/photos/rocket-16bit.png"
contains "$work/out.txt" "decode"
contains "$work/out.txt" "encode"
contains "$work/out.txt" "device: cpu"
contains "$work/r1.json" '"ok": '"$n_in"
contains "$work/r1.json" '"stages"'
contains "$work/t1.json" '"traceEvents"'
contains "$work/t1.svg" "<svg"
# rot90 after EXIF orientation 6: the 400x600 stored coffee becomes 600x400 upright, then 400x600
expect_rc 0 "info on output" "$ts" info "$work/o1/samples/photos/coffee-orient6.jpg"
contains "$work/out.txt" "400x600"

# --- format conversion without a chain keeps pixels: png -> png is identical
# (BMP needs stb_image_write; a build without it must refuse clearly and write nothing)
if [ "${TS_TEST_STB:-ON}" = ON ]; then
    expect_rc 0 "convert" "$ts" run "$src/samples/patterns/checker-512.png" -o "$work/o2" --format bmp -q
    check "bmp written" test -s "$work/o2/checker-512.bmp"
else
    expect_rc 2 "bmp refused without stb, before work" "$ts" run "$src/samples/patterns/checker-512.png" -o "$work/o2" --format bmp -q
    contains "$work/err.txt" "without stb_image_write"
    check "nothing written without stb" test -z "$(find "$work/o2" -type f 2>/dev/null)"
fi

# --- bad inputs among good ones: each named, the rest processed, exit 1
mkdir -p "$work/mixed"
cp "$src/tests/data/bad/"* "$work/mixed/"
cp "$src/samples/patterns/odd-1001x667.png" "$work/mixed/good.png"
head -c 3000 "$src/samples/photos/astronaut.jpg" >"$work/mixed/truncated.jpg"
head -c 5000 "$src/samples/photos/chelsea.png" >"$work/mixed/truncated.png"
expect_rc 1 "mixed bad inputs" "$ts" run "$work/mixed" -o "$work/o3" --device cpu --ops "gauss"
for f in empty.png text.png huge.png huge.jpg truncated.jpg truncated.png; do contains "$work/err.txt" "$f"; done
check "good one processed" test -s "$work/o3/mixed/good.png"
leftovers=$(find "$work/o3" -name '*.tmp' -o -name '.*' -type f | wc -l)
[ "$leftovers" = 0 ] || { echo "FAIL: temporary files left"; fails=$((fails + 1)); }
check "inputs untouched" cmp -s "$src/samples/patterns/odd-1001x667.png" "$work/mixed/good.png"

# --- bad chain: exit 2 with a suggestion; missing -o; output == input refused
expect_rc 2 "bad chain" "$ts" run "$src/samples/patterns" -o "$work/o4" --ops "gaus=sigma=2"
contains "$work/err.txt" "did you mean 'gauss'"
expect_rc 2 "no -o" "$ts" run "$src/samples/patterns"
expect_rc 2 "bad option value" "$ts" run x -o y --streams 0
mkdir -p "$work/self" && cp "$src/samples/patterns/checker-512.png" "$work/self/a.png"
expect_rc 1 "output == input refused" "$ts" run "$work/self/a.png" -o "$work/self"
contains "$work/err.txt" "replace-input"
expect_rc 0 "output == input with --overwrite" "$ts" run "$work/self/a.png" -o "$work/self" --overwrite --ops flip=h -q

# --- skip-existing and dry-run
expect_rc 0 "skip existing" "$ts" run "$src/samples/patterns" -o "$work/o1" --skip-existing --device cpu
contains "$work/out.txt" "skipped"
expect_rc 0 "dry run" "$ts" run "$src/samples/patterns" -o "$work/o5" --dry-run
check "dry run writes nothing" test ! -e "$work/o5"

[ "$fails" = 0 ] && echo "cli: all passed" || echo "cli: $fails failures"
exit $((fails > 0))
