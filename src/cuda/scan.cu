/*
 * scan.cu - the row-parallel kernel (after Chang and Chen's prefix-scan
 * Smith-Waterman), generalized to affine gaps, 32-bit scores.
 *
 * One block per subject; thread t owns C consecutive query columns.  A row
 * j (one subject residue) is computed in parallel in three parts:
 *   F(j,c)  = max(F(j-1,c) - ext, H(j-1,c) - oe)                (vertical)
 *   Ht(j,c) = max(0, H(j-1,c-1) + S, F(j,c))           (all but horizontal)
 *   E(j,c)  = max over k < c of Ht(j,k) - oe - (c-1-k)*ext
 *           = max_{k<c} (Ht(j,k) + k*ext) - oe - (c-1)*ext
 *   H(j,c)  = max(Ht(j,c), E(j,c))
 * E may use Ht instead of H because a horizontal gap continued from E is
 * already covered by the extension term (ext <= oe).  The maximum over
 * k < c is an exclusive prefix-max scan across the block: each thread scans
 * its C columns, a warp scan by shuffles and a scan of the warp totals in
 * shared memory combine them.
 */
#include "common.cuh"
#include "cells.cuh"

#define SCAN_C 16
#define SCAN_MAXB 512
#define NEGB (-(1 << 30))

extern "C" int swgpu__cu_scan_max_qlen(void)
{
    return SCAN_C * SCAN_MAXB;
}

static int scan_threads(int qlen)
{
    int B = (qlen + SCAN_C - 1) / SCAN_C;
    B = (B + 31) / 32 * 32;
    return B;
}

extern "C" int swgpu__cu_scan_qpad(int qlen)
{
    return scan_threads(qlen) * SCAN_C;
}

/* prof[r*qpad + c] = S[q[c]][r] (q NULL: s[c][r]), SWGPU_CU_NEG past the query */
extern "C" void swgpu__cu_scan_prof(const uint8_t *q, int qlen, const int32_t (*s)[32],
                                    int32_t *out)
{
    int qpad = swgpu__cu_scan_qpad(qlen);
    for (int r = 0; r < SWGPU_CU_NRES; r++)
        for (int c = 0; c < qpad; c++)
            out[(size_t)r * qpad + c] =
                (r == SWGPU_CU_PAD || c >= qlen) ? SWGPU_CU_NEG : s[q ? q[c] : c][r];
}

__global__ void __launch_bounds__(SCAN_MAXB)
k_scan(swgpu_cu_batch_t b, uint32_t first, uint32_t count, const int32_t *__restrict__ prof,
       int qlen, int qpad, int oe, int ext, int *ctr, int32_t *scores)
{
    __shared__ int lastH[SCAN_MAXB];
    __shared__ int wtot[SCAN_MAXB / 32];
    __shared__ uint32_t unit_sh;
    const int t = threadIdx.x, lane = t & 31, wid = t >> 5, nw = blockDim.x >> 5;
    const int c0 = t * SCAN_C;
    (void)qlen;
    for (;;) {
        const uint32_t u = next_unit(ctr, &unit_sh);
        if (u >= count)
            break;
        const uint32_t k = first + count - 1 - u;
        const int L = (int)b.len[k];
        const uint32_t w0 = b.woff[k];
        int H[SCAN_C], F[SCAN_C]; /* H(j-1,c), F(j-1,c); then H(j,c), F(j,c) */
#pragma unroll
        for (int r = 0; r < SCAN_C; r++) {
            H[r] = 0;
            F[r] = NEGB;
        }
        int M = 0;
        for (int j = 0; j < L; j++) {
            const int a = (b.res[w0 + (j >> 2)] >> ((j & 3) * 8)) & 0xff;
            const int32_t *pr = prof + (size_t)a * qpad + c0;
            lastH[t] = H[SCAN_C - 1];
            __syncthreads();
            int hd = t > 0 ? lastH[t - 1] : 0;
            int A = NEGB; /* max over this thread's columns of Ht + c*ext */
#pragma unroll
            for (int r = 0; r < SCAN_C; r++) {
                const int f = max(F[r] - ext, H[r] - oe);
                const int ht = max(max(hd + pr[r], f), 0);
                hd = H[r];
                H[r] = ht;
                F[r] = f;
                A = max(A, ht + (c0 + r) * ext);
            }
            /* exclusive prefix max of A over the threads */
            int incl = A;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                int v = __shfl_up_sync(FULL_MASK, incl, off);
                if (lane >= off)
                    incl = max(incl, v);
            }
            if (lane == 31)
                wtot[wid] = incl;
            int excl = __shfl_up_sync(FULL_MASK, incl, 1);
            if (lane == 0)
                excl = NEGB;
            __syncthreads();
            for (int w = 0; w < wid; w++)
                excl = max(excl, wtot[w]);
            (void)nw;
            int run = excl;
#pragma unroll
            for (int r = 0; r < SCAN_C; r++) {
                const int c = c0 + r;
                const int e = run - oe - (c - 1) * ext;
                run = max(run, H[r] + c * ext);
                const int h = max(H[r], e);
                H[r] = h;
                M = max(M, h);
            }
        }
        /* maximum over the block */
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            M = max(M, __shfl_xor_sync(FULL_MASK, M, off));
        __syncthreads();
        if (lane == 0)
            wtot[wid] = M;
        __syncthreads();
        if (t == 0) {
            for (int w = 1; w < nw; w++)
                M = max(M, wtot[w]);
            scores[k] = M;
        }
    }
}

extern "C" int swgpu__cu_scan(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                              const swgpu_cu_query_t *q, const int32_t *prof, int blocks,
                              int *ctr, int32_t *scores, cudaStream_t st)
{
    if (count == 0)
        return SWGPU_OK;
    if (q->qlen > swgpu__cu_scan_max_qlen())
        return swgpu__fail(SWGPU_EINVAL, "scan kernel: query of %d residues exceeds %d",
                           q->qlen, swgpu__cu_scan_max_qlen());
    int B = scan_threads(q->qlen);
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    k_scan<<<blocks, B, 0, st>>>(*b, first, count, prof, q->qlen, swgpu__cu_scan_qpad(q->qlen),
                                 q->oe, q->ext, ctr, scores);
    CU_LAUNCHED("k_scan");
    return SWGPU_OK;
}
