/*
 * cells.cuh - the per-thread cell code shared by the group kernels
 * (group.cu) and their host model (model.cu, swgpu__cu_emulate).  Device code,
 * included only by .cu files; everything is __host__ __device__ so the CPU
 * can run exactly what the GPU runs.
 *
 * Recurrence (Gotoh, gap of length k costs open + k*ext, oe = open + ext),
 * query along columns c, subject along rows j:
 *   F(j,c) = max(F(j-1,c) - ext, H(j-1,c) - oe)          vertical gap
 *   E(j,c) = max(E(j,c-1) - ext, H(j,c-1) - oe)          horizontal gap
 *   H(j,c) = max(0, H(j-1,c-1) + S(q[c], t[j]), E(j,c), F(j,c))
 * The kernels keep, per cell,
 *   y  = max(H(j-1,c-1) + S, F(j,c))
 *   H  = max(Ê - oe, y, 0)            with Ê = E(j,c) + oe
 *   Ê' = max(Ê - ext, y)               (= E(j,c+1) + oe)
 *   F' = max(F - ext, H - oe)
 * Ê' drops the terms E - oe (never above E - ext) and -oe (only matters
 * when E' < 0, and a negative E never reaches H, which is clamped at 0), so
 * every H equals the reference's.  Each line is one Hopper DPX instruction
 * (VIADDMNMX: add then max, optionally clamped at 0).
 *
 * Lane types: LP16 holds two subjects in the two signed 16-bit halves of a
 * register (subject "a" low, "b" high); LS32 one subject in 32 bits.  For
 * LP16 no intermediate value wraps while every H < sat = 32767 - smax (the
 * values are bounded below by -(2*oe + ext)), so a lane whose maximum
 * reaches sat is reported as such and recomputed in 32 bits.
 */
#ifndef SWGPU_CUDA_CELLS_CUH
#define SWGPU_CUDA_CELLS_CUH

#include <stdint.h>
#include <cuda_runtime.h>
#include "kernels.cuh"

#define SW_HD __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define SW_UNROLL _Pragma("unroll")
#else
#define SW_UNROLL
#endif

/* ------------------------------------------------------------ lane types */

struct LP16 {
    typedef uint32_t V;
    static SW_HD V splat(int x) { return (uint32_t)(x & 0xffff) * 0x10001u; }
    /* max(a + b, c) per half */
    static SW_HD V addmax(V a, V b, V c) { return __viaddmax_s16x2(a, b, c); }
    /* max(a + b, c, 0) per half */
    static SW_HD V addmax0(V a, V b, V c) { return __viaddmax_s16x2_relu(a, b, c); }
    static SW_HD V add(V a, V b) { return __viaddmax_s16x2(a, b, 0x80008000u); }
    static SW_HD V max3(V a, V b, V c) { return __vimax3_s16x2(a, b, c); }
    /* a + k as one 32-bit integer on the FMA pipe (a * one + k, one = 1 at run
     * time so the compiler keeps the multiply-add); per half exact when no
     * half borrows from the other: every half of a at least -(low half of k) */
    static SW_HD V add_fma(V a, V k, uint32_t one)
    {
#ifdef __CUDA_ARCH__
        uint32_t d;
        asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(one), "r"(k));
        return d;
#else
        return a * one + k;
#endif
    }
    /* the two subjects' maxima to their scores (b only when two) */
    static SW_HD void put(int32_t *sc, uint32_t ka, uint32_t kb, int two, V m)
    {
        sc[ka] = (int32_t)(int16_t)(m & 0xffffu);
        if (two)
            sc[kb] = (int32_t)(int16_t)(m >> 16);
    }
};

struct LS32 {
    typedef int32_t V;
    static SW_HD V splat(int x) { return x; }
    static SW_HD V addmax(V a, V b, V c) { return __viaddmax_s32(a, b, c); }
    static SW_HD V addmax0(V a, V b, V c) { return __viaddmax_s32_relu(a, b, c); }
    static SW_HD V add(V a, V b) { return a + b; }
    static SW_HD V max3(V a, V b, V c) { return __vimax3_s32(a, b, c); }
    static SW_HD void put(int32_t *sc, uint32_t ka, uint32_t kb, int two, V m)
    {
        (void)kb;
        (void)two;
        sc[ka] = m;
    }
};

/* halves: lo of x and lo of y / hi of x and hi of y */
static SW_HD uint32_t sw_pair_lo(uint32_t x, uint32_t y)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(x, y, 0x5410);
#else
    return (x & 0xffffu) | (y << 16);
#endif
}
static SW_HD uint32_t sw_pair_hi(uint32_t x, uint32_t y)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(x, y, 0x7632);
#else
    return (x >> 16) | (y & 0xffff0000u);
#endif
}
static SW_HD int32_t sw_lo16(uint32_t x) { return (int32_t)(int16_t)(x & 0xffffu); }
static SW_HD int32_t sw_hi16(uint32_t x) { return (int32_t)(int16_t)(x >> 16); }

/*
 * Maximum of two s16x2 registers holding values >= 0 on the half-precision
 * pipe: read as fp16, 0..0x7c00 order like the integers, 0x7c01..0x7fff are
 * NaNs that max.f16x2 ignores.  An H above 0x7c00 is always preceded on its
 * path by one in (0x7c00 - smax, 0x7c00], so with the saturation threshold
 * 0x7c01 - smax the maximum still reports every saturating subject.
 */
static SW_HD uint32_t sw_hmax2(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    uint32_t d;
    asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
#else
    return __vimax3_s16x2(a, b, b);
#endif
}

/* residue j of a subject (SWGPU_CU_PAD past its end) */
static SW_HD int sw_res(const uint32_t *res, uint32_t woff, uint32_t len, int j)
{
    return (uint32_t)j < len ? (int)((res[woff + ((uint32_t)j >> 2)] >> ((j & 3) * 8)) & 0xffu)
                             : SWGPU_CU_PAD;
}

/* --------------------------------------------------------- query profile */
/*
 * Tile profile: for a tile of W = G*R query columns, 32 rows (one per
 * residue code) of W int16 scores.  Thread t of a group owns the columns
 * t*R .. t*R+R-1 of the tile; its k-th chunk of CH columns is stored at
 * position (k*G + t)*CH, so the G threads of a group read consecutive
 * 16-byte (CH 8) or 8-byte (CH 4) words: no shared-memory bank conflicts.
 */
template <int R>
struct SwChunk {
    enum { CH = (R % 8 == 0) ? 8 : 4 };
};

/* tile-local column of profile position pos */
static SW_HD int sw_prof_col(int pos, int G, int R, int CH)
{
    int c = pos / CH, i = pos - c * CH;
    int t = c % G, k = c / G;
    return t * R + k * CH + i;
}

/* ------------------------------------------------------- score fetching */

/* LP16: scores of residues a (low half) and b (high half) for R columns */
template <int R>
static SW_HD void sw_fetch(LP16, const int16_t *pa, const int16_t *pb, int t, int G, uint32_t s[R])
{
    if (SwChunk<R>::CH == 8) {
SW_UNROLL
        for (int k = 0; k < R / 8; k++) {
            uint4 x = ((const uint4 *)pa)[k * G + t];
            uint4 y = ((const uint4 *)pb)[k * G + t];
            s[8 * k + 0] = sw_pair_lo(x.x, y.x); s[8 * k + 1] = sw_pair_hi(x.x, y.x);
            s[8 * k + 2] = sw_pair_lo(x.y, y.y); s[8 * k + 3] = sw_pair_hi(x.y, y.y);
            s[8 * k + 4] = sw_pair_lo(x.z, y.z); s[8 * k + 5] = sw_pair_hi(x.z, y.z);
            s[8 * k + 6] = sw_pair_lo(x.w, y.w); s[8 * k + 7] = sw_pair_hi(x.w, y.w);
        }
    } else {
SW_UNROLL
        for (int k = 0; k < R / 4; k++) {
            uint2 x = ((const uint2 *)pa)[k * G + t];
            uint2 y = ((const uint2 *)pb)[k * G + t];
            s[4 * k + 0] = sw_pair_lo(x.x, y.x); s[4 * k + 1] = sw_pair_hi(x.x, y.x);
            s[4 * k + 2] = sw_pair_lo(x.y, y.y); s[4 * k + 3] = sw_pair_hi(x.y, y.y);
        }
    }
}

/* LS32: scores of residue a for R columns (pb unused) */
template <int R>
static SW_HD void sw_fetch(LS32, const int16_t *pa, const int16_t *pb, int t, int G, int32_t s[R])
{
    (void)pb;
    if (SwChunk<R>::CH == 8) {
SW_UNROLL
        for (int k = 0; k < R / 8; k++) {
            uint4 x = ((const uint4 *)pa)[k * G + t];
            s[8 * k + 0] = sw_lo16(x.x); s[8 * k + 1] = sw_hi16(x.x);
            s[8 * k + 2] = sw_lo16(x.y); s[8 * k + 3] = sw_hi16(x.y);
            s[8 * k + 4] = sw_lo16(x.z); s[8 * k + 5] = sw_hi16(x.z);
            s[8 * k + 6] = sw_lo16(x.w); s[8 * k + 7] = sw_hi16(x.w);
        }
    } else {
SW_UNROLL
        for (int k = 0; k < R / 4; k++) {
            uint2 x = ((const uint2 *)pa)[k * G + t];
            s[4 * k + 0] = sw_lo16(x.x); s[4 * k + 1] = sw_hi16(x.x);
            s[4 * k + 2] = sw_lo16(x.y); s[4 * k + 3] = sw_hi16(x.y);
        }
    }
}

/* ------------------------------------------------------------- the lane */
/*
 * One thread's state in a wavefront: it owns R consecutive query columns
 * of the current tile and processes one subject row per step.
 *   H[r]  H(j-1, c0+r) before the row, H(j, c0+r) after
 *   F[r]  F(j, c0+r) before the row, F(j+1, c0+r) after
 *   M     running maximum of every H this thread computed
 *   diag  H(j-1, c0-1): the left input of the previous row
 *   h, e  the left input of the row: H(j, c0-1) and Ê(j, c0); after the
 *         row, the output for the next thread: H(j, c0+R-1), Ê(j, c0+R)
 */
template <class L, int R>
struct SwLane {
    typedef typename L::V V;
    V H[R], F[R];
    V M, diag, h, e;

    SW_HD void start(int oe) { start_v(L::splat(-oe)); }

    /* H = 0, F = f0 (the splat of -oe) */
    SW_HD void start_v(V f0)
    {
SW_UNROLL
        for (int r = 0; r < R; r++) {
            H[r] = 0;
            F[r] = f0;
        }
        diag = 0;
        h = 0;
        e = 0;
    }

    /* one row: h, e hold the left input on entry and the output on exit;
     * s[] holds the scores and is overwritten with the y values (first all
     * y from the old H, then H in place: no register moves) */
    /* y = max(Hdiag + S, F) of every column, in place in s (the old H are
     * the diagonals); then diag <- h, the left input of this row */
    SW_HD void ypass(V s[R])
    {
        s[0] = L::addmax(diag, s[0], F[0]);
SW_UNROLL
        for (int r = 1; r < R; r++)
            s[r] = L::addmax(H[r - 1], s[r], F[r]);
        diag = h;
    }

    template <bool HMAX>
    SW_HD void row(V s[R], V noe, V next)
    {
        V ee = e;
        ypass(s);
SW_UNROLL
        for (int r = 0; r < R; r++) {
            H[r] = L::addmax0(ee, noe, s[r]);       /* max(E, y, 0) */
            ee = L::addmax(ee, next, s[r]);         /* Ê for column r+1 */
            F[r] = L::addmax(F[r], next, L::add(H[r], noe));
        }
        if (HMAX) {
SW_UNROLL
            for (int r = 0; r < R; r++)
                M = sw_hmax2(M, H[r]);
        } else {
SW_UNROLL
            for (int r = 0; r + 1 < R; r += 2)
                M = L::max3(M, H[r], H[r + 1]);
            if (R & 1)
                M = L::max3(M, H[R - 1], H[R - 1]);
        }
        h = H[R - 1];
        e = ee;
    }

    /*
     * The shifted form (DPX kernel, P=3): H and F are kept plus oe,
     *   H' = H + oe,  F' = F + oe,  Ê = E + oe (as above),
     *   y' = max(H'(j-1,c-1) + S, F')          = max(H(j-1,c-1) + S, F) + oe
     *   H' = max(y', Ê, oe)                     = max(y, E, 0) + oe
     *   T  = H' - oe                            = H, on the FMA pipe
     *   Ê' = max(Ê - ext, T),  F'' = max(F' - ext, T)
     * so that the shared "H - oe" of the plain form becomes a 32-bit
     * multiply-add: 4.5 integer-pipe instructions per cell pair instead of
     * 5.5.  H' >= oe in both halves (the 3-way maximum with oe), so H' - oe
     * never borrows across halves, even in a lane that has saturated.
     * voe = splat(oe), nk = -oe * 0x10001 (H' - oe in both halves at once).
     */
    SW_HD void start_sh(V voe)
    {
SW_UNROLL
        for (int r = 0; r < R; r++) {
            H[r] = voe;
            F[r] = 0;
        }
        diag = voe;
        h = voe;
        e = 0;
    }

    /* the running maximum over column r's value t, two columns per
     * VIMNMX3 (tp holds column r-1's) */
    SW_HD void track(int r, V t, V &tp)
    {
        if (r & 1)
            M = L::max3(M, tp, t);
        else if (r == R - 1)
            M = L::max3(M, t, t);
        tp = t;
    }

    SW_HD void row_sh(V s[R], V voe, V nk, V next, uint32_t one)
    {
        V ee = e, tp = 0;
        ypass(s); /* y' = y + oe, H' and F' being shifted */
SW_UNROLL
        for (int r = 0; r < R; r++) {
            H[r] = L::max3(s[r], ee, voe);          /* H' */
            const V t = L::add_fma(H[r], nk, one);  /* H */
            ee = L::addmax(ee, next, t);            /* Ê for column r+1 */
            F[r] = L::addmax(F[r], next, t);        /* F' for the next row */
            track(r, t, tp);
        }
        h = H[R - 1];
        e = ee;
    }

    /*
     * The carried form (DPX kernel, P=4): H and F kept plus 2oe, the
     * horizontal gap carried as X = E + 3oe (= Ê + 2oe):
     *   y'' = max(H''(j-1,c-1) + S, F'')        = y + 2oe
     *   X(c+1) = max(X - ext, y'')              the only chain along the row
     *   H'' = max(y'', X - oe, 2oe)             = max(y, E, 0) + 2oe
     *   T   = H'' - oe                          = H + oe
     *   F'' (next row) = max(F'' - ext, T)
     * The two subtractions of oe are 32-bit multiply-adds on the FMA pipe
     * (nk = -oe * 0x10001): y'' >= F'' >= oe and H'' >= 2oe in both halves,
     * saturated or not, so no half borrows from the other.  Integer pipe per
     * cell pair: 4.5 instructions as in the shifted form, but the dependent
     * chain from one column to the next is one instruction instead of three.
     * X(c+1) drops the term 2oe of max(X - ext, H'') (E - ext already beats
     * E - oe): the carried X is then max(X, 2oe) short of the true one,
     * which H'' cannot see, its own clamp at 2oe being larger than X - oe.
     * M tracks T; the score is max(M - oe, 0) (tracking H'' instead, which
     * saves the register tp, measured 7% slower: bench/NOTES-gpu.md v14).
     * Values stay exact while every H is below 32767 - smax - 2oe.
     */
    SW_HD void start_sh2(V v2oe, V nk, uint32_t one)
    {
        const V f0 = L::add_fma(v2oe, nk, one); /* F'' = oe: F = -oe */
SW_UNROLL
        for (int r = 0; r < R; r++) {
            H[r] = v2oe;
            F[r] = f0;
        }
        diag = v2oe;
        h = v2oe;
        e = v2oe; /* X of column 0: E = -oe */
    }

    SW_HD void row_sh2(V s[R], V v2oe, V nk, V next, uint32_t one)
    {
        V x = e, tp = 0;
        ypass(s); /* y'' */
SW_UNROLL
        for (int r = 0; r < R; r++) {
            const V ex = L::add_fma(x, nk, one);    /* E + 2oe */
            x = L::addmax(x, next, s[r]);           /* X for column r+1 */
            H[r] = L::max3(s[r], ex, v2oe);         /* H'' */
            const V t = L::add_fma(H[r], nk, one);  /* H + oe */
            F[r] = L::addmax(F[r], next, t);        /* F'' for the next row */
            track(r, t, tp);
        }
        h = H[R - 1];
        e = x;
    }
};

/* the query-lane kernel (k_qp): thread t's masks at a pass, keep = the
 * halves whose left input goes on (its left neighbour's, or for thread 0
 * the last pass's), as 0xffff each */
static SW_HD uint32_t qp_keep(uint32_t starts, int t)
{
    const uint32_t s = starts >> (2 * t);
    return ((s & 1u) ? 0u : 0x0000ffffu) | ((s & 2u) ? 0u : 0xffff0000u);
}

/* ------------------------------------------------ shared-memory tiles */

#ifdef __CUDACC__
/* the block's next work unit from the counter ctr (whole block): thread 0
 * takes it into the shared unit_sh, the first barrier hands it to every
 * thread, the second frees unit_sh for the next call */
static __device__ __forceinline__ uint32_t next_unit(int *ctr, uint32_t *unit_sh)
{
    if (threadIdx.x == 0)
        *unit_sh = atomicAdd((unsigned *)ctr, 1u);
    __syncthreads();
    const uint32_t u = *unit_sh;
    __syncthreads();
    return u;
}

/* copy tile `tile` of the profile into shared memory (whole block) */
static __device__ __forceinline__ void copy_tile(int16_t *dst, const int16_t *tprof, int W, int tile)
{
    const uint4 *src = (const uint4 *)(tprof + (size_t)tile * SWGPU_CU_NRES * W);
    uint4 *d = (uint4 *)dst;
    int n = SWGPU_CU_NRES * W / 8;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        d[i] = src[i];
}
#endif

#endif
