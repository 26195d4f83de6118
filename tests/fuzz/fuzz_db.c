/* fuzz_db.c - the makedb database loader (mapped and validated; a FASTA
 * file is converted in memory) on any input: a status, never a crash.
 *
 * A mutated makedb file almost always fails its checksums, which would keep
 * the fuzzer in front of them; so an input that starts with the magic is
 * loaded a second time with its header's file size and both CRC-32s made
 * right, which lets the mutations reach the validation of the sections
 * (offsets, sort order, permutation, names, residue codes). */
#include "fuzz.h"

#include <string.h>
#include <zlib.h>

static void load(const char *path)
{
    swgpu_db_t *db = NULL;
    if (swgpu_db_open(path, SWGPU_AUTO, &db, NULL) == SWGPU_OK) {
        int n = swgpu_alphabet_size(swgpu_db_alphabet(db));
        uint64_t res = 0;
        for (size_t i = 0; i < swgpu_db_size(db); i++) {
            swgpu_seq_t q;
            if (swgpu_db_get(db, i, &q) != SWGPU_OK || !q.id || !q.desc ||
                q.len > swgpu_db_max_len(db))
                abort();
            for (size_t j = 0; j < q.len; j++)
                if (q.res[j] >= n)
                    abort();
            res += q.len;
        }
        if (res != swgpu_db_residues(db))
            abort();
    }
    swgpu_db_destroy(db);
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(fuzz_file(data, size));
    enum { HDR = 160 };
    if (size >= HDR && !memcmp(data, "SWGPU_DB", 8)) {
        uint8_t *fixed = malloc(size);
        if (!fixed)
            abort();
        memcpy(fixed, data, size);
        put_le(fixed + 40, size, 8);
        put_le(fixed + 144, crc32(crc32(0, Z_NULL, 0), fixed + HDR, (uInt)(size - HDR)), 4);
        put_le(fixed + 152, crc32(crc32(0, Z_NULL, 0), fixed, 152), 4);
        load(fuzz_file(fixed, size));
        free(fixed);
    }
    return 0;
}
