/*
 * gpu_kernels.cu - the GPU pass of the long aligner (StripedScore style).
 *
 * One launch computes a batch of regions (long.h).  Each region is cut
 * into horizontal strips of SH = 32 * R rows; a strip is computed by ONE
 * warp, lane l owning rows l*R+1 .. l*R+R of the strip in registers, along
 * anti-diagonals: at step d lane l computes column d - l + 1 for its R rows,
 * receiving the row above (H, F of its first row) from lane l-1 by a
 * shuffle, and lane 0 from the strip above.  The grid is sized to the
 * blocks that fit on the device at once; warps take strips from an atomic
 * ticket in batch order, so a strip only ever waits for an earlier ticket
 * held by a running warp: no deadlock however many strips there are.
 *
 * Hand-over between strips: every 32 steps (a "chunk") the warp writes the
 * 32 bottom-row values it finished (H, F of its last lane) to a two-slot
 * ring in global memory, fences, and publishes how many columns are done
 * in progress[ticket] (after a run of pruned chunks, every 8th of them);
 * the next strip polls that counter before reading a chunk (L2 loads,
 * __ldcg).  Strip s+2 reuses strip s's slot only after
 * strip s+1, which it waits for, is past those columns.
 *
 * Values are 32-bit (wide scores: relative to 64-bit bases, see
 * run_strip_wide).  Registers hold H - (open+ext) ("HO") so that one DPX
 * instruction gives each of E, F and H:
 *   E  = max(E - ext, HO_left)            __viaddmax_s32
 *   F  = max(F_up - ext, HO_up)           __viaddmax_s32
 *   H  = max(HO_diag + s + oe, E, F [,0]) __vimax3_s32[_relu]
 */
#include "long/gpu_kernels.cuh"
#include "long/gpu_strip.cuh"
#include "long/long.h"

#include <cuda_runtime.h>

/*
 * The 32 steps of chunk c.  FREEZE (slices, the chunks where some lane
 * reaches the slice's last column w): lanes stop at column w, where the
 * strip's end finds their rows; elsewhere no lane can pass w and the steps
 * are those of a whole region, without the check.
 */
template <int R, bool DNA, bool LOCAL, bool PARTIAL, bool FREEZE>
__device__ __forceinline__ void chunk_steps(const int4 *in4, const int32_t *mat, int2 *out, int lane, int c, int w,
                                            int nv, bool track, int base, int32_t ext, int32_t oe, int32_t smis,
                                            const int (&qa)[R], int (&HO)[R], int (&E)[R], int &ho, int &fo,
                                            int &bc, int &prevo, int &bestt, int &bi, int &bj)
{
#pragma unroll 1
    for (int k = 0; k < 32; k++) {
        const int4 in = in4[k];
        int ih = __shfl_up_sync(FULL, ho, 1);
        int iff = __shfl_up_sync(FULL, fo, 1);
        int ib = __shfl_up_sync(FULL, bc, 1);
        if (lane == 0) {
            ih = in.x;
            iff = in.y;
            ib = in.z;
        }
        /* a slice's lanes stop at its last column, where the strip's end
         * finds their rows (the columns past it are no one's) */
        if ((c > 0 || lane <= k) && (!FREEZE || 32 * c + k - lane + 1 <= w)) {
            int dgo = prevo; /* HO(row above, j-1) */
            int huo = ih;    /* HO(row above, j) */
            int fu = iff;    /* F(row above, j) */
            const int32_t *mrow = mat + ib * 32;
            bc = ib;
            prevo = ih;
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int sp = DNA ? (int)__byte_perm((unsigned)qa[r], (unsigned)smis, (unsigned)ib)
                                   : mrow[qa[r]];
                const int e = __viaddmax_s32(E[r], -ext, HO[r]);
                int f = __viaddmax_s32(fu, -ext, huo);
                int hn = LOCAL ? __vimax3_s32_relu(dgo + sp, e, f) : __vimax3_s32(dgo + sp, e, f);
                if (PARTIAL && r >= nv) { /* past the region: copy the row above */
                    hn = huo + oe;
                    f = fu;
                }
                dgo = HO[r];
                HO[r] = hn - oe;
                E[r] = e;
                huo = HO[r];
                fu = f;
            }
            ho = huo;
            fo = fu;
            if (track) {
                int m = HO[0];
#pragma unroll
                for (int r = 1; r + 1 < R; r += 2)
                    m = __vimax3_s32(m, HO[r], HO[r + 1]);
                if (R % 2 == 0)
                    m = max(m, HO[R - 1]);
                const int j = 32 * c + k - lane + 1;
                if (m > bestt && j <= w) {
                    int rr = R - 1;
#pragma unroll
                    for (int r = R - 1; r >= 0; r--)
                        if (HO[r] == m)
                            rr = r;
                    bestt = m;
                    bj = j;
                    bi = base + rr + 1;
                }
            }
        }
        if (lane == 31)
            out[k] = make_int2(ho, fo);
    }
}

/*
 * One strip: rows s*SH+1 .. min(s*SH+SH, h) of region g, as ticket t.
 * DNA: match/mismatch scoring on codes 0..3 (others never match), one
 * byte select per cell: qa[r] holds s(row, c) + oe for c = A, C, G, T in
 * its bytes, the column's code is a __byte_perm selector (byte 4 = the
 * mismatch, bytes 5.. = 0), so both scores + oe must lie in 0..255;
 * LOCAL: zero floor; PARTIAL: the region ends inside the strip (rows past
 * h copy the row above, so the last lane still outputs row h).
 */
template <int R, bool DNA, bool LOCAL, bool PARTIAL, bool SLICE>
__device__ __forceinline__ void run_strip(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g,
                                          int s, long long t, smem_t &sm, int warp)
{
    constexpr int SH = 32 * R; /* strip height */
    static_assert(!SLICE || R == R_MAX, "column slices hand on boundary columns of SWGPU__LONG_SH rows");
    const int lane = threadIdx.x & 31;
    const int32_t ext = A.ext, oe = A.open + A.ext;
    const int32_t smatch = A.match + oe, smis = A.mismatch + oe;
    const int32_t h0 = (int32_t)g.h0, e0 = (int32_t)g.e0, f0 = (int32_t)g.f0; /* 32-bit here */
    const int w = g.w;
    const int top = s * SH;
    const int base = top + lane * R; /* vertex row above my first row */
    const int bottom = min(top + SH, g.h);
    const bool track = g.track != 0;
    int nv = R; /* my rows inside the region */
    if (PARTIAL)
        nv = max(0, min(R, g.h - base));

    int qa[R];
    load_rows<R, DNA, PARTIAL>(A, g, base, nv, smatch, smis, qa);
    /* HO[r] = H(i, j-1) - oe and E[r] = E(i, j-1) of my row i = base+r+1 */
    int HO[R], E[R], prevo;
    if (!left_column<R, LOCAL, PARTIAL, SLICE>(A, g, s, lane, base, nv, oe, HO, E, prevo))
        return; /* a partition failed: the pass's results are dropped */
    if (SLICE)
        slice_setup(g, s, sm, warp, lane);
    int ho = 0, fo = NEG, bc = 0; /* my last row's HO, F at my current column; its code */
    int bestt = 2 * NEG, bi = 0, bj = 0;
    unsigned long long npruned = 0;

    int2 *ring = reinterpret_cast<int2 *>(A.ring + g.ring_off);
    const long long slot = SWGPU__LK_RING(w);
    const int2 *rin = ring + ((s + 1) & 1) * slot;
    int2 *rout = ring + (s & 1) * slot;
    const long long srow = swgpu__lrows_slot32(g.h, g.save_every, g.save_last, bottom); /* rows.h */
    int2 *save = srow >= 0 ? reinterpret_cast<int2 *>(A.saved + g.saved_off) + srow * (w + 1) : nullptr;
    if (save && lane == 0) {
        int hb = swgpu__lreg_left(LOCAL, h0, f0, A.open, ext, bottom);
        save[0] = make_int2(hb, LOCAL ? NEG : hb);
    }
    const volatile int32_t *prevprog = A.progress + (t - 1);
    int known = 0;
    const uint8_t *bs = A.seq[g.cseq] + g.coff; /* bs[j-1]: column j */
    const int nchunks = (w + 31 + 31) / 32;
    int quiet = 0; /* skipped chunks since the progress was last published */
    bool zst = false; /* the last chunk was skipped: my rows hold the lower bounds */

    for (int c = 0; c < nchunks; c++) {
        if (LOCAL && g.prune && zst) {
            const int ce = jump_end<SLICE>(A, t, s, c, w, nchunks, SLICE && sm.rout[warp], lane,
                                           __shfl_sync(FULL, known, 0));
            if (ce >= c) { /* chunks c .. ce skipped as the last one was (see jump_end) */
                for (int cc = c; cc <= ce; cc++)
                    put_out(rout, save, cc, lane, w, make_int2(0, NEG));
                bc = column_code<DNA>(bs[32 * ce + 31 - lane]); /* my column at the end of chunk ce */
                npruned += (unsigned long long)(bottom - top) * 32u * (unsigned long long)(ce - c + 1);
                publish(A, t, lane, min(32 * ce + 1, w));
                quiet = 0;
                c = ce;
                continue;
            }
        }
        const int jl = 32 * c + 1 + lane; /* the column whose inputs I stage for lane 0 */
        int th, tf, tb;
        if (s > 0) {
            if (!wait_above<SLICE>(A, prevprog, t, min(32 * c + 32, w), known, c == 0))
                return; /* the strip above gave up (wait_above) */
            int2 v = __ldcg(rin + jl);
            th = v.x - oe;
            tf = v.y;
        } else {
            th = swgpu__lreg_top(LOCAL, h0, e0, A.open, ext, (SLICE ? sm.col0[warp] : 0) + jl) - oe;
            tf = NEG;
        }
        tb = column_code<DNA>(bs[jl - 1]);
        __syncwarp();
        sm.in[warp][lane] = make_int4(th, tf, tb, 0);
        __syncwarp();
        /* the chunk's inputs: my rows' H left of it, the row above it */
        if (LOCAL && g.prune && chunk_skips<R, SLICE>(A, g, sm, warp, c, top, th, prevo, HO, oe)) {
            /* skip: lower bounds out, H 0, E = F = NEG */
            skipped_state(HO, E, ho, fo, prevo, bc, oe, sm.in[warp][31 - lane].z);
            put_out(rout, save, c, lane, w, make_int2(0, NEG));
            npruned += (unsigned long long)(bottom - top) * 32u;
            if (!zst && lane == 0) /* a run begins: its first output column (put_out) */
                *(volatile int32_t *)(A.zrun + t) = max(1, 32 * c - 30);
            zst = true;
            /* the progress of skipped chunks is published every 8th
             * chunk, at the strip's last one and by the next computed
             * chunk: a fence and an atomic were most of a skipped
             * chunk's cost, and the strip below only waits longer */
            if (++quiet == 8 || c == nchunks - 1) {
                quiet = 0;
                publish(A, t, lane, min(32 * c + 1, w));
            }
            continue;
        }

        if (zst && lane == 0) /* the run ends before this chunk's progress is published */
            *(volatile int32_t *)(A.zrun + t) = 0;
        zst = false;
        /* some lane passes a slice's last column in this chunk */
        if (SLICE && 32 * c + 32 > w)
            chunk_steps<R, DNA, LOCAL, PARTIAL, true>(sm.in[warp], sm.mat, sm.out[warp], lane, c, w, nv, track, base,
                                                   ext, oe, smis, qa, HO, E, ho, fo, bc, prevo, bestt, bi, bj);
        else
            chunk_steps<R, DNA, LOCAL, PARTIAL, false>(sm.in[warp], sm.mat, sm.out[warp], lane, c, w, nv, track, base,
                                                    ext, oe, smis, qa, HO, E, ho, fo, bc, prevo, bestt, bi, bj);
        __syncwarp();
        {
            int2 o = sm.out[warp][lane];
            o.x += oe;
            put_out(rout, save, c, lane, w, o);
        }
        if (LOCAL && g.prune && track) { /* publish a better best for the others' pruning */
            int b = bestt;
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
                b = max(b, __shfl_xor_sync(FULL, b, off));
            if (lane == 0 && b + oe > *(volatile int32_t *)A.gbest)
                atomicMax(A.gbest, b + oe);
        }
        publish(A, t, lane, min(32 * c + 1, w));
        quiet = 0;
    }

    if (SLICE && sm.rout[warp]) { /* the strip's right boundary column: my rows at column w */
        right_column<R, PARTIAL>(sm.rout[warp], lane, nv, HO, E, prevo, oe);
        publish_right(A, g, s, lane);
    }
    strip_end(A, t, track, bestt, oe, bi, bj, SLICE ? sm.col0[warp] : 0, lane,
              (unsigned long long)(bottom - top) * (unsigned long long)w, npruned);
}

/*
 * Wide scores (long.h): values may pass 32 bits.  The registers still
 * hold 32-bit values, relative to a 64-bit base Bc, the same for the whole
 * strip: at every chunk Bc becomes the largest H of the chunk's inputs (my
 * lanes' values at their current columns, the row above at its 32 columns),
 * or 0 while that lies within +-DROP, and every register moves to it.  A
 * value more than DROP below the base is a lower bound (long.h) and becomes
 * NEG; the zero floor of a local region applies only while Bc is 0.  The
 * chunk's cells lie within SH rows and 64 columns, well inside the bound
 * (SH + CHUNK + 2) * K < 2^28 the aligner checks, so the 32 steps of a
 * chunk are those of the 32-bit strip unchanged.
 *
 * Hand-over: the last lane's outputs of chunk c are vertex columns
 * 32c-30 .. 32c+1, which straddle two groups of the ring (gpu_kernels.cuh:
 * group q = columns 32q+1 .. 32q+32).  The strip writes group c-1 after
 * chunk c, relative to its own base (its largest H), holding column 32c+1
 * (absolute) for the next chunk, and publishes 32c columns; the strip below
 * reads group c at its chunk c, after waiting for 32c+32 columns, as the
 * 32-bit strips do.  Saved rows take the same values and bases.  Skipped
 * chunks are lower bounds at base 0 (H 0, F NEG, their groups' bases 0);
 * runs of them publish every 8th and are jumped as in run_strip
 * (jump_end): E. coli x 10,000 on one H200, score pass 3.05 -> 2.1 s.
 */
#define DROP SWGPU__LONG_DROP
#define NEG64 SWGPU__LONG_NEG64

/* the base of a block whose inputs reach M (long.h: Wide scores); in a
 * local region never below 0, so that the zero floor holds wherever the
 * inputs do not prove it cannot bind */
template <bool LOCAL>
__device__ __forceinline__ long long pick_base(long long M)
{
    if (LOCAL)
        return M > DROP ? M : 0;
    return (M <= NEG64 / 2 || (M >= -DROP && M <= DROP)) ? 0 : M;
}

/* absolute v relative to base B (NEG: minus infinity) */
__device__ __forceinline__ int rel32(long long v, long long B)
{
    const long long r = v - B;
    return (v <= NEG64 / 2 || r < -DROP) ? NEG : (int)r;
}

/* relative r at base B, absolute */
__device__ __forceinline__ long long abs64(int r, long long B)
{
    return r < SWGPU__LONG_INF32 ? NEG64 : (long long)r + B;
}

/* relative v from base B to base B + d */
__device__ __forceinline__ int shift32(int v, long long d)
{
    const long long r = (long long)v - d;
    return (v < SWGPU__LONG_INF32 || r < -DROP) ? NEG : (int)r;
}

__device__ __forceinline__ long long max64(long long a, long long b)
{
    return a > b ? a : b;
}

__device__ __forceinline__ long long warp_max64(long long v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = max64(v, __shfl_xor_sync(FULL, v, off));
    return v;
}

/* group q of the ring (and of a saved row) from the values of its columns,
 * lane l holding column 32q+1+l (H and F absolute; cols: the columns that
 * exist, 1..32) */
__device__ __forceinline__ void put_group(int lane, int q, int cols, long long H, long long F, int2 *rout,
                                          long long *rbout, int2 *save, long long *sbase)
{
    const int j = 32 * q + 1 + lane;
    long long gb = warp_max64(lane < cols ? H : NEG64);
    gb = gb <= NEG64 / 2 ? 0 : gb;
    if (lane < cols) {
        const int2 v = make_int2(rel32(H, gb), rel32(F, gb));
        rout[j] = v;
        if (save)
            save[j] = v;
    }
    if (lane == 0) {
        rbout[q] = gb;
        if (save)
            sbase[1 + q] = gb;
    }
}

/* Wide scores: a slice's left boundary column from the slice on its left,
 * relative to its base (the left strip's last), into my rows (HO, E) and
 * prevo, relative to a base of mine (Bc, from the column 0 values they
 * hold); false when a partition failed while this strip waited. */
template <int R, bool LOCAL, bool PARTIAL>
__device__ __forceinline__ bool wide_left_slice(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int s, int lane,
                                                int nv, int32_t oe, int (&HO)[R], int (&E)[R], int &prevo,
                                                long long &Bc)
{
    if (!wait_left(A, g, s, lane))
        return false;
    const int2 *lin = reinterpret_cast<const int2 *>(g.lin) + (long long)s * SWGPU__LK_EDGE + lane * R;
    const long long eb = __ldcv(g.lin_base + s);
    long long m = abs64(__ldcv(lin).x, eb);
#pragma unroll
    for (int r = 0; r < R; r++)
        if (!PARTIAL || r < nv)
            m = max64(m, abs64(__ldcv(lin + r + 1).x, eb));
    const long long Bn = pick_base<LOCAL>(warp_max64(m));
    prevo = rel32(abs64(__ldcv(lin).x, eb), Bn) - oe;
#pragma unroll
    for (int r = 0; r < R; r++) {
        if (!PARTIAL || r < nv) {
            const int2 v = __ldcv(lin + r + 1);
            HO[r] = rel32(abs64(v.x, eb), Bn) - oe;
            E[r] = rel32(abs64(v.y, eb), Bn);
        } else { /* past the region: the rows keep their (rebased) values */
            HO[r] = shift32(HO[r], Bn - Bc);
            E[r] = shift32(E[r], Bn - Bc);
        }
    }
    Bc = Bn;
    return true;
}

/* Wide scores: every value of my registers moved to a base d higher. */
template <int R>
__device__ __forceinline__ void wide_shift(long long d, int (&HO)[R], int (&E)[R], int &prevo, int &ho, int &fo)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        HO[r] = shift32(HO[r], d);
        E[r] = shift32(E[r], d);
    }
    prevo = shift32(prevo, d);
    ho = shift32(ho, d);
    fo = shift32(fo, d);
}

/* Wide scores: the 32 steps of chunk c relative to base Bc, with the zero
 * floor while the base is 0 (relu), a slice's lanes stopping at its last
 * column (freeze, see chunk_steps); my best (absolute) updated. */
template <int R, bool DNA, bool LOCAL, bool PARTIAL, bool SLICE>
__device__ __forceinline__ void wide_steps(smem_t &sm, int warp, int lane, int c, int w, int nv, bool track, int base,
                                           int32_t ext, int32_t oe, int32_t smis, const int (&qa)[R], int (&HO)[R],
                                           int (&E)[R], int &ho, int &fo, int &bc, int &prevo, long long Bc,
                                           long long &best, int &bi, int &bj)
{
    /* the best in this chunk's frame: below -DROP nothing real competes */
    const long long rb = best <= NEG64 / 2 ? -DROP : max64(best - Bc, -DROP);
    int bestt = (int)rb - oe;
    const int bt0 = bestt;
    const bool relu = LOCAL && Bc == 0, freeze = SLICE && 32 * c + 32 > w;
    if (relu && freeze)
        chunk_steps<R, DNA, true, PARTIAL, true>(sm.in[warp], sm.mat, sm.out[warp], lane, c, w, nv, track,
                                                 base, ext, oe, smis, qa, HO, E, ho, fo, bc, prevo, bestt,
                                                 bi, bj);
    else if (relu)
        chunk_steps<R, DNA, true, PARTIAL, false>(sm.in[warp], sm.mat, sm.out[warp], lane, c, w, nv, track,
                                                  base, ext, oe, smis, qa, HO, E, ho, fo, bc, prevo, bestt,
                                                  bi, bj);
    else if (freeze)
        chunk_steps<R, DNA, false, PARTIAL, true>(sm.in[warp], sm.mat, sm.out[warp], lane, c, w, nv, track,
                                                  base, ext, oe, smis, qa, HO, E, ho, fo, bc, prevo, bestt,
                                                  bi, bj);
    else
        chunk_steps<R, DNA, false, PARTIAL, false>(sm.in[warp], sm.mat, sm.out[warp], lane, c, w, nv, track,
                                                   base, ext, oe, smis, qa, HO, E, ho, fo, bc, prevo, bestt,
                                                   bi, bj);
    if (bestt != bt0)
        best = (long long)bestt + oe + Bc;
}

/* Wide scores: group c-1 of the bottom row handed on (lane 0 the held
 * column 32c-31, lane l the last lane's output of step l-1), and the
 * column 32c+1 (the last lane's output of step 31) held in (hh, hf). */
__device__ __forceinline__ void wide_hand_on(const smem_t &sm, int warp, int lane, int c, int w, int32_t oe,
                                             long long Bc, long long &hh, long long &hf, int2 *rout,
                                             long long *rbout, int2 *save, long long *sbase)
{
    long long H = hh, F = hf;
    if (lane > 0) {
        const int2 o = sm.out[warp][lane - 1];
        H = abs64(o.x + oe, Bc);
        F = abs64(o.y, Bc);
    }
    if (c > 0)
        put_group(lane, c - 1, min(32, w - 32 * (c - 1)), H, F, rout, rbout, save, sbase);
    const int2 o = sm.out[warp][31];
    hh = abs64(o.x + oe, Bc);
    hf = abs64(o.y, Bc);
}

/* Wide scores: chunks c .. ce jumped (jump_end): ring groups c-1 .. ce-1
 * (and the saved row's) are {0, NEG} at base 0, the held column 32c-31
 * being a skipped chunk's output as the others are */
__device__ __forceinline__ void wide_jump_out(int lane, int c, int ce, int w, int2 *rout, long long *rbout,
                                              int2 *save, long long *sbase)
{
    for (int q = max(c - 1, 0); q < ce; q++) {
        const int j = 32 * q + 1 + lane;
        if (j <= w) {
            rout[j] = make_int2(0, NEG);
            if (save)
                save[j] = make_int2(0, NEG);
        }
        if (lane == 0) {
            rbout[q] = 0;
            if (save)
                sbase[1 + q] = 0;
        }
    }
}

/* Wide scores: M, the largest H of chunk c's inputs (the row above's th,
 * my rows at base Bc), and whether the chunk is skipped (pruning: its
 * bound below the best so far; a slice handing on its right boundary column
 * computes the chunks in which its lanes reach it, see the strip's end) */
template <int R, bool LOCAL, bool SLICE>
__device__ __forceinline__ bool wide_skips(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, const smem_t &sm,
                                           int warp, int c, int top, long long th, int prevo, const int (&HO)[R],
                                           long long Bc, int32_t oe, long long &M)
{
    const int w = g.w;
    int mr = prevo;
#pragma unroll
    for (int r = 0; r < R; r++)
        mr = max(mr, HO[r]);
    M = warp_max64(max64(th, abs64(mr + oe, Bc)));
    if (!LOCAL || !g.prune)
        return false;
    const long long left = min((long long)(g.h - top), (long long)w + (SLICE ? sm.wrem[warp] : 0) - 32 * c + 31);
    const long long bound = max64(M, 0) + (long long)A.smax * left;
    return bound < max64(*(volatile long long *)A.gbest64, *(const volatile long long *)A.rbest64) &&
           !(SLICE && c >= ((w - 1) >> 5) && sm.rout[warp]);
}

/* Wide scores: the strip's saved row, if its bottom row is one (rows.h),
 * and its column 0 (lane 0) */
template <bool LOCAL>
__device__ __forceinline__ void wide_saved_row(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int bottom, int lane,
                                               int2 *&save, long long *&sbase)
{
    const long long row = swgpu__lrows_slot32(g.h, g.save_every, g.save_last, bottom); /* rows.h */
    if (row < 0)
        return;
    save = reinterpret_cast<int2 *>(A.saved + g.saved_off) + row * (g.w + 1);
    sbase = A.sbase + g.sbase_off + row * SWGPU__LK_SBASE(g.w);
    if (lane == 0) {
        const long long hb = swgpu__lreg_top64(LOCAL, g.h0, g.f0, A.open, A.ext, bottom);
        const long long b0 = hb <= NEG64 / 2 ? 0 : hb;
        save[0] = make_int2(rel32(hb, b0), LOCAL ? NEG : rel32(hb, b0));
        sbase[0] = b0;
    }
}

template <int R, bool DNA, bool LOCAL, bool PARTIAL, bool SLICE>
__device__ __forceinline__ void run_strip_wide(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int s,
                                               long long t, smem_t &sm, int warp)
{
    static_assert(!SLICE || R == R_MAX, "column slices hand on boundary columns of SWGPU__LONG_SH rows");
    constexpr int SH = 32 * R;
    const int lane = threadIdx.x & 31;
    const int32_t ext = A.ext, oe = A.open + A.ext;
    const int32_t smatch = A.match + oe, smis = A.mismatch + oe;
    const int w = g.w;
    const int top = s * SH;
    const int base = top + lane * R; /* vertex row above my first row */
    const int bottom = min(top + SH, g.h);
    const bool track = g.track != 0;
    const int nv = PARTIAL ? max(0, min(R, g.h - base)) : R; /* my rows inside the region */
    int qa[R];
    load_rows<R, DNA, PARTIAL>(A, g, base, nv, smatch, smis, qa);

    /* the left column (H = F, E = NEG), relative to its largest value */
    int HO[R], E[R];
    long long Bc;
    {
        long long m = swgpu__lreg_top64(LOCAL, g.h0, g.f0, A.open, ext, base); /* j = 0: h0 at base 0 */
#pragma unroll
        for (int r = 0; r < R; r++)
            m = max64(m, swgpu__lreg_top64(LOCAL, g.h0, g.f0, A.open, ext, base + r + 1));
        Bc = pick_base<LOCAL>(warp_max64(m));
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        HO[r] = rel32(swgpu__lreg_top64(LOCAL, g.h0, g.f0, A.open, ext, base + r + 1), Bc) - oe;
        E[r] = NEG;
    }
    int prevo = rel32(base == 0 ? swgpu__lreg_top64(LOCAL, g.h0, g.e0, A.open, ext, SLICE ? g.col0 : 0)
                                : swgpu__lreg_top64(LOCAL, g.h0, g.f0, A.open, ext, base),
                      Bc) - oe;
    /* a slice: the left boundary column from the slice on the left */
    if (SLICE && g.lin && !wide_left_slice<R, LOCAL, PARTIAL>(A, g, s, lane, nv, oe, HO, E, prevo, Bc))
        return; /* a partition failed: the pass's results are dropped */
    if (SLICE)
        slice_setup(g, s, sm, warp, lane);
    int ho = 0, fo = NEG, bc = 0;
    long long best = NEG64; /* my best H, absolute */
    int bi = 0, bj = 0;
    unsigned long long npruned = 0;
    long long hh = NEG64, hf = NEG64; /* column 32c+1 of the last lane, held for the next group */

    int2 *ring = reinterpret_cast<int2 *>(A.ring + g.ring_off);
    const long long slot = SWGPU__LK_RING(w), bslot = SWGPU__LK_RBASE(w);
    const int2 *rin = ring + ((s + 1) & 1) * slot;
    int2 *rout = ring + (s & 1) * slot;
    const long long *rbin = A.rbase + g.rbase_off + ((s + 1) & 1) * bslot;
    long long *rbout = A.rbase + g.rbase_off + (s & 1) * bslot;
    int2 *save = nullptr;
    long long *sbase = nullptr;
    wide_saved_row<LOCAL>(A, g, bottom, lane, save, sbase);
    const volatile int32_t *prevprog = A.progress + (t - 1);
    int known = 0;
    const uint8_t *bs = A.seq[g.cseq] + g.coff;
    const int nchunks = (w + 31 + 31) / 32;
    int quiet = 0;    /* skipped chunks since the progress was last published */
    bool zst = false; /* the last chunk was skipped: my rows hold the lower bounds, at base 0 */

    for (int c = 0; c < nchunks; c++) {
        if (LOCAL && g.prune && zst) {
            const int ce = jump_end<SLICE>(A, t, s, c, w, nchunks, SLICE && sm.rout[warp], lane,
                                           __shfl_sync(FULL, known, 0));
            if (ce >= c) { /* chunks c .. ce skipped as the last one was (see jump_end) */
                wide_jump_out(lane, c, ce, w, rout, rbout, save, sbase);
                bc = column_code<DNA>(bs[32 * ce + 31 - lane]); /* my column at the end of chunk ce */
                npruned += (unsigned long long)(bottom - top) * 32u * (unsigned long long)(ce - c + 1);
                publish(A, t, lane, min(32 * ce, w));
                quiet = 0;
                c = ce;
                continue;
            }
        }
        const int jl = 32 * c + 1 + lane; /* the column whose inputs I stage for lane 0 */
        long long th = NEG64, tf = NEG64; /* absolute; NEG past column w */
        if (s > 0) {
            if (!wait_above<SLICE>(A, prevprog, t, min(32 * c + 32, w), known, c == 0))
                return; /* a partition failed, or a checkpoint stops the pass before this strip */
            if (jl <= w) {
                const int2 v = __ldcg(rin + jl);
                const long long gb = __ldcg(rbin + c);
                th = abs64(v.x, gb);
                tf = abs64(v.y, gb);
            }
        } else if (jl <= w) {
            th = swgpu__lreg_top64(LOCAL, g.h0, g.e0, A.open, ext, (SLICE ? sm.col0[warp] : 0) + jl);
        }
        long long M; /* the largest H of the chunk's inputs: bound and base */
        const bool skip = wide_skips<R, LOCAL, SLICE>(A, g, sm, warp, c, top, th, prevo, HO, Bc, oe, M);
        if (!skip) {
            const long long d = pick_base<LOCAL>(M) - Bc;
            if (d != 0) {
                wide_shift(d, HO, E, prevo, ho, fo);
                Bc += d;
            }
        }
        __syncwarp();
        sm.in[warp][lane] = make_int4(rel32(th, Bc) - oe, rel32(tf, Bc), column_code<DNA>(bs[jl - 1]), 0);
        __syncwarp();
        if (skip) {
            /* lower bounds out: H 0, E = F = NEG, at base 0 */
            skipped_state(HO, E, ho, fo, prevo, bc, oe, sm.in[warp][31 - lane].z);
            Bc = 0;
            sm.out[warp][lane] = make_int2(-oe, NEG);
            npruned += (unsigned long long)(bottom - top) * 32u;
            if (!zst && lane == 0) /* a run begins: its first output column (wide_hand_on) */
                *(volatile int32_t *)(A.zrun + t) = max(1, 32 * c - 30);
            zst = true;
        } else {
            if (zst && lane == 0) /* the run ends before this chunk's progress is published */
                *(volatile int32_t *)(A.zrun + t) = 0;
            zst = false;
            wide_steps<R, DNA, LOCAL, PARTIAL, SLICE>(sm, warp, lane, c, w, nv, track, base, ext, oe, smis, qa, HO, E,
                                                      ho, fo, bc, prevo, Bc, best, bi, bj);
        }
        __syncwarp();
        wide_hand_on(sm, warp, lane, c, w, oe, Bc, hh, hf, rout, rbout, save, sbase);
        /* the progress of skipped chunks every 8th of them (see run_strip) */
        if (skip && ++quiet < 8 && c != nchunks - 1)
            continue;
        quiet = 0;
        if (LOCAL && g.prune && track && !skip) { /* publish a better best for the others' pruning */
            const long long b = warp_max64(best);
            if (lane == 0 && b > *(volatile long long *)A.gbest64)
                atomicMax(A.gbest64, b);
        }
        __threadfence();
        __syncwarp();
        if (lane == 0 && c > 0)
            atomicExch(A.progress + t, min(32 * c, w));
    }
    if (32 * (nchunks - 1) < w) { /* column w = 32 (nchunks - 1) + 1, still held */
        put_group(lane, nchunks - 1, 1, hh, hf, rout, rbout, save, sbase);
        publish(A, t, lane, w);
    }
    if (SLICE && sm.rout[warp]) { /* the strip's right boundary column: my rows at column w, base Bc */
        right_column<R, PARTIAL>(sm.rout[warp], lane, nv, HO, E, prevo, oe);
        if (lane == 0)
            g.rout_base[s] = Bc;
        publish_right(A, g, s, lane);
    }
    strip_end(A, t, track, best, 0, bi, bj, SLICE ? sm.col0[warp] : 0, lane,
              (unsigned long long)(bottom - top) * (unsigned long long)w, npruned);
}

/* strip s of region g as ticket t, 32-bit or wide */
template <int R, bool DNA, bool LOCAL, bool PARTIAL, bool SLICE, bool WIDE>
__device__ __forceinline__ void strip(const swgpu__lkargs_t &A, const swgpu__lkreg_t &g, int s, long long t, smem_t &sm,
                                      int warp)
{
    if (WIDE)
        run_strip_wide<R, DNA, LOCAL, PARTIAL, SLICE>(A, g, s, t, sm, warp);
    else
        run_strip<R, DNA, LOCAL, PARTIAL, SLICE>(A, g, s, t, sm, warp);
}

template <int R, bool DNA, bool SLICE, bool WIDE>
__global__ void __launch_bounds__(NT) long_pass(const swgpu__lkargs_t A)
{
    constexpr int SH = 32 * R;
    static_assert(!WIDE || R == R_MAX, "wide scores: strips of SWGPU__LONG_SH rows");
    __shared__ smem_t sm;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (!DNA)
        for (int i = threadIdx.x; i < 32 * 32; i += NT)
            sm.mat[i] = A.mat[i] + A.open + A.ext;
    __syncthreads();
    for (;;) {
        long long t = 0;
        if (lane == 0)
            t = (long long)atomicAdd(A.ticket, 1ULL);
        t = __shfl_sync(FULL, t, 0);
        if (t >= A.total)
            break;
        if (A.stop) {
            /* a checkpoint: this strip and every later one are not run
             * (those already waiting stop in wait_above), so strips
             * 0 .. stop_at - 1 are done, the rest not begun */
            int stop = 0;
            if (lane == 0 && *(const volatile int32_t *)A.stop) {
                atomicMin(A.stop_at, (unsigned long long)t);
                stop = 1;
            }
            if (__shfl_sync(FULL, stop, 0))
                break;
        }
        int lo = 0, hi = A.nregs - 1;
        while (lo < hi) { /* the last region whose first strip is <= t */
            int mid = (lo + hi + 1) >> 1;
            if (A.regs[mid].first <= t)
                lo = mid;
            else
                hi = mid - 1;
        }
        const swgpu__lkreg_t g = A.regs[lo];
        const int s = (int)(t - g.first);
        const bool partial = (long long)(s + 1) * SH > g.h;
        if (g.local) {
            if (partial)
                strip<R, DNA, true, true, SLICE, WIDE>(A, g, s, t, sm, warp);
            else
                strip<R, DNA, true, false, SLICE, WIDE>(A, g, s, t, sm, warp);
        } else {
            if (partial)
                strip<R, DNA, false, true, SLICE, WIDE>(A, g, s, t, sm, warp);
            else
                strip<R, DNA, false, false, SLICE, WIDE>(A, g, s, t, sm, warp);
        }
    }
}

/* the kernel of a launch: rows per lane (16, 8, 4; slices and wide
 * scores: 16), DNA or not, slices or not, wide scores or not */
static const void *pick(int dna, int slice, int rows, int wide)
{
    if (wide && slice)
        return dna ? (const void *)long_pass<R_MAX, true, true, true> : (const void *)long_pass<R_MAX, false, true, true>;
    if (wide)
        return dna ? (const void *)long_pass<R_MAX, true, false, true> : (const void *)long_pass<R_MAX, false, false, true>;
    if (slice)
        return dna ? (const void *)long_pass<R_MAX, true, true, false> : (const void *)long_pass<R_MAX, false, true, false>;
    if (rows == 8)
        return dna ? (const void *)long_pass<8, true, false, false> : (const void *)long_pass<8, false, false, false>;
    if (rows == 4)
        return dna ? (const void *)long_pass<4, true, false, false> : (const void *)long_pass<4, false, false, false>;
    return dna ? (const void *)long_pass<R_MAX, true, false, false> : (const void *)long_pass<R_MAX, false, false, false>;
}

extern "C" cudaError_t swgpu__long_occupancy(int dna, int slice, int rows, int wide, int *threads, int *blocks_per_sm)
{
    *threads = NT;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, pick(dna, slice, rows, wide), NT, 0);
}

extern "C" cudaError_t swgpu__long_launch(const swgpu__lkargs_t *args, int slice, int blocks, int threads,
                                          cudaStream_t stream)
{
    void *params[] = { (void *)args };
    (void)cudaGetLastError(); /* an earlier, already reported error is not this launch's */
    const cudaError_t e =
        cudaLaunchKernel(pick(args->dna, slice, args->rows, args->wide), dim3(blocks), dim3(threads), params, 0, stream);
    return e != cudaSuccess ? e : cudaPeekAtLastError();
}
