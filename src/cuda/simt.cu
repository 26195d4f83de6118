/*
 * simt.cu - the inter-task SIMT kernel (after CUDASW++ 2.0's optimized
 * SIMT algorithm and SW-CUDA): one thread per subject, 32-bit scores.
 *
 * The query is processed in blocks of 16 columns kept in registers (H and
 * F of each column); the subject streams through them row by row, its
 * residues packed 4 per word.  The scores of a row come from the packed
 * query profile, 4 int8 scores per 32-bit word, one 16-byte fetch per row
 * and block.  Between query blocks each row's H and E of the block's last
 * column wait in global memory (8 bytes per residue of the batch).
 * Threads take subjects longest first so a warp holds similar lengths.
 */
#include "common.cuh"
#include "cells.cuh"

#define QB 16                   /* query columns per register block */
#define NEG32 (-(1 << 28))

extern "C" size_t swgpu__cu_simt_prof_words(int qlen)
{
    return (size_t)SWGPU_CU_NRES * ((qlen + QB - 1) / QB) * (QB / 4);
}

extern "C" void swgpu__cu_simt_prof(const uint8_t *q, int qlen, const int32_t (*s)[32],
                                    int32_t *out)
{
    int wpr = ((qlen + QB - 1) / QB) * (QB / 4); /* words per residue row */
    for (int r = 0; r < SWGPU_CU_NRES; r++)
        for (int w = 0; w < wpr; w++) {
            uint32_t word = 0;
            for (int b = 0; b < 4; b++) {
                int c = 4 * w + b;
                int v = (r == SWGPU_CU_PAD || c >= qlen) ? -128 : s[q ? q[c] : c][r];
                word |= (uint32_t)(v & 0xff) << (8 * b);
            }
            out[(size_t)r * wpr + w] = (int32_t)word;
        }
}

extern "C" size_t swgpu__cu_simt_scratch(uint64_t words)
{
    return (size_t)words * 4 * sizeof(int2);
}

static __device__ __forceinline__ int sbyte(uint32_t w, int i)
{
    return (int)(int8_t)(w >> (8 * i));
}

__global__ void __launch_bounds__(128)
k_simt(swgpu_cu_batch_t b, uint32_t first, uint32_t count, const int32_t *__restrict__ prof4,
       int qlen, int oe, int ext, int2 *scratch, int32_t *scores)
{
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= count)
        return;
    const uint32_t k = first + count - 1 - gid; /* longest first */
    const int L = (int)b.len[k];
    const uint32_t w0 = b.woff[k];
    const int nqb = (qlen + QB - 1) / QB, wpr = nqb * (QB / 4);
    int2 *bnd = scratch + (size_t)w0 * 4; /* H, E of the block's last column per row */
    int M = 0;
    for (int qb = 0; qb < nqb; qb++) {
        int H[QB], F[QB]; /* H(j-1, c), F(j-1, c) of the block's columns */
#pragma unroll
        for (int r = 0; r < QB; r++) {
            H[r] = 0;
            F[r] = NEG32;
        }
        int hdiag_next = 0; /* H(j-1, c0-1) for the next row */
        uint32_t word = 0;
        for (int j = 0; j < L; j++) {
            if ((j & 3) == 0)
                word = b.res[w0 + (j >> 2)];
            const int a = (word >> ((j & 3) * 8)) & 0xff;
            int hl, el; /* H(j, c-1), E(j, c-1) */
            if (qb == 0) {
                hl = 0;
                el = NEG32;
            } else {
                int2 v = bnd[j];
                hl = v.x;
                el = v.y;
            }
            int hd = hdiag_next;
            hdiag_next = hl;
            const int4 p = __ldg((const int4 *)(prof4 + (size_t)a * wpr + qb * (QB / 4)));
            const uint32_t pw[4] = {(uint32_t)p.x, (uint32_t)p.y, (uint32_t)p.z, (uint32_t)p.w};
#pragma unroll
            for (int r = 0; r < QB; r++) {
                const int s = sbyte(pw[r >> 2], r & 3);
                const int e = max(el - ext, hl - oe);
                const int f = max(F[r] - ext, H[r] - oe);
                const int h = max(max(hd + s, 0), max(e, f));
                hd = H[r];
                H[r] = h;
                F[r] = f;
                M = max(M, h);
                hl = h;
                el = e;
            }
            if (qb + 1 < nqb)
                bnd[j] = make_int2(hl, el);
        }
    }
    scores[k] = M;
}

extern "C" int swgpu__cu_simt(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                              const swgpu_cu_query_t *q, const int32_t *prof4, void *scratch,
                              int32_t *scores, cudaStream_t st)
{
    if (count == 0)
        return SWGPU_OK;
    k_simt<<<(count + 127) / 128, 128, 0, st>>>(*b, first, count, prof4, q->qlen, q->oe, q->ext,
                                                (int2 *)scratch, scores);
    CU_LAUNCHED("k_simt");
    return SWGPU_OK;
}
