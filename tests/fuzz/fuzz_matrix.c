/* fuzz_matrix.c - the NCBI matrix-file parser on any input: a status, never
 * a crash; a loaded matrix has its extremes right. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    swgpu_matrix_t *m = NULL;
    if (swgpu_matrix_load(path, &m) == SWGPU_OK) {
        int lo = swgpu_matrix_min(m), hi = swgpu_matrix_max(m);
        for (int a = 0; a < 27; a++)
            for (int b = 0; b < 27; b++) {
                int v = swgpu_matrix_score(m, (uint8_t)a, (uint8_t)b);
                if (v < lo || v > hi)
                    abort();
            }
    }
    swgpu_matrix_destroy(m);
    return 0;
}
