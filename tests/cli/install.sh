#!/bin/sh
# make install PREFIX=tmp puts the header, both libraries (the shared one as
# libswgpu.so.0.1.0 with the SONAME libswgpu.so.0, and its two links), the
# tool, the manual page and a pkg-config file in place; programs build and
# run against them, the library example of docs/library.md with its own
# pkg-config command and no LD_LIBRARY_PATH.
. "$(dirname "$0")/lib.sh"
p=$T/p
if make -s install PREFIX="$p" >"$T/log" 2>&1; then pass; else fail "make install"; cat "$T/log"; fi
for f in bin/swgpu include/swgpu.h lib/libswgpu.a lib/libswgpu.so.0.1.0 lib/pkgconfig/swgpu.pc \
         share/man/man1/swgpu.1; do
    if [ -f "$p/$f" ] && ! [ -L "$p/$f" ]; then pass; else fail "missing $f (a file)"; fi
done
# the links, as links
for l in libswgpu.so.0:libswgpu.so.0.1.0 libswgpu.so:libswgpu.so.0; do
    if [ -L "$p/lib/${l%%:*}" ] && [ "$(readlink "$p/lib/${l%%:*}")" = "${l#*:}" ]; then pass
    else fail "lib/${l%%:*} is not a link to ${l#*:}"; fi
done
if command -v readelf >/dev/null; then
    so=$(readelf -d "$p/lib/libswgpu.so.0.1.0" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
    if [ "$so" = libswgpu.so.0 ]; then pass; else fail "SONAME: '$so', not libswgpu.so.0"; fi
else
    skip "no readelf: SONAME not checked"
fi
if grep -qx "prefix=$p" "$p/lib/pkgconfig/swgpu.pc"; then pass; else fail "pc prefix"; fi
cat >"$T/t.c" <<'C'
#include <swgpu.h>
#include <stdio.h>
int main(void)
{
    swgpu_matrix_t *m = NULL;
    if (swgpu_matrix_builtin("BLOSUM62", &m)) return 1;
    printf("%d\n", swgpu_matrix_score(m, (uint8_t)swgpu_encode(SWGPU_PROTEIN, 'W'),
                                         (uint8_t)swgpu_encode(SWGPU_PROTEIN, 'W')));
    swgpu_matrix_destroy(m);
    return 0;
}
C
libs=$(sed -n 's/^Libs.private: //p' "$p/lib/pkgconfig/swgpu.pc")
if ${CC:-cc} ${SWGPU_TEST_CFLAGS:-} "$T/t.c" -I"$p/include" "$p/lib/libswgpu.a" $libs -o "$T/t" 2>"$T/log" &&
   [ "$("$T/t")" = 11 ]; then pass; else fail "static link"; cat "$T/log"; fi
if ${CC:-cc} ${SWGPU_TEST_CFLAGS:-} "$T/t.c" -I"$p/include" -L"$p/lib" -lswgpu -Wl,-rpath,"$p/lib" -o "$T/t2" 2>"$T/log" &&
   [ "$("$T/t2")" = 11 ]; then pass; else fail "shared link"; cat "$T/log"; fi
# the installed program loads the library by its SONAME
if command -v readelf >/dev/null; then
    if readelf -d "$T/t2" | grep -q 'NEEDED.*\[libswgpu\.so\.0\]'; then pass; else fail "t2 does not need libswgpu.so.0"; fi
fi
if [ "$("$p/bin/swgpu" version 2>&1 | head -n 1 | grep -c 0.1.0)" = 1 ]; then pass; else fail "installed tool runs"; fi

# The library example of docs/library.md (its ```c block), built with its
# command (cc example.c $(pkg-config ...)) through the
# installed swgpu.pc, run on the bundled examples without LD_LIBRARY_PATH:
# its hits are the tool's (query, target, score, query range).  Without
# pkg-config a stand-in reads the .pc file.
x=$T/example
mkdir -p "$x" "$T/bin"
awk '/^```c$/ { code = 1; next } code && /^```/ { exit } code' docs/library.md >"$x/example.c"
cmd=$(grep -o '`cc example\.c [^`]*pkg-config [^`]*`' docs/library.md | head -n 1 | tr -d '`')
if [ -s "$x/example.c" ] && [ -n "$cmd" ]; then pass; else fail "docs/library.md: no library example or no pkg-config command"; fi
if ! command -v pkg-config >/dev/null; then
    cat >"$T/bin/pkg-config" <<'SH'
#!/bin/sh
# pkg-config --cflags --libs [--static] swgpu, for swgpu.pc only
pc=$PKG_CONFIG_PATH/swgpu.pc
st=0
for a; do [ "$a" = --static ] && st=1; done
prefix=$(sed -n 's/^prefix=//p' "$pc")
field() { sed -n "s/^$1: //p" "$pc" | sed "s|\${libdir}|$prefix/lib|g; s|\${includedir}|$prefix/include|g; s|\${prefix}|$prefix|g"; }
echo $(field Cflags) $(field Libs) $([ $st = 1 ] && field Libs.private)
SH
    chmod +x "$T/bin/pkg-config"
    skip "no pkg-config: the command of docs/library.md runs with a stand-in that reads swgpu.pc"
fi
cp examples/queries.fasta examples/db.fasta "$x/"
# cc as docs/library.md says, or $CC with the flags of the build under test
cmd="${CC:-cc} ${SWGPU_TEST_CFLAGS:-} ${cmd#cc }"
if (cd "$x" && PATH=$T/bin:$PATH PKG_CONFIG_PATH=$p/lib/pkgconfig sh -c "$cmd") >"$T/log" 2>&1; then
    pass
else
    fail "docs/library.md example does not build: $cmd"; cat "$T/log"
fi
if (cd "$x" && env -u LD_LIBRARY_PATH ./a.out) >"$T/ex.out" 2>"$T/ex.err"; then
    pass
else
    fail "docs/library.md example does not run"; cat "$T/ex.err"
fi
"$SWGPU" search -q examples/queries.fasta -d examples/db.fasta -n 5 \
    --outfmt '6 qseqid sseqid score qstart qend' -o "$T/tool.tsv" 2>"$T/log" || cat "$T/log"
awk -F '\t' '{ printf "%s %s score %s query [%d, %d)\n", $1, $2, $3, $4 - 1, $5 }' "$T/tool.tsv" >"$T/want"
sed 's/ E [^ ]* / /' "$T/ex.out" >"$T/got"
if [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"; then pass; else
    fail "docs/library.md example's hits differ from the tool's"; diff "$T/want" "$T/got" | head -10
fi
finish
