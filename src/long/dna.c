/*
 * dna.c - the public DNA utility swgpu_dna_revcomp: the reverse complement
 * in the library's residue codes (the minus strand of `swgpu align
 * --strand` and of the Python bindings' long alignments).
 */
#include "swgpu.h"

void swgpu_dna_revcomp(const uint8_t *in, size_t n, uint8_t *out)
{
    /* A C G T N R Y K M S W B D H V -> T G C A N Y R M K S W V H D B */
    static const uint8_t comp[15] = { 3, 2, 1, 0, 4, 6, 5, 8, 7, 9, 10, 14, 13, 12, 11 };
    for (size_t i = 0, k = n; i < k--; i++) {
        uint8_t x = in[i], y = in[k];
        out[i] = y < 15 ? comp[y] : y;
        out[k] = x < 15 ? comp[x] : x;
    }
}
