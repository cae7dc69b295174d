#!/usr/bin/env bash
# test_cli_ux.sh TILESTREAM SRCDIR JSON_CHECK - the command line as users
# expect it: one block per behaviour that once went wrong. Options
# (--opt=value, --, -qv, per command, suggestions); the output folder left
# out of the walk; checks before work; every refusal named, dry runs and
# skips listed; the progress line; Ctrl-C; the report; the summary; names,
# file lists and shards.
set -u
. "$(dirname "$0")/cli_common.sh"
json_check=$3
count_files() { find "$1" -type f 2>/dev/null | wc -l; }

# --- options: --opt=value, --, bundled short flags; per command; suggestions
expect_rc 0 "--ops=V --out=D -qv" "$ts" run --ops=rot90 --out="$work/eq" -qv --device=cpu "$pats/checker-512.png"
check "--out=D written" test -s "$work/eq/checker-512.png"
cp "$pats/checker-512.png" "$work/-dash.png"
expect_rc 0 "-- ends the options" "$ts" run -o "$work/dd" --device cpu -q -- "$work/-dash.png"
check "a name after -- is an input" test -s "$work/dd/-dash.png"
expect_rc 2 "misspelt option" "$ts" run "$pats" -o "$work/x" --qualty 5
contains "$work/err.txt" "did you mean '--quality'"
expect_rc 2 "misspelt command" "$ts" rn "$pats" -o "$work/x"
contains "$work/err.txt" "did you mean 'run'"
expect_rc 2 "another command's option" "$ts" run "$pats" -o "$work/j" --json "$work/j.json"
contains "$work/err.txt" "--json is an option of bench and info"
check "nothing written for another command's option" test ! -e "$work/j" -a ! -e "$work/j.json"
expect_rc 2 "bench takes no --ops" "$ts" bench cpu --ops gauss
contains "$work/err.txt" "--ops is an option of run and compare"
expect_rc 2 "a missing value is named" "$ts" run "$pats" -o "$work/x" --quality
contains "$work/err.txt" "--quality needs a value"

# --- run in -o in/out: the output folder is not walked on the next run
mkdir -p "$work/in" && cp "$pats/checker-512.png" "$pats/zoneplate-512.png" "$work/in/"
expect_rc 0 "run in -o in/out" "$ts" run "$work/in" -o "$work/in/out" --device cpu -q
expect_rc 0 "run in -o in/out again" "$ts" run "$work/in" -o "$work/in/out" --device cpu -q
check "its own outputs not taken as inputs" test ! -e "$work/in/out/in/out"
[ "$(count_files "$work/in/out")" = 2 ] || fail "in/out holds $(count_files "$work/in/out") files, wanted 2"

# --- the cheap checks come before any image is read
touch "$work/a-file"
expect_rc 2 "output folder is a file" "$ts" run "$pats" -o "$work/a-file" --device cpu
contains "$work/err.txt" "not a folder"
lacks "$work/err.txt" "checker-512"
expect_rc 2 "output folder below a file" "$ts" run "$pats" -o "$work/a-file/sub" --device cpu
contains "$work/err.txt" "not a folder"
expect_rc 2 "unwritable --report" "$ts" run "$pats" -o "$work/rep" --device cpu --report "$work/no/such/r.json"
contains "$work/err.txt" "--report"
check "nothing processed before the --report refusal" test ! -e "$work/rep"
expect_rc 2 "unwritable --trace" "$ts" run "$pats" -o "$work/rep" --device cpu --trace "$work/no/t.json"
check "nothing processed before the --trace refusal" test ! -e "$work/rep"
expect_rc 2 "--timeline is a folder" "$ts" run "$pats" -o "$work/rep" --device cpu --timeline "$work"
check "nothing processed before the --timeline refusal" test ! -e "$work/rep"
if [ "${TS_TEST_STB:-ON}" != ON ]; then
    expect_rc 2 "bmp refused before work without stb" "$ts" run "$pats" -o "$work/bmp" --format bmp --device cpu
    contains "$work/err.txt" "without stb_image_write"
    lacks "$work/err.txt" "checker-512"
    check "no output folder made without stb" test ! -e "$work/bmp"
fi

# --- every refused image named; dry runs list refusals; -v names skipped files
mkdir -p "$work/self" && cp "$pats"/*.png "$work/self/"
n_self=$(ls "$work/self" | wc -l)
(cd "$work/self" && "$ts" run . -o . --device cpu >"$work/out.txt" 2>"$work/err.txt"); rc=$?
[ "$rc" = 1 ] || fail "run . -o .: exit $rc, wanted 1"
[ "$(grep -c 'would replace the input' "$work/err.txt")" -ge "$n_self" ] || { fail "not every refusal named"; cat "$work/err.txt"; }
for f in "$work"/self/*.png; do contains "$work/err.txt" "$(basename "$f")"; done
(cd "$work/self" && "$ts" run . -o . --dry-run >"$work/out.txt" 2>"$work/err.txt"); rc=$?
[ "$rc" = 1 ] || fail "dry run of run . -o .: exit $rc, wanted 1"
[ "$(grep -c 'would refuse' "$work/err.txt")" = "$n_self" ] || { fail "dry run lists not every refusal"; cat "$work/err.txt"; }
expect_rc 0 "dry run lists every planned output" "$ts" run "$pats" -o "$work/dry" --dry-run
[ "$(grep -c ' -> ' "$work/out.txt")" = "$(ls "$pats" | grep -c png)" ] || { fail "dry run missed outputs"; cat "$work/out.txt"; }
check "dry run writes nothing" test ! -e "$work/dry"
expect_rc 0 "skip existing, verbose" "$ts" run "$work/in" -o "$work/in/out" --device cpu --skip-existing -v
contains "$work/err.txt" "out/in/checker-512.png: exists, skipped"
contains "$work/err.txt" "out/in/zoneplate-512.png: exists, skipped"
expect_rc 0 "-n is --skip-existing" "$ts" run "$work/in" -o "$work/in/out" --device cpu -nv
contains "$work/err.txt" "exists, skipped"
expect_rc 0 "-y after -n replaces" "$ts" run "$work/in" -o "$work/in/out" --device cpu -n -y -v
lacks "$work/err.txt" "skipped"
expect_rc 0 "--overwrite still means --replace-input" "$ts" run "$work/self/checker-512.png" -o "$work/self" --overwrite -q --device cpu
expect_rc 0 "--replace-input" "$ts" run "$work/self/checker-512.png" -o "$work/self" --replace-input -q --device cpu

# --- the device is named at the start; plain lines when not a terminal
expect_rc 0 "plain lines" "$ts" run "$pats" -o "$work/plain" --device cpu
head -1 "$work/err.txt" | grep -q "images on cpu" || { fail "the device is not named first"; cat "$work/err.txt"; }
contains "$work/err.txt" "\[6/6\]"
expect_rc 0 "quiet" "$ts" run "$pats" -o "$work/quiet" --device cpu -q
[ ! -s "$work/err.txt" ] || { fail "-q printed on stderr"; cat "$work/err.txt"; }
# on a terminal (script(1) gives one): the line from the start, with rates, ETA and the file
if script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "'$ts' run '$pats' -o '$work/tty' --device cpu -j 1" /dev/null >"$work/tty.txt" 2>&1
    tr '\r' '\n' <"$work/tty.txt" >"$work/tty-lines.txt"
    contains "$work/tty-lines.txt" "K0/6  0.0 images/s"
    contains "$work/tty-lines.txt" "images/s"
    contains "$work/tty-lines.txt" "MP/s"
    contains "$work/tty-lines.txt" "ETA [0-9]"
    contains "$work/tty-lines.txt" "patterns/odd-1001x667.png"
else
    echo "note: script(1) not found, the terminal progress line is not checked"
fi

# --- Ctrl-C: a clean stop after the images in flight, exit 130
mkdir -p "$work/many"
for i in $(seq 1 300); do ln -s "$pats/odd-1001x667.png" "$work/many/img$i.png"; done
"$ts" run "$work/many" -o "$work/stop" --device cpu -j 1 --ops "gauss=sigma=3" >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
for _ in $(seq 1 200); do grep -q '\[1/300\]' "$work/err.txt" && break; sleep 0.05; done
kill -INT "$pid"
wait "$pid"; rc=$?
[ "$rc" = 130 ] || { fail "Ctrl-C: exit $rc, wanted 130"; tail -3 "$work/err.txt"; }
contains "$work/err.txt" "interrupted after"
[ "$(grep -c 'not processed' "$work/err.txt")" = 0 ] || fail "Ctrl-C listed every image never started"
grep -q "0 failed, 0 skipped, [0-9]* not started" "$work/out.txt" || { fail "Ctrl-C: images not started counted as failed"; cat "$work/out.txt"; }
n_done=$(count_files "$work/stop")
[ "$n_done" -ge 1 ] && [ "$n_done" -lt 300 ] || fail "interrupted run wrote $n_done of 300"
[ -z "$(find "$work/stop" -name '*.tmp*' -o -name '.*' -type f)" ] || fail "temporary files left after Ctrl-C"

# --- the report: valid JSON whatever the file names, seconds only, options, version, device
mkdir -p "$work/names"
cp "$pats/checker-512.png" "$work/names/$(printf 'caf\351.png')"   # Latin-1, not UTF-8
cp "$pats/checker-512.png" "$work/names/$(printf 'tab\tquote".png')"
cp "$pats/checker-512.png" "$work/names/café-utf8.png"
expect_rc 0 "report on odd names" "$ts" run "$work/names" -o "$work/names-out" --device cpu -q --report "$work/r.json"
check "report is valid JSON" "$json_check" "$work/r.json"

# --- info --json: a JSON line per file, a failed one with its error; "-" puts them on stdout alone
expect_rc 1 "info --json" "$ts" info --json "$work/info.jsonl" "$pats/checker-512.png" "$src/tests/data/jpeg/orient6.jpg" \
    "$src/tests/data/bad/text.png"
check "info --json lines are JSON" "$json_check" --lines "$work/info.jsonl"
[ "$(wc -l <"$work/info.jsonl")" = 3 ] || fail "info --json: $(wc -l <"$work/info.jsonl") lines for 3 files"
contains "$work/info.jsonl" '"orientation": 6'
contains "$work/info.jsonl" '"error": ".*text.png: not a PNG or JPEG image"'
contains "$work/out.txt" "orientation 6 (rot90 cw)"
expect_rc 0 "info --json -" "$ts" info --json - "$pats/checker-512.png"
check "info --json - prints JSON alone" "$json_check" --lines "$work/out.txt"
contains "$work/r.json" 'caf\\udce9.png'   # surrogateescape: the byte 0xe9 itself
contains "$work/r.json" 'café-utf8.png'
contains "$work/r.json" '"decode_s"'
lacks "$work/r.json" '_ms"'
contains "$work/r.json" '"options": {"ops": ""'
contains "$work/r.json" '"command_line": \['
contains "$work/r.json" '"tilestream": "'
contains "$work/r.json" '"device": "cpu"'
contains "$work/r.json" '"units": {"time": "s"'
expect_rc 0 "report lines on odd names" "$ts" run "$work/names" -o "$work/names-out2" --device cpu -q \
    --report-lines "$work/r.jsonl"
lines=$("$json_check" --lines "$work/r.jsonl") || fail "a --report-lines line is not valid JSON"
[ "$lines" = 3 ] || fail "--report-lines has $lines lines, wanted 3"
expect_rc 1 "report-lines names failures" "$ts" run "$src/tests/data/bad/text.png" "$pats/checker-512.png" \
    -o "$work/rl" --device cpu -q --report-lines "$work/rl.jsonl"
contains "$work/rl.jsonl" '"status": "failed"'
contains "$work/rl.jsonl" '"status": "ok"'

# --- metadata: a PNG input's text chunks reach the PNG output (PngSuite's ctzn0g04: tEXt and zTXt)
expect_rc 0 "text chunks carried" "$ts" run "$src/tests/data/pngsuite/ctzn0g04.png" -o "$work/txt" --device cpu -q --ops flip=h
check "tEXt Title carried by run" grep -aq "tEXtTitle" "$work/txt/ctzn0g04.png"
check "zTXt Disclaimer carried by run" grep -aq "Disclaimer" "$work/txt/ctzn0g04.png"

# --- a run says little: one summary line on stdout without -v or --stats
expect_rc 0 "quiet by default" "$ts" run "$pats" -o "$work/quiet" --device cpu
[ "$(wc -l <"$work/out.txt")" -le 2 ] || { fail "a plain run printed $(wc -l <"$work/out.txt") lines on stdout"; cat "$work/out.txt"; }
contains "$work/out.txt" "6 images: 6 done, 0 failed, 0 skipped"

# --- the summary: no 0.00 GB/s posing as a figure; overlap efficiency explained
expect_rc 0 "summary" "$ts" run "$pats" -o "$work/sum" --device cpu -j 1 --stats
lacks "$work/out.txt" ' 0\.00$'
contains "$work/out.txt" "overlap efficiency [0-9.]*: the stages' busy time added up"

# --- output names: --name; file lists, NUL-separated too; collisions named
expect_rc 0 "--name" "$ts" run "$pats" -o "$work/named" --device cpu -q --name "{n:3}-{stem}.{ext}" --format jpg
check "--name {n:3}-{stem}.{ext}" test -s "$work/named/001-checker-512.jpg"
[ "$(count_files "$work/named")" = 6 ] || fail "--name wrote $(count_files "$work/named") files"
expect_rc 0 "--name keeps {dir}" "$ts" run "$src/samples" -o "$work/nd" --device cpu -q --name "{dir}/small-{stem}.{ext}" --ops scale=0.25
check "--name with {dir}" test -s "$work/nd/samples/photos/small-astronaut.jpg"
expect_rc 1 "--name collision" "$ts" run "$pats" -o "$work/flat" --device cpu -q --name "one.{ext}"
[ "$(grep -c 'FAILED.*is also the output of' "$work/err.txt")" = 5 ] || { fail "collisions not all named"; cat "$work/err.txt"; }
expect_rc 2 "--name unknown field" "$ts" run "$pats" -o "$work/bad" --name "{stme}.{ext}"
contains "$work/err.txt" "'{stme}' is not a field"
expect_rc 2 "--name leaving the folder" "$ts" run "$pats" -o "$work/bad" --name "../{stem}.{ext}"
check "nothing written for a bad --name" test ! -e "$work/bad"
printf '%s\n' "$pats/checker-512.png" "$pats/zoneplate-512.png" >"$work/list.txt"
expect_rc 0 "--files-from" "$ts" run --files-from "$work/list.txt" -o "$work/fl" --device cpu -q
[ "$(count_files "$work/fl")" = 2 ] || fail "--files-from wrote $(count_files "$work/fl") files"
cp "$pats/checker-512.png" "$work/$(printf 'new\nline.png')"
printf '%s\0' "$work/$(printf 'new\nline.png')" "$pats/zoneplate-512.png" | \
    "$ts" run --files-from - -0 -o "$work/fl0" --device cpu -q >"$work/out.txt" 2>"$work/err.txt"
[ $? = 0 ] || { fail "--files-from - -0"; cat "$work/err.txt"; }
check "-0 keeps a newline in a name" test -s "$work/fl0/$(printf 'new\nline.png')"
expect_rc 2 "-0 without --files-from" "$ts" run "$pats" -o "$work/x" -0

# --- shards: K/N split the sorted list exactly; a retried shard redoes nothing
for k in 0 1 2; do
    expect_rc 0 "shard $k/3" "$ts" run "$src/samples" -o "$work/sh" --device cpu -q --shard "$k/3" --report "$work/sh$k.json"
done
n_in=$(find "$src/samples" -name '*.png' -o -name '*.jpg' | wc -l)
[ "$(count_files "$work/sh")" = "$n_in" ] || fail "3 shards wrote $(count_files "$work/sh") of $n_in"
total=0
for k in 0 1 2; do total=$((total + $(grep -c '"input"' "$work/sh$k.json"))); done
[ "$total" = "$n_in" ] || fail "3 shards took $total inputs, wanted $n_in exactly"
expect_rc 0 "retried shard" "$ts" run "$src/samples" -o "$work/sh" --device cpu --shard 1/3 -n --report "$work/retry.json"
contains "$work/retry.json" '"ok": 0'
lacks "$work/retry.json" '"status": "ok"'
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 "$ts" run "$src/samples" -o "$work/sh-env" --device cpu --shard auto \
    --report "$work/env.json" >"$work/out.txt" 2>"$work/err.txt" || fail "--shard auto under Slurm"
contains "$work/err.txt" "shard 2 of 3 (Slurm array"
cmp -s <(grep -o '"input": "[^"]*"' "$work/env.json") <(grep -o '"input": "[^"]*"' "$work/sh2.json") || fail "Slurm's shard 2 differs from --shard 2/3"
expect_rc 2 "bad --shard" "$ts" run "$pats" -o "$work/x" --shard 3/3
contains "$work/err.txt" "0 to 2"

# --- info walks folders as run does; --ops @FILE reads a chain file ('#' lines are comments)
expect_rc 0 "info DIR" "$ts" info "$pats"
[ "$(wc -l <"$work/out.txt")" = 6 ] || fail "info DIR listed $(wc -l <"$work/out.txt") files, wanted 6"
expect_rc 0 "--ops @FILE" "$ts" run "$pats/checker-512.png" -o "$work/opsfile" --ops "@$src/samples/chains/thumbnails.chain" \
    --device cpu -q
"$ts" info "$work/opsfile/checker-512.png" | grep -q "128x128" || fail "--ops @FILE: the chain was not applied"
expect_rc 2 "--ops @missing" "$ts" run "$pats" -o "$work/opsmissing" --ops "@$work/no-such.chain"
contains "$work/err.txt" "no-such.chain"

# --- options that change nothing are named; ops takes no arguments; spaces around = , : are fine
expect_rc 0 "--quality with --format png" "$ts" run "$pats/checker-512.png" -o "$work/noeffect" --quality 50 --format png \
    --device cpu
contains "$work/err.txt" "--quality has no effect"
expect_rc 0 "--streams on the CPU" "$ts" run "$pats/checker-512.png" -o "$work/noeffect2" --streams 4 --device cpu
contains "$work/err.txt" "--streams has no effect on the CPU"
expect_rc 2 "ops with an argument" "$ts" ops extra
expect_rc 0 "spaces in a chain" "$ts" run "$pats/checker-512.png" -o "$work/spaces" --ops "gauss = 2 , scale = 0.5" --device cpu -q
"$ts" info "$work/spaces/checker-512.png" | grep -q "256x256" || fail "spaces in a chain: not applied"

# --- bench without an argument runs what this build and machine can (no GPU: the CPU ops)
if [ -z "$(command -v nvidia-smi)" ]; then
    expect_rc 0 "bench without a GPU" "$ts" bench --size 256x128 --reps 1
    contains "$work/err.txt" "benchmarking the CPU ops"
    contains "$work/out.txt" "memcpy"
fi

# --- --dry-run reads every input's header: a missing or broken input fails as the run would, nothing written
cp "$pats/checker-512.png" "$work/dry-ok.png"
printf 'not an image' >"$work/dry-bad.png"
expect_rc 1 "--dry-run with a missing and a broken input" "$ts" run "$work/dry-ok.png" "$work/dry-bad.png" \
    "$work/dry-missing.png" -o "$work/dry-out" --dry-run
contains "$work/err.txt" "dry-missing.png"
contains "$work/err.txt" "dry-bad.png: not a PNG or JPEG image"
contains "$work/out.txt" "dry-ok.png ->"
[ ! -e "$work/dry-out" ] || fail "--dry-run made the output folder"

# --- an output folder that cannot be made is found before any decode (root's access() says yes in /proc)
if [ -d /proc/self ]; then
    expect_rc 2 "an output folder that cannot be made" "$ts" run "$pats/checker-512.png" -o /proc/tilestream-out -q
    contains "$work/err.txt" "cannot make the output folder"
fi

# --- the README's list of commands is what tilestream --help prints
"$ts" --help | sed -n 's/^  \(tilestream [a-z]\)/\1/p' >"$work/commands.txt"
awk '/^## Command line/{f=1;next} f&&/^```$/{if(s){exit}; s=1; next} f&&s' "$src/README.md" >"$work/readme-commands.txt"
cmp -s "$work/commands.txt" "$work/readme-commands.txt" || { fail "README's commands differ from tilestream --help"; diff "$work/commands.txt" "$work/readme-commands.txt"; }

# --- the README's command-line section is what run --help prints
"$ts" run --help >"$work/help.txt"
awk '/^`tilestream run --help` prints:/{f=1;next} f&&/^```$/{if(s){exit}; s=1; next} f&&s' "$src/README.md" >"$work/readme-help.txt"
cmp -s "$work/help.txt" "$work/readme-help.txt" || { fail "README's run --help differs"; diff "$work/help.txt" "$work/readme-help.txt"; }

finish "cli ux"
