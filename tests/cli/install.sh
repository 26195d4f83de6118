#!/bin/sh
# make install PREFIX=tmp puts the header, both libraries, the tool, the
# manual page and a pkg-config file in place, and a program builds and runs against them.
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL install: $1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if make -s install PREFIX="$tmp/p" >"$tmp/log" 2>&1; then ok; else bad "make install"; cat "$tmp/log"; fi
for f in bin/swgpu include/swgpu.h lib/libswgpu.a lib/libswgpu.so lib/pkgconfig/swgpu.pc \
         share/man/man1/swgpu.1; do
    if [ -f "$tmp/p/$f" ]; then ok; else bad "missing $f"; fi
done
if grep -qx "prefix=$tmp/p" "$tmp/p/lib/pkgconfig/swgpu.pc"; then ok; else bad "pc prefix"; fi
cat >"$tmp/t.c" <<'C'
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
libs=$(sed -n 's/^Libs.private: //p' "$tmp/p/lib/pkgconfig/swgpu.pc")
if ${CC:-cc} ${SWGPU_TEST_CFLAGS:-} "$tmp/t.c" -I"$tmp/p/include" "$tmp/p/lib/libswgpu.a" $libs -o "$tmp/t" 2>"$tmp/log" &&
   [ "$("$tmp/t")" = 11 ]; then ok; else bad "static link"; cat "$tmp/log"; fi
if ${CC:-cc} ${SWGPU_TEST_CFLAGS:-} "$tmp/t.c" -I"$tmp/p/include" -L"$tmp/p/lib" -lswgpu -Wl,-rpath,"$tmp/p/lib" -o "$tmp/t2" 2>"$tmp/log" &&
   [ "$("$tmp/t2")" = 11 ]; then ok; else bad "shared link"; cat "$tmp/log"; fi
if [ "$("$tmp/p/bin/swgpu" version 2>&1 | head -n 1 | grep -c 0.1.0)" = 1 ]; then ok; else bad "installed tool runs"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
