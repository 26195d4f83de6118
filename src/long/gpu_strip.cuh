/*
 * gpu_strip.cuh - what the long aligner's strip kernels (gpu_kernels.cu)
 * share: the block's shared memory, and a strip's dealings with its
 * neighbours: waiting for the strip above and the slice on the left, the
 * residues of its rows, pruning, the hand-over of its bottom row (the ring,
 * the progress, runs of skipped chunks) and of a slice's right column, its
 * best.  Included by gpu_kernels.cu only.
 */
#ifndef SWGPU_LONG_GPU_STRIP_CUH
#define SWGPU_LONG_GPU_STRIP_CUH

#include "long/gpu_kernels.cuh"
#include "long/long.h"

#include <cuda_runtime.h>

/* Rows per lane R: 16 (strips of SWGPU__LONG_SH = 512 rows: the most cells
 * per instruction), or 8 or 4 (strips of 256 or 128 rows) for passes bound
 * by the wavefront's latency rather than by cells.  A strip starts a chunk
 * once the strip above is past it, so when the computed cells form a band
 * along the diagonal, each strip waits for the one above to cross about a
 * strip height of columns: the pass takes about (rows / SH) strips x SH
 * columns at the speed one strip crosses columns, which grows as R falls
 * (a step of R rows). */
#define R_MAX 16
#define NT 256           /* threads per block */
#define WARPS (NT / 32)
#define FULL 0xffffffffu
#define NEG SWGPU__LONG_NEG

static_assert(32 * R_MAX == SWGPU__LONG_SH, "the tallest strips' height is the engines' strip height");

struct smem_t {
    int32_t mat[32 * 32]; /* mat[col * 32 + row] = s[row][col] + open + ext */
    int4 in[WARPS][32];   /* per chunk, lane 0's inputs: {HO, F, column code} of 32 columns */
    int2 out[WARPS][32];  /* per chunk, the last lane's outputs {HO, F} */
    /* the warp's strip, when it is a column slice (kept here, not in registers) */
    int2 *rout[WARPS];    /* its right boundary column, or NULL */
    long long col0[WARPS], wrem[WARPS];
};


/*
 * Wait until the strip above (ticket t - 1) has published `need` columns
 * (known: what it had published when last read).  False when the strip
 * must give up instead: a partition failed (slices, A.abort), or the pass
 * stops for a checkpoint (A.stop): a strip still waiting for its first
 * chunk (first) stops there and lowers A.stop_at to its ticket; a strip
 * waiting behind a ticket that stopped stops too.  A strip past its first
 * chunk has a strip above that is past it too, so it ends: the strips
 * before *stop_at all end, the others write nothing (long_pass).
 */
template <bool SLICE>
__device__ __forceinline__ bool wait_above(const swgpu__lkargs_t &A, const volatile int32_t *prevprog, long long t,
                                           int need, int &known, bool first)
{
    int gave_up = 0;
    if (known < need) {
        for (;;) {
            known = *prevprog;
            if (known >= need)
                break;
            if (SLICE && *(const volatile int32_t *)A.abort) {
                gave_up = 1;
                break;
            }
            if (A.stop_at) {
                if (first && *(const volatile int32_t *)A.stop) {
                    atomicMin(A.stop_at, (unsigned long long)t);
                    gave_up = 1;
                    break;
                }
                if (*(const volatile unsigned long long *)A.stop_at < (unsigned long long)t) {
                    gave_up = 1;
                    break;
                }
            }
            __nanosleep(100);
        }
        __threadfence();
    }
    return !((SLICE || A.stop_at) && __any_sync(FULL, gave_up));
}

/* My rows' residues (DNA: per row, s(row, A/C/G/T) + oe in bytes 0..3; N
 * and IUPAC rows never match; rows past the region: code 0). */
template <int R, bool DNA, bool PARTIAL>
__device__ __forceinline__ void load_rows(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int base, int nv,
                                          int32_t smatch, int32_t smis, int (&qa)[R])
{
    const uint8_t *rs = A.seq[g.rseq] + g.roff + base;
#pragma unroll
    for (int r = 0; r < R; r++) {
        int c = (!PARTIAL || r < nv) ? rs[r] : 0;
        if (DNA) {
            unsigned wv = 0;
            for (int k = 0; k < 4; k++)
                wv |= (unsigned)(c == k ? smatch : smis) << (8 * k);
            qa[r] = (int)wv;
        } else {
            qa[r] = c;
        }
    }
}

/* The column's code as chunk_steps reads it: DNA, a byte selector of
 * {qa[r], smis} (byte 4: the mismatch; bytes 5.. are zeros). */
template <bool DNA>
__device__ __forceinline__ int column_code(int code)
{
    return DNA ? ((code < 4 ? code : 4) | 0x5550) : code;
}

/* A slice's strip s: wait for the left boundary column from the slice on
 * the left (lane 0 spins on its flag); false when a partition failed. */
__device__ __forceinline__ bool wait_left(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int s, int lane)
{
    int gave_up = 0;
    if (lane == 0) {
        const volatile int32_t *fl = g.lflag + s;
        while (*fl == 0) {
            if (*(const volatile int32_t *)A.abort) {
                gave_up = 1;
                break;
            }
            __nanosleep(200);
        }
        if (A.sysfence)
            __threadfence_system();
        else
            __threadfence();
    }
    return !__shfl_sync(FULL, gave_up, 0);
}

/* A slice's strip s: what the strip needs of it kept in shared memory, not
 * in registers (its right boundary column, or NULL; its columns). */
__device__ __forceinline__ void slice_setup(const swgpu__lkreg_t &g, int s, smem_t &sm, int warp, int lane)
{
    __syncwarp();
    if (lane == 0) {
        sm.rout[warp] = g.rout ? reinterpret_cast<int2 *>(g.rout) + (long long)s * SWGPU__LK_EDGE : nullptr;
        sm.col0[warp] = g.col0;
        sm.wrem[warp] = g.wrem;
    }
    __syncwarp();
}

/* A slice's strip s: its right boundary column is written; the flag says so
 * (a plain store: system-scope atomics on host memory need PCIe atomics,
 * which hosts may not have). */
__device__ __forceinline__ void publish_right(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int s, int lane)
{
    if (A.sysfence)
        __threadfence_system();
    else
        __threadfence();
    __syncwarp();
    if (lane == 0)
        *(volatile int32_t *)(g.rflag + s) = 1;
}

/* After a skipped chunk: my rows hold the lower bounds H = 0, E = F = NEG,
 * and bc the code of my last column in it. */
template <int R>
__device__ __forceinline__ void skipped_state(int (&HO)[R], int (&E)[R], int &ho, int &fo, int &prevo, int &bc,
                                              int32_t oe, int code)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        HO[r] = -oe;
        E[r] = NEG;
    }
    ho = -oe;
    fo = NEG;
    prevo = -oe;
    bc = code;
}

/* The end of a strip (ticket t): its best cell under the tie rule over the
 * lanes (score best + add; bj + col0 the region's column), its cells. */
template <typename T>
__device__ __forceinline__ void strip_end(const swgpu__lkargs_t &A, long long t, bool track, T best, long long add,
                                          int bi, int bj, long long col0, int lane, unsigned long long cells,
                                          unsigned long long npruned)
{
    if (track) {
        for (int off = 16; off > 0; off >>= 1) {
            const T ob = __shfl_xor_sync(FULL, best, off);
            const int oj = __shfl_xor_sync(FULL, bj, off);
            const int oi = __shfl_xor_sync(FULL, bi, off);
            if (ob > best || (ob == best && (oj < bj || (oj == bj && oi < bi)))) {
                best = ob;
                bj = oj;
                bi = oi;
            }
        }
        if (lane == 0) {
            swgpu__lkbest_t b;
            b.best = (long long)best + add;
            b.bi = bi;
            b.bj = (int)(col0 + bj);
            A.best[t] = b;
        }
    }
    if (lane == 0) {
        atomicAdd(A.done, cells);
        if (npruned)
            atomicAdd(A.pruned, npruned);
    }
}

/* The left column of my rows (HO = H - oe, E) and the diagonal input of
 * my first row (prevo): the region's column 0, or a slice's left boundary
 * column from the slice on its left; false when a partition failed while
 * this strip waited for it (the pass's results are dropped). */
template <int R, bool LOCAL, bool PARTIAL, bool SLICE>
__device__ __forceinline__ bool left_column(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int s, int lane,
                                            int base, int nv, int32_t oe, int (&HO)[R], int (&E)[R], int &prevo)
{
    const int32_t ext = A.ext;
    const int32_t h0 = (int32_t)g.h0, e0 = (int32_t)g.e0, f0 = (int32_t)g.f0; /* 32-bit here */
#pragma unroll
    for (int r = 0; r < R; r++) {
        HO[r] = swgpu__lreg_left(LOCAL, h0, f0, A.open, ext, base + r + 1) - oe;
        E[r] = NEG;
    }
    /* HO of the row above me at the previous column (the diagonal) */
    prevo = (base == 0 ? swgpu__lreg_top(LOCAL, h0, e0, A.open, ext, SLICE ? g.col0 : 0)
                       : swgpu__lreg_left(LOCAL, h0, f0, A.open, ext, base)) - oe;
    if (SLICE && g.lin) { /* a slice: the left boundary column from the slice on the left */
        if (!wait_left(A, g, s, lane))
            return false;
        const int2 *lin = reinterpret_cast<const int2 *>(g.lin) + (long long)s * SWGPU__LK_EDGE + lane * R;
        prevo = __ldcv(lin).x - oe;
#pragma unroll
        for (int r = 0; r < R; r++)
            if (!PARTIAL || r < nv) {
                const int2 v = __ldcv(lin + r + 1);
                HO[r] = v.x - oe;
                E[r] = v.y;
            }
    }
    return true;
}

/* Pruning (local regions): true when chunk c, its inputs at most the row
 * above's th (lane by lane) and my rows' HO, cannot reach the best so far
 * (mine or another partition's).  A slice handing on its right boundary
 * column computes the chunks in which its lanes reach it (see the end of
 * the strip). */
template <int R, bool SLICE>
__device__ __forceinline__ bool chunk_skips(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, const smem_t &sm,
                                            int warp, int c, int top, int th, int prevo, const int (&HO)[R], int32_t oe)
{
    const int w = g.w;
    int mx = max(th, prevo); /* prevo: the diagonal input of my first row */
#pragma unroll
    for (int r = 0; r < R; r++)
        mx = max(mx, HO[r]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        mx = max(mx, __shfl_xor_sync(FULL, mx, off));
    const long long left = min((long long)(g.h - top), (long long)w + (SLICE ? sm.wrem[warp] : 0) - 32 * c + 31);
    const long long bound = (long long)max(mx + oe, 0) + (long long)A.smax * left;
    const int gb = max(*(volatile int32_t *)A.gbest, *(const volatile int32_t *)A.rbest);
    return bound < gb && !(SLICE && c >= ((w - 1) >> 5) && sm.rout[warp]);
}

/* The column lane 31 finished at my step of chunk c, o = {H, F}, into the
 * ring and the saved row. */
__device__ __forceinline__ void put_out(int2 *rout, int2 *save, int c, int lane, int w, int2 o)
{
    const int jo = 32 * c + lane - 30;
    if (jo >= 1 && jo <= w) {
        rout[jo] = o;
        if (save)
            save[jo] = o;
    }
}

/* Columns up to `cols` of the strip's bottom row published (ticket t), for
 * the strip below. */
__device__ __forceinline__ void publish(const swgpu__lkargs_t &A, long long t, int lane, int cols)
{
    __threadfence();
    __syncwarp();
    if (lane == 0)
        atomicExch(A.progress + t, cols);
}

/* A slice's right boundary column (rout_col: strip s's): my rows at its
 * last column and, lane 0, H of the row above the strip there. */
template <int R, bool PARTIAL>
__device__ __forceinline__ void right_column(int2 *rout_col, int lane, int nv, const int (&HO)[R], const int (&E)[R],
                                             int prevo, int32_t oe)
{
#pragma unroll
    for (int r = 0; r < R; r++)
        if (!PARTIAL || r < nv)
            rout_col[lane * R + r + 1] = make_int2(HO[r] + oe, E[r]);
    if (lane == 0)
        rout_col[0] = make_int2(prevo + oe, NEG);
}

/*
 * Runs of skipped chunks, jumped.  After a skipped chunk my rows hold the
 * lower bounds (skipped_state); if the row above is {0, NEG} at the inputs
 * of the next chunks too, they give the same maximum, their bound
 * smax * left only falls with the column and the best only grows, so they
 * are skipped as well, and need not be looked at one by one (each was a
 * wait, a load from the ring, two warp reductions and a read of the best).
 * A strip says where its current run of skipped chunks began (zrun[t]: its
 * outputs from that column up to its progress are {0, NEG}; 0 when it is
 * computing): set before the progress that covers the run's first chunk is
 * published, cleared before the progress of a computed chunk is.  The
 * strip below read the progress P (known, then a fence: wait_above), then
 * reads zrun: a run it sees began after any progress published before the
 * run, and lasts at least to P, so the columns [zrun, P] are {0, NEG}.
 *
 * The last chunk this strip may jump to from chunk c (its inputs within
 * the run above, none of the last two chunks nor a slice's boundary
 * chunks), or c - 1 for none: a jump of fewer than JUMP_MIN chunks is not
 * worth its publication (a fence and an atomic) and the read of zrun; a
 * jump of more than JUMP_MAX would hold up the strip below, which waits for
 * the progress published at its end (jumps of a whole row made the strips
 * a chain: E. coli's score pass 2.1 -> 17.7 s).  The top strip of a local
 * region has the zero row above it.
 */
#define JUMP_MIN 8
#define JUMP_MAX 64 /* chunks a jump, at most: the strip below follows a published progress */

template <bool SLICE>
__device__ __forceinline__ int jump_end(const swgpu__lkargs_t &A, long long t, int s, int c, int w, int nchunks,
                                        bool rout, int lane, int known)
{
    const int p = s > 0 ? min(known, w) : w;
    int ce = min(p / 32 - 1, nchunks - 3); /* chunk ce's inputs: columns 32ce+1 .. 32ce+32 */
    if (SLICE && rout)
        ce = min(ce, ((w - 1) >> 5) - 1);
    if (ce - c + 1 < JUMP_MIN)
        return c - 1;
    ce = min(ce, c + JUMP_MAX - 1);
    if (s > 0) {
        int z = 0;
        if (lane == 0)
            z = *(const volatile int32_t *)(A.zrun + (t - 1));
        z = __shfl_sync(FULL, z, 0);
        if (z == 0 || z > 32 * c + 1)
            return c - 1;
    }
    return ce;
}

#endif
