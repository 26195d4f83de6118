#!/bin/sh
# manpage.sh - docs/swgpu.1 keeps up with the tool: every long option that
# 'swgpu <command> --help' lists is described in the manual page, every
# command has its section, every column of search --help is named, and the
# page is well-formed enough for man(1) (a .TH line; groff, when installed,
# renders it without warnings).
. "$(dirname "$0")/lib.sh"
MAN=docs/swgpu.1
if [ -f "$MAN" ] && head -n 5 "$MAN" | grep -q '^\.TH SWGPU 1 '; then pass; else fail "$MAN: no .TH line"; fi
for cmd in search makedb align; do
    if "$SWGPU" "$cmd" --help >"$T/help" 2>&1; then pass; else fail "swgpu $cmd --help"; fi
    up=$(echo "$cmd" | tr a-z A-Z)
    if grep -q "^\.SH $up OPTIONS" "$MAN"; then pass; else fail "$MAN: no section $up OPTIONS"; fi
    # the options of this command: its section up to the next .SH
    sed -n "/^\.SH $up OPTIONS/,/^\.SH [A-Z]/p" "$MAN" >"$T/section"
    for opt in $(grep -o -- '--[a-z][a-z-]*' "$T/help" | sort -u); do
        esc=$(printf '%s' "$opt" | sed 's/-/\\-/g')
        if grep -qF -- "$esc" "$T/section"; then pass; else fail "$MAN: swgpu $cmd $opt is not described"; fi
    done
done
# every column 'swgpu search --help' lists (after "spaces or commas,", up to
# the next option; all 43 of src/search/format.c's table) is named in the page
"$SWGPU" search --help 2>&1 | sed -n '/separated by spaces or commas,/,/^  -/p' |
    sed '1d;$d' | tr -s ' ' '\n' | grep . > "$T/cols"
[ "$(wc -l < "$T/cols")" -ge 43 ] && pass || fail "search --help: $(wc -l < "$T/cols") columns listed"
for col in $(cat "$T/cols"); do
    if grep -qw -- "$col" "$MAN"; then pass; else fail "$MAN: column $col is not listed"; fi
done
if command -v groff >/dev/null 2>&1; then
    if groff -man -Tutf8 -ww "$MAN" >"$T/out" 2>"$T/err" && [ ! -s "$T/err" ]; then pass; else
        fail "groff: $(head -n 3 "$T/err")"; fi
else
    skip "groff not installed: the page is not rendered"
fi
finish
