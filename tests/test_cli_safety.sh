#!/usr/bin/env bash
# test_cli_safety.sh TILESTREAM SRCDIR - nothing lost, nothing outside
# OUTDIR: an output never replaces another input, name templates are
# checked whole, links below OUTDIR cannot lead out of it, a link loop is
# one failed entry, a FIFO never blocks, a closed stderr and the file-size
# limit fail files (not the run), SIGTERM stops within its grace and exits
# 143, the temporaries of a killed run are swept by the next, and the
# decode-work budget is the user's to raise.
set -u
. "$(dirname "$0")/cli_common.sh"
photo=$src/samples/photos/astronaut.jpg
grey=$src/samples/photos/camera-grey.png
unchanged() { cmp -s "$1" "$2" || fail "$1 was modified"; }
no_temps() { [ -z "$(find "$1" -name '*.tmp' 2>/dev/null)" ] || { fail "temporaries left in $1"; find "$1" -name '*.tmp'; }; }

# --- an output that is another input is refused, and nothing is written
mkdir -p "$work/d"
cp "$photo" "$work/d/a.jpg"
cp "$grey" "$work/d/a.png"
expect_rc 1 "a.jpg's output is the input a.png" "$ts" run "$work/d/a.jpg" "$work/d/a.png" -o "$work/d" --format png --device cpu -q
unchanged "$work/d/a.png" "$grey"
contains "$work/err.txt" "would replace the input $work/d/a.png"
mkdir -p "$work/e"
cp "$grey" "$work/e/x.png"
cp "$pats/checker-512.png" "$work/e/x2.png"
(cd "$work" && "$ts" run e -o . --name 'e/{stem}2.{ext}' --device cpu -q >"$work/out.txt" 2>"$work/err.txt")
rc=$?
[ "$rc" = 1 ] || fail "--name onto another input: exit $rc, wanted 1"
unchanged "$work/e/x2.png" "$pats/checker-512.png"
contains "$work/err.txt" "would replace the input e/x2.png"
[ -s "$work/e/x22.png" ] || fail "x2.png's own output (x22.png) was not written"
expect_rc 0 "--replace-input allows it" "$ts" run "$work/d/a.png" -o "$work/d" --device cpu -q --replace-input --ops flip=h

# --- templates checked whole, before any work
expect_rc 2 "--name {n:40}" "$ts" run "$pats" -o "$work/n40" --name '{n:40}.{ext}'
contains "$work/err.txt" "W from 1 to 20"
[ ! -e "$work/n40" ] || fail "--name {n:40} made the output folder"
expect_rc 0 "--name {n:20}" "$ts" run "$pats/checker-512.png" -o "$work/n20" --name '{n:20}.{ext}' --device cpu -q
[ -s "$work/n20/00000000000000000001.png" ] || fail "--name {n:20} did not pad to 20 digits"
expect_rc 2 "--name absolute" "$ts" run "$pats" -o "$work/abs" --name '/tmp/{stem}.{ext}'
contains "$work/err.txt" "absolute"
expect_rc 2 "--name without an extension" "$ts" run "$pats" -o "$work/noext" --name '{stem}'
contains "$work/err.txt" "no extension"

# --- a folder below OUTDIR that is a link to elsewhere: refused, named
mkdir -p "$work/in/sub" "$work/elsewhere" "$work/o"
cp "$pats/checker-512.png" "$work/in/sub/c.png"
ln -s "$work/elsewhere" "$work/o/in"
expect_rc 1 "a link below OUTDIR" "$ts" run "$work/in" -o "$work/o" --device cpu -q
contains "$work/err.txt" "outside the output folder"
[ -z "$(ls -A "$work/elsewhere")" ] || fail "an output was written through a link outside OUTDIR"

# --- a link loop in an input tree is one failed entry; the rest is done
mkdir -p "$work/loop/deep"
cp "$pats/checker-512.png" "$work/loop/deep/c.png"
ln -s .. "$work/loop/deep/up"
expect_rc 1 "a link loop" "$ts" run "$work/loop" -o "$work/lo" --device cpu -q
contains "$work/err.txt" "loop"
[ -s "$work/lo/loop/deep/c.png" ] || fail "the image beside the loop was not written"

# --- a FIFO named as an input never blocks
mkfifo "$work/fifo.png"
expect_rc 1 "a FIFO input" timeout 20 "$ts" run "$work/fifo.png" "$pats/checker-512.png" -o "$work/fo" --device cpu -q
contains "$work/err.txt" "not a regular file"
[ -s "$work/fo/checker-512.png" ] || fail "the file beside the FIFO was not written"

# --- stderr closed early (SIGPIPE): the run goes on, every output written
mkdir -p "$work/many"
for i in $(seq 1 40); do ln -s "$pats/odd-1001x667.png" "$work/many/img$i.png"; done
"$ts" run "$work/many" -o "$work/pipe" --device cpu -v -j 2 2>&1 >/dev/null | head -c 1 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "stderr into head: exit $rc, wanted 0"
[ "$(find "$work/pipe" -type f -name '*.png' | wc -l)" = 40 ] || fail "stderr into head: not every output written"
no_temps "$work/pipe"

# --- the file-size limit (SIGXFSZ not ignored by the caller): files fail, the run goes on
cp "$pats/checker-512.png" "$work/small.png"
(ulimit -f 64; exec "$ts" run "$grey" "$work/small.png" -o "$work/fsz" --device cpu --png-level 0 --ops "scale=2" -q \
    >"$work/out.txt" 2>"$work/err.txt")
rc=$?
[ "$rc" = 1 ] || { fail "file-size limit: exit $rc, wanted 1"; cat "$work/err.txt"; }
contains "$work/err.txt" "camera-grey"
no_temps "$work/fsz"

# --- SIGTERM: the images in flight finish, exit 143, no temporaries
"$ts" run "$work/many" -o "$work/term" --device cpu -j 1 --ops "gauss=sigma=3" >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
for _ in $(seq 1 200); do grep -q '\[1/40\]' "$work/err.txt" && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"; rc=$?
[ "$rc" = 143 ] || { fail "SIGTERM: exit $rc, wanted 143"; tail -3 "$work/err.txt"; }
no_temps "$work/term"

# --- a temporary left by a killed run is swept by the next run into that folder
mkdir -p "$work/sweep/pats"
touch -d '1 hour ago' "$work/sweep/pats/.checker-512.png.AbC123.tmp"
touch -d '1 hour ago' "$work/sweep/pats/.notes.txt.AbC123.tmp"
expect_rc 0 "a run after a killed one" "$ts" run "$pats/checker-512.png" -o "$work/sweep/pats" --device cpu -q
[ ! -e "$work/sweep/pats/.checker-512.png.AbC123.tmp" ] || fail "a stale temporary was not swept"
[ -e "$work/sweep/pats/.notes.txt.AbC123.tmp" ] || fail "a file that is not ours was swept"

# --- the decode-work budget: named in the error, the user's to raise
expect_rc 1 "--max-work too small" "$ts" run "$src/tests/data/jpeg/progressive.jpg" -o "$work/mw" --device cpu -q --max-work 1K
contains "$work/err.txt" "--max-work"
expect_rc 0 "--max-work raised" "$ts" run "$src/tests/data/jpeg/progressive.jpg" -o "$work/mw" --device cpu -q --max-work 10G
expect_rc 2 "--max-work not a number" "$ts" run "$pats" -o "$work/mw" --max-work lots

# --- an EXIF block that does not parse is dropped with a warning, not copied
cp "$src/tests/data/jpeg/orient6.jpg" "$work/badexif.jpg"
at=$(grep -obUa "Exif" "$work/badexif.jpg" | head -1 | cut -d: -f1)
printf '\377\377\377\000' | dd of="$work/badexif.jpg" bs=1 seek=$((at + 10)) conv=notrunc 2>/dev/null   # IFD0 offset
expect_rc 0 "a malformed EXIF block" "$ts" run "$work/badexif.jpg" -o "$work/bx" --device cpu -q
contains "$work/err.txt" "EXIF block does not parse"
[ -s "$work/bx/badexif.jpg" ] && ! grep -qa "Exif" "$work/bx/badexif.jpg" || fail "the malformed EXIF block was copied"
expect_rc 0 "a sound EXIF block" "$ts" run "$src/tests/data/jpeg/orient6.jpg" -o "$work/gx" --device cpu -q
grep -qa "Exif" "$work/gx/orient6.jpg" || fail "a sound EXIF block was not copied"

# --- a file named for a report, trace, timeline or --json that holds something else (a photo typed in the
# wrong place: `--report a.jpg b.jpg`) is not replaced: refused before any work, the file untouched
cp "$src/tests/data/jpeg/orient6.jpg" "$work/keep.jpg"
expect_rc 2 "--report naming a photo" "$ts" run --report "$work/keep.jpg" "$pats/checker-512.png" -o "$work/kr" --device cpu -q
contains "$work/err.txt" "--report $work/keep.jpg: exists and is not JSON, so it is not replaced"
cmp -s "$work/keep.jpg" "$src/tests/data/jpeg/orient6.jpg" || fail "--report replaced a photo"
[ ! -e "$work/kr" ] || fail "--report naming a photo: the run went ahead"
for opt in --report-lines --trace; do
    expect_rc 2 "$opt naming a photo" "$ts" run "$opt" "$work/keep.jpg" "$pats/checker-512.png" -o "$work/kr" --device cpu -q
    contains "$work/err.txt" "exists and is not JSON"
done
expect_rc 2 "--timeline naming a photo" "$ts" run --timeline "$work/keep.jpg" "$pats/checker-512.png" -o "$work/kr" --device cpu -q
contains "$work/err.txt" "exists and is not an SVG picture"
expect_rc 2 "info --json naming a photo" "$ts" info --json "$work/keep.jpg" "$pats/checker-512.png"
cmp -s "$work/keep.jpg" "$src/tests/data/jpeg/orient6.jpg" || fail "a written file replaced a photo"
# an earlier report is replaced, as a rerun expects
expect_rc 0 "a report" "$ts" run --report "$work/again.json" "$pats/checker-512.png" -o "$work/ka" --device cpu -q
expect_rc 0 "the same report again" "$ts" run --report "$work/again.json" "$pats/checker-512.png" -o "$work/ka" --device cpu -q
expect_rc 0 "info --json over an earlier one" "$ts" info --json "$work/again.json" "$pats/checker-512.png"
# a pipe or a device is not a file to keep: --report-lines /dev/stdout streams the lines
expect_rc 0 "--report-lines /dev/stdout" "$ts" run --report-lines /dev/stdout "$pats/checker-512.png" -o "$work/kd" --device cpu -q
contains "$work/out.txt" '"status": "ok"'

# --- an ICC profile libpng rejects (its header's length 4 bytes over the data): the PNG is written
# without it, and run says so on stderr and in the report
cp "$src/tests/data/jpeg/icc.jpg" "$work/badicc.jpg"
at=$(grep -obUa "ICC_PROFILE" "$work/badicc.jpg" | head -1 | cut -d: -f1)
b=$(od -An -tu1 -j $((at + 17)) -N1 "$work/badicc.jpg" | tr -d ' ')   # the low byte of the profile's length
printf "\\$(printf '%03o' $(( (b + 4) % 256 )))" | dd of="$work/badicc.jpg" bs=1 seek=$((at + 17)) conv=notrunc 2>/dev/null
expect_rc 0 "an ICC profile libpng rejects" "$ts" run "$work/badicc.jpg" -o "$work/bi" --format png --device cpu -q \
    --report "$work/bi.json"
contains "$work/err.txt" "badicc.jpg: written without its ICC profile, which libpng rejects"
[ -s "$work/bi/badicc.png" ] || fail "the PNG without its profile was not written"
grep -q '"warning": "written without its ICC profile' "$work/bi.json" || fail "the report has no warning for the profile"

finish "cli safety"
