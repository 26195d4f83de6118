/* fuzz_db.c - the makedb database loader (mapped and validated; a FASTA
 * file is converted in memory) on any input: a status, never a crash. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
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
    return 0;
}
