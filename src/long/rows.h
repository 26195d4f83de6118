/*
 * rows.h - the long aligner's saved rows: which strip bottoms save a row,
 * in which slot, and how a saved row's values and bases are laid out.  One
 * rule for both engines (cpu.c, gpu_kernels.cu) and their callers; the
 * functions the kernels use are __host__ __device__ under CUDA.
 *
 * A region of h rows saves the rows at the multiples of save_every below h
 * (save_every 0: none) and, with save_last, row h; saved row k (0-based)
 * is the k-th of them from the top.  Rows are saved only at strip bottoms:
 * save_every is a multiple of SWGPU__LONG_SH.  A saved row holds the pairs
 * {H, F} of vertex columns 0..w; with wide scores, 32-bit values relative
 * to swgpu__lreg_nbase(w) 64-bit bases (long.h, Wide scores).
 */
#ifndef SWGPU_LONG_ROWS_H
#define SWGPU_LONG_ROWS_H

#include <stdint.h>

#ifdef __CUDACC__
#define SWGPU__HD __host__ __device__
#else
#define SWGPU__HD
#endif

#define SWGPU__LONG_CHUNK 256       /* columns of a CPU block (pruning, hand-over, bases) */
/* wide scores: a stored value below this is minus infinity */
#define SWGPU__LONG_INF32 (-(3 << 28))
#define SWGPU__LONG_NEG64 (INT64_MIN / 4) /* minus infinity in 64-bit values */

/** Rows saved by the strips whose bottoms lie at or above vertex row
 *  bottom (bottom >= h: every row the region saves). */
static inline SWGPU__HD int64_t swgpu__lrows_upto(int64_t h, int64_t save_every, int save_last, int64_t bottom)
{
    int64_t n = save_every > 0 ? (bottom < h ? bottom : h - 1) / save_every : 0;
    return n + (bottom >= h && save_last ? 1 : 0);
}

/** The saved row that the strip ending at vertex row bottom (<= h) fills,
 *  or -1 when that row is not saved: swgpu__lrows_slot in 64 bits, and
 *  swgpu__lrows_slot32 in 32 (the kernels: their regions' sizes are int32,
 *  and a 64-bit division costs some 300 instructions a kernel). */
#define SWGPU__LROWS_SLOT(NAME, T)                                                         \
    static inline SWGPU__HD T NAME(T h, T save_every, int save_last, T bottom)             \
    {                                                                                      \
        if (bottom < h && save_every > 0 && bottom % save_every == 0)                      \
            return bottom / save_every - 1;                                                \
        if (bottom == h && save_last)                                                      \
            return save_every > 0 ? (h - 1) / save_every : 0;                              \
        return -1;                                                                         \
    }
SWGPU__LROWS_SLOT(swgpu__lrows_slot, int64_t)
SWGPU__LROWS_SLOT(swgpu__lrows_slot32, int32_t)
#undef SWGPU__LROWS_SLOT

/** Bases per saved row of a region of w columns (wide scores). */
static inline int64_t swgpu__lreg_nbase(int64_t w)
{
    return 1 + (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
}

/** The 64-bit value of saved entry x (vertex column x, which: 0 H, 1 F) of
 *  a saved row and its bases (NULL: the 32-bit values themselves). */
static inline int64_t swgpu__lsaved(const int32_t *row, const int64_t *base, int64_t x, int which)
{
    int32_t v = row[2 * x + which];
    if (!base)
        return v;
    if (v < SWGPU__LONG_INF32)
        return SWGPU__LONG_NEG64;
    return (int64_t)v + base[x == 0 ? 0 : 1 + (x - 1) / SWGPU__LONG_CHUNK];
}

#endif
