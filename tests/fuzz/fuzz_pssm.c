/* fuzz_pssm.c - the psiblast ASCII PSSM reader on any input: a status,
 * never a crash; a PSSM read has its extremes and residues right. */
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    swgpu_pssm_t *p = NULL;
    if (swgpu_pssm_read(path, &p) == SWGPU_OK) {
        size_t n = swgpu_pssm_length(p);
        int lo = swgpu_pssm_min(p), hi = swgpu_pssm_max(p);
        if (n == 0 || strlen(swgpu_pssm_residues(p)) != n || lo < SWGPU_PSSM_FORBIDDEN ||
            hi > SWGPU_PSSM_SCORE_MAX)
            abort();
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < SWGPU_NCODES; c++) {
                int v = swgpu_pssm_score(p, i, (uint8_t)c);
                if (v < lo || v > hi)
                    abort();
            }
    }
    swgpu_pssm_destroy(p);
    return 0;
}
