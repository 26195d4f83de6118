/*
 * vector.cu - the partitioned vectorized kernel (after CUDASW++ 2.0): one
 * warp per subject used as a 32-lane SIMD vector, 32-bit scores.
 *
 * The query is cut into partitions of up to 32*16 columns.  Inside a
 * partition of 32*p columns the query is striped (Farrar): lane v owns
 * columns s0 + v*p + k, k < p, holding H and E (the gap along the subject)
 * of each in registers.  A row (one subject residue) is computed in p
 * vector steps; the gap along the query (F) is first taken only within
 * each lane's stripe, then corrected by the lazy-F loop: F is shifted one
 * lane up and propagated while any lane (warp vote) still has
 * F > H - (open+extend), updating H, E and the maximum.  Between partitions
 * each row's H of the last column and the F leaving it (the F-carry) wait
 * in global memory; lane 0 of the next partition starts its F from it.
 */
#include "common.cuh"
#include "cells.cuh"

#define VSEG 16 /* segments per lane and partition */
#define VPW (32 * VSEG)
#define VWARPS 4
#define NEG32 (-(1 << 28))

static int nparts_of(int qlen)
{
    return (qlen + VPW - 1) / VPW;
}

extern "C" size_t swgpu__cu_vector_prof_words(int qlen)
{
    return (size_t)SWGPU_CU_NRES * nparts_of(qlen) * VPW;
}

/* vprof[((r*nparts + P)*VSEG + k)*32 + lane] = score of column s0 + lane*p + k */
extern "C" void swgpu__cu_vector_prof(const uint8_t *q, int qlen, const int32_t (*s)[32],
                                      int32_t *out)
{
    int np = nparts_of(qlen);
    for (int r = 0; r < SWGPU_CU_NRES; r++)
        for (int P = 0; P < np; P++) {
            int s0 = P * VPW, rem = qlen - s0, p = (rem + 31) / 32;
            if (p > VSEG)
                p = VSEG;
            for (int k = 0; k < VSEG; k++)
                for (int lane = 0; lane < 32; lane++) {
                    int c = s0 + lane * p + k;
                    int v = (r == SWGPU_CU_PAD || k >= p || c >= qlen) ? SWGPU_CU_NEG
                                                                        : s[q ? q[c] : c][r];
                    out[(((size_t)r * np + P) * VSEG + k) * 32 + lane] = v;
                }
        }
}

extern "C" size_t swgpu__cu_vector_scratch(uint32_t maxlen, int warps)
{
    return (size_t)warps * maxlen * sizeof(int2);
}

__global__ void __launch_bounds__(32 * VWARPS)
k_vector(swgpu_cu_batch_t b, uint32_t first, uint32_t count, const int32_t *__restrict__ vprof,
         int qlen, int oe, int ext, int2 *scratch, uint32_t maxlen, int *ctr, int32_t *scores)
{
    const int lane = threadIdx.x & 31;
    const int np = (qlen + VPW - 1) / VPW;
    int2 *carry = scratch + (size_t)(blockIdx.x * VWARPS + threadIdx.x / 32) * maxlen;
    for (;;) {
        uint32_t u = 0;
        if (lane == 0)
            u = atomicAdd((unsigned *)ctr, 1u);
        u = __shfl_sync(FULL_MASK, u, 0);
        if (u >= count)
            break;
        const uint32_t k = first + count - 1 - u;
        const int L = (int)b.len[k];
        const uint32_t w0 = b.woff[k];
        int M = 0;
        for (int P = 0; P < np; P++) {
            const int s0 = P * VPW;
            const int p = min(VSEG, (qlen - s0 + 31) / 32);
            int H[VSEG], E[VSEG]; /* H(j-1,c) / E(j,c) before a row, H(j,c) / E(j+1,c) after */
#pragma unroll
            for (int kk = 0; kk < VSEG; kk++) {
                H[kk] = 0;
                E[kk] = NEG32;
            }
            int hcarry_prev = 0; /* H(j-1, s0-1) */
            uint32_t word = 0;
            for (int j = 0; j < L; j++) {
                if ((j & 3) == 0)
                    word = b.res[w0 + (j >> 2)];
                const int a = (word >> ((j & 3) * 8)) & 0xff;
                const int32_t *pr = vprof + (((size_t)a * np + P) * VSEG) * 32 + lane;
                int2 cin = P > 0 ? carry[j] : make_int2(0, NEG32);
                /* H(j-1, last column of the stripe) of the lane below */
                int hlast = H[0];
#pragma unroll
                for (int kk = 1; kk < VSEG; kk++)
                    if (kk == p - 1)
                        hlast = H[kk];
                int vH = __shfl_up_sync(FULL_MASK, hlast, 1);
                if (lane == 0)
                    vH = hcarry_prev;
                hcarry_prev = cin.x;
                int vF = lane == 0 ? cin.y : NEG32;
#pragma unroll
                for (int kk = 0; kk < VSEG; kk++) {
                    if (kk < p) {
                        int h = max(max(vH + pr[kk * 32], E[kk]), max(vF, 0));
                        M = max(M, h);
                        const int hoe = h - oe;
                        E[kk] = max(E[kk] - ext, hoe);
                        vF = max(vF - ext, hoe);
                        vH = H[kk];
                        H[kk] = h;
                    }
                }
                /* lazy F: carry F across the stripes until it no longer matters */
                int fout = __shfl_sync(FULL_MASK, vF, 31);
                for (;;) {
                    vF = __shfl_up_sync(FULL_MASK, vF, 1);
                    if (lane == 0)
                        vF = NEG32;
                    bool stop = false;
#pragma unroll
                    for (int kk = 0; kk < VSEG; kk++) {
                        if (kk < p && !stop) {
                            if (!__any_sync(FULL_MASK, vF > H[kk] - oe)) {
                                stop = true;
                            } else {
                                const int h = max(H[kk], vF);
                                H[kk] = h;
                                M = max(M, h);
                                E[kk] = max(E[kk], h - oe);
                                vF -= ext;
                            }
                        }
                    }
                    if (stop)
                        break;
                    fout = max(fout, __shfl_sync(FULL_MASK, vF, 31));
                }
                if (P + 1 < np) {
                    int hl = H[0];
#pragma unroll
                    for (int kk = 1; kk < VSEG; kk++)
                        if (kk == p - 1)
                            hl = H[kk];
                    if (lane == 31)
                        carry[j] = make_int2(hl, fout);
                }
            }
            __syncwarp();
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            M = max(M, __shfl_xor_sync(FULL_MASK, M, off));
        if (lane == 0)
            scores[k] = M;
    }
}

extern "C" int swgpu__cu_vector_warps_per_sm(int *n)
{
    int blocks = 0;
    CU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_vector, 32 * VWARPS, 0));
    *n = blocks * VWARPS;
    return SWGPU_OK;
}

extern "C" int swgpu__cu_vector(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                                const swgpu_cu_query_t *q, const int32_t *vprof, int warps,
                                void *scratch, uint32_t maxlen, int *ctr, int32_t *scores,
                                cudaStream_t st)
{
    if (count == 0)
        return SWGPU_OK;
    int blocks = (warps + VWARPS - 1) / VWARPS;
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    k_vector<<<blocks, 32 * VWARPS, 0, st>>>(*b, first, count, vprof, q->qlen, q->oe, q->ext,
                                            (int2 *)scratch, maxlen, ctr, scores);
    CU_LAUNCHED("k_vector");
    return SWGPU_OK;
}
