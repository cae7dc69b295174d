# cli_common.sh - what the command-line test scripts share. Sourced with the
# script's arguments (TILESTREAM SRCDIR ...): sets ts, src, pats and work (a
# fresh folder, removed at exit), counts failures in fails, and gives the
# checks below. The script ends with `finish NAME`.
ts=$1
src=$2
pats=$src/samples/patterns
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; "$@" || fail "$what"; }   # check "what" command...: it must succeed
expect_rc() { # expect_rc RC "what" command...: its exit code; out.txt and err.txt keep its output
    local want=$1 what=$2; shift 2
    "$@" >"$work/out.txt" 2>"$work/err.txt"
    local rc=$?
    if [ "$rc" != "$want" ]; then fail "$what: exit $rc, wanted $want"; cat "$work/err.txt"; fi
}
contains() { grep -q -- "$2" "$1" || { fail "$1 lacks '$2'"; cat "$1"; }; }
lacks() { ! grep -q -- "$2" "$1" || { fail "$1 has '$2'"; cat "$1"; }; }
finish() { echo "$1: $fails failures"; [ "$fails" = 0 ]; }
