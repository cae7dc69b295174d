#!/usr/bin/env bash
# test_cli_thumbnails.sh TILESTREAM SRCDIR - the thumbnail job as users run
# it: a box keeps the aspect (fit inside), cover fills it and crops, pad
# fills the margins, stretch is asked for by name; sizes checked here, and
# the pixels against ImageMagick's result for the same geometry (PSNR of at
# least 35 dB on the sample photos) where ImageMagick is installed
# (scripts/setup.sh --test-tools; CI has it).
set -u
. "$(dirname "$0")/cli_common.sh"
size_of() { "$ts" info "$1" | grep -oE ' [0-9]+x[0-9]+,' | tr -d ' ,'; }
photos="$src/samples/photos/chelsea.png $src/samples/photos/coffee-orient6.jpg"

# mode  tilestream chain                          ImageMagick arguments (after -auto-orient)
cases=(
  "inside|resize=w=200:h=200|-resize 200x200"
  "cover|resize=w=200:h=200:fit=cover|-resize 200x200^ -gravity center -extent 200x200"
  "pad|resize=w=200:h=200:fit=pad:fill=1|-resize 200x200 -background white -gravity center -extent 200x200"
  "stretch|resize=w=200:h=200:fit=stretch|-resize 200x200!"
  "percent|scale=50%|-resize 50%"
)
want_size() { # want_size MODE PHOTO
    case "$1:$(basename "$2")" in
        inside:chelsea.png|inside:coffee-orient6.jpg) echo 200x133 ;;
        percent:chelsea.png) echo 226x150 ;;
        percent:coffee-orient6.jpg) echo 300x200 ;;
        *) echo 200x200 ;;
    esac
}

magick=0
command -v convert >/dev/null && command -v compare >/dev/null && magick=1
[ "$magick" = 1 ] || echo "note: ImageMagick not found: sizes checked, pixels not compared with it"
for c in "${cases[@]}"; do
    IFS='|' read -r mode chain im <<<"$c"
    "$ts" run $photos -o "$work/$mode" --ops "$chain" --format png --device cpu -q || fail "$mode: run failed"
    for p in $photos; do
        out="$work/$mode/$(basename "${p%.*}").png"
        got=$(size_of "$out")
        [ "$got" = "$(want_size "$mode" "$p")" ] || fail "$mode on $(basename "$p"): $got, want $(want_size "$mode" "$p")"
        [ "$magick" = 1 ] || continue
        # shellcheck disable=SC2086
        convert "$p" -auto-orient $im -depth 8 "$work/im-$mode.png"
        db=$(compare -metric PSNR "$work/im-$mode.png" "$out" null: 2>&1 | cut -d' ' -f1)
        echo "$mode $(basename "$p"): $got, ${db} dB against ImageMagick"
        awk -v d="$db" 'BEGIN { exit !(d == "inf" || d + 0 >= 35) }' || fail "$mode on $(basename "$p"): $db dB"
    done
done

# crop and pad as ops of their own, and one short thumbnail command over a folder
"$ts" run "$src/samples/photos" -o "$work/thumbs" --ops "resize=w=160:h=160:fit=cover" --format jpg --device cpu -q \
    || fail "thumbnail folder: run failed"
[ "$(find "$work/thumbs" -name '*.jpg' | wc -l)" = 6 ] || fail "thumbnail folder: not six thumbnails"
for f in "$work"/thumbs/photos/*.jpg; do [ "$(size_of "$f")" = 160x160 ] || fail "$f is $(size_of "$f")"; done
"$ts" run "$src/samples/photos/chelsea.png" -o "$work/cp" --ops "crop=w=100:h=50:x=10:y=20,pad=w=120:h=60:fill=1" \
    --device cpu -q || fail "crop,pad: run failed"
[ "$(size_of "$work/cp/chelsea.png")" = 120x60 ] || fail "crop,pad: $(size_of "$work/cp/chelsea.png")"

# the format follows --name's extension when --format is not given; both at odds: refused before any work
"$ts" run "$src/samples/photos/astronaut.jpg" -o "$work/named" --name "{stem}.png" --device cpu -q || fail "--name {stem}.png"
"$ts" info "$work/named/astronaut.png" | grep -q ": png " || fail "--name {stem}.png did not write PNG"
"$ts" run "$src/samples/photos/astronaut.jpg" -o "$work/named2" --name "{stem}.png" --format jpg --device cpu -q 2>/dev/null
rc=$?
[ "$rc" = 2 ] || fail "--name .png with --format jpg: exit $rc, wanted 2"
[ ! -e "$work/named2" ] || fail "--name .png with --format jpg: the output folder was made"

# a transparent PNG to JPEG: composited onto the background (white unless --background), warned once
"$ts" run "$src/samples/photos/retina-rgba.png" -o "$work/alpha" --ops "pad=w=500:h=500" --format jpg --device cpu \
    >/dev/null 2>"$work/alpha.txt" || fail "alpha to JPEG: run failed"
grep -q "composited onto white" "$work/alpha.txt" || { fail "alpha to JPEG: no warning"; cat "$work/alpha.txt"; }
"$ts" info "$work/alpha/retina-rgba.jpg" | grep -q "3 channels" || fail "alpha to JPEG: not 3 channels"
"$ts" run "$src/samples/photos/retina-rgba.png" -o "$work/alpha2" --ops "pad=w=500:h=500" --format jpg --device cpu \
    --background "#102030" -q || fail "alpha onto #102030: run failed"
if [ "$magick" = 1 ]; then
    corner=$(convert "$work/alpha/retina-rgba.jpg" -crop 1x1+0+0 -format '%[fx:int(255*r)] %[fx:int(255*g)] %[fx:int(255*b)]' info:)
    [ "$corner" = "255 255 255" ] || fail "alpha to JPEG: the transparent margin is $corner, not white"
    corner=$(convert "$work/alpha2/retina-rgba.jpg" -crop 1x1+0+0 -format '%[fx:int(255*r+0.5)] %[fx:int(255*g+0.5)] %[fx:int(255*b+0.5)]' info:)
    awk -v c="$corner" 'BEGIN { split(c, v, " "); exit !(v[1] >= 14 && v[1] <= 18 && v[2] >= 30 && v[2] <= 34 && v[3] >= 46 && v[3] <= 50) }' \
        || fail "alpha onto #102030: the margin is $corner"
fi

finish "cli thumbnails"
