#!/usr/bin/env bash
# test_cli_options.sh TILESTREAM SRCDIR - a number out of its range is refused
# before any work (exit 2), with the library's words naming the option and
# its range (tilestream.h's ts_option table), in every command that takes it;
# the edges of each range are accepted.
set -u
. "$(dirname "$0")/cli_common.sh"
img=$pats/checker-512.png

# run: each option past either end of its range
while read -r opt bad range what; do
    expect_rc 2 "run $opt $bad" "$ts" run "$img" -o "$work/out" --device cpu $opt "$bad"
    contains "$work/err.txt" "$what $bad is not in $range ($opt)"
    check "run $opt $bad wrote nothing" test ! -e "$work/out"
done <<'LIST'
--quality 0 1..100 JPEG quality
--quality 101 1..100 JPEG quality
--png-level -1 0..9 PNG compression level
--png-level 10 0..9 PNG compression level
--streams 0 1..16 GPU streams
--streams 17 1..16 GPU streams
--jobs 0 1..256 codec threads
--jobs 257 1..256 codec threads
LIST
expect_rc 2 "a word for a number" "$ts" run "$img" -o "$work/out" --quality high
contains "$work/err.txt" "JPEG quality 'high' is not a whole number in 1..100 (--quality)"
expect_rc 2 "--tile 0x64" "$ts" run "$img" -o "$work/out" --device cpu --tile 0x64
contains "$work/err.txt" "--tile wants WxH, each side in 1..1048576, not '0x64'"

# compare and bench: the same words for the same option
expect_rc 2 "compare --streams 17" "$ts" compare "$img" --streams 17
contains "$work/err.txt" "GPU streams 17 is not in 1..16 (--streams)"
expect_rc 2 "bench --reps 10001" "$ts" bench cpu --reps 10001
contains "$work/err.txt" "timed runs 10001 is not in 1..10000 (--reps)"
expect_rc 2 "bench --jobs 0" "$ts" bench cpu --jobs 0
contains "$work/err.txt" "codec threads 0 is not in 1..256 (--jobs)"
expect_rc 2 "bench --size 1x0" "$ts" bench cpu --size 1x0
contains "$work/err.txt" "--size wants WxH, each side in 1..1048576, not '1x0'"

# the edges are accepted, and do what they say
expect_rc 0 "--quality 1 and 100, --png-level 0 and 9" "$ts" run "$img" -o "$work/q1" --device cpu -q --format jpg --quality 1
expect_rc 0 "--quality 100" "$ts" run "$img" -o "$work/q100" --device cpu -q --format jpg --quality 100
check "quality 100 makes a larger file than 1" test "$(stat -c %s "$work/q100/checker-512.jpg")" -gt "$(stat -c %s "$work/q1/checker-512.jpg")"
expect_rc 0 "--png-level 0" "$ts" run "$img" -o "$work/l0" --device cpu -q --png-level 0
expect_rc 0 "--png-level 9" "$ts" run "$img" -o "$work/l9" --device cpu -q --png-level 9 -j 256
check "level 9 makes a smaller file than 0" test "$(stat -c %s "$work/l9/checker-512.png")" -lt "$(stat -c %s "$work/l0/checker-512.png")"

# the help states the defaults and ranges that the header defines
def() { sed -n "s/^#define $1 \([0-9]*\).*/\1/p" "$src/pipeline/tilestream.h"; }
"$ts" run --help >"$work/help.txt" 2>&1
contains "$work/help.txt" "--quality Q          JPEG quality $(def TS_JPEG_QUALITY_MIN)..$(def TS_JPEG_QUALITY_MAX) (default $(def TS_JPEG_QUALITY_DEFAULT))"
contains "$work/help.txt" "--png-level L        PNG zlib level $(def TS_PNG_LEVEL_MIN)..$(def TS_PNG_LEVEL_MAX) (default $(def TS_PNG_LEVEL_DEFAULT))"
contains "$work/help.txt" "--streams N          CUDA streams (default $(def TS_STREAMS_DEFAULT))"

finish test_cli_options
