/*
 * intra.cu - the intra-task kernel (k_intra): one block of 128 threads per
 * subject, 32-bit, the query split over the block's threads in a
 * wavefront, the hand-over through shared memory with one barrier per
 * step.  It scores the subjects the 16-bit kernels cannot (long subjects
 * of the other families, saturated scores) and, in one launch over
 * (subject, query) pairs of several queries, a batch's saturated scores
 * (swgpu__cu_intra_pairs).
 */
#include "common.cuh"
#include "cells.cuh"

/* ---------------------------------------------------- the intra kernel */

enum { IB = SWGPU_CU_INTRA_THREADS, IR = SWGPU_CU_INTRA_R, IW = IB * IR };

__global__ void __launch_bounds__(SWGPU_CU_INTRA_THREADS)
k_intra(swgpu_cu_batch_t b, const uint32_t *__restrict__ idx, uint32_t first, uint32_t count,
        const int16_t *__restrict__ tprof, int ntiles, int oe, int ext, int2 *scratch,
        uint32_t maxlen, int *ctr, int32_t *scores, const uint2 *__restrict__ pairs,
        const swgpu_cu_mq_t *__restrict__ qt)
{
    /* pairs (swgpu__cu_intra_pairs): unit u is pair pairs[count-1-u] =
     * (subject, query), the query's profile, tiles and score row from qt */
    extern __shared__ uint4 smem_u4[];
    int16_t *prof = (int16_t *)smem_u4; /* 32 x IW scores of the current tile */
    __shared__ int2 xb[2][IB];          /* hand-over H, Ê: written at step s into xb[s&1] */
    __shared__ int32_t red[IB / 32];
    __shared__ uint32_t unit_sh;
    const int t = threadIdx.x;
    int2 *bnd = scratch ? scratch + (size_t)blockIdx.x * maxlen : NULL;

    if (!pairs && ntiles == 1) {
        copy_tile(prof, tprof, IW, 0);
        __syncthreads();
    }
    for (;;) {
        const uint32_t u = next_unit(ctr, &unit_sh);
        if (u >= count)
            break;
        uint32_t k;
        const int16_t *tp = tprof;
        int nt = ntiles;
        int32_t *out = scores;
        if (pairs) {
            const uint2 pr = pairs[count - 1 - u];
            k = pr.x;
            tp = qt[pr.y].tprof;
            nt = qt[pr.y].ntiles;
            out = qt[pr.y].scores;
        } else {
            k = idx ? idx[count - 1 - u] : first + count - 1 - u;
        }
        const int L = (int)b.len[k];
        const uint32_t wk = b.woff[k];
        SwLane<LS32, IR> ln;
        ln.M = 0;
        for (int tile = 0; tile < nt; tile++) {
            if (nt > 1 || pairs) {
                __syncthreads();
                copy_tile(prof, tp, IW, tile);
                __syncthreads();
            }
            ln.start(oe);
            const int nsteps = L + IB - 1;
            for (int s = 0; s < nsteps; s++) {
                const int j = s - t;
                if (j >= 0 && j < L) {
                    int2 v;
                    if (t > 0)
                        v = xb[(s - 1) & 1][t - 1];
                    else if (tile > 0)
                        v = bnd[j];
                    else
                        v = make_int2(0, 0);
                    ln.h = v.x;
                    ln.e = v.y;
                    int32_t sc[IR];
                    /* residues packed 4 per word, or (default family) from
                     * the pair layout: subject k is half k & 1 of pair k >> 1 */
                    const int rc = b.res ? sw_res(b.res, wk, L, j)
                                         : (b.pres[b.poff[k >> 1] + j] >> ((k & 1) * 8)) & 0xff;
                    sw_fetch<IR>(LS32(), prof + rc * IW, NULL, t, IB, sc);
                    ln.template row<false>(sc, -oe, -ext);
                    xb[s & 1][t] = make_int2(ln.h, ln.e);
                    if (t == IB - 1 && tile + 1 < nt)
                        bnd[j] = make_int2(ln.h, ln.e);
                }
                __syncthreads();
            }
        }
        int32_t m = ln.M;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            m = max(m, __shfl_xor_sync(FULL_MASK, m, off));
        if ((t & 31) == 0)
            red[t >> 5] = m;
        __syncthreads();
        if (t == 0) {
            for (int w = 1; w < IB / 32; w++)
                m = max(m, red[w]);
            out[k] = m;
        }
    }
}

static size_t intra_smem(void)
{
    return (size_t)SWGPU_CU_NRES * IW * sizeof(int16_t);
}

extern "C" size_t swgpu__cu_intra_scratch(int qlen, uint32_t maxlen, int blocks)
{
    if (qlen <= IW)
        return 0;
    return (size_t)blocks * maxlen * sizeof(int2);
}

extern "C" int swgpu__cu_intra_occupancy(int *blocks_per_sm)
{
    CU_CHECK(cudaFuncSetAttribute(k_intra, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)intra_smem()));
    CU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k_intra,
                                                           SWGPU_CU_INTRA_THREADS, intra_smem()));
    return SWGPU_OK;
}

extern "C" int swgpu__cu_intra(const swgpu_cu_batch_t *b, const uint32_t *idx, uint32_t first,
                               uint32_t count, const swgpu_cu_query_t *q, const int16_t *tprof,
                               int blocks, void *scratch, uint32_t maxlen, int *ctr,
                               int32_t *scores, cudaStream_t st)
{
    if (count == 0)
        return SWGPU_OK;
    int ntiles = (q->qlen + IW - 1) / IW;
    CU_CHECK(cudaFuncSetAttribute(k_intra, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)intra_smem()));
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    k_intra<<<blocks, IB, intra_smem(), st>>>(*b, idx, first, count, tprof, ntiles, q->oe, q->ext,
                                             ntiles > 1 ? (int2 *)scratch : NULL, maxlen, ctr,
                                             scores, NULL, NULL);
    CU_LAUNCHED("k_intra");
    return SWGPU_OK;
}

extern "C" int swgpu__cu_intra_pairs(const swgpu_cu_batch_t *b, const uint2 *pairs,
                                     uint32_t count, const swgpu_cu_mq_t *qt, int oe, int ext,
                                     int blocks, void *scratch, uint32_t maxlen, int *ctr,
                                     cudaStream_t st)
{
    if (count == 0)
        return SWGPU_OK;
    CU_CHECK(cudaFuncSetAttribute(k_intra, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)intra_smem()));
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    k_intra<<<blocks, IB, intra_smem(), st>>>(*b, NULL, 0, count, NULL, 0, oe, ext,
                                             (int2 *)scratch, maxlen, ctr, NULL, pairs, qt);
    CU_LAUNCHED("k_intra (pairs)");
    return SWGPU_OK;
}
