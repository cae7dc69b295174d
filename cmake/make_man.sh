#!/bin/sh
# make_man.sh TILESTREAM OUT - the man page tilestream(1), made from the
# program's own help texts (so it says what the binary does), at build time.
set -eu
ts=$1
out=$2
version=$("$ts" --version | head -1)
roff() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }   # escape backslashes and leading . or '
{
    echo ".TH TILESTREAM 1 \"\" \"$version\" \"User Commands\""
    echo ".SH NAME"
    echo "tilestream \\- stream images through chains of operations on the GPU or CPU"
    echo ".SH SYNOPSIS"
    echo ".nf"
    "$ts" --help | roff
    echo ".fi"
    for cmd in run compare bench info ops; do
        echo ".SH \"tilestream $cmd\""
        echo ".nf"
        "$ts" "$cmd" --help | roff
        echo ".fi"
    done
    echo ".SH OPS"
    echo ".nf"
    "$ts" ops | roff
    echo ".fi"
    echo ".SH SEE ALSO"
    echo "The README and docs/ of the source tree."
} >"$out"
