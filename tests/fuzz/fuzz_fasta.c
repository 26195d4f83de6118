/* fuzz_fasta.c - the FASTA/FASTQ reader (plain and gzip, detected from the
 * bytes; a makedb file is read too) on any input: a status, never a crash. */
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    swgpu_alphabet_t al[] = {SWGPU_AUTO, SWGPU_PROTEIN, SWGPU_DNA};
    for (int a = 0; a < 3; a++) {
        swgpu_seqset_t *s = NULL;
        swgpu_read_info_t info;
        if (swgpu_seqset_read(path, al[a], &s, &info) == SWGPU_OK) {
            /* every record readable, its codes inside the alphabet */
            int n = swgpu_alphabet_size(swgpu_seqset_alphabet(s));
            for (size_t i = 0; i < swgpu_seqset_size(s); i++) {
                swgpu_seq_t q;
                if (swgpu_seqset_get(s, i, &q) != SWGPU_OK || !q.id || !q.desc)
                    abort();
                for (size_t j = 0; j < q.len; j++)
                    if (q.res[j] >= n)
                        abort();
            }
            if (info.n_records != swgpu_seqset_size(s))
                abort();
        }
        swgpu_seqset_destroy(s);
    }
    return 0;
}
