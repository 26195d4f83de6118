/*
 * group.cu - the wavefront group kernels.
 *
 * A group of threads shares one alignment job: the query is split over the
 * threads (R consecutive columns each, held in registers), the subject
 * streams through one row per step.  At step s thread t works on row s - t;
 * its right-most H and Ê go to thread t+1, which uses them one step later.
 *
 *  - k_dpx (the default kernel): groups of G threads inside a warp, the
 *    hand-over by __shfl_up_sync; two subjects per group, one per 16-bit
 *    half of every register (DPX s16x2 instructions).
 *  - k_qp (the query-lane kernel): as k_dpx, one subject per group and the
 *    two halves of every register two lanes of queries; k_dpx and k_qp
 *    share their step (dpx_step).
 *  - k_intra (intra.cu, the intra-task kernel): one block of 128 threads
 *    per subject, 32-bit, the hand-over through shared memory with one
 *    barrier per step.
 *
 * Their host model (the same cell code on the CPU) is in model.cu.
 *
 * Queries wider than one tile (G*R columns) are processed tile by tile; the
 * last thread writes H and Ê of its right-most column for every row to a
 * per-group boundary array in global memory, the first thread of the next
 * tile reads them.  Blocks are persistent and take work units (a set of
 * similar-length subjects) longest first from an atomic counter.
 */
#include "common.cuh"
#include "cells.cuh"

/* ------------------------------------------------------------ profiles */
/*
 * Both profiles are defined element by element (tile_prof_at, dpx_prof_at),
 * so that the host builders (the host model) and the device builders (every
 * scan: no host work and no profile upload per query) share one formula.
 */

extern "C" size_t swgpu__cu_tile_prof_len(int G, int R, int qlen)
{
    size_t W = (size_t)G * R, ntiles = ((size_t)qlen + W - 1) / W;
    return ntiles * SWGPU_CU_NRES * W;
}

/* score of residue code a against query column col (padding past the end):
 * the matrix row of the column's residue, or (q NULL) the column's own row
 * (a PSSM) */
static SW_HD int prof_score(const uint8_t *q, int qlen, const int16_t *mat, int a, size_t col)
{
    return (a == SWGPU_CU_PAD || col >= (size_t)qlen) ? SWGPU_CU_NEG
                                                     : mat[32 * (q ? (size_t)q[col] : col) + a];
}

/* element i of the tile profile: tile i / (32 W), residue row, position */
static SW_HD int16_t tile_prof_at(int G, int R, const uint8_t *q, int qlen, const int16_t *mat,
                                  size_t i)
{
    const size_t W = (size_t)G * R, row = i / W;
    const int pos = (int)(i - row * W), CH = (R % 8 == 0) ? 8 : 4;
    const size_t tile = row / SWGPU_CU_NRES;
    const int a = (int)(row - tile * SWGPU_CU_NRES);
    return (int16_t)prof_score(q, qlen, mat, a, tile * W + sw_prof_col(pos, G, R, CH));
}

/* P>=1: each tile as two tables of 32-bit words, lo[a][d] = score in the
 * low half, hi[a][d] = score in the high half, d = ((r / 4) * G + t) * 4 +
 * (r & 3) for column r of thread t (chunks of 4 columns), so that a tile
 * reaches shared memory by a plain 16-byte copy.  Word i: */
static SW_HD uint32_t dpx_prof_at(int G, int R, const uint8_t *q, int qlen, const int16_t *mat,
                                  size_t i)
{
    const size_t W = (size_t)G * R, tw = 2 * SWGPU_CU_NRES * W;
    const size_t tile = i / tw, k = i - tile * tw;
    const int hi = k >= SWGPU_CU_NRES * W;
    const size_t ka = hi ? k - SWGPU_CU_NRES * W : k;
    const int a = (int)(ka / W), d = (int)(ka - (size_t)a * W);
    const int d4 = d >> 2, t = d4 % G, r = (d4 / G) * 4 + (d & 3);
    const int v = prof_score(q, qlen, mat, a, tile * W + (size_t)t * R + r);
    return hi ? (uint32_t)v << 16 : (uint32_t)v & 0xffffu;
}

extern "C" void swgpu__cu_tile_prof(int G, int R, const uint8_t *q, int qlen,
                                    const int16_t *mat, int16_t *out)
{
    const size_t n = swgpu__cu_tile_prof_len(G, R, qlen);
    for (size_t i = 0; i < n; i++)
        out[i] = tile_prof_at(G, R, q, qlen, mat, i);
}

extern "C" size_t swgpu__cu_dpx_prof_bytes(swgpu_cu_cfg_t cfg, int qlen)
{
    size_t n = swgpu__cu_tile_prof_len(cfg.G, cfg.R, qlen);
    return cfg.P ? n * 2 * sizeof(uint32_t) : n * sizeof(int16_t);
}

extern "C" void swgpu__cu_dpx_prof(swgpu_cu_cfg_t cfg, const uint8_t *q, int qlen,
                                   const int16_t *mat, void *out)
{
    if (!cfg.P) {
        swgpu__cu_tile_prof(cfg.G, cfg.R, q, qlen, mat, (int16_t *)out);
        return;
    }
    const size_t n = swgpu__cu_tile_prof_len(cfg.G, cfg.R, qlen) * 2;
    for (size_t i = 0; i < n; i++)
        ((uint32_t *)out)[i] = dpx_prof_at(cfg.G, cfg.R, q, qlen, mat, i);
}

/* the builders on the GPU (one thread per element, grid-stride) */
__global__ void k_prof(int G, int R, int words, const uint8_t *__restrict__ q, int qlen,
                       const int16_t *__restrict__ mat, void *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        if (words)
            ((uint32_t *)out)[i] = dpx_prof_at(G, R, q, qlen, mat, i);
        else
            ((int16_t *)out)[i] = tile_prof_at(G, R, q, qlen, mat, i);
    }
}

extern "C" int swgpu__cu_prof_dev(swgpu_cu_cfg_t cfg, const uint8_t *d_q, int qlen,
                                  const int16_t *d_mat, void *d_out, cudaStream_t st)
{
    const size_t n = swgpu__cu_tile_prof_len(cfg.G, cfg.R, qlen) * (cfg.P ? 2 : 1);
    if (n == 0)
        return SWGPU_OK;
    const size_t want = (n + 255) / 256;
    const int blocks = (int)(want < 4096 ? want : 4096);
    k_prof<<<blocks, 256, 0, st>>>(cfg.G, cfg.R, cfg.P != 0, d_q, qlen, d_mat, d_out, n);
    CU_LAUNCHED("k_prof");
    return SWGPU_OK;
}

/* copy n 16-byte words (whole block) */
static __device__ __forceinline__ void copy_u4(uint4 *dst, const uint4 *__restrict__ src, int n)
{
#pragma unroll 4
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = src[i];
}

/* 16 bytes from a shared-window byte address */
static __device__ __forceinline__ uint4 lds128(uint32_t a)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(a));
    return v;
}

/* the byte at base + i * two, its address by a multiply-add (the FMA pipe,
 * two = 2 at run time, where an index scaled by a constant takes the
 * integer pipe's shifts and 64-bit adds) */
static __device__ __forceinline__ uint32_t ldg_at(const uint8_t *base, uint32_t i, uint32_t two)
{
    const uint8_t *p;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(p) : "r"(i), "r"(two), "l"(base));
    return __ldg(p);
}

/* lo + hi by an integer multiply-add (FMA pipe); one = 1 at run time */
static __device__ __forceinline__ uint32_t pair_mad(uint32_t hi, uint32_t one, uint32_t lo)
{
    uint32_t d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(hi), "r"(one), "r"(lo));
    return d;
}

/*
 * The steps of a tile pass: step(s, CK) for s = 0 .. nsteps-1, where the
 * steady state s0 <= s < s1 (every lane of the warp has rows j = s - t >= 0
 * and j + 1 < L: s >= G-1 >= t, s + 1 < the warp's shortest L) takes the
 * unchecked copy of the step and the wavefront's fill and drain the checked
 * one.  Warp-uniform: every lane calls it with the same nsteps.
 */
template <int G, class F>
static __device__ __forceinline__ void wavefront(int nsteps, int L, F &step)
{
    const int s0 = G - 1;
    const int s1 = (int)__reduce_min_sync(FULL_MASK, (unsigned)L) - 1;
    for (int s = 0; s < nsteps;) {
        if (s >= s0 && s < s1) {
#pragma unroll 1
            for (; s < s1; s++)
                step(s, false);
        } else {
            step(s, true);
            s++;
        }
    }
}

/*
 * One step of a tile pass of the DPX kernels (k_dpx, k_qp): thread t
 * computes row j = s - t of its subjects with cells(x), x the row's residue
 * pair.  CK: check that rows j and j+1 exist (the wavefront's fill and
 * drain, the end of a shorter subject); not needed in the steady state.
 * The left input comes from thread t-1, or for thread 0 from bn, which
 * holds the left boundary of row j; xn and (rd: thread 0 reads a boundary
 * column) bn are loaded one step ahead: row j + 1's residues by nres(s, j),
 * bnd[j + 1] (SA: bt[s]).  KEEP (k_qp): the halves outside keep start
 * afresh from kb0.  wr: thread G-1 writes its right column for the next
 * pass.
 */
template <int G, bool SA, bool KEEP, class Lane, class Cells, class Next>
static __device__ __forceinline__ void dpx_step(const int s, const bool CK, const int t,
                                                const int L, Lane &ln, Cells &cells, uint32_t &xn,
                                                uint2 &bn, Next &nres, uint2 *bnd, uint2 *bt,
                                                const bool rd, const bool wr, const uint32_t keep,
                                                const uint2 kb0)
{
    uint32_t hr = __shfl_up_sync(FULL_MASK, ln.h, 1, G);
    uint32_t er = __shfl_up_sync(FULL_MASK, ln.e, 1, G);
    const int j = s - t;
    if (CK && !(j >= 0 && j < L))
        return;
    const uint32_t x = xn;
    const bool more = !CK || j + 1 < L;
    if (more)
        xn = nres(s, j);
    if (t == 0) {
        hr = bn.x;
        er = bn.y;
        if (rd && more)
            bn = SA ? bt[s] : bnd[j + 1];
    }
    if (KEEP) {
        ln.h = (hr & keep) | kb0.x; /* a query's first slot starts afresh */
        ln.e = (er & keep) | kb0.y;
    } else {
        ln.h = hr;
        ln.e = er;
    }
    cells(x);
    if (t == G - 1 && wr) {
        if (SA)
            bt[s] = make_uint2(ln.h, ln.e);
        else
            bnd[j] = make_uint2(ln.h, ln.e);
    }
}

/* ------------------------------------------------------ the DPX kernel */

/*
 * MQ (many queries): the work units are (subject unit, query) pairs, unit
 * u = su * nq + qi, so that every query takes the longest subjects first
 * and consecutive units read the same subjects (L2); the query's profile,
 * tile count and score row come from mq[qi].  A single-tile profile stays
 * in shared memory while a block's consecutive units share the query.
 * Without MQ the kernel is the one-query kernel (tprof, ntiles, scores).
 */
template <int G, int R, int P, bool MQ = false>
__global__ void __launch_bounds__(SWGPU_CU_DPX_THREADS, P ? 2 : 1)
k_dpx(swgpu_cu_batch_t b, uint32_t first, uint32_t count, const int16_t *__restrict__ tprof,
      int ntiles, uint32_t noe, uint32_t next, uint32_t voe, uint32_t nk, uint2 *scratch,
      uint32_t maxlen, int *ctr, int32_t *scores, uint32_t one,
      const swgpu_cu_mq_t *__restrict__ mq, uint32_t nq)
{
    /* noe, next, voe: -oe, -ext, and H = 0 as held (P=3: oe, P=4: 2oe) in
     * both halves; nk = -oe * 0x10001 (P>=3).
     * Passed ready-made so that the instructions can read them from the
     * constant bank instead of rebuilding them in registers. */
    enum { W = G * R, NG = SWGPU_CU_DPX_THREADS / G };
    const uint32_t wq4 = (uint32_t)(W / 4) * one; /* P>=1 table row in 16-byte words, at run time */
    /* SA (the carried form at R=32): shared addresses as byte offsets from
     * the thread's own start, one IMAD per row address, and the row and
     * boundary indices folded into per-thread bases; this takes the
     * configuration from 28 bytes of spill to 4 (bench/NOTES-gpu.md v17),
     * but costs the others up to 6%, which keep the addressing below */
    constexpr bool SA = P == 4 && R == 32;
    const uint32_t rowb = (uint32_t)(W * 4) * one; /* SA: a table row in bytes, at run time */
    extern __shared__ uint4 smem_u4[];
    int16_t *prof = (int16_t *)smem_u4; /* P=0: 32 x W scores of the current tile */
    uint32_t *plo = (uint32_t *)smem_u4, *phi = plo + SWGPU_CU_NRES * W; /* P=1 */
    /* SA: the thread's first 16-byte word in row 0 of the low-half table as
     * a shared-window byte address; the high-half table follows at HI */
    const uint32_t sa = (uint32_t)__cvta_generic_to_shared(plo) + 16u * (uint32_t)(threadIdx.x % G);
    enum { HI = SWGPU_CU_NRES * W * 4 };
    __shared__ uint32_t unit_sh;
    const int g = threadIdx.x / G, t = threadIdx.x % G;
    const uint32_t end = first + count;
    const uint32_t npairs = (count + 1) / 2, nunits = (npairs + NG - 1) / NG;
    uint2 *bnd = scratch ? scratch + (size_t)(blockIdx.x * NG + g) * maxlen : NULL;

    if (!MQ && ntiles == 1) {
        if (P >= 1)
            copy_u4(smem_u4, (const uint4 *)tprof, SWGPU_CU_NRES * W / 2);
        else
            copy_tile(prof, tprof, W, 0);
        __syncthreads();
    }
    /* MQ: thread 0 splits the unit into (subject unit, query) and knows
     * which query's single tile is in shared memory; the query's index is
     * read from shared memory where used, so that no register holds it
     * through the unit (registers are scarce at R >= 24) */
    __shared__ uint32_t qi_sh, reload_sh, cached_sh;
    if (MQ && threadIdx.x == 0)
        cached_sh = 0xffffffffu;
    for (;;) {
        if (MQ) /* every thread is done with the last unit's qi_sh (its score row) */
            __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t u0 = atomicAdd((unsigned *)ctr, 1u);
            if (MQ && u0 < nunits * nq) {
                const uint32_t su = u0 / nq, q0 = u0 - su * nq;
                const int nt = mq[q0].ntiles;
                reload_sh = nt == 1 && q0 != cached_sh;
                cached_sh = nt == 1 ? q0 : 0xffffffffu;
                qi_sh = q0;
                u0 = su;
            } else if (MQ) {
                u0 = nunits; /* done */
            }
            unit_sh = u0;
        }
        __syncthreads();
        const uint32_t u = unit_sh;
        const bool reload = MQ && reload_sh;
        __syncthreads();
        if (u >= nunits)
            break;
        if (MQ) {
            /* every thread finished the previous unit (the barriers above) */
            ntiles = mq[qi_sh].ntiles;
            if (reload) {
                if (P >= 1)
                    copy_u4(smem_u4, (const uint4 *)mq[qi_sh].tprof, SWGPU_CU_NRES * W / 2);
                else
                    copy_tile(prof, mq[qi_sh].tprof, W, 0);
                __syncthreads();
            }
        }
        /* pairs of the unit, longest first: rank p -> pair npairs-1-p */
        const uint32_t p = u * NG + g;
        const bool live = p < npairs;
        const uint32_t pi = npairs - 1 - (live ? p : u * NG);
        const uint32_t ka = first + 2 * pi, kb = ka + 1;
        uint32_t la = 0, lb = 0;
        const uint16_t *rows = b.pres + b.poff[(first >> 1) + pi]; /* residue pair per row */
        if (live) {
            la = b.len[ka];
            if (kb < end)
                lb = b.len[kb];
        }
        const int L = (int)max(la, lb);
        const uint32_t k0 = first + 2 * (npairs - 1 - u * NG);
        const int Lmax = (int)(k0 + 1 < end ? max(b.len[k0], b.len[k0 + 1]) : b.len[k0]);

        SwLane<LP16, R> ln;
        ln.M = 0;
        /* one row of cells: residue pair x */
        auto cells = [&](const uint32_t x) {
            /* the two codes, split on the FMA pipe: rb = x >> 8, ra = x - 256 rb */
            const uint32_t rb = __umulhi(x, 1u << 24), ra = x - rb * 256u;
            uint32_t sc[R];
            if (P >= 1) {
                /* the rows' chunks k: SA by shared byte offsets, else by a
                 * multiply with a run-time width (both on the FMA pipe) */
                const uint32_t sxa = sa + ra * rowb, sxb = sa + rb * rowb;
                const uint4 *xa = (const uint4 *)plo + ra * wq4;
                const uint4 *xb = (const uint4 *)phi + rb * wq4;
#pragma unroll
                for (int k = 0; k < R / 4; k++) {
                    uint4 x = SA ? lds128(sxa + k * G * 16) : xa[k * G + t];
                    sc[4 * k + 0] = x.x;
                    sc[4 * k + 1] = x.y;
                    sc[4 * k + 2] = x.z;
                    sc[4 * k + 3] = x.w;
                }
#pragma unroll
                for (int k = 0; k < R / 4; k++) {
                    uint4 y = SA ? lds128(sxb + (HI + k * G * 16)) : xb[k * G + t];
                    sc[4 * k + 0] = pair_mad(y.x, one, sc[4 * k + 0]);
                    sc[4 * k + 1] = pair_mad(y.y, one, sc[4 * k + 1]);
                    sc[4 * k + 2] = pair_mad(y.z, one, sc[4 * k + 2]);
                    sc[4 * k + 3] = pair_mad(y.w, one, sc[4 * k + 3]);
                }
            } else {
                sw_fetch<R>(LP16(), prof + ra * W, prof + rb * W, t, G, sc);
            }
            if (P == 4)
                ln.row_sh2(sc, voe, nk, next, one);
            else if (P == 3)
                ln.row_sh(sc, voe, nk, next, one);
            else
                ln.template row<P == 2>(sc, noe, next);
        };
        auto lstart = [&]() {
            if (P == 4)
                ln.start_sh2(voe, nk, one);
            else if (P == 3)
                ln.start_sh(voe);
            else
                ln.start_v(noe);
        };
        /* the left boundary of tile 0 (column -1: H = 0, Ê = 0) */
        const uint2 b0 = make_uint2(P >= 3 ? voe : 0u, P == 4 ? voe : 0u);

        for (int tile = 0; tile < ntiles; tile++) {
            if (ntiles > 1) {
                __syncthreads();
                const int16_t *tp = MQ ? mq[qi_sh].tprof : tprof;
                if (P >= 1)
                    copy_u4(smem_u4, (const uint4 *)tp + (size_t)tile * (SWGPU_CU_NRES * W / 2),
                            SWGPU_CU_NRES * W / 2);
                else
                    copy_tile(prof, tp, W, tile);
                __syncthreads();
            }
            lstart();
            const int nsteps = Lmax + G - 1;
            /* next row's residue pair and left boundary, loaded one step ahead */
            uint32_t xn = L > 0 ? rows[0] : 0;
            uint2 bn = b0;
            if (t == 0 && tile > 0 && L > 0)
                bn = bnd[0];
            /* SA: indexed by the step s: rows1[s] = rows[j + 1]; thread 0
             * reads bnd[j + 1] = bt[s], thread G-1 writes bnd[j] = bt[s] */
            const uint16_t *rows1 = rows + 1 - t;
            auto nres = [&](const int s, const int j) {
                return (uint32_t)(SA ? rows1[s] : rows[j + 1]);
            };
            uint2 *bt = !bnd ? NULL : t == 0 ? bnd + 1 : bnd - (G - 1);
            auto step = [&](const int s, const bool CK) {
                dpx_step<G, SA, false>(s, CK, t, L, ln, cells, xn, bn, nres, bnd, bt, tile > 0,
                                       tile + 1 < ntiles, 0u, b0);
            };
            wavefront<G>(nsteps, L, step);
        }
        uint32_t m = ln.M;
#pragma unroll
        for (int off = G / 2; off > 0; off >>= 1)
            m = __vmaxs2(m, __shfl_xor_sync(FULL_MASK, m, off, G));
        if (P == 4)
            m = __viaddmax_s16x2_relu(m, noe, 0u); /* H + oe -> H */
        if (live && t == 0) {
            int32_t *out = MQ ? mq[qi_sh].scores : scores;
            out[ka] = sw_lo16(m);
            if (kb < end)
                out[kb] = sw_hi16(m);
        }
    }
}

typedef void (*dpx_kern_t)(swgpu_cu_batch_t, uint32_t, uint32_t, const int16_t *, int, uint32_t,
                           uint32_t, uint32_t, uint32_t, uint2 *, uint32_t, int *, int32_t *,
                           uint32_t, const swgpu_cu_mq_t *, uint32_t);

static const struct {
    swgpu_cu_cfg_t cfg;
    dpx_kern_t kern;
    dpx_kern_t kern_mq; /* the many-query kernel (default family and long subjects only) */
} dpx_table[] = {
    {{8, 12, 0}, k_dpx<8, 12, 0>},   {{8, 16, 0}, k_dpx<8, 16, 0>},
    {{8, 20, 0}, k_dpx<8, 20, 0>},   {{8, 24, 0}, k_dpx<8, 24, 0>},
    {{8, 28, 0}, k_dpx<8, 28, 0>},   {{8, 32, 0}, k_dpx<8, 32, 0>},
    {{16, 16, 0}, k_dpx<16, 16, 0>}, {{16, 24, 0}, k_dpx<16, 24, 0>},
    {{16, 32, 0}, k_dpx<16, 32, 0>}, {{32, 32, 0}, k_dpx<32, 32, 0>, k_dpx<32, 32, 0, true>},
    {{8, 12, 1}, k_dpx<8, 12, 1>},   {{8, 16, 1}, k_dpx<8, 16, 1>},
    {{8, 20, 1}, k_dpx<8, 20, 1>},   {{8, 24, 1}, k_dpx<8, 24, 1>},
    {{8, 28, 1}, k_dpx<8, 28, 1>},   {{8, 32, 1}, k_dpx<8, 32, 1>},
    {{8, 20, 2}, k_dpx<8, 20, 2>},   {{8, 24, 2}, k_dpx<8, 24, 2>},
    {{8, 28, 2}, k_dpx<8, 28, 2>},
    /* P=3: P=1's score tables, H and F kept plus oe (cells.cuh, row_sh) */
    {{8, 12, 3}, k_dpx<8, 12, 3>, k_dpx<8, 12, 3, true>},   {{8, 16, 3}, k_dpx<8, 16, 3>, k_dpx<8, 16, 3, true>},
    {{8, 20, 3}, k_dpx<8, 20, 3>, k_dpx<8, 20, 3, true>},   {{8, 24, 3}, k_dpx<8, 24, 3>},
    {{8, 28, 3}, k_dpx<8, 28, 3>},   {{8, 32, 3}, k_dpx<8, 32, 3>},
    /* P=4: the carried form (cells.cuh, row_sh2) */
    {{8, 12, 4}, k_dpx<8, 12, 4>},   {{8, 16, 4}, k_dpx<8, 16, 4>},
    {{8, 20, 4}, k_dpx<8, 20, 4>},   {{8, 24, 4}, k_dpx<8, 24, 4>, k_dpx<8, 24, 4, true>},
    {{8, 28, 4}, k_dpx<8, 28, 4>, k_dpx<8, 28, 4, true>},   {{8, 32, 4}, k_dpx<8, 32, 4>, k_dpx<8, 32, 4, true>},
};
enum { N_DPX = sizeof dpx_table / sizeof dpx_table[0] };

/* a kernel table's configurations, copied out of it once (a function-local
 * static of the caller: initialised by the first call, thread-safe in C++11;
 * searches on several threads create engines at once) */
template <class T, int N>
static const swgpu_cu_cfg_t *cfg_list(const T (&t)[N])
{
    struct list {
        swgpu_cu_cfg_t c[N];
    };
    static const list l = [&] {
        list x;
        for (int i = 0; i < N; i++)
            x.c[i] = t[i].cfg;
        return x;
    }();
    return l.c;
}

/* the entry of cfg in a kernel table, or -1 */
template <class T, int N>
static int cfg_find(const T (&t)[N], swgpu_cu_cfg_t cfg)
{
    for (int i = 0; i < N; i++)
        if (t[i].cfg.G == cfg.G && t[i].cfg.R == cfg.R && t[i].cfg.P == cfg.P)
            return i;
    return -1;
}

extern "C" const swgpu_cu_cfg_t *swgpu__cu_dpx_configs(int *n)
{
    *n = N_DPX;
    return cfg_list(dpx_table);
}

static int dpx_find(swgpu_cu_cfg_t cfg)
{
    return cfg_find(dpx_table, cfg);
}

static size_t dpx_smem(swgpu_cu_cfg_t cfg)
{
    return (size_t)SWGPU_CU_NRES * cfg.G * cfg.R * (cfg.P ? 2 * sizeof(uint32_t) : sizeof(int16_t));
}

extern "C" int swgpu__cu_dpx_occupancy(swgpu_cu_cfg_t cfg, int *blocks_per_sm)
{
    int i = dpx_find(cfg);
    if (i < 0)
        return swgpu__fail(SWGPU_EINVAL, "DPX kernel: no configuration G=%d R=%d P=%d", cfg.G, cfg.R, cfg.P);
    size_t smem = dpx_smem(cfg);
    CU_CHECK(cudaFuncSetAttribute(dpx_table[i].kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem));
    CU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, dpx_table[i].kern,
                                                           SWGPU_CU_DPX_THREADS, smem));
    return SWGPU_OK;
}

extern "C" size_t swgpu__cu_dpx_scratch(swgpu_cu_cfg_t cfg, int qlen, uint32_t maxlen, int blocks)
{
    if (qlen <= cfg.G * cfg.R)
        return 0;
    return (size_t)blocks * (SWGPU_CU_DPX_THREADS / cfg.G) * maxlen * sizeof(uint2);
}

extern "C" int swgpu__cu_dpx(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                             const swgpu_cu_query_t *q, const int16_t *tprof, swgpu_cu_cfg_t cfg,
                             int blocks, void *scratch, uint32_t maxlen, int *ctr, int32_t *scores,
                             cudaStream_t st)
{
    int i = dpx_find(cfg);
    if (i < 0)
        return swgpu__fail(SWGPU_EINVAL, "DPX kernel: no configuration G=%d R=%d P=%d", cfg.G, cfg.R, cfg.P);
    if (count == 0)
        return SWGPU_OK;
    if ((first & 1) || !b->pres || !b->poff)
        return swgpu__fail(SWGPU_EINVAL, "DPX kernel: needs the pair layout from an even subject");
    int W = cfg.G * cfg.R, ntiles = (q->qlen + W - 1) / W;
    size_t smem = dpx_smem(cfg);
    CU_CHECK(cudaFuncSetAttribute(dpx_table[i].kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem));
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    dpx_table[i].kern<<<blocks, SWGPU_CU_DPX_THREADS, smem, st>>>(
        *b, first, count, tprof, ntiles, LP16::splat(-q->oe), LP16::splat(-q->ext),
        LP16::splat(cfg.P == 4 ? 2 * q->oe : q->oe), 0u - (uint32_t)q->oe * 0x10001u, ntiles > 1 ? (uint2 *)scratch : NULL,
        maxlen, ctr, scores, 1u, NULL, 1u);
    CU_LAUNCHED("k_dpx");
    return SWGPU_OK;
}

extern "C" int swgpu__cu_dpx_has_mq(swgpu_cu_cfg_t cfg)
{
    int i = dpx_find(cfg);
    return i >= 0 && dpx_table[i].kern_mq != NULL;
}

extern "C" int swgpu__cu_dpx_mq(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                                const swgpu_cu_mq_t *d_mq, uint32_t nq, int maxtiles, int oe,
                                int ext, swgpu_cu_cfg_t cfg, int blocks, void *scratch,
                                uint32_t maxlen, int *ctr, cudaStream_t st)
{
    int i = dpx_find(cfg);
    if (i < 0 || !dpx_table[i].kern_mq)
        return swgpu__fail(SWGPU_EINVAL, "DPX kernel: no many-query configuration G=%d R=%d P=%d",
                           cfg.G, cfg.R, cfg.P);
    if (count == 0 || nq == 0)
        return SWGPU_OK;
    if ((first & 1) || !b->pres || !b->poff)
        return swgpu__fail(SWGPU_EINVAL, "DPX kernel: needs the pair layout from an even subject");
    const uint64_t units = ((uint64_t)(count + 1) / 2 + SWGPU_CU_DPX_THREADS / cfg.G - 1) /
                           (SWGPU_CU_DPX_THREADS / cfg.G);
    if (units * nq >= 0x7fffffffull)
        return swgpu__fail(SWGPU_ERANGE, "DPX kernel: %u queries x %llu work units", nq,
                           (unsigned long long)units);
    size_t smem = dpx_smem(cfg);
    CU_CHECK(cudaFuncSetAttribute(dpx_table[i].kern_mq,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    dpx_table[i].kern_mq<<<blocks, SWGPU_CU_DPX_THREADS, smem, st>>>(
        *b, first, count, NULL, 1, LP16::splat(-oe), LP16::splat(-ext),
        LP16::splat(cfg.P == 4 ? 2 * oe : oe), 0u - (uint32_t)oe * 0x10001u,
        maxtiles > 1 ? (uint2 *)scratch : NULL, maxlen, ctr, NULL, 1u, d_mq, nq);
    CU_LAUNCHED("k_dpx (many queries)");
    return SWGPU_OK;
}

/* ------------------------------------------------- the query-lane kernel */

/* word i of a pass's table: residue row a = i / W, position d as in the
 * P>=1 tables (chunks of 4 columns, thread-interleaved); lane h's score in
 * half h (SWGPU_CU_NEG where the slot is idle or past its query's end) */
static SW_HD uint32_t qp_prof_at(int G, int R, const swgpu_cu_qpq_t *qt,
                                 const swgpu_cu_pbuild_t &pb, size_t i)
{
    const size_t W = (size_t)G * R;
    const int a = (int)(i / W), d = (int)(i - (size_t)a * W);
    const int d4 = d >> 2, t = d4 % G, r = (d4 / G) * 4 + (d & 3);
    uint32_t w = 0;
    for (int h = 0; h < 2; h++) {
        const int qi = pb.qi[h][t];
        const int v = qi < 0 ? SWGPU_CU_NEG
                             : prof_score(qt[qi].q, qt[qi].qlen, qt[qi].mat, a,
                                          (size_t)pb.c0[h][t] + (size_t)r);
        w |= ((uint32_t)v & 0xffffu) << (16 * h);
    }
    return w;
}

extern "C" size_t swgpu__cu_qp_pass_bytes(swgpu_cu_cfg_t cfg)
{
    return (size_t)SWGPU_CU_NRES * cfg.G * cfg.R * sizeof(uint32_t);
}

extern "C" void swgpu__cu_qp_prof(swgpu_cu_cfg_t cfg, const swgpu_cu_qpq_t *qt,
                                  const swgpu_cu_pbuild_t *pb, uint32_t *out)
{
    const size_t n = (size_t)SWGPU_CU_NRES * cfg.G * cfg.R;
    for (size_t i = 0; i < n; i++)
        out[i] = qp_prof_at(cfg.G, cfg.R, qt, *pb, i);
}

__global__ void k_prof_qp(int G, int R, const swgpu_cu_qpq_t *__restrict__ qt,
                          const swgpu_cu_pbuild_t *__restrict__ pbs, uint32_t npass, uint32_t *out)
{
    const size_t per = (size_t)SWGPU_CU_NRES * G * R, n = per * npass;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t p = i / per;
        out[i] = qp_prof_at(G, R, qt, pbs[p], i - p * per);
    }
}

extern "C" int swgpu__cu_qp_prof_dev(swgpu_cu_cfg_t cfg, const swgpu_cu_qpq_t *d_qt,
                                     const swgpu_cu_pbuild_t *d_pb, uint32_t npass, void *d_out,
                                     cudaStream_t st)
{
    const size_t n = (size_t)SWGPU_CU_NRES * cfg.G * cfg.R * npass;
    if (n == 0)
        return SWGPU_OK;
    const size_t want = (n + 255) / 256;
    const int blocks = (int)(want < 4096 ? want : 4096);
    k_prof_qp<<<blocks, 256, 0, st>>>(cfg.G, cfg.R, d_qt, d_pb, npass, (uint32_t *)d_out);
    CU_LAUNCHED("k_prof_qp");
    return SWGPU_OK;
}

/*
 * PF: the cell form, 3 the shifted form (row_sh), 4 the carried form
 * (row_sh2).  The table row of residue r is read as k_dpx reads its low
 * table; no high table: the halves are the two lanes.
 */
template <int G, int R, int PF>
__global__ void __launch_bounds__(SWGPU_CU_DPX_THREADS, 2)
k_qp(swgpu_cu_batch_t b, uint32_t first, uint32_t count, const swgpu_cu_job_t *__restrict__ jobs,
     uint32_t njobs, const swgpu_cu_pass_t *__restrict__ passes, int32_t *scores, size_t stride,
     uint32_t noe, uint32_t next, uint32_t voe, uint32_t nk, uint2 *scratch, uint32_t maxlen,
     int *ctr, uint32_t one)
{
    enum { W = G * R, NG = SWGPU_CU_DPX_THREADS / G };
    const uint32_t wq4 = (uint32_t)(W / 4) * one; /* a table row in 16-byte words, at run time */
    const uint32_t two = 2u * one;                  /* the residue bytes' stride, at run time */
    constexpr bool SA = PF == 4 && R == 32;         /* as in k_dpx */
    const uint32_t rowb = (uint32_t)(W * 4) * one;
    extern __shared__ uint4 smem_u4[];
    const uint32_t *tab = (const uint32_t *)smem_u4;
    const uint32_t sa = (uint32_t)__cvta_generic_to_shared(smem_u4) + 16u * (uint32_t)(threadIdx.x % G);
    __shared__ uint32_t unit_sh, job_sh, reload_sh, cached_sh;
    const int g = threadIdx.x / G, t = threadIdx.x % G;
    const uint32_t nunits = (count + NG - 1) / NG;
    uint2 *bnd = scratch ? scratch + (size_t)(blockIdx.x * NG + g) * maxlen : NULL;
    /* the left input of a query's first column (column -1: H = 0, Ê = 0) */
    const uint2 b0 = make_uint2(voe, PF == 4 ? voe : 0u);

    if (threadIdx.x == 0)
        cached_sh = 0xffffffffu;
    for (;;) {
        __syncthreads(); /* every thread is done with the last unit (shared words, table) */
        if (threadIdx.x == 0) {
            const uint32_t u0 = atomicAdd((unsigned *)ctr, 1u);
            if (u0 < nunits * njobs) {
                const uint32_t su = u0 / njobs, jb = u0 - su * njobs;
                const uint32_t np = jobs[jb].n;
                reload_sh = np != 1 || jb != cached_sh;
                cached_sh = np == 1 ? jb : 0xffffffffu;
                job_sh = jb;
                unit_sh = su;
            } else {
                unit_sh = nunits; /* done */
            }
        }
        __syncthreads();
        const uint32_t u = unit_sh;
        if (u >= nunits)
            break;
        const swgpu_cu_job_t job = jobs[job_sh];
        const bool reload = reload_sh != 0;

        /* subjects of the unit, longest first: rank p -> subject first + count - 1 - p */
        const uint32_t p = u * NG + g;
        const bool live = p < count;
        const uint32_t k = first + count - 1 - (live ? p : u * NG);
        const int L = live ? (int)b.len[k] : 0;
        const int Lmax = (int)b.len[first + count - 1 - u * NG];
        /* this subject's byte of each row's residue pair (its code at rb[2j]) */
        const uint8_t *rb = (const uint8_t *)(b.pres + b.poff[k >> 1]) + (k & 1u);

        SwLane<LP16, R> ln;
        ln.M = 0;
        auto cells = [&](const uint32_t r) {
            uint32_t sc[R];
            const uint32_t sx = sa + r * rowb;
            const uint4 *xa = (const uint4 *)tab + r * wq4;
#pragma unroll
            for (int c = 0; c < R / 4; c++) {
                uint4 v = SA ? lds128(sx + c * G * 16) : xa[c * G + t];
                sc[4 * c + 0] = v.x;
                sc[4 * c + 1] = v.y;
                sc[4 * c + 2] = v.z;
                sc[4 * c + 3] = v.w;
            }
            if (PF == 4)
                ln.row_sh2(sc, voe, nk, next, one);
            else
                ln.row_sh(sc, voe, nk, next, one);
        };

        for (uint32_t pi = 0; pi < job.n; pi++) {
            const swgpu_cu_pass_t *ps = passes + job.first + pi;
            if (job.n > 1 || reload) {
                if (pi > 0)
                    __syncthreads(); /* every group is done with the last pass's table */
                copy_u4(smem_u4, (const uint4 *)ps->prof, SWGPU_CU_NRES * W / 4);
                __syncthreads();
            }
            const uint32_t keep = qp_keep(ps->starts, t);
            const uint2 kb0 = make_uint2(b0.x & ~keep, b0.y & ~keep);
            const bool more_passes = pi + 1 < job.n;
            const bool rd = t == 0 && pi > 0 && keep != 0; /* thread 0 reads the last pass's column */
            if (PF == 4)
                ln.start_sh2(voe, nk, one);
            else
                ln.start_sh(voe);
            const int nsteps = Lmax + G - 1;
            uint32_t xn = L > 0 ? rb[0] : 0;
            uint2 bn = b0;
            if (rd && L > 0)
                bn = bnd[0];
            /* the residue of row j + 1 = s - t + 1, its address by a
             * multiply-add on the FMA pipe (SA: from the step) */
            const uint8_t *rb1 = rb + 2 * (1 - t);
            auto nres = [&](const int s, const int j) {
                return SA ? ldg_at(rb1, (uint32_t)s, two) : ldg_at(rb, (uint32_t)(j + 1), two);
            };
            uint2 *bt = !bnd ? NULL : t == 0 ? bnd + 1 : bnd - (G - 1);
            auto step = [&](const int s, const bool CK) {
                dpx_step<G, SA, true>(s, CK, t, L, ln, cells, xn, bn, nres, bnd, bt, rd,
                                      more_passes, keep, kb0);
            };
            wavefront<G>(nsteps, L, step);
            /* this thread's maximum to its slots' queries; it restarts */
            uint32_t m = ln.M;
            if (PF == 4)
                m = __viaddmax_s16x2_relu(m, noe, 0u); /* H + oe -> H */
            if (live) {
                const uint32_t q0 = ps->qi[0][t], q1 = ps->qi[1][t];
                if (q0 != 0xffffu)
                    atomicMax(&scores[q0 * stride + k], sw_lo16(m));
                if (q1 != 0xffffu)
                    atomicMax(&scores[q1 * stride + k], sw_hi16(m));
            }
            ln.M = 0;
        }
    }
}

typedef void (*qp_kern_t)(swgpu_cu_batch_t, uint32_t, uint32_t, const swgpu_cu_job_t *, uint32_t,
                          const swgpu_cu_pass_t *, int32_t *, size_t, uint32_t, uint32_t, uint32_t,
                          uint32_t, uint2 *, uint32_t, int *, uint32_t);

/* groups of SWGPU_CU_QP_G threads; the forms per R as the default family
 * (engine_scan.cu default_pair): the shifted form below R = 24, the carried
 * form from 24 up */
static const struct {
    swgpu_cu_cfg_t cfg;
    qp_kern_t kern;
} qp_table[] = {
    {{8, 16, 3}, k_qp<8, 16, 3>}, {{8, 20, 3}, k_qp<8, 20, 3>}, {{8, 24, 4}, k_qp<8, 24, 4>},
    {{8, 28, 4}, k_qp<8, 28, 4>}, {{8, 32, 4}, k_qp<8, 32, 4>},
};
enum { N_QP = sizeof qp_table / sizeof qp_table[0] };

extern "C" const swgpu_cu_cfg_t *swgpu__cu_qp_configs(int *n)
{
    *n = N_QP;
    return cfg_list(qp_table);
}

static int qp_find(swgpu_cu_cfg_t cfg)
{
    return cfg_find(qp_table, cfg);
}

extern "C" int swgpu__cu_qp_has(swgpu_cu_cfg_t cfg)
{
    return qp_find(cfg) >= 0;
}

extern "C" size_t swgpu__cu_qp_scratch(swgpu_cu_cfg_t cfg, uint32_t maxlen, int blocks)
{
    return (size_t)blocks * (SWGPU_CU_DPX_THREADS / cfg.G) * maxlen * sizeof(uint2);
}

extern "C" int swgpu__cu_qp_occupancy(swgpu_cu_cfg_t cfg, int *blocks_per_sm)
{
    int i = qp_find(cfg);
    if (i < 0)
        return swgpu__fail(SWGPU_EINVAL, "query-lane kernel: no configuration G=%d R=%d P=%d",
                           cfg.G, cfg.R, cfg.P);
    const size_t smem = swgpu__cu_qp_pass_bytes(cfg);
    CU_CHECK(cudaFuncSetAttribute(qp_table[i].kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem));
    CU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, qp_table[i].kern,
                                                           SWGPU_CU_DPX_THREADS, smem));
    return SWGPU_OK;
}

extern "C" int swgpu__cu_qp(const swgpu_cu_batch_t *b, uint32_t first, uint32_t count,
                            const swgpu_cu_job_t *d_jobs, uint32_t njobs,
                            const swgpu_cu_pass_t *d_pass, int32_t *scores, size_t stride, int oe,
                            int ext, swgpu_cu_cfg_t cfg, int blocks, void *scratch, uint32_t maxlen,
                            int *ctr, cudaStream_t st)
{
    int i = qp_find(cfg);
    if (i < 0)
        return swgpu__fail(SWGPU_EINVAL, "query-lane kernel: no configuration G=%d R=%d P=%d",
                           cfg.G, cfg.R, cfg.P);
    if (count == 0 || njobs == 0)
        return SWGPU_OK;
    if (!b->pres || !b->poff)
        return swgpu__fail(SWGPU_EINVAL, "query-lane kernel: needs the pair layout");
    const uint64_t units = ((uint64_t)count + SWGPU_CU_DPX_THREADS / cfg.G - 1) /
                           (SWGPU_CU_DPX_THREADS / cfg.G);
    if (units * njobs >= 0x7fffffffull)
        return swgpu__fail(SWGPU_ERANGE, "query-lane kernel: %u jobs x %llu work units", njobs,
                           (unsigned long long)units);
    const size_t smem = swgpu__cu_qp_pass_bytes(cfg);
    CU_CHECK(cudaFuncSetAttribute(qp_table[i].kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem));
    CU_CHECK(cudaMemsetAsync(ctr, 0, sizeof(int), st));
    const uint32_t v = (uint32_t)(cfg.P == 4 ? 2 * oe : oe);
    qp_table[i].kern<<<blocks, SWGPU_CU_DPX_THREADS, smem, st>>>(
        *b, first, count, d_jobs, njobs, d_pass, scores, stride, LP16::splat(-oe),
        LP16::splat(-ext), LP16::splat((int)v), 0u - (uint32_t)oe * 0x10001u, (uint2 *)scratch,
        maxlen, ctr, 1u);
    CU_LAUNCHED("k_qp");
    return SWGPU_OK;
}
